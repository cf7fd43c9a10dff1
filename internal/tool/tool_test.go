package tool

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestLenientNumbersAndBooleans(t *testing.T) {
	var in struct {
		N Int  `json:"n"`
		B Bool `json:"b"`
	}
	for _, raw := range []string{`{"n":5000,"b":true}`, `{"n":5000.0,"b":"true"}`, `{"n":"5000","b":"TRUE"}`} {
		in.N, in.B = 0, false
		if err := decode(json.RawMessage(raw), &in); err != nil || in.N != 5000 || !in.B {
			t.Fatalf("%s: %v %+v", raw, err, in)
		}
	}
	for _, raw := range []string{`{"n":1000000000000000000}`, `{"n":-9e18}`} {
		if err := decode(json.RawMessage(raw), &in); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
	}
	for raw, want := range map[string]string{`{"n":1.5}`: `"n"`, `{"n":"soon"}`: `"n"`, `{"b":"maybe"}`: `"b"`, `{"n":[1]}`: `"n"`, `{"n":1e300}`: "out of range", `[1,2]`: "JSON object"} {
		err := decode(json.RawMessage(raw), &in)
		if e, ok := codes.As(err); !ok || e.Code != codes.InvalidInput || !strings.Contains(e.Message, want) {
			t.Fatalf("%s: got %v, want INVALID_INPUT mentioning %s", raw, err, want)
		}
	}
	if err := checkRequired(json.RawMessage(`{"path":null}`), []string{"path"}); err == nil || !strings.Contains(err.Error(), `"path"`) {
		t.Fatalf("null required parameter: %v", err)
	}
}

// capAnswer keeps an answer's text within the bound, on a character
// boundary, and says how much it left out.
func TestCapAnswer(t *testing.T) {
	r := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("é", 30)}, &mcp.TextContent{Text: strings.Repeat("x", 30)}}}
	capAnswer(r, 40)
	if len(r.Content) != 2 {
		t.Fatalf("%d contents", len(r.Content))
	}
	second := r.Content[1].(*mcp.TextContent).Text
	if !strings.HasPrefix(second, strings.Repeat("x", 10)+"\n[answer cut at 40 characters (--max-answer): 20 more characters left out.") {
		t.Fatalf("cut text %q", second)
	}
	r = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "short"}}}
	if capAnswer(r, 40); r.Content[0].(*mcp.TextContent).Text != "short" {
		t.Fatal("a short answer was changed")
	}
}
