package patch

import (
	"slices"
	"strings"
	"unicode"
)

// Apply returns the new content of a file whose current content is content
// after applying hunks, the hunks of one Update section, in order. Every
// hunk is located before anything changes, so an error (a *ContextError)
// means nothing was applied.
//
// Lines the hunks do not remove or add stay as they are in the file, a
// hunk's context lines included: a whitespace- or punctuation-tolerant
// match never rewrites them (the reference writes them as the patch spelled
// them, in the preferred ending). The lines a hunk adds take the file's
// preferred ending, that of its first line that has one ("\n" when none
// has). The end of the file is left as it was unless a hunk changes it:
// an unterminated last line stays so, even as a hunk's context line, and
// gets the preferred ending, as with the reference, when lines are added
// after it; a hunk that removes or replaces it ends the file with the
// ending of the lines before it, or the preferred one.
func Apply(content string, hunks []Hunk) (string, error) {
	lines, pref := splitContent(content)
	texts := make([]string, len(lines))
	for i, l := range lines {
		texts[i] = l.text
	}
	reps, err := locate(texts, hunks)
	if err != nil {
		return "", err
	}

	var b strings.Builder
	b.Grow(len(content) + len(content)/8 + 64)
	// open is set while the output ends in the file's unterminated last
	// line: it gets an ending only if something is written after it.
	open := false
	keep := func(l srcLine) {
		b.WriteString(l.text)
		b.WriteString(l.end)
		open = l.end == ""
	}
	add := func(t string) {
		if open {
			b.WriteString(pref)
			open = false
		}
		b.WriteString(t)
		b.WriteString(pref)
	}
	cur := 0
	for _, r := range reps {
		// Only an insertion can start inside an earlier replacement (one at
		// the end of the file, before a last empty line that a later hunk
		// replaced); it then goes right after that replacement.
		start := max(r.start, cur)
		for ; cur < start; cur++ {
			keep(lines[cur])
		}
		if r.body == "" {
			for _, t := range r.lines {
				add(t)
			}
		} else {
			at, added := r.start, 0
			for _, op := range []byte(r.body) {
				switch op {
				case ' ':
					keep(lines[at])
					at++
				case '-':
					at++
				case '+':
					add(r.lines[added])
				}
				if op != '-' {
					added++
				}
			}
		}
		cur = max(cur, r.start+r.n)
	}
	for ; cur < len(lines); cur++ {
		keep(lines[cur])
	}
	return b.String(), nil
}

// srcLine is a line of the file being updated: its text, which hunks are
// matched against, and its ending ("\n", "\r\n", or "" for an unterminated
// last line).
type srcLine struct {
	text, end string
}

// splitContent splits content into lines and returns the preferred line
// ending: that of the first terminated line, like rustfmt and Ruff detect
// it, and "\n" when there is none.
func splitContent(content string) ([]srcLine, string) {
	lines := make([]srcLine, 0, strings.Count(content, "\n")+1)
	pref := ""
	for content != "" {
		j := strings.IndexByte(content, '\n')
		if j < 0 {
			lines = append(lines, srcLine{text: content})
			break
		}
		l := srcLine{text: content[:j], end: "\n"}
		if strings.HasSuffix(l.text, "\r") {
			l.text, l.end = l.text[:len(l.text)-1], "\r\n"
		}
		if pref == "" {
			pref = l.end
		}
		lines = append(lines, l)
		content = content[j+1:]
	}
	if pref == "" {
		pref = "\n"
	}
	return lines, pref
}

// replacement replaces n lines from start with lines. With body (the
// hunk's line kinds, see Hunk.Body) the context lines are the file's own.
type replacement struct {
	start, n int
	lines    []string
	body     string
}

