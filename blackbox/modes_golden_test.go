package blackbox

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// scriptSpec is a scripted session over several tools: the files it starts
// with and the calls it makes, with $DIR standing for the absolute workdir
// and $SESSION for the last session handle an answer minted.
type scriptSpec struct {
	Files map[string]string `json:"files"`
	Ops   []scriptOp        `json:"ops"`
}

type scriptOp struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
}

// scriptAnswer is one call of a scripted session and what came back.
type scriptAnswer struct {
	op  scriptOp
	res *mcp.CallToolResult
}

// TestBorisGolden runs a scripted session through every tool of the
// default mode — each answer form and each kind of error, including those
// made before a tool runs (a missing parameter, a bad session handle) —
// and compares every answer's text with testdata/boris/session.golden,
// over stdio and HTTP, at the current revision and a handshake-era one.
// Every answer's structured content is checked too (checkStructured).
func TestBorisGolden(t *testing.T) {
	runScriptGolden(t, "boris")
}

// TestCodexGolden is TestBorisGolden for --openai-compat: shell,
// exec_command, write_stdin and apply_patch against
// testdata/codex/session.golden.
func TestCodexGolden(t *testing.T) {
	runScriptGolden(t, "codex", "--openai-compat")
}

// runScriptGolden runs testdata/<name>/session.json against a server
// started with args and compares the texts with session.golden; -update
// rewrites the golden file.
func runScriptGolden(t *testing.T, name string, args ...string) {
	t.Helper()
	spec := readScript(t, name)
	goldenPath := filepath.Join("testdata", name, "session.golden")
	// The texts of the tools; what language servers add to edits is
	// pinned by the LSP tests (a slow server would add a line here).
	args = append(args, "--diagnostics=off")
	for i, a := range agents(t, args...) {
		t.Run(a.name, func(t *testing.T) {
			answers := runScript(t, a, spec)
			checkStructured(t, a.cs, answers)
			if i == 0 {
				dumpResults(t, a.cs, name, answers)
			}
			got := renderScript(a.dir, answers)
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

func readScript(t *testing.T, name string) scriptSpec {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name, "session.json"))
	if err != nil {
		t.Fatal(err)
	}
	var spec scriptSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	return spec
}

// scriptFiles are generated rather than spelled out in session.json: a
// file longer than a default view shows, and a line longer than it keeps.
func scriptFiles() map[string]string {
	var long strings.Builder
	for i := 1; i <= 2100; i++ {
		fmt.Fprintf(&long, "line %04d\n", i)
	}
	return map[string]string{
		"long.txt": long.String(),
		"wide.txt": strings.Repeat("0123456789", 250) + "\nshort\n",
	}
}

var handleInText = regexp.MustCompile(`session: (s_[A-Za-z0-9_-]{32})\n`)

// runScript writes the spec's files (and scriptFiles) into the agent's
// workdir and makes its calls in order.
func runScript(t *testing.T, a agent, spec scriptSpec) []scriptAnswer {
	t.Helper()
	return runScriptFiles(t, a, spec, true)
}

// runScriptFiles is runScript, with scriptFiles only when generated.
func runScriptFiles(t *testing.T, a agent, spec scriptSpec, generated bool) []scriptAnswer {
	t.Helper()
	files := map[string]string{}
	if generated {
		files = scriptFiles()
	}
	for p, c := range spec.Files {
		files[p] = c
	}
	// Lists sorted newest first need distinct modification times: each
	// file is a minute newer than the one before it in path order.
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, p := range slices.Sorted(maps.Keys(files)) {
		full := filepath.Join(a.dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(files[p]), 0o644); err != nil {
			t.Fatal(err)
		}
		mtime := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(full, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	var out []scriptAnswer
	handle := ""
	for i, op := range spec.Ops {
		args, _ := expand(op.Args, strings.NewReplacer("$DIR", a.dir, "$SESSION", handle)).(map[string]any)
		res, err := a.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: op.Tool, Arguments: args})
		if err != nil {
			t.Fatalf("op %d %s %v: protocol error: %v", i+1, op.Tool, op.Args, err)
		}
		if m := handleInText.FindStringSubmatch(resultText(res)); m != nil {
			handle = m[1]
		}
		out = append(out, scriptAnswer{op: op, res: res})
	}
	return out
}

// expand replaces the placeholders in every string of an argument value.
func expand(v any, r *strings.Replacer) any {
	switch v := v.(type) {
	case string:
		return r.Replace(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = expand(e, r)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = expand(e, r)
		}
		return out
	}
	return v
}

// volatile are the parts of answers that differ from run to run (process
// groups, durations, random ids); the golden file holds placeholders.
var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`pgid: \d+`), "pgid: N"},
	{regexp.MustCompile(`kill -TERM -\d+`), "kill -TERM -N"},
	{regexp.MustCompile(`s_[A-Za-z0-9_-]{32}`), "s_HANDLE"},
	{regexp.MustCompile(`Wall time: [0-9.]+ seconds`), "Wall time: T seconds"},
	{regexp.MustCompile(`Chunk ID: [0-9a-f]{6}`), "Chunk ID: C"},
	{regexp.MustCompile(`command timed out after \d+ milliseconds`), "command timed out after T milliseconds"},
	{regexp.MustCompile(`(?m)^(task_\d+\t(?:running|exited -?\d+)\t\w+\t)[0-9hms.]+\t`), "${1}AGE\t"},
}

// renderScript writes the answers as
//
//	=== N tool <arguments>
//	ok|error
//	<content: text as it is, an image as [image TYPE, N bytes]>
func renderScript(dir string, answers []scriptAnswer) string {
	var b strings.Builder
	for i, ans := range answers {
		label, _ := json.Marshal(ans.op.Args)
		status := "ok"
		if ans.res.IsError {
			status = "error"
		}
		var text strings.Builder
		for _, c := range ans.res.Content {
			switch c := c.(type) {
			case *mcp.TextContent:
				text.WriteString(c.Text)
			case *mcp.ImageContent:
				fmt.Fprintf(&text, "[image %s, %d bytes]", c.MIMEType, len(c.Data))
			default:
				fmt.Fprintf(&text, "[content %T]", c)
			}
		}
		s := strings.ReplaceAll(text.String(), dir, "$DIR")
		for _, v := range volatile {
			s = v.re.ReplaceAllString(s, v.with)
		}
		fmt.Fprintf(&b, "=== %d %s %s\n%s\n%s\n", i+1, ans.op.Tool, label, status, s)
	}
	return b.String()
}
