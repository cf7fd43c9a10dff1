package blackbox

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rpcError is a JSON-RPC error answer as it comes over the wire.
type rpcError struct {
	Version string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rawPost posts body to /mcp with the given extra headers and returns the
// status, the Content-Type and the body.
func rawPost(t *testing.T, url, body string, header map[string]string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

func decodeRPCError(t *testing.T, what, body string) rpcError {
	t.Helper()
	var e rpcError
	if err := json.Unmarshal([]byte(strings.TrimSpace(body)), &e); err != nil || e.Version != "2.0" || e.Error == nil {
		t.Fatalf("%s: not a JSON-RPC error object: %q (%v)", what, body, err)
	}
	return e
}

const callBeforeInit = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo hi"}}}`

// TestCallBeforeInitialize: a tools/call before initialize is answered
// with a valid JSON-RPC code (-32600, invalid request) saying to send
// initialize first, over stdio and over HTTP (with and without the
// handshake era's MCP-Protocol-Version); the SDK alone answers code 0.
// Initialize then works as usual.
func TestCallBeforeInitialize(t *testing.T) {
	check := func(t *testing.T, what string, e rpcError) {
		t.Helper()
		if e.Error.Code != -32600 || !strings.Contains(e.Error.Message, `"tools/call" came before initialize: send initialize first`) || string(e.ID) != "7" {
			t.Fatalf("%s: %+v %s", what, *e.Error, e.ID)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		dir := tempDir(t)
		cmd := exec.Command(binPath, "--transport=stdio", "--workdir="+dir)
		cmd.Stdin = strings.NewReader(callBeforeInit + "\n" +
			`{"jsonrpc":"2.0","id":8,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != 2 || !strings.Contains(lines[1], `"id":8,"result"`) {
			t.Fatalf("answers: %s", out)
		}
		check(t, "stdio", decodeRPCError(t, "stdio", lines[0]))
	})
	t.Run("http", func(t *testing.T) {
		url, _ := serveBinary(t, exec.Command(binPath, "--port=0", "--workdir="+tempDir(t)))
		for _, h := range []map[string]string{nil, {"MCP-Protocol-Version": "2025-06-18"}} {
			status, ctype, body := rawPost(t, url, callBeforeInit, h)
			if status != http.StatusBadRequest || ctype != "application/json" {
				t.Fatalf("headers %v: %d %s %q", h, status, ctype, body)
			}
			check(t, "http", decodeRPCError(t, "http", body))
		}
		// Initialize is still what starts a session.
		if got := postTools(t, url, ""); got != http.StatusOK {
			t.Fatalf("initialize: %d", got)
		}
	})
}

// TestHTTPBodyNotJSON: a POST whose body is not JSON is answered 400 with
// a JSON-RPC parse error (-32700, id null, application/json), in both
// protocol eras; the SDK alone answers text/plain.
func TestHTTPBodyNotJSON(t *testing.T) {
	url, _ := serveBinary(t, exec.Command(binPath, "--port=0", "--workdir="+tempDir(t)))
	for _, h := range []map[string]string{nil, {"MCP-Protocol-Version": "2025-06-18"}, {"MCP-Protocol-Version": "2026-07-28"}} {
		status, ctype, body := rawPost(t, url, `{"jsonrpc":"2.0","id":1,`, h)
		if status != http.StatusBadRequest || ctype != "application/json" {
			t.Fatalf("headers %v: %d %s %q", h, status, ctype, body)
		}
		e := decodeRPCError(t, "not JSON", body)
		if e.Error.Code != -32700 || string(e.ID) != "null" || !strings.Contains(e.Error.Message, "the request body is not JSON") {
			t.Fatalf("headers %v: %+v id %s", h, *e.Error, e.ID)
		}
	}
}

// TestBashTimeoutBounds: a timeout of 0 or below means the default (as
// the spec says), and the answer says so rather than take it silently;
// one above the maximum runs with the maximum and says so; none runs with
// the default, without a note.
func TestBashTimeoutBounds(t *testing.T) {
	cs, cmd, _ := connectStdio(t, tempDir(t))
	t.Cleanup(func() { cs.Close(); _ = cmd.Wait() })
	for _, n := range []int{0, -5} {
		want := fmt.Sprintf("exit_code: 0\nnote: a timeout of %d ms bounds nothing: the command ran with the default of 120000 ms (give a positive number of milliseconds, at most 600000)\nstdout:\nhi\n", n)
		if text := mustOK(t, cs, "bash", map[string]any{"command": "echo hi", "timeout": n}); text != want {
			t.Fatalf("timeout %d: %q", n, text)
		}
	}
	if text := mustOK(t, cs, "bash", map[string]any{"command": "echo hi", "timeout": 900000}); text != "exit_code: 0\nnote: the timeout of 900000 ms is above the maximum: the command ran with 600000 ms\nstdout:\nhi\n" {
		t.Fatalf("timeout above the maximum: %q", text)
	}
	if text := mustOK(t, cs, "bash", map[string]any{"command": "echo hi"}); text != "exit_code: 0\nstdout:\nhi\n" {
		t.Fatalf("no timeout: %q", text)
	}
	if text := mustOK(t, cs, "bash", map[string]any{"command": "sleep 5", "timeout": 300}); !strings.Contains(text, "timed out after 300 ms") {
		t.Fatalf("timeout 300: %q", text)
	}
}

// TestFileToolsReachLogged: the start-up log says what the file tools
// reach, and it is true: without --allow-dir a file outside the workdir
// is read and one is written there; with --allow-dir only inside it.
func TestFileToolsReachLogged(t *testing.T) {
	ws, outside := tempDir(t), tempDir(t)
	writeFile(t, filepath.Join(outside, "other.txt"), "elsewhere\n")

	cs, cmd, logs := connectStdio(t, ws)
	waitLogLine(t, logs, `msg="file tools: no --allow-dir, so they read and write every path boris's user can`, "workdir="+ws)
	if got := mustOK(t, cs, "view", map[string]any{"path": filepath.Join(outside, "other.txt")}); !strings.Contains(got, "elsewhere") {
		t.Fatalf("view outside the workdir without --allow-dir: %q", got)
	}
	mustOK(t, cs, "create_file", map[string]any{"path": filepath.Join(outside, "made.txt"), "content": "x\n"})
	cs.Close()
	_ = cmd.Wait()

	cs, cmd, logs = connectStdio(t, ws, "--allow-dir="+ws)
	t.Cleanup(func() { cs.Close(); _ = cmd.Wait() })
	waitLogLine(t, logs, `msg="file tools: confined to the --allow-dir directories"`, "allow_dirs="+ws)
	if strings.Contains(logs.String(), "no --allow-dir") {
		t.Fatalf("both reach lines:\n%s", logs)
	}
	mustErr(t, cs, "view", map[string]any{"path": filepath.Join(outside, "other.txt")}, "ACCESS_DENIED")
	mustErr(t, cs, "create_file", map[string]any{"path": filepath.Join(outside, "denied.txt"), "content": "x\n"}, "ACCESS_DENIED")
}