// locate finds where every hunk applies and returns the replacements in
// ascending order of start.
func locate(texts []string, hunks []Hunk) ([]replacement, error) {
	s := &seeker{lines: texts}
	reps := make([]replacement, 0, len(hunks))
	// pos only moves forward: hunks, and the headers within a hunk, are
	// matched in file order, each after the one before.
	pos := 0
	for k, h := range hunks {
		// behind is the line of the hunk's last header when that header
		// was found before pos rather than after it, else -1; floor is
		// where a header found behind pos may start (after the hunk's
		// previous header, so that stacked headers still narrow).
		behind, floor := -1, 0
		// stay is where a lone header found after pos also occurs before
		// it, else -1: if the hunk's lines are not found after the later
		// copy, the position is kept as for a header passed (a second
		// hunk in a method whose name a later class repeats).
		start, stay := pos, -1
		for _, c := range h.Contexts {
			if i, _ := s.seek([]string{c}, pos, false); i >= 0 {
				if len(h.Contexts) == 1 {
					stay = s.seekLast(c, 0, pos)
				}
				pos, floor, behind = i+1, i+1, -1
				continue
			}
			// A header already passed: the hunk is in the same class or
			// function as the one before it, which models write by
			// repeating its header (OpenAI's prompting guide tells them
			// to). The reference (apply_patch.py) keeps its position
			// then, and so does boris; Codex refuses the hunk.
			j := s.seekLast(c, floor, pos)
			if j < 0 {
				return nil, &ContextError{Hunk: k + 1, Line: h.Line, Header: true, Sought: []string{c}, Closest: closest(texts, []string{c})}
			}
			floor, behind = j+1, j
		}
		if len(h.Old) == 0 {
			at := pos
			// The reference appends a pure addition at the end of the file
			// (before a last empty line) even when it has a header; boris
			// inserts it right after its last header, where the model
			// pointed, and keeps the reference's place when it has none or
			// when "*** End of File" says the end is meant.
			if len(h.Contexts) == 0 || h.EOF {
				at = len(texts)
				if at > 0 && texts[at-1] == "" {
					at--
				}
			} else if behind >= 0 {
				// Right after that header is before the previous hunk,
				// and nothing else in the hunk says where its lines go.
				return nil, &ContextError{Hunk: k + 1, Line: h.Line, Header: true, Ambiguous: true, Sought: []string{h.Contexts[len(h.Contexts)-1]},
					HeaderAt: behind + 1, Closest: around(texts, behind, 1)}
			}
			reps = append(reps, replacement{start: at, lines: h.New})
			continue
		}
		old, repl, body, i, pass := seekHunk(s, h, pos)
		if i < 0 && stay >= 0 {
			pos, behind = start, stay
			old, repl, body, i, pass = seekHunk(s, h, pos)
		}
		if i < 0 {
			return nil, &ContextError{Hunk: k + 1, Line: h.Line, Sought: slices.Clone(h.Old), Closest: closest(texts, h.Old)}
		}
		if behind >= 0 && !h.EOF && len(old) > 0 {
			// Under a header found behind pos, the hunk's lines may also
			// be meant between that header and the previous hunk (hunks
			// written out of order): refuse rather than guess, when they
			// occur there as closely as after pos.
			if j := s.findFree(old, behind+1, pos, pass, reps); j >= 0 {
				return nil, &ContextError{Hunk: k + 1, Line: h.Line, Ambiguous: true, Sought: slices.Clone(h.Old), HeaderAt: behind + 1, Later: i + 1,
					Closest: around(texts, j, len(old))}
			}
		}
		reps = append(reps, replacement{start: i, n: len(old), lines: repl, body: body})
		pos = i + len(old)
	}
	slices.SortStableFunc(reps, func(a, b replacement) int { return a.start - b.start })
	return reps, nil
}

// seekHunk finds a hunk's old lines at or after pos and returns the lines
// it replaces and their replacement, the hunk's body kinds ("" when they
// no longer describe them), where they are (-1 when nowhere) and the pass
// that found them.
func seekHunk(s *seeker, h Hunk, pos int) (old, repl []string, body string, i, pass int) {
	old, repl, body = h.Old, h.New, h.Body
	if !bodyFits(body, len(old), len(repl)) {
		body = ""
	}
	i, pass = s.seek(old, pos, h.EOF)
	if i < 0 && old[len(old)-1] == "" {
		body = "" // the trimmed line has no counterpart in the file
		// A last "" often stands for the final newline of the file,
		// which is no line of its own here; retry without it.
		old = old[:len(old)-1]
		if len(repl) > 0 && repl[len(repl)-1] == "" {
			repl = repl[:len(repl)-1]
		}
		i, pass = s.seek(old, pos, h.EOF)
	}
	return old, repl, body, i, pass
}

// bodyFits reports whether body describes a hunk of old and new lines.
func bodyFits(body string, old, new int) bool {
	if body == "" {
		return false
	}
	o := strings.Count(body, " ") + strings.Count(body, "-")
	n := strings.Count(body, " ") + strings.Count(body, "+")
	return o == old && n == new
}

// The passes of seek, from strict to lenient.
const (
	passExact = iota
	passTrimEnd
	passTrim
	passPunct
	passCount
)

// seeker finds sequences of lines in a file with the reference's ladder of
// ever more lenient comparisons. It caches the file's lines as each pass
// compares them, so that only the passes a patch needs cost anything.
type seeker struct {
	lines []string
	views [passCount][]string
}

func (s *seeker) view(pass int) []string {
	if pass == passExact {
		return s.lines
	}
	if s.views[pass] == nil {
		v := make([]string, len(s.lines))
		for i, l := range s.lines {
			v[i] = passKey(pass, l)
		}
		s.views[pass] = v
	}
	return s.views[pass]
}

// passKey is the form of a line that pass compares.
func passKey(pass int, l string) string {
	switch pass {
	case passTrimEnd:
		return trimRight(l)
	case passTrim:
		return strings.TrimSpace(l)
	case passPunct:
		return normalisePunct(strings.TrimSpace(l))
	}
	return l
}

