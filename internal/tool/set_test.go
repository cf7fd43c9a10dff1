package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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

// A call's progress values increase whatever its tool reports: the
// kernel's one sender raises a value that is not above the last one sent
// (the tool's output, the start-up checkpoint's wait and the heartbeat
// share it).
func TestProgressIncreases(t *testing.T) {
	env := testEnv(t)
	spec := tool.Spec{Names: map[dialect.Mode]string{dialect.Boris: "steps"}, Build: func(dialect.Mode) (*tool.Def, error) {
		return tool.Define(tool.Meta{Name: "steps", Title: "Steps", Description: "reports progress", ReadOnly: true},
			func(_ context.Context, c *tool.Call, _ *struct{}) (*mcp.CallToolResult, error) {
				for i, v := range []float64{5, 3, 3, 0.5, 9} {
					c.Progress.Notify(fmt.Sprint("step ", i), v)
				}
				return tool.Text("done"), nil
			})
	}}
	set, err := tool.NewSet(env, []tool.Spec{spec})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := make([]float64, 5) // by step
	seen := 0
	all := make(chan struct{})
	cs := tooltest.ConnectWith(t, set, session.New("s", session.Options{Workdir: env.Workdir}), &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			var step int
			if _, err := fmt.Sscanf(req.Params.Message, "step %d", &step); err != nil || step < 0 || step >= len(got) {
				t.Errorf("progress message %q", req.Params.Message)
				return
			}
			got[step] = req.Params.Progress
			if seen++; seen == len(got) {
				close(all)
			}
		},
	})
	params := &mcp.CallToolParams{Name: "steps"}
	params.SetProgressToken("p")
	if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError {
		t.Fatalf("%v %v", err, res)
	}
	select {
	case <-all:
	case <-time.After(time.Minute):
		t.Fatal("not every progress notification arrived")
	}
	mu.Lock()
	defer mu.Unlock()
	if got[0] != 5 || got[4] != 9 {
		t.Fatalf("progress %v: the values above the last one must pass unchanged", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("progress %v does not increase", got)
		}
	}
	// Without a token the tool's reports go nowhere (and do not fail).
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "steps"}); err != nil || res.IsError {
		t.Fatalf("%v %v", err, res)
	}
}
