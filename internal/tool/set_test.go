package tool_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/audit"
	"github.com/boris-mcp/boris/internal/dialect"
	"github.com/boris-mcp/boris/internal/session"
	"github.com/boris-mcp/boris/internal/tool"
	"github.com/boris-mcp/boris/internal/tool/tooltest"
)

func testEnv(t *testing.T) tool.Env {
	t.Helper()
	return tool.Env{Workdir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

// echoSpec declares a tool that answers its path argument.
func echoSpec(name string) tool.Spec {
	return tool.Spec{Names: map[dialect.Mode]string{dialect.Boris: name}, Build: func(dialect.Mode) (*tool.Def, error) {
		return tool.Define(tool.Meta{Name: name, Title: name, Description: "echoes"},
			func(_ context.Context, _ *tool.Call, in *struct {
				Path string `json:"path"`
			}) (*mcp.CallToolResult, error) {
				return tool.Text(in.Path), nil
			})
	}}
}

// The set follows the declarations: a tool is served in the dialects that
// name it, goes with any of its keys or required keys disabled (aliases
// too), and stays out when the process cannot serve it; unknown names are
// refused with the valid ones.
func TestSetFollowsTheDeclarations(t *testing.T) {
	canServe := true
	specs := []tool.Spec{
		{Names: map[dialect.Mode]string{dialect.Boris: "run", dialect.Codex: "shell"}},
		{Names: map[dialect.Mode]string{dialect.Boris: "poll"}, Requires: []string{"run"}},
		{Names: map[dialect.Mode]string{dialect.Boris: "read"}},
		{Names: map[dialect.Mode]string{dialect.Boris: "write"}},
		{Names: map[dialect.Mode]string{dialect.Claude: "editor"}, Keys: []string{"read", "write"}},
		{Names: map[dialect.Mode]string{dialect.Boris: "ask", dialect.Claude: "ask"}, Needs: func(*tool.Env) bool { return canServe }},
	}
	for i := range specs {
		names := specs[i].Names
		specs[i].Build = func(m dialect.Mode) (*tool.Def, error) { return echoSpec(names[m]).Build(m) }
	}
	n := tool.NamingOf(specs)
	if want := []string{"run", "poll", "read", "write", "ask"}; !slices.Equal(n.Names, want) {
		t.Fatalf("names %v, want %v", n.Names, want)
	}
	if !slices.Equal(n.Aliases["shell"], []string{"run"}) || !slices.Equal(n.Aliases["editor"], []string{"read", "write"}) || len(n.Aliases) != 2 {
		t.Fatalf("aliases %v", n.Aliases)
	}
	for _, tt := range []struct {
		mode     dialect.Mode
		disabled []string
		noServe  bool
		want     []string
	}{
		{dialect.Boris, nil, false, []string{"run", "poll", "read", "write", "ask"}},
		{dialect.Boris, []string{"run"}, false, []string{"read", "write", "ask"}},
		{dialect.Codex, nil, false, []string{"shell"}},
		{dialect.Codex, []string{"shell"}, false, nil},
		{dialect.Claude, nil, false, []string{"editor", "ask"}},
		{dialect.Claude, []string{"write"}, false, []string{"ask"}},
		{dialect.Claude, []string{"editor"}, true, nil},
	} {
		canServe = !tt.noServe
		env := testEnv(t)
		env.Mode, env.Disabled = tt.mode, tt.disabled
		set, err := tool.NewSet(env, specs)
		if err != nil {
			t.Fatal(err)
		}
		if got := set.Names(); !slices.Equal(got, tt.want) {
			t.Errorf("%s without %v (servable %v): %v, want %v", tt.mode, tt.disabled, !tt.noServe, got, tt.want)
		}
	}
	env := testEnv(t)
	env.Disabled = []string{"nonexistent"}
	if _, err := tool.NewSet(env, specs); err == nil || !strings.Contains(err.Error(), `"nonexistent"`) || !strings.Contains(err.Error(), "run, poll, read, write, ask") {
		t.Fatalf("unknown name: %v", err)
	}
}

// A panicking tool becomes a protocol error for that call; the server and
// the session keep working, and the call has its audit record.
func TestPanicIsRecovered(t *testing.T) {
	env := testEnv(t)
	var trail syncBuffer
	env.Audit = audit.New(slog.New(slog.NewJSONHandler(&trail, nil)), audit.Full)
	boom := tool.Spec{Names: map[dialect.Mode]string{dialect.Boris: "boom"}, Build: func(dialect.Mode) (*tool.Def, error) {
		return tool.Define(tool.Meta{Name: "boom", Title: "Boom", Description: "panics", ReadOnly: true},
			func(_ context.Context, c *tool.Call, _ *struct{}) (*mcp.CallToolResult, error) {
				c.Rec.Command = "about to panic"
				panic("kaboom")
			})
	}}
	set, err := tool.NewSet(env, []tool.Spec{boom, echoSpec("echo")})
	if err != nil {
		t.Fatal(err)
	}
	cs := tooltest.Connect(t, set, session.New("s", session.Options{Workdir: env.Workdir}))
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "boom"}); err == nil || !strings.Contains(err.Error(), "kaboom") {
		t.Fatalf("panic not reported as a protocol error: %v", err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"path": "."}})
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
	if rec["tool"] != "boom" || rec["outcome"] != tool.OutcomeProtocolError || rec["panicked"] != true || rec["command"] != "about to panic" || rec["session"] != "s" {
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
