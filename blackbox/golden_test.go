package blackbox

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.golden files from what boris answers")

// goldenSpec is a scripted agent session: the files it starts with and the
// tool calls it makes, with $DIR standing for the absolute workdir.
type goldenSpec struct {
	Files map[string]string `json:"files"`
	Ops   []map[string]any  `json:"ops"`
}

// TestClaudeGolden runs a scripted agent session through
// str_replace_editor in --anthropic-compat mode — views of every range
// form, edits, inserts, creates, undos and errors, over files without a
// final newline, empty, CRLF, with tabs, long, unicode, and a directory with
// hidden entries and node_modules — and compares every answer with
// testdata/claude/session.golden. The expected answers are the reference
// text-editor tool's (anthropic-quickstarts, computer-use-demo
// tools/edit.py) for the same operations, except where docs/dialects.md lists a
// deliberate difference. It runs over stdio and HTTP, at the current
// revision and at a handshake-era one.
func TestClaudeGolden(t *testing.T) {
	specPath, goldenPath := filepath.Join("testdata", "claude", "session.json"), filepath.Join("testdata", "claude", "session.golden")
	raw, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	var spec goldenSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	if len(spec.Ops) < 40 {
		t.Fatalf("the scripted session has %d operations; it should cover at least 40", len(spec.Ops))
	}
	// The session edits a.py and tabs.go into code with errors: with
	// diagnostics on, pylsp or gopls (when installed) would add a block of
	// new errors after the reference's answer, which this file pins alone
	// (lsp_test.go pins that block).
	for i, a := range agents(t, "--anthropic-compat", "--diagnostics=off") {
		t.Run(a.name, func(t *testing.T) {
			for p, c := range spec.Files {
				full := filepath.Join(a.dir, p)
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got := runGolden(t, a, spec.Ops)
			if *update && i == 0 {
				if err := os.WriteFile(goldenPath, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(goldenPath)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Fatal(firstDifference(string(want), got))
			}
		})
	}
}

// runGolden makes the calls and renders each answer as
//
//	=== N <arguments>
//	ok|error
//	<text>
func runGolden(t *testing.T, a agent, ops []map[string]any) string {
	t.Helper()
	var b strings.Builder
	for i, op := range ops {
		label, err := json.Marshal(op)
		if err != nil {
			t.Fatal(err)
		}
		args := map[string]any{}
		for k, v := range op {
			if s, ok := v.(string); ok {
				v = strings.ReplaceAll(s, "$DIR", a.dir)
			}
			args[k] = v
		}
		res, err := a.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "str_replace_editor", Arguments: args})
		if err != nil {
			t.Fatalf("op %d %s: protocol error: %v", i+1, label, err)
		}
		status := "ok"
		if res.IsError {
			status = "error"
		}
		fmt.Fprintf(&b, "=== %d %s\n%s\n%s\n", i+1, label, status, strings.ReplaceAll(resultText(res), a.dir, "$DIR"))
	}
	return b.String()
}

// firstDifference names the first entry where two golden texts differ.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n=== "), strings.Split(got, "\n=== ")
	for i := range max(len(w), len(g)) {
		var we, ge string
		if i < len(w) {
			we = w[i]
		}
		if i < len(g) {
			ge = g[i]
		}
		if we != ge {
			return fmt.Sprintf("answers differ (run with -update to rewrite after checking against the reference):\nwant:\n%s\ngot:\n%s", we, ge)
		}
	}
	return "answers differ"
}
