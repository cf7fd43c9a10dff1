package tool

import (
	"fmt"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/codes"
)

// Text is a result holding text.
func Text(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// Answer is a successful result: the text the model reads, and the same
// result as data (one of the tool's shapes, see returns), which wrap
// encodes as the structuredContent.
func Answer(text string, data any) *mcp.CallToolResult {
	r := Text(text)
	r.StructuredContent = data
	return r
}

// ErrorResult renders an error as "[CODE] message" with IsError set.
func ErrorResult(err error) *mcp.CallToolResult {
	msg := ""
	if e, ok := codes.As(err); ok {
		msg = e.Error()
	} else {
		msg = "[" + string(codes.IOError) + "] " + err.Error()
	}
	r := Text(msg)
	r.IsError = true
	return r
}

// capAnswer cuts an answer's text at max characters (on a character
// boundary; max 0: no bound), saying how much was left out. Tools keep
// their answers within the bound themselves, with a note on how to ask
// for the next part; this is the floor under all of them.
func capAnswer(r *mcp.CallToolResult, max int) {
	if max <= 0 {
		return
	}
	left := max
	for i, c := range r.Content {
		t, ok := c.(*mcp.TextContent)
		if !ok {
			continue
		}
		n := utf8.RuneCountInString(t.Text)
		if n <= left {
			left -= n
			continue
		}
		cut := t.Text
		for j := range t.Text {
			if left == 0 {
				cut = t.Text[:j]
				break
			}
			left--
		}
		dropped := n - utf8.RuneCountInString(cut)
		for _, rest := range r.Content[i+1:] {
			if t, ok := rest.(*mcp.TextContent); ok {
				dropped += utf8.RuneCountInString(t.Text)
			}
		}
		note := fmt.Sprintf("\n[answer cut at %d characters (--max-answer): %d more characters left out. Ask for less at once: a narrower range or path, a smaller head_limit, or output redirected to a file and read in parts]\n", max, dropped)
		r.Content = append(r.Content[:i:i], &mcp.TextContent{Text: cut + note})
		return
	}
}
