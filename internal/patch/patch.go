// Package patch parses and applies patches in OpenAI's "V4A" apply_patch
// format, the format models trained for Codex write:
//
//	*** Begin Patch
//	*** Add File: path/new.txt
//	+first line
//	*** Update File: path/old.go
//	*** Move to: path/renamed.go
//	@@ func main() {
//	 	context
//	-	removed
//	+	added
//	*** Delete File: path/gone.txt
//	*** End Patch
//
// It follows the reference implementation in OpenAI Codex
// (codex-rs/apply-patch) so that patches models learned to write there
// behave the same here, with a few deliberate leniencies that are
// documented where they are implemented. It works on strings only: reading
// and writing files is the caller's business.
package patch

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind of a file section.
type Kind int

const (
	// Add creates a file whose content is the section's Contents.
	Add Kind = iota + 1
	// Delete removes a file.
	Delete
	// Update changes an existing file with the section's Hunks, and renames
	// it when MoveTo is set.
	Update
)

// Patch is a parsed patch: its file sections in order.
type Patch struct {
	Sections []Section
}

// Section is one "*** Add File:", "*** Delete File:" or "*** Update File:"
// operation.
type Section struct {
	Kind     Kind
	Path     string // as written in the patch (trimmed)
	MoveTo   string // Update with "*** Move to:"; "" otherwise
	Contents string // Add: the new file's content: every "+" line without its "+", each followed by "\n"
	Hunks    []Hunk // Update: at least one
	Line     int    // 1-based line of the section's header in the patch text as given
}

// Hunk is one change of an Update section.
type Hunk struct {
	Contexts []string // the "@@ <header>" texts in order (none for a bare "@@" or a first hunk without "@@")
	Old      []string // context and removed lines, in order (without prefix)
	New      []string // context and added lines, in order (without prefix)
	EOF      bool     // "*** End of File" closed the hunk
	Line     int      // 1-based line in the patch text where the hunk starts
	// Body is the kind of each body line in order: ' ' (context, in Old
	// and New), '-' (Old only) or '+' (New only). Apply uses it to keep
	// the file's own context lines; a Hunk without it is applied as the
	// reference does.
	Body string
}

const (
	beginMarker  = "*** Begin Patch"
	endMarker    = "*** End Patch"
	addMarker    = "*** Add File:"
	deleteMarker = "*** Delete File:"
	updateMarker = "*** Update File:"
	moveMarker   = "*** Move to:"
	eofMarker    = "*** End of File"
)

// validHeaders is quoted by every error about a line that should have
// started a file section, so the model sees the three accepted forms.
const validHeaders = "'*** Add File: <path>', '*** Delete File: <path>' or '*** Update File: <path>'"

