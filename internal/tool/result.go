package tool

import (
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