// seek returns the index of the first line at or after start where pattern
// occurs, and the pass that found it; -1 when none does. A pass scans every
// position before the next, more lenient one is tried, so that a close
// match later in the file beats a loose one earlier. With eof the pattern
// must end at the file's last line.
func (s *seeker) seek(pattern []string, start int, eof bool) (int, int) {
	if len(pattern) == 0 {
		return start, passExact
	}
	from, to := start, len(s.lines)-len(pattern)
	if eof {
		// The reference tries only the last position, even when that is
		// before start; boris also requires it to be at or after start, so
		// that replacements can never overlap.
		from = to
		if from < start {
			return -1, 0
		}
	}
	return s.find(pattern, from, to, passCount-1)
}

// find returns the first i in [from, to] where pattern occurs under the
// strictest pass, up to maxPass, that finds it anywhere there, and that
// pass; -1 when none does.
func (s *seeker) find(pattern []string, from, to, maxPass int) (int, int) {
	p := len(pattern)
	from = max(from, 0)
	to = min(to, len(s.lines)-p)
	if p == 0 || from > to {
		return -1, 0
	}
	key := make([]string, p)
	for pass := range maxPass + 1 {
		v := s.view(pass)
		for j, l := range pattern {
			key[j] = passKey(pass, l)
		}
		if i := scan(v, key, from, to); i >= 0 {
			return i, pass
		}
	}
	return -1, 0
}

// findFree returns the first i in [from, to-len(pattern)] where pattern
// occurs under a pass up to maxPass without overlapping the lines a
// replacement of reps removes, or -1.
func (s *seeker) findFree(pattern []string, from, to, maxPass int, reps []replacement) int {
next:
	for from <= to-len(pattern) {
		i, _ := s.find(pattern, from, to-len(pattern), maxPass)
		if i < 0 {
			return -1
		}
		for _, r := range reps {
			if r.n > 0 && r.start < i+len(pattern) && i < r.start+r.n {
				from = i + 1
				continue next
			}
		}
		return i
	}
	return -1
}

// seekLast returns the index of the last line in [from, to) that matches
// line, under the strictest pass that finds one, or -1.
func (s *seeker) seekLast(line string, from, to int) int {
	for pass := range passCount {
		v := s.view(pass)
		key := passKey(pass, line)
		for i := to - 1; i >= from; i-- {
			if v[i] == key {
				return i
			}
		}
	}
	return -1
}

// directScanMax bounds the line comparisons a plain scan may make before
// scan looks for a rare line of the pattern to anchor on: a long pattern of
// a repeated line, over a file of that line, would otherwise cost their
// product.
const directScanMax = 1 << 16

// scan returns the first i in [from, to] where key occurs in v, or -1.
func scan(v, key []string, from, to int) int {
	anchor := 0
	if (to-from+1)*len(key) > directScanMax {
		anchor = rarest(v[from:to+len(key)], key)
		if anchor < 0 {
			return -1
		}
	}
	a := key[anchor]
next:
	for i := from; i <= to; i++ {
		if v[i+anchor] != a {
			continue
		}
		for j, k := range key {
			if v[i+j] != k {
				continue next
			}
		}
		return i
	}
	return -1
}

// rarest returns the index of the line of key that occurs least often in
// v, or -1 when one does not occur at all and key cannot either.
func rarest(v, key []string) int {
	count := make(map[string]int, len(key))
	for _, k := range key {
		count[k] = 0
	}
	for _, l := range v {
		if c, ok := count[l]; ok {
			count[l] = c + 1
		}
	}
	best := 0
	for j, k := range key {
		if count[k] < count[key[best]] {
			best = j
		}
	}
	if count[key[best]] == 0 {
		return -1
	}
	return best
}

// normalisePunct maps the typographic dashes, quotes and spaces that
// editors and word processors put into text to their ASCII forms, so that
// a model that writes ASCII still matches (the reference's last pass).
func normalisePunct(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	return strings.Map(punctASCII, s)
}

func punctASCII(r rune) rune {
	switch r {
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
		return '-'
	case '\u2018', '\u2019', '\u201A', '\u201B':
		return '\''
	case '\u201C', '\u201D', '\u201E', '\u201F':
		return '"'
	case '\u00A0', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006',
		'\u2007', '\u2008', '\u2009', '\u200A', '\u202F', '\u205F', '\u3000':
		return ' '
	}
	return r
}

// looseKey is the form in which lines are compared when looking for the
// region of a file that resembles what a hunk sought: trimmed, with ASCII
// punctuation and runs of whitespace collapsed to one space.
func looseKey(s string) string {
	s = strings.TrimSpace(s)
	plain := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || c == '\t' || c == '\r' || c == '\v' || c == '\f' || (c == ' ' && i+1 < len(s) && s[i+1] == ' ') {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		r = punctASCII(r)
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}
