package tools

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/audit"
	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/config"
	"github.com/boris-mcp/boris/internal/files"
	"github.com/boris-mcp/boris/internal/scope"
	"github.com/boris-mcp/boris/internal/session"
)

func testDeps(t *testing.T, cfg *config.Config) Deps {
	t.Helper()
	if cfg.Workdir == "" {
		cfg.Workdir = t.TempDir()
	}
	if cfg.Disabled == nil {
		cfg.Disabled = map[string]bool{}
	}
	if cfg.MaxFileSize == 0 {
		cfg.MaxFileSize = 1 << 20
	}
	if cfg.BashTimeout == 0 {
		cfg.BashTimeout = time.Minute
	}
	pol, err := scope.New(nil, nil, cfg.Workdir)
	if err != nil {
		t.Fatal(err)
	}
	return Deps{
		Config: cfg,
		Policy: pol,
		Files:  files.New(files.Options{Policy: pol, MaxFileSize: cfg.MaxFileSize}),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

func TestToolSets(t *testing.T) {
	without := func(names ...string) []string {
		all := []string{"bash", "task_output", "task_input", "task_kill", "view", "str_replace", "create_file", "apply_patch", "grep", "find"}
		return slices.DeleteFunc(all, func(n string) bool { return slices.Contains(names, n) })
	}
	tests := []struct {
		name string
		cfg  config.Config
		want []string
	}{
		{"default", config.Config{Shell: "/bin/sh"}, without()},
		{"no shell: the file tools only", config.Config{}, without("bash", "task_output", "task_input", "task_kill")},
		{"bash disabled takes the task tools along", config.Config{Shell: "/bin/sh", Disabled: map[string]bool{"bash": true}}, without("bash", "task_output", "task_input", "task_kill")},
		{"task_kill disabled", config.Config{Shell: "/bin/sh", Disabled: map[string]bool{"task_kill": true}}, without("task_kill")},
		{"apply_patch disabled", config.Config{Shell: "/bin/sh", Disabled: map[string]bool{"apply_patch": true}}, without("apply_patch")},
		{"compat", config.Config{Shell: "/bin/sh", AnthropicCompat: true}, []string{"bash", "task_output", "task_input", "task_kill", "str_replace_editor", "apply_patch", "grep", "Glob"}},
		{"compat without create_file loses the editor", config.Config{Shell: "/bin/sh", AnthropicCompat: true, Disabled: map[string]bool{"create_file": true}}, []string{"bash", "task_output", "task_input", "task_kill", "apply_patch", "grep", "Glob"}},
		{"openai", config.Config{Shell: "/bin/sh", OpenAICompat: true}, []string{"shell", "exec_command", "write_stdin", "apply_patch"}},
		{"openai without unified exec", config.Config{Shell: "/bin/sh", OpenAICompat: true, Disabled: map[string]bool{"task_input": true}}, []string{"shell", "apply_patch"}},
		{"openai without a shell", config.Config{OpenAICompat: true}, []string{"apply_patch"}},
		{"openai with apply_patch disabled", config.Config{Shell: "/bin/sh", OpenAICompat: true, Disabled: map[string]bool{"apply_patch": true}}, []string{"shell", "exec_command", "write_stdin"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := NewSet(testDeps(t, &tt.cfg))
			if err != nil {
				t.Fatal(err)
			}
			got := set.Names()
			// grep and find appear once the search engine is registered.
			want := slices.DeleteFunc(slices.Clone(tt.want), func(n string) bool {
				return (n == "grep" || n == "find" || n == "Glob") && !slices.Contains(got, n)
			})
			if !slices.Equal(got, want) {
				t.Fatalf("tools %v, want %v", got, want)
			}
		})
	}
}

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

// A panicking tool becomes a protocol error for that call; the server and
// the session keep working, and the call has its audit record.
func TestPanicIsRecovered(t *testing.T) {
	deps := testDeps(t, &config.Config{})
	var trail syncBuffer
	deps.Audit = audit.New(slog.New(slog.NewJSONHandler(&trail, nil)), audit.Full)
	boom, err := define("boom", "Boom", "panics", true, nil, nil,
		func(_ context.Context, c *call, _ *struct{}) (*mcp.CallToolResult, error) {
			c.rec.Command = "about to panic"
			panic("kaboom")
		})
	if err != nil {
		t.Fatal(err)
	}
	set := &Set{deps: deps, defs: []*def{boom}}
	full, err := NewSet(deps)
	if err != nil {
		t.Fatal(err)
	}
	set.defs = append(set.defs, full.defs...)

	cs := connectSet(t, set, session.New("s", session.Options{Workdir: deps.Config.Workdir}))
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "boom"}); err == nil || !strings.Contains(err.Error(), "kaboom") {
		t.Fatalf("panic not reported as a protocol error: %v", err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "view", Arguments: map[string]any{"path": "."}})
	if err != nil || res.IsError {
		t.Fatalf("server unusable after a panic: %v %+v", err, res)
	}
	lines := strings.Split(strings.TrimSpace(trail.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 audit records, got:\n%s", trail.String())
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["tool"] != "boom" || rec["outcome"] != OutcomeProtocolError || rec["panicked"] != true || rec["command"] != "about to panic" || rec["session"] != "s" {
		t.Fatalf("the panicked call's record: %v", rec)
	}
}

// syncBuffer is a buffer written by concurrent calls.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
