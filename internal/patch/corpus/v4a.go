package corpus

import (
	"slices"
	"strings"
	"unicode"

	"github.com/boris-mcp/boris/internal/textdiff"
)

// Style is how a patch introduces its hunks.
type Style int

// maxEdit bounds the edit distance a file's diff searches for (see
// textdiff.Lines).
const maxEdit = 1500

const (
	// Bare puts a bare "@@" before every hunk.
	Bare Style = iota
	// Headers puts "@@ <line>" before every hunk, the line being the one
	// git's hunk header would name: in a Go file the nearest line above
	// the hunk that starts with "func " or "type ", in other files the
	// nearest that starts with a letter, '_' or '$' (git's default). Hunks
	// under the same function repeat its line, as models write them.
	Headers
)

// String names the style.
func (s Style) String() string {
	if s == Headers {
		return "headers"
	}
	return "bare"
}

// contextLines is how many unchanged lines surround a change, as git and
// OpenAI's instructions to models have it.
const contextLines = 3

// Section is one file section of a patch.
type Section struct {
	Op     string // "add", "delete" or "update"
	Path   string // as the patch names it
	MoveTo string // update: the new path of a moved file
	Body   string // add: the "+" lines; update: the hunks; delete: ""
}

// Stats counts what writing patches did.
type Stats struct {
	Sections int
	Hunks    int
	// Headers counts hunks introduced by "@@ <line>", Repeated those
	// whose line is found only before where the previous hunk ended (the
	// same function as the previous hunk's, or one the patch passed):
	// the hunks a position-keeping header rule is for.
	Headers, Repeated int
	// Dropped counts hunks written with a bare "@@" because their header
	// line would have misled: it recurs after the hunk, or the hunk's
	// lines also occur between it and the previous hunk.
	Dropped int
	// Widened counts hunks given more leading context than usual so that
	// they match only where they belong.
	Widened int
	// EndOfFile counts hunks closed by "*** End of File".
	EndOfFile int
}

// Add adds o's counts to s.
func (s *Stats) Add(o Stats) {
	s.Sections += o.Sections
	s.Hunks += o.Hunks
	s.Headers += o.Headers
	s.Repeated += o.Repeated
	s.Dropped += o.Dropped
	s.Widened += o.Widened
	s.EndOfFile += o.EndOfFile
}

// Sections writes the patch sections that make c's changes, in the given
// style, with prefix put before every path.
func (c *Commit) Sections(style Style, prefix string) ([]Section, Stats) {
	var secs []Section
	var st Stats
	for _, f := range c.Files {
		switch {
		case f.From == "":
			secs = append(secs, addSection(prefix+f.To, f.After))
		case f.To == "":
			secs = append(secs, Section{Op: "delete", Path: prefix + f.From})
		case len(f.Before) == 0 && len(f.After) == 0:
			// An empty file has no line for a hunk to match: a rename
			// of one is a deletion and an addition.
			secs = append(secs, Section{Op: "delete", Path: prefix + f.From}, addSection(prefix+f.To, nil))
		default:
			body, s := updateBody(f, style)
			st.Add(s)
			sec := Section{Op: "update", Path: prefix + f.From, Body: body}
			if f.To != f.From {
				sec.MoveTo = prefix + f.To
			}
			secs = append(secs, sec)
		}
	}
	st.Sections = len(secs)
	return secs, st
}

func addSection(path string, content []byte) Section {
	var b strings.Builder
	for _, l := range splitLines(content) {
		b.WriteString("+" + lineText(l) + "\n")
	}
	return Section{Op: "add", Path: path, Body: b.String()}
}

// Text is the whole patch of secs.
func Text(secs []Section) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	for _, s := range secs {
		switch s.Op {
		case "add":
			b.WriteString("*** Add File: " + s.Path + "\n")
		case "delete":
			b.WriteString("*** Delete File: " + s.Path + "\n")
		default:
			b.WriteString("*** Update File: " + s.Path + "\n")
			if s.MoveTo != "" {
				b.WriteString("*** Move to: " + s.MoveTo + "\n")
			}
		}
		b.WriteString(s.Body)
	}
	b.WriteString("*** End Patch\n")
	return b.String()
}

