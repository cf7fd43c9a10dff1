package blackbox

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/tool"
)

// heartbeatRe is a heartbeat's message: the seconds the call has run.
var heartbeatRe = regexp.MustCompile(`^still running: (\d+) s elapsed$`)

// TestProgressHeartbeat: a command that prints nothing for three heartbeat
// intervals still sends progress notifications while it runs — at least
// two, with the elapsed time in their message, increasing — over both
// transports and in both protocol eras, so that a client that ends calls
// without progress keeps it. Each heartbeat is checked to come while the
// command is still quiet (before it touches its marker file).
func TestProgressHeartbeat(t *testing.T) {
	quiet := 3 * tool.HeartbeatInterval
	script := "sleep " + strconv.Itoa(int(quiet/time.Second)) + "; touch finished; echo done"
	for _, transport := range []string{"http", "stdio"} {
		for _, era := range []string{handshakeEra, statelessEra} {
			t.Run(transport+"/"+era, func(t *testing.T) {
				t.Parallel()
				var mu sync.Mutex
				var dir string
				var beats []int // elapsed seconds of the heartbeats seen while the command was quiet
				var late, other []string
				opts := &mcp.ClientOptions{
					ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
						mu.Lock()
						defer mu.Unlock()
						m := heartbeatRe.FindStringSubmatch(req.Params.Message)
						if m == nil {
							other = append(other, req.Params.Message)
							return
						}
						if _, err := os.Stat(filepath.Join(dir, "finished")); err == nil {
							late = append(late, req.Params.Message)
							return
						}
						n, _ := strconv.Atoi(m[1])
						beats = append(beats, n)
					},
				}
				var cs *mcp.ClientSession
				if transport == "http" {
					p := startInProcess(t)
					dir = p.dir
					cs = connectHTTPAt(t, p.url, "", era, opts)
				} else {
					dir = tempDir(t)
					cs, _, _ = connectStdioWith(t, dir, era, opts)
				}
				params := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": script}}
				params.SetProgressToken("beat-1")
				res, err := cs.CallTool(context.Background(), params)
				if err != nil || res.IsError {
					t.Fatalf("%v %v", err, res)
				}
				mu.Lock()
				defer mu.Unlock()
				if len(beats) < 2 {
					t.Fatalf("%d heartbeats while the command was quiet for %v (want at least 2); after it: %q; other progress: %q", len(beats), quiet, late, other)
				}
				for i := 1; i < len(beats); i++ {
					if beats[i] <= beats[i-1] {
						t.Fatalf("elapsed times do not increase: %v", beats)
					}
				}
				if beats[0] < 1 {
					t.Fatalf("the first heartbeat says %d s elapsed", beats[0])
				}
			})
		}
	}
}