// Parse parses a whole patch, from "*** Begin Patch" to "*** End Patch".
// Errors are *ParseError; their line numbers count the lines of text as
// given, leading blank lines included.
func Parse(text string) (*Patch, error) {
	lines := splitLines(text)
	first, last := -1, -1
	for i, l := range lines {
		if !isBlank(l) {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return nil, &ParseError{Line: 1, Msg: "the patch is empty; it must start with a '*** Begin Patch' line and end with a '*** End Patch' line"}
	}
	begin, end, err := envelope(lines, first, last)
	if err != nil {
		return nil, err
	}
	p := &Patch{}
	if err := parseSections(lines, begin+1, end, p); err != nil {
		return nil, err
	}
	if len(p.Sections) == 0 {
		return nil, &ParseError{Line: end + 1, Msg: "the patch has no file sections; put at least one " + validHeaders + " section between '*** Begin Patch' and '*** End Patch'"}
	}
	return p, nil
}

// ParseHunks parses the hunks of one file and nothing else: the "diff" of
// an update_file operation of the Responses API apply_patch tool, which has
// no "*** Begin Patch" envelope and no file header. Errors are *ParseError,
// with lines numbered within diff.
func ParseHunks(diff string) ([]Hunk, error) {
	lines := splitLines(diff)
	end := len(lines)
	// The reference trims the patch text before parsing it; trailing blank
	// lines here would otherwise become "" context lines of the last hunk.
	for end > 0 && isBlank(lines[end-1]) {
		end--
	}
	hunks, _, err := parseHunkList(lines, 0, end, false)
	if err != nil {
		return nil, err
	}
	if len(hunks) == 0 {
		return nil, &ParseError{Line: 1, Msg: "the diff has no hunks; write at least one hunk: an optional '@@' or '@@ <line of the file>' line, then lines starting with ' ' (context), '-' (removed) or '+' (added)"}
	}
	return hunks, nil
}

// ParseAddBody parses the "diff" of a create_file operation of the
// Responses API apply_patch tool: every line is "+" followed by a line of
// the new file. It returns the file content, each line followed by "\n".
// The empty line after a final newline of diff is not a line of the file.
// Errors are *ParseError naming the offending line.
func ParseAddBody(diff string) (string, error) {
	if diff == "" {
		return "", nil
	}
	parts := strings.Split(diff, "\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	var b strings.Builder
	b.Grow(len(diff))
	for i, p := range parts {
		p = strings.TrimSuffix(p, "\r")
		rest, ok := strings.CutPrefix(p, "+")
		if !ok {
			return "", &ParseError{Line: i + 1, Msg: fmt.Sprintf("expected a line starting with '+', got %s; every line of a create_file diff is '+' followed by a line of the new file (an empty line is a lone '+')", quote(p))}
		}
		b.WriteString(rest)
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// splitLines splits like Rust's str::lines, which the reference uses: on
// "\n", dropping one "\r" before it, with no empty line after a final
// "\n". Line i of the result is line i+1 of text.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

func isBlank(s string) bool {
	return strings.TrimSpace(s) == ""
}

func trimRight(s string) string {
	return strings.TrimRightFunc(s, unicode.IsSpace)
}

// envelope finds the "*** Begin Patch" and "*** End Patch" lines, given the
// first and last non-blank lines, and returns their indices.
func envelope(lines []string, first, last int) (begin, end int, err error) {
	strict := checkMarkers(lines, first, last)
	if strict == nil {
		return first, last, nil
	}
	// Models driving a shell tool sometimes pass the heredoc of
	// `apply_patch <<'EOF'` as the patch itself; the reference accepts a
	// bare <<EOF form, and boris also the whole command line, because the
	// model's intent is unambiguous.
	if last-first+1 >= 4 && heredocMatches(strings.TrimSpace(lines[first]), trimRight(lines[last])) {
		if err := checkMarkers(lines, first+1, last-1); err != nil {
			return 0, 0, err
		}
		return first + 1, last - 1, nil
	}
	return 0, 0, strict
}

func checkMarkers(lines []string, first, last int) error {
	if got := strings.TrimSpace(lines[first]); got != beginMarker {
		return &ParseError{Line: first + 1, Msg: fmt.Sprintf("the first line of the patch must be '*** Begin Patch', got %s", quote(got))}
	}
	if got := strings.TrimSpace(lines[last]); first == last || got != endMarker {
		return &ParseError{Line: last + 1, Msg: fmt.Sprintf("the last line of the patch must be '*** End Patch', got %s; end the patch with a '*** End Patch' line", quote(got))}
	}
	return nil
}

// heredocMatches reports whether first opens a heredoc that last closes.
func heredocMatches(first, last string) bool {
	switch first {
	case "<<EOF", "<<'EOF'", `<<"EOF"`:
		// The reference only asks that the last line end with EOF.
		return strings.HasSuffix(last, "EOF")
	}
	rest, ok := strings.CutPrefix(first, "apply_patch")
	if !ok {
		rest, ok = strings.CutPrefix(first, "applypatch")
	}
	if !ok {
		return false
	}
	rest, ok = strings.CutPrefix(strings.TrimLeftFunc(rest, unicode.IsSpace), "<<")
	if !ok {
		return false
	}
	word := strings.TrimSpace(rest)
	if n := len(word); n >= 2 && (word[0] == '\'' || word[0] == '"') {
		if word[n-1] != word[0] {
			return false
		}
		word = word[1 : n-1]
	}
	if word == "" {
		return false
	}
	for _, r := range word {
		if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return strings.TrimSpace(last) == word
}

// sectionPath matches a trimmed line against a file-section marker (given
// without its trailing space) and returns the trimmed path after it.
func sectionPath(t, marker string) (path string, ok bool) {
	if t == marker {
		return "", true
	}
	rest, ok := strings.CutPrefix(t, marker+" ")
	if !ok {
		return "", false
	}
	return strings.TrimSpace(rest), true
}

func emptyPathError(i int, marker string) error {
	return &ParseError{Line: i + 1, Msg: fmt.Sprintf("'%s' has no path; write '%s <path>'", marker, marker)}
}

// parseSections parses lines[i:end], the body between the markers.
func parseSections(lines []string, i, end int, p *Patch) error {
	var prev Kind
	for i < end {
		t := strings.TrimSpace(lines[i])
		if path, ok := sectionPath(t, addMarker); ok {
			if path == "" {
				return emptyPathError(i, addMarker)
			}
			sec := Section{Kind: Add, Path: path, Line: i + 1}
			i++
			var b strings.Builder
			for i < end {
				rest, ok := strings.CutPrefix(lines[i], "+")
				if !ok {
					break
				}
				b.WriteString(rest)
				b.WriteByte('\n')
				i++
			}
			sec.Contents = b.String()
			p.Sections = append(p.Sections, sec)
			prev = Add
			continue
		}
		if path, ok := sectionPath(t, deleteMarker); ok {
			if path == "" {
				return emptyPathError(i, deleteMarker)
			}
			p.Sections = append(p.Sections, Section{Kind: Delete, Path: path, Line: i + 1})
			i++
			prev = Delete
			continue
		}
		if path, ok := sectionPath(t, updateMarker); ok {
			if path == "" {
				return emptyPathError(i, updateMarker)
			}
			sec := Section{Kind: Update, Path: path, Line: i + 1}
			i++
			// The reference wants "*** Move to: " at the very start of the
			// line; boris also takes it padded, like the other markers.
			if i < end {
				if to, ok := sectionPath(strings.TrimSpace(lines[i]), moveMarker); ok {
					if to == "" {
						return emptyPathError(i, moveMarker)
					}
					sec.MoveTo = to
					i++
				}
			}
			hunks, next, err := parseHunkList(lines, i, end, true)
			if err != nil {
				return err
			}
			if len(hunks) == 0 {
				return &ParseError{Line: sec.Line, Msg: fmt.Sprintf("update file section for %s is empty: add at least one hunk ('@@', then lines starting with ' ' (context), '-' (removed) or '+' (added))", quote(path))}
			}
			sec.Hunks = hunks
			i = next
			p.Sections = append(p.Sections, sec)
			prev = Update
			continue
		}
		msg := fmt.Sprintf("%s is not a valid file header; expected %s", quote(t), validHeaders)
		switch {
		case strings.HasPrefix(t, moveMarker):
			msg += "; '*** Move to: <path>' must come right after the '*** Update File: <path>' line"
		case t == "" && prev == Add:
			msg += "; inside an '*** Add File:' section every line is content and starts with '+', so an empty line of the new file is a lone '+'"
		case t == "":
			msg += "; remove the empty line, no blank lines go between file sections"
		case prev == Add:
			msg += "; inside an '*** Add File:' section every line of the new file starts with '+'"
		}
		return &ParseError{Line: i + 1, Msg: msg}
	}
	return nil
}

// parseHunkList parses the hunks starting at lines[i] and returns them with
// the index of the first line after them. In a patch (inSection) a line
// starting with "*" ends the list, as it begins the next section; in a bare
// update_file diff there is no next section, so such a line is an error.
func parseHunkList(lines []string, i, end int, inSection bool) ([]Hunk, int, error) {
	var hunks []Hunk
	for i < end {
		l := lines[i]
		if isBlank(l) {
			i++
			continue
		}
		if strings.HasPrefix(l, "*") {
			if inSection {
				break
			}
			return nil, 0, &ParseError{Line: i + 1, Msg: fmt.Sprintf("unexpected line %s; the diff of an update_file operation holds only hunks ('@@' lines and lines starting with ' ', '+' or '-', optionally closed by '*** End of File'), no '*** ' patch headers", quote(l))}
		}
		if len(hunks) > 0 {
			if _, ok := atHeader(l); !ok {
				return nil, 0, &ParseError{Line: i + 1, Msg: fmt.Sprintf("expected the hunk to start with a '@@' line, got %s; start each hunk after the first with '@@' (or '@@ <a line of the file above the change>'), and if this line belongs to the previous hunk, prefix it with ' ' (context), '-' (removed) or '+' (added)", quote(l))}
			}
		}
		h, next, err := parseHunk(lines, i, end)
		if err != nil {
			return nil, 0, err
		}
		hunks = append(hunks, h)
		i = next
	}
	return hunks, i, nil
}

// parseHunk parses one hunk starting at lines[i]: its "@@" lines, if any,
// then its body.
func parseHunk(lines []string, i, end int) (Hunk, int, error) {
	h := Hunk{Line: i + 1}
	sawHeader := false
	// The reference takes one "@@" line per hunk; its own tool instructions
	// nevertheless tell models to stack several "@@ <header>" lines to
	// narrow the search, so boris collects them all, in order.
	for i < end {
		hdr, ok := atHeader(lines[i])
		if !ok {
			break
		}
		sawHeader = true
		if hdr != "" {
			h.Contexts = append(h.Contexts, hdr)
		}
		i++
	}
	body := 0
	for i < end {
		l := lines[i]
		// Only trailing whitespace is forgiven: a line " *** End of File"
		// is a context line of a file that contains that text.
		if trimRight(l) == eofMarker {
			if body == 0 {
				return Hunk{}, 0, emptyHunkError(h.Line)
			}
			h.EOF = true
			i++
			break
		}
		if l == "" {
			// Editors and models strip the lone space of an empty context
			// line; the reference reads it back as one.
			h.Old = append(h.Old, "")
			h.New = append(h.New, "")
			h.Body += " "
		} else {
			switch l[0] {
			case ' ':
				h.Old = append(h.Old, l[1:])
				h.New = append(h.New, l[1:])
				h.Body += " "
			case '+':
				h.New = append(h.New, l[1:])
				h.Body += "+"
			case '-':
				h.Old = append(h.Old, l[1:])
				h.Body += "-"
			default:
				if body > 0 {
					// The next hunk or section starts here.
					return h, i, nil
				}
				if sawHeader && strings.HasPrefix(l, "*") {
					return Hunk{}, 0, emptyHunkError(h.Line)
				}
				msg := fmt.Sprintf("unexpected line %s in update hunk; every line must start with ' ' (context), '+' (added) or '-' (removed)", quote(l))
				if strings.HasPrefix(l, "@@") {
					msg += "; a hunk header is '@@' alone or '@@ ' followed by a line of the file"
				}
				return Hunk{}, 0, &ParseError{Line: i + 1, Msg: msg}
			}
		}
		body++
		i++
	}
	if body == 0 {
		return Hunk{}, 0, emptyHunkError(h.Line)
	}
	return h, i, nil
}

func emptyHunkError(line int) error {
	return &ParseError{Line: line, Msg: "update hunk has no lines; after its '@@' line a hunk needs at least one line starting with ' ' (context), '-' (removed) or '+' (added)"}
}

// atHeader reports whether l is a hunk's "@@" line and returns its header
// text, "" when there is none.
func atHeader(l string) (string, bool) {
	// Trailing whitespace is dropped (a deliberate leniency: the reference
	// would read "@@ " as a header of "" and "@@  x " as " x ").
	t := trimRight(l)
	if t == "@@" {
		return "", true
	}
	rest, ok := strings.CutPrefix(t, "@@ ")
	if !ok {
		return "", false
	}
	// Models trained on unified diffs write "@@ -12,5 +12,6 @@ func f()".
	// The line numbers locate nothing here; the text after them, if any, is
	// a usable header (git puts the enclosing function there).
	if after, ok := cutUnifiedRange(rest); ok {
		return after, true
	}
	return rest, true
}

// cutUnifiedRange recognises "-a,b +c,d @@ rest" and returns rest, trimmed.
func cutUnifiedRange(s string) (string, bool) {
	s, ok := cutRange(s, '-')
	if !ok {
		return "", false
	}
	s = strings.TrimLeft(s, " \t")
	s, ok = cutRange(s, '+')
	if !ok {
		return "", false
	}
	s = strings.TrimLeft(s, " \t")
	if s == "@@" {
		return "", true
	}
	rest, ok := strings.CutPrefix(s, "@@")
	if !ok || (rest[0] != ' ' && rest[0] != '\t') {
		return "", false
	}
	return strings.TrimSpace(rest), true
}

// cutRange cuts a unified-diff range "<sign>N" or "<sign>N,M" from s.
func cutRange(s string, sign byte) (string, bool) {
	if len(s) == 0 || s[0] != sign {
		return "", false
	}
	s = s[1:]
	n := digits(s)
	if n == 0 {
		return "", false
	}
	s = s[n:]
	if len(s) > 0 && s[0] == ',' {
		n = digits(s[1:])
		if n == 0 {
			return "", false
		}
		s = s[1+n:]
	}
	if len(s) > 0 && s[0] != ' ' && s[0] != '\t' {
		return "", false
	}
	return s, true
}

func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// quote puts a line between single quotes for an error message, shortened
// so that one huge line cannot flood the model's context.
func quote(s string) string {
	const limit = 160
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return "'" + s + "'"
}
