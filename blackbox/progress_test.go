package blackbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/tool"
)

// heartbeatRe is a heartbeat's message: the seconds the call has run.
var heartbeatRe = regexp.MustCompile(`^still running: (\d+) s elapsed$`)

// quietFor is how long the tests' commands print nothing: three heartbeat
// intervals.
var quietFor = 3 * tool.HeartbeatInterval

// quietScript sleeps quietFor, then touches "finished" and prints done.
var quietScript = "sleep " + strconv.Itoa(int(quietFor/time.Second)) + "; touch finished; echo done"

// heartbeats records the heartbeats a client gets while the command it
// called is still quiet (before the command touches "finished" in dir).
type heartbeats struct {
	mu          sync.Mutex
	dir         string
	beats       []int // elapsed seconds
	late, other []string
}

func (h *heartbeats) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		h.mu.Lock()
		defer h.mu.Unlock()
		m := heartbeatRe.FindStringSubmatch(req.Params.Message)
		if m == nil {
			h.other = append(h.other, req.Params.Message)
			return
		}
		if _, err := os.Stat(filepath.Join(h.dir, "finished")); err == nil {
			h.late = append(h.late, req.Params.Message)
			return
		}
		n, _ := strconv.Atoi(m[1])
		h.beats = append(h.beats, n)
	}}
}

// call makes a tool call with a progress token and returns its text.
func (h *heartbeats) call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	params.SetProgressToken("beat-" + name)
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %v", name, err, res)
	}
	return resultText(res)
}

// check fails unless at least two heartbeats came while the command was
// quiet, their elapsed times increasing.
func (h *heartbeats) check(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.beats) < 2 {
		t.Fatalf("%d heartbeats while the command was quiet for %v (want at least 2); after it: %q; other progress: %q", len(h.beats), quietFor, h.late, h.other)
	}
	for i := 1; i < len(h.beats); i++ {
		if h.beats[i] <= h.beats[i-1] {
			t.Fatalf("elapsed times do not increase: %v", h.beats)
		}
	}
	if h.beats[0] < 1 {
		t.Fatalf("the first heartbeat says %d s elapsed", h.beats[0])
	}
}

// TestProgressHeartbeat: a command that prints nothing for three heartbeat
// intervals still sends progress notifications while it runs — at least
// two, with the elapsed time in their message, increasing — over both
// transports and in both protocol eras, so that a client that ends calls
// without progress keeps it. Each heartbeat is checked to come while the
// command is still quiet (before it touches its marker file). The binary
// serves both transports.
func TestProgressHeartbeat(t *testing.T) {
	for _, transport := range []string{"http", "stdio"} {
		for _, era := range []string{handshakeEra, statelessEra} {
			t.Run(transport+"/"+era, func(t *testing.T) {
				t.Parallel()
				h := &heartbeats{}
				var cs *mcp.ClientSession
				h.dir = tempDir(t)
				if transport == "http" {
					url, _ := serveBinary(t, exec.Command(binPath, "--port=0", "--workdir="+h.dir))
					cs = connectHTTPAt(t, url, "", era, h.options())
				} else {
					cs, _, _ = connectStdioWith(t, h.dir, era, h.options())
				}
				if out := h.call(t, cs, "bash", map[string]any{"command": quietScript}); !strings.Contains(out, "done") {
					t.Fatalf("bash: %s", out)
				}
				h.check(t)
			})
		}
	}
}

// TestProgressHeartbeatEveryTool: the heartbeat is the kernel's, so every
// long wait has it: Claude's bash, Codex's shell and exec_command, and a
// task_output that waits for a quiet background task.
func TestProgressHeartbeatEveryTool(t *testing.T) {
	cases := []struct {
		name string
		args []string
		run  func(t *testing.T, h *heartbeats, cs *mcp.ClientSession) string
	}{
		{"claude bash", []string{"--anthropic-compat"}, func(t *testing.T, h *heartbeats, cs *mcp.ClientSession) string {
			return h.call(t, cs, "bash", map[string]any{"command": quietScript})
		}},
		{"codex shell", []string{"--openai-compat"}, func(t *testing.T, h *heartbeats, cs *mcp.ClientSession) string {
			return h.call(t, cs, "shell", map[string]any{"command": []string{"bash", "-c", quietScript}})
		}},
		{"codex exec_command", []string{"--openai-compat"}, func(t *testing.T, h *heartbeats, cs *mcp.ClientSession) string {
			return h.call(t, cs, "exec_command", map[string]any{"cmd": quietScript, "yield_time_ms": 2 * quietFor.Milliseconds()})
		}},
		{"task_output wait", nil, func(t *testing.T, h *heartbeats, cs *mcp.ClientSession) string {
			out := mustOK(t, cs, "bash", map[string]any{"command": quietScript, "run_in_background": true})
			id := regexp.MustCompile(`task_id: (\S+)`).FindStringSubmatch(out)
			if id == nil {
				t.Fatalf("no task id: %s", out)
			}
			return h.call(t, cs, "task_output", map[string]any{"task_id": id[1], "wait_ms": 2 * quietFor.Milliseconds()})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := &heartbeats{dir: tempDir(t)}
			cs, _, _ := connectStdioWith(t, h.dir, handshakeEra, h.options(), c.args...)
			if out := c.run(t, h, cs); !strings.Contains(out, "done") {
				t.Fatalf("the call's answer: %s", out)
			}
			h.check(t)
		})
	}
}
