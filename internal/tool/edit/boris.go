package edit

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/boris-mcp/boris/internal/files"
	"github.com/boris-mcp/boris/internal/tool"
)

// Limits of boris's own view.
const (
	maxViewLines = 2000
	maxLineChars = 2000
)

// borisViewLimits are the limits of a default-mode view: the first
// maxViewLines lines without a range, every line cut at maxLineChars, and
// no more text than an answer may hold (maxAnswer characters, 0: no bound).
func borisViewLimits(rng *files.Range, maxAnswer int) files.ViewLimits {
	lim := files.ViewLimits{MaxLineChars: maxLineChars, Hidden: true, MaxChars: maxAnswer}
	if rng == nil {
		lim.MaxLines = maxViewLines
	}
	return lim
}

// borisFit keeps of a view what boris's rendering of it can show within
// maxAnswer characters (0: no bound), leaving room for the note that
// says how to see the rest; it reports whether it cut anything.
func borisFit(res *files.ViewResult, maxAnswer int) bool {
	if maxAnswer <= 0 {
		return false
	}
	budget := maxAnswer - 200
	switch res.Kind {
	case files.ViewDir:
		n := 0
		for i, e := range res.Dir.Entries {
			n += utf8.RuneCountInString(e.Rel) + utf8.RuneCountInString(e.Target) + 5
			if n > budget {
				res.Dir.Keep(i)
				return true
			}
		}
	case files.ViewText:
		l := &res.Lines
		n := 0
		for i := 0; i < l.Len(); i++ {
			text, chars := l.Line(i)
			n += 8 + utf8.RuneCount(text)
			if chars > maxLineChars {
				n += 40
			}
			// The first line is always shown: a view says something.
			if n > budget && i > 0 {
				l.Keep(i)
				return true
			}
		}
	}
	return false
}

// borisView renders a text, binary, empty or directory view (images are
// returned as images by the caller); cut says the answer's bound,
// maxAnswer, stopped it (see borisFit).
func borisView(res *files.ViewResult, rng *files.Range, cut bool, maxAnswer int) string {
	switch res.Kind {
	case files.ViewEmpty:
		return fmt.Sprintf("%s is empty (0 bytes).", res.Path)
	case files.ViewBinary:
		return fmt.Sprintf("Binary file (%s): %s", files.HumanSize(res.Size), res.Path)
	case files.ViewDir:
		return borisListing(res, cut, maxAnswer)
	}
	l := &res.Lines
	out := make([]byte, 0, 64*l.Len())
	for i := 0; i < l.Len(); i++ {
		text, chars := l.Line(i)
		out = tool.AppendLineNo(out, l.Start+i)
		out = append(out, text...)
		if chars > maxLineChars {
			out = fmt.Appendf(out, "… [line truncated: %d characters]", chars)
		}
		out = append(out, '\n')
	}
	switch {
	case cut || l.More && (rng != nil || l.Len() < maxViewLines):
		// The answer's bound (in the rendering, or on the text collected,
		// which is the same bound), not the first maxViewLines: what
		// follows is the next part.
		first, last := l.Start, l.Start+l.Len()-1
		end := l.Total
		if rng != nil && rng.End != -1 {
			end = min(rng.End, l.Total)
		}
		out = fmt.Appendf(out, "\n[Showing lines %d-%d of %d: an answer holds at most %d characters (--max-answer). Use view_range [%d, %d] to see the next part.]\n",
			first, last, l.Total, maxAnswer, last+1, min(end, last+l.Len()))
	case rng == nil && l.More:
		out = fmt.Appendf(out, "\n[Showing lines 1-%d of %d. Use view_range to see more, e.g. [%d, %d].]\n", l.Len(), l.Total, l.Len()+1, min(l.Total, 2*l.Len()))
	}
	return string(out)
}

func borisListing(res *files.ViewResult, cut bool, maxAnswer int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Directory %s (2 levels deep; .git and node_modules not listed):\n", res.Path)
	if len(res.Dir.Entries) == 0 {
		b.WriteString("(empty directory)\n")
	}
	for _, e := range res.Dir.Entries {
		b.WriteString(e.Rel)
		switch {
		case e.Symlink:
			b.WriteString(" -> ")
			b.WriteString(e.Target)
		case e.Dir:
			b.WriteByte('/')
		}
		b.WriteByte('\n')
	}
	switch {
	case cut:
		fmt.Fprintf(&b, "[Listing cut after %d entries: an answer holds at most %d characters (--max-answer); view a subdirectory or use find for more.]\n", len(res.Dir.Entries), maxAnswer)
	case res.Dir.Truncated:
		fmt.Fprintf(&b, "[Listing capped at %d entries; view a subdirectory or use find for more.]\n", res.Dir.Max)
	}
	return b.String()
}

// snippetContext is how many unchanged lines boris's snippet shows around
// an edit.
const snippetContext = 4

// borisReplace renders a str_replace.
func borisReplace(r *files.ReplaceResult, all bool) string {
	head := fmt.Sprintf("The file %s has been edited.", r.Path)
	if all {
		head = fmt.Sprintf("The file %s has been edited: replaced %d occurrence%s.", r.Path, r.Count, tool.Plural(r.Count))
	}
	last := r.Line + strings.Count(r.NewStr, "\n")
	return head + " Here is a snippet of the result (cat -n format):\n" + borisSnippet(r.Content, r.Line, last)
}

// borisCreate renders a create.
func borisCreate(r *files.CreateResult) string {
	verb := "Created"
	if r.Existed {
		verb = "Overwrote"
	}
	return fmt.Sprintf("%s %s (%d bytes).", verb, r.Path, r.Size)
}

// borisSnippet shows lines from-snippetContext .. to+snippetContext of
// content, each cut like a view's.
func borisSnippet(content string, from, to int) string {
	lines := strings.Split(content, "\n")
	if strings.HasSuffix(content, "\n") {
		lines = lines[:len(lines)-1]
	}
	lo := max(1, from-snippetContext)
	hi := min(len(lines), max(to, from)+snippetContext)
	var b []byte
	for i := lo; i <= hi; i++ {
		line := strings.TrimSuffix(lines[i-1], "\r")
		b = tool.AppendLineNo(b, i)
		if n := len([]rune(line)); n > maxLineChars {
			b = append(b, string([]rune(line)[:maxLineChars])...)
			b = fmt.Appendf(b, "… [line truncated: %d characters]", n)
		} else {
			b = append(b, line...)
		}
		b = append(b, '\n')
	}
	return string(b)
}