// hunk is a run of ops: changes with the unchanged lines around them.
type hunk struct {
	ops  []textdiff.Op
	s, e int // the old lines it covers: [s, e)
}

// hunks groups a diff's changes with contextLines unchanged lines around
// each, merging changes whose context would overlap or touch.
func hunks(ops []textdiff.Op) []hunk {
	var out []hunk
	for i := 0; i < len(ops); {
		if ops[i].Kind == ' ' {
			i++
			continue
		}
		lo := i
		for k := 0; k < contextLines && lo > 0 && ops[lo-1].Kind == ' '; k++ {
			lo--
		}
		// Extend over changes separated by at most twice the context.
		end := i
		for {
			for end < len(ops) && ops[end].Kind != ' ' {
				end++
			}
			gap := 0
			for end+gap < len(ops) && ops[end+gap].Kind == ' ' {
				gap++
			}
			if end+gap < len(ops) && gap <= 2*contextLines {
				end += gap
				continue
			}
			end += min(gap, contextLines)
			break
		}
		h := hunk{ops: ops[lo:end]}
		h.s = ops[lo].A
		h.e = h.s
		for _, o := range h.ops {
			if o.Kind != '+' {
				h.e++
			}
		}
		out = append(out, h)
		i = end
	}
	return out
}

// updateBody writes the hunks of an update, each placed the way apply_patch
// places it: its header (if any) sought from where the previous hunk
// ended, or, when it is not found there, kept where it is if it was passed;
// its lines sought from there, the first match taken. Where that would
// land elsewhere than the change, the hunk gets more leading context, or
// loses a header that would mislead, as a careful writer does.
func updateBody(f File, style Style) (string, Stats) {
	var st Stats
	before, after := splitLines(f.Before), splitLines(f.After)
	texts, atexts := make([]string, len(before)), make([]string, len(after))
	for i, l := range before {
		texts[i] = lineText(l)
	}
	for i, l := range after {
		atexts[i] = lineText(l)
	}
	hs := hunks(textdiff.Lines(before, after, maxEdit))
	if len(hs) == 0 {
		// A pure rename still needs a hunk: its first line, unchanged.
		st.Hunks++
		return "@@\n " + texts[0] + "\n", st
	}
	isGo := strings.HasSuffix(f.From, ".go")
	var b strings.Builder
	pos := 0
	var taken [][2]int // the old lines earlier hunks replace
	for _, h := range hs {
		st.Hunks++
		old := texts[h.s:h.e]
		eof := h.e == len(texts) && h.s < h.e
		hdr, lead := "", h.s
		if len(old) > 0 {
			var ok bool
			if style == Headers {
				if hi := headerLine(texts, h.s, isGo); hi >= 0 {
					hdr, lead, ok = placeUnder(texts, hi, old, h.s, pos, eof, taken, &st)
					if !ok {
						hdr = ""
						st.Dropped++
					}
				}
			}
			if !ok {
				lead = pos
				if eof || firstBlock(texts, old, pos) == h.s {
					lead = h.s
				}
			}
			if lead < h.s {
				st.Widened++
			}
		}
		if hdr != "" {
			st.Headers++
			b.WriteString("@@ " + hdr + "\n")
		} else {
			b.WriteString("@@\n")
		}
		for _, t := range texts[lead:h.s] {
			b.WriteString(" " + t + "\n")
		}
		for _, o := range h.ops {
			switch o.Kind {
			case ' ':
				b.WriteString(" " + texts[o.A] + "\n")
			case '-':
				b.WriteString("-" + texts[o.A] + "\n")
			default:
				b.WriteString("+" + atexts[o.B] + "\n")
			}
		}
		if eof {
			st.EndOfFile++
			b.WriteString("*** End of File\n")
		}
		if h.e > h.s {
			taken = append(taken, [2]int{h.s, h.e})
		}
		pos = h.e
	}
	return b.String(), st
}

