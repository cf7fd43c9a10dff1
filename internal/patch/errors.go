package patch

import (
	"fmt"
	"strings"
)

// ParseError is a patch that does not follow the format: what was found on
// a line and what was expected there.
type ParseError struct {
	Line int    // 1-based line of the offending text
	Msg  string // what was found there and what was expected
}

// Error returns "line N: <Msg>".
func (e *ParseError) Error() string {
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

// ContextError is a hunk that could not be located in the file: an "@@"
// header line, or the hunk's context and removed lines, were not found
// where they had to be, or (Ambiguous) the hunk could apply in two places.
type ContextError struct {
	Hunk    int      // 1-based index of the failing hunk within its section
	Line    int      // that hunk's Line in the patch
	Header  bool     // true when it was an "@@ header" line that was not found (or, Ambiguous, a hunk of added lines only under it), false when the hunk's old lines were not found
	Sought  []string // the lines sought (the header alone, or the hunk's Old lines)
	Closest Region   // the region of the file that best resembles Sought (Ambiguous: where they occur between the header and the previous hunk, or the header's surroundings); zero when the file is empty

	// Ambiguous is set when the hunk's last "@@" header line was found
	// only before where the previous hunk ended, at line HeaderAt, and the
	// hunk does not say which of two places it means: it has only added
	// lines (they could go right after the header or after the previous
	// hunk), or its old lines occur both between the header and the
	// previous hunk (Closest) and after the previous hunk, at line Later.
	Ambiguous bool
	HeaderAt  int // Ambiguous: 1-based line of the header
	Later     int // Ambiguous with old lines: 1-based line where they occur after the previous hunk
}

// Region is a run of lines of a file.
type Region struct {
	Start int      // 1-based line number of Lines[0]
	Lines []string // the lines' text, without line endings
}

// Error says which hunk failed, what it looked for, and which part of the
// file comes closest, with line numbers, so that a model can correct its
// patch without reading the file again.
func (e *ContextError) Error() string {
	if e.Ambiguous {
		return e.ambiguity()
	}
	var b strings.Builder
	if e.Header {
		hdr := ""
		if len(e.Sought) > 0 {
			hdr = e.Sought[0]
		}
		fmt.Fprintf(&b, "hunk %d (patch line %d): its header line %s was not found in the file; a header must be a line of the file (copied exactly, e.g. the signature of the enclosing function or class) after the previous hunk, or the one the previous hunk is under, and after the hunk's earlier '@@' lines.\n", e.Hunk, e.Line, quote("@@ "+hdr))
	} else {
		fmt.Fprintf(&b, "hunk %d (patch line %d): its old lines (the ' ' context and '-' removed lines, %s) were not found in the file at or after the place where the previous hunk (or this hunk's '@@' header) matched:\n", e.Hunk, e.Line, countLines(len(e.Sought), "line", "lines"))
		writeSought(&b, e.Sought)
	}

	if len(e.Closest.Lines) == 0 {
		b.WriteString("The file is empty.\n")
	} else {
		r := e.Closest
		what := "the part of the file that looks most like them"
		if e.Header {
			what = "the part of the file with the line that looks most like it"
		}
		writeRegion(&b, r, what)
		if at := occurrence(r, e.Sought); at > 0 {
			fmt.Fprintf(&b, "The sought lines do occur at line %d, but not where this hunk may match: hunks must come in file order, each after the previous hunk and after its own '@@' lines, and a hunk closed by '*** End of File' must match the last lines of the file.\n", at)
		}
	}
	if e.Header {
		b.WriteString("Fix the patch: make the '@@' header line match a line of the file exactly, or drop it and rely on the hunk's context lines.")
	} else {
		b.WriteString("Fix the patch's context lines to match the file: every ' ' (context) and '-' (removed) line must equal a line of the file, in order and with the same indentation; re-read the file if it may have changed.")
	}
	return b.String()
}

// writeSought lists the lines a hunk sought, at most shownMax of them.
func writeSought(b *strings.Builder, sought []string) {
	for i, l := range sought {
		if i == shownMax {
			fmt.Fprintf(b, "  … (%d more)\n", len(sought)-shownMax)
			break
		}
		fmt.Fprintf(b, "  | %s\n", clip(l))
	}
}

func countLines(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// clip shortens a line of the file for display like quote does.
func clip(s string) string {
	q := quote(s)
	return q[1 : len(q)-1]
}

// occurrence returns the line number where all of sought occurs within r,
// compared loosely, or 0: the lines exist, so the hunk failed for where it
// looked rather than for what it looked for.
func occurrence(r Region, sought []string) int {
	if len(sought) == 0 || len(sought) > len(r.Lines) {
		return 0
	}
next:
	for i := 0; i+len(sought) <= len(r.Lines); i++ {
		for j, s := range sought {
			if looseKey(r.Lines[i+j]) != looseKey(s) {
				continue next
			}
		}
		return r.Start + i
	}
	return 0
}

// ambiguity words an Ambiguous error.
func (e *ContextError) ambiguity() string {
	var b strings.Builder
	if e.Header {
		hdr := ""
		if len(e.Sought) > 0 {
			hdr = e.Sought[0]
		}
		fmt.Fprintf(&b, "hunk %d (patch line %d) is ambiguous: its header line %s matches line %d, before where the previous hunk ended, and the hunk has only added lines, so nothing says whether they go right after that line or after the previous hunk.\n", e.Hunk, e.Line, quote("@@ "+hdr), e.HeaderAt)
	} else {
		fmt.Fprintf(&b, "hunk %d (patch line %d) is ambiguous: its last '@@' header line matches line %d, before where the previous hunk ended, and its old lines (%s) occur both between that line and the previous hunk, at line %d, and after the previous hunk, at line %d:\n", e.Hunk, e.Line, e.HeaderAt, countLines(len(e.Sought), "line", "lines"), occurrenceOr(e.Closest, e.Sought), e.Later)
		writeSought(&b, e.Sought)
	}
	writeRegion(&b, e.Closest, "the file around line "+fmt.Sprint(e.Closest.Start))
	b.WriteString("Fix the patch: write hunks in file order, and give this hunk a context line that occurs only where it belongs (a ' ' line before its changes), or an '@@' line closer to it.")
	return b.String()
}

// occurrenceOr is occurrence, or the region's first line when the lines
// are not there.
func occurrenceOr(r Region, sought []string) int {
	if at := occurrence(r, sought); at > 0 {
		return at
	}
	return r.Start
}

// writeRegion shows r with line numbers under a "This is <what>" line.
func writeRegion(b *strings.Builder, r Region, what string) {
	if len(r.Lines) == 0 {
		return
	}
	end := r.Start + len(r.Lines) - 1
	span := fmt.Sprintf("lines %d-%d", r.Start, end)
	if end == r.Start {
		span = fmt.Sprintf("line %d", end)
	}
	fmt.Fprintf(b, "This is %s (%s):\n", what, span)
	width := len(fmt.Sprint(end))
	for i, l := range r.Lines {
		fmt.Fprintf(b, "  %*d | %s\n", width, r.Start+i, clip(l))
	}
}
