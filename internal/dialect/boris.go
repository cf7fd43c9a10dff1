// Package dialect renders the results of boris's file and command
// operations in the words each model family was trained to read: boris's
// own texts (the default mode), the texts of Anthropic's reference
// text-editor tool (--anthropic-compat) and those of OpenAI's Codex tools
// (--openai-compat). The operations live once in the domain packages; a
// dialect only renders what they return, so no operation branches on the
// mode. It knows nothing about MCP.
package dialect

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/boris-mcp/boris/internal/files"
)

// Limits of boris's own view.
const (
	MaxViewLines = 2000
	MaxLineChars = 2000
)

// BorisViewLimits are the limits of a default-mode view: the first
// MaxViewLines lines without a range, every line cut at MaxLineChars.
func BorisViewLimits(rng *files.Range) files.ViewLimits {
	lim := files.ViewLimits{MaxLineChars: MaxLineChars, Hidden: true}
	if rng == nil {
		lim.MaxLines = MaxViewLines
	}
	return lim
}

// BorisView renders a text, binary, empty or directory view (images are
// returned as images by the caller).
func BorisView(res *files.ViewResult, rng *files.Range) string {
	switch res.Kind {
	case files.ViewEmpty:
		return fmt.Sprintf("%s is empty (0 bytes).", res.Path)
	case files.ViewBinary:
		return fmt.Sprintf("Binary file (%s): %s", files.HumanSize(res.Size), res.Path)
	case files.ViewDir:
		return borisListing(res)
	}
	l := &res.Lines
	out := make([]byte, 0, 64*l.Len())
	for i := 0; i < l.Len(); i++ {
		text, chars := l.Line(i)
		out = AppendLineNo(out, l.Start+i)
		out = append(out, text...)
		if chars > MaxLineChars {
			out = fmt.Appendf(out, "… [line truncated: %d characters]", chars)
		}
		out = append(out, '\n')
	}
	if rng == nil && l.More {
		out = fmt.Appendf(out, "\n[Showing lines 1-%d of %d. Use view_range to see more, e.g. [%d, %d].]\n", l.Len(), l.Total, l.Len()+1, min(l.Total, 2*l.Len()))
	}
	return string(out)
}

func borisListing(res *files.ViewResult) string {
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
	if res.Dir.Truncated {
		fmt.Fprintf(&b, "[Listing capped at %d entries; view a subdirectory or use find for more.]\n", res.Dir.Max)
	}
	return b.String()
}

// snippetContext is how many unchanged lines boris's snippet shows around
// an edit.
const snippetContext = 4

// BorisReplace renders a str_replace.
func BorisReplace(r *files.ReplaceResult, all bool) string {
	head := fmt.Sprintf("The file %s has been edited.", r.Path)
	if all {
		head = fmt.Sprintf("The file %s has been edited: replaced %d occurrence%s.", r.Path, r.Count, plural(r.Count))
	}
	last := r.Line + strings.Count(r.NewStr, "\n")
	return head + " Here is a snippet of the result (cat -n format):\n" + borisSnippet(r.Content, r.Line, last)
}

// BorisCreate renders a create.
func BorisCreate(r *files.CreateResult) string {
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
		b = AppendLineNo(b, i)
		if n := len([]rune(line)); n > MaxLineChars {
			b = append(b, string([]rune(line)[:MaxLineChars])...)
			b = fmt.Appendf(b, "… [line truncated: %d characters]", n)
		} else {
			b = append(b, line...)
		}
		b = append(b, '\n')
	}
	return string(b)
}

// AppendLineNo appends a line number right-aligned in six columns and a
// tab, as cat -n does.
func AppendLineNo(b []byte, n int) []byte {
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], int64(n), 10)
	for i := len(d); i < 6; i++ {
		b = append(b, ' ')
	}
	return append(append(b, d...), '\t')
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