// placeUnder places a hunk of old lines at s under the header line texts[hi]
// with the search at pos, and returns the header and the first line of its
// (maybe widened) context; false when the header would mislead.
func placeUnder(texts []string, hi int, old []string, s, pos int, eof bool, taken [][2]int, st *Stats) (string, int, bool) {
	hdr := texts[hi]
	if hdr != strings.TrimRightFunc(hdr, unicode.IsSpace) {
		return "", 0, false // read without its trailing blanks, it would match loosely
	}
	from, behind, later := -1, -1, -1
	if f := slices.Index(texts[pos:], hdr); f >= 0 && pos+f <= hi {
		from = pos + f + 1
	} else {
		if f >= 0 {
			// A copy after the hunk's start: apply_patch goes there
			// first, and keeps the position only if the hunk's lines are
			// not found after it.
			later = pos + f
		} else {
			for i := pos; i < len(texts); i++ {
				if loose(texts[i]) == loose(hdr) {
					return "", 0, false // a lenient pass would find this after pos, somewhere
				}
			}
		}
		behind = pos - 1
		for texts[behind] != hdr {
			behind--
		}
		from = pos
	}
	lead := s
	if !eof && firstBlock(texts, old, from) != s {
		lead = from
	}
	block := texts[lead : s+len(old)]
	if later >= 0 && !eof && looseBlock(texts, block, later+1) {
		return "", 0, false // the hunk would apply after the later copy
	}
	if behind >= 0 && !eof && occursFree(texts, block, behind+1, pos, taken) {
		return "", 0, false // apply_patch refuses this as ambiguous
	}
	if behind >= 0 {
		st.Repeated++
	}
	return hdr, lead, true
}

// headerLine returns the index of the line git's hunk header would name
// for a hunk starting at line s, or -1.
func headerLine(texts []string, s int, isGo bool) int {
	for i := s - 1; i >= 0; i-- {
		t := texts[i]
		if isGo {
			if strings.HasPrefix(t, "func ") || strings.HasPrefix(t, "type ") {
				return i
			}
			continue
		}
		if t != "" && (t[0] == '_' || t[0] == '$' || t[0] < 0x80 && unicode.IsLetter(rune(t[0]))) {
			return i
		}
	}
	return -1
}

// loose is a line as the most lenient comparison of apply_patch might see
// it, and more: trimmed, with every non-ASCII rune and every ASCII
// character punctuation folding touches made the same.
func loose(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 0x80 || r == '-' || r == '\'' || r == '"' || unicode.IsSpace(r) {
			return '?'
		}
		return r
	}, strings.TrimSpace(s))
}

// firstBlock returns the first index at or after from where block occurs
// exactly in texts, or -1.
func firstBlock(texts, block []string, from int) int {
	for i := from; i+len(block) <= len(texts); i++ {
		if slices.Equal(texts[i:i+len(block)], block) {
			return i
		}
	}
	return -1
}

// looseBlock reports whether block occurs at or after from in texts when
// lines are compared as loosely as any pass of apply_patch does, or more.
func looseBlock(texts, block []string, from int) bool {
next:
	for i := from; i+len(block) <= len(texts); i++ {
		for j, l := range block {
			if loose(texts[i+j]) != loose(l) {
				continue next
			}
		}
		return true
	}
	return false
}

// occursFree reports whether block occurs exactly within [from, to) of
// texts without overlapping the lines of taken.
func occursFree(texts, block []string, from, to int, taken [][2]int) bool {
next:
	for i := from; i+len(block) <= to; i++ {
		if !slices.Equal(texts[i:i+len(block)], block) {
			continue
		}
		for _, t := range taken {
			if t[0] < i+len(block) && i < t[1] {
				continue next
			}
		}
		return true
	}
	return false
}
