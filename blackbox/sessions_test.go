package blackbox

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client of boris as an agent would have it: a transport, a protocol
// revision, and a session.
type agent struct {
	name string
	dir  string // boris's workdir
	cs   *mcp.ClientSession
}

// agents connects to boris over stdio and HTTP, at the client's default
// revision (2026-07-28) and pinned to the handshake era, each to a server
// of its own started with args.
func agents(t *testing.T, args ...string) []agent {
	t.Helper()
	var out []agent
	for _, era := range []string{defaultClient, handshakeEra} {
		label := "2026-07-28"
		if era != defaultClient {
			label = era
		}
		p := startInProcess(t, args...)
		out = append(out, agent{"http/" + label, p.dir, connectHTTPAt(t, p.url, "", era, nil)})
		dir, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		cs, cmd, _ := connectStdioAt(t, dir, era, args...)
		t.Cleanup(func() { cs.Close(); _ = cmd.Wait() })
		out = append(out, agent{"stdio/" + label, dir, cs})
	}
	return out
}

var handleRe = regexp.MustCompile(`session: (s_[A-Za-z0-9_-]{32})\n`)

// newSession runs a tool with session "new" and returns the minted handle
// with the tool's own text.
func newSession(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (handle, text string) {
	t.Helper()
	args["session"] = "new"
	text = mustOK(t, cs, tool, args)
	m := handleRe.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no handle in %q", text)
	}
	return m[1], text
}

// TestEveryToolInBothEras: every tool works for a 2026-07-28 client and a
// handshake-era one, over stdio and HTTP, and the working directory moved
// by cd persists without a session argument.
func TestEveryToolInBothEras(t *testing.T) {
	for _, a := range agents(t) {
		t.Run(a.name, func(t *testing.T) {
			if err := os.MkdirAll(filepath.Join(a.dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			if got, want := toolNames(t, a.cs), declaredTools(t); !slices.Equal(got, want) {
				t.Fatalf("tools %v, want %v", got, want)
			}
			mustOK(t, a.cs, "bash", map[string]any{"command": "cd sub"})
			if got := mustOK(t, a.cs, "bash", map[string]any{"command": "pwd"}); got != "exit_code: 0\nstdout:\n"+filepath.Join(a.dir, "sub")+"\n" {
				t.Fatalf("cd did not persist: %q", got)
			}
			mustOK(t, a.cs, "create_file", map[string]any{"path": "f.go", "content": "package sub\n\nvar answer = 41\n"})
			if _, err := os.Stat(filepath.Join(a.dir, "sub", "f.go")); err != nil {
				t.Fatalf("relative create_file did not follow cd: %v", err)
			}
			mustOK(t, a.cs, "view", map[string]any{"path": "f.go"})
			mustOK(t, a.cs, "str_replace", map[string]any{"path": "f.go", "old_str": "41", "new_str": "42"})
			if got := mustOK(t, a.cs, "grep", map[string]any{"pattern": "answer = 42", "output_mode": "content"}); !strings.Contains(got, "f.go:3:var answer = 42") {
				t.Fatalf("grep: %q", got)
			}
			if got := mustOK(t, a.cs, "find", map[string]any{"pattern": "*.go"}); got != "f.go" && got != "f.go\n" {
				t.Fatalf("find: %q", got)
			}
			task := between(mustOK(t, a.cs, "bash", map[string]any{"command": "echo from-bg", "run_in_background": true}), "task_id: ", "\n")
			// Reads are incremental: the output comes once, in whichever read.
			var seen strings.Builder
			deadline := time.Now().Add(10 * time.Second)
			for {
				out := mustOK(t, a.cs, "task_output", map[string]any{"task_id": task, "wait_ms": 1000})
				seen.WriteString(out)
				if strings.HasPrefix(out, "status: completed") {
					if !strings.Contains(seen.String(), "from-bg") {
						t.Fatalf("task_output: %q", seen.String())
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("task did not finish: %q", out)
				}
			}
		})
	}
}

// TestSessionHandles: "new" mints a session whose handle isolates the
// working directory, viewed files and background tasks; relative paths
// follow the handle; an unknown handle is SESSION_NOT_FOUND with a hint.
func TestSessionHandles(t *testing.T) {
	for _, a := range agents(t) {
		t.Run(a.name, func(t *testing.T) {
			for _, d := range []string{"a", "b"} {
				if err := os.MkdirAll(filepath.Join(a.dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(a.dir, d, "f.txt"), []byte("in "+d+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ha, text := newSession(t, a.cs, "bash", map[string]any{"command": "cd a"})
			if !strings.HasPrefix(text, "exit_code: 0\n") {
				t.Fatalf("bash in a new session: %q", text)
			}
			hb, _ := newSession(t, a.cs, "bash", map[string]any{"command": "cd b"})
			if ha == hb {
				t.Fatal("two new sessions got one handle")
			}
			pwd := func(h string) string {
				args := map[string]any{"command": "pwd"}
				if h != "" {
					args["session"] = h
				}
				return strings.TrimPrefix(mustOK(t, a.cs, "bash", args), "exit_code: 0\nstdout:\n")
			}
			if pwd(ha) != filepath.Join(a.dir, "a")+"\n" || pwd(hb) != filepath.Join(a.dir, "b")+"\n" || pwd("") != a.dir+"\n" {
				t.Fatalf("directories: a=%q b=%q default=%q", pwd(ha), pwd(hb), pwd(""))
			}
			// Relative paths of the file tools follow the handle's directory.
			if got := mustOK(t, a.cs, "view", map[string]any{"path": "f.txt", "session": hb}); got != "     1\tin b\n" {
				t.Fatalf("view in b: %q", got)
			}
			if got := mustOK(t, a.cs, "grep", map[string]any{"pattern": "in", "output_mode": "content", "session": ha}); got != "f.txt:1:in a\n" && got != "f.txt:1:in a" {
				t.Fatalf("grep in a: %q", got)
			}
			// Viewed files are the session's own.
			mustErr(t, a.cs, "str_replace", map[string]any{"path": filepath.Join(a.dir, "b", "f.txt"), "old_str": "in", "new_str": "IN", "session": ha}, "FILE_NOT_VIEWED")
			mustOK(t, a.cs, "str_replace", map[string]any{"path": "f.txt", "old_str": "in", "new_str": "IN", "session": hb})
			// So are background tasks.
			task := between(mustOK(t, a.cs, "bash", map[string]any{"command": "sleep 5", "run_in_background": true, "session": ha}), "task_id: ", "\n")
			mustErr(t, a.cs, "task_output", map[string]any{"task_id": task, "session": hb}, "BASH_TASK_NOT_FOUND")
			mustErr(t, a.cs, "task_output", map[string]any{"task_id": task}, "BASH_TASK_NOT_FOUND")
			mustOK(t, a.cs, "task_output", map[string]any{"task_id": task, "session": ha})
			// Unknown handles, and a wrongly typed one.
			text = mustErr(t, a.cs, "view", map[string]any{"path": ".", "session": "s_" + strings.Repeat("A", 32)}, "SESSION_NOT_FOUND")
			if !strings.Contains(text, `session: "new"`) || !strings.Contains(text, "Omit session") {
				t.Fatalf("SESSION_NOT_FOUND does not say how to start one: %q", text)
			}
			mustErr(t, a.cs, "view", map[string]any{"path": ".", "session": 7}, "INVALID_INPUT")
		})
	}
}

// TestToolsListIsTheSameForEveryone: both eras, every credential, see one
// tool set; every tool has the session argument and says what it does.
func TestToolsListIsTheSameForEveryone(t *testing.T) {
	p := startInProcess(t, "--token=tok-a", "--token=tok-b")
	var lists []string
	for _, tok := range []string{"tok-a", "tok-b"} {
		for _, era := range []string{defaultClient, handshakeEra} {
			res, err := connectHTTPAt(t, p.url, tok, era, nil).ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tl := range res.Tools {
				if !slices.Contains(propertyNames(t, tl.InputSchema), "session") || !strings.Contains(tl.Description, "session: optional") {
					t.Fatalf("%s lacks the session argument or its sentence", tl.Name)
				}
			}
			b, _ := json.Marshal(res.Tools)
			lists = append(lists, string(b))
		}
	}
	for _, l := range lists[1:] {
		if l != lists[0] {
			t.Fatal("tools/list differs between callers or eras")
		}
	}
}

// TestHandlesBelongToTheirCredential: a handle minted under one token is
// SESSION_NOT_FOUND under another, and each token has its own default
// session: A's cd does not move B.
func TestHandlesBelongToTheirCredential(t *testing.T) {
	p := startInProcess(t, "--token=tok-a", "--token=tok-b")
	if err := os.Mkdir(filepath.Join(p.dir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, era := range []string{defaultClient, handshakeEra} {
		a := connectHTTPAt(t, p.url, "tok-a", era, nil)
		b := connectHTTPAt(t, p.url, "tok-b", era, nil)
		h, _ := newSession(t, a, "bash", map[string]any{"command": "cd a; echo $$ > holder.pid; sleep 300 &"})
		mustErr(t, b, "bash", map[string]any{"command": "pwd", "session": h}, "SESSION_NOT_FOUND")
		mustErr(t, b, "task_output", map[string]any{"task_id": "task_1", "session": h}, "SESSION_NOT_FOUND")
		mustOK(t, a, "bash", map[string]any{"command": "pwd", "session": h})

		mustOK(t, a, "bash", map[string]any{"command": "cd a"})
		if got := mustOK(t, b, "bash", map[string]any{"command": "pwd"}); got != "exit_code: 0\nstdout:\n"+p.dir+"\n" {
			t.Fatalf("%s: B's directory moved with A's cd: %q", era, got)
		}
		mustOK(t, a, "bash", map[string]any{"command": "cd " + p.dir})
	}
}

// TestStatelessDefaultSessionPerCredential: over the stateless revision,
// separate connections with one token share its default session.
func TestStatelessDefaultSessionPerCredential(t *testing.T) {
	p := startInProcess(t, "--token=tok-a")
	if err := os.Mkdir(filepath.Join(p.dir, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustOK(t, connectHTTP(t, p.url, "tok-a", nil), "bash", map[string]any{"command": "cd x"})
	if got := mustOK(t, connectHTTP(t, p.url, "tok-a", nil), "bash", map[string]any{"command": "pwd"}); !strings.HasSuffix(got, "/x\n") {
		t.Fatalf("a second connection does not share the default session: %q", got)
	}
}

// TestSessionExpiry: an idle handle's processes are terminated and the
// handle is gone; an idle default session restarts in the workdir and the
// next call says so.
func TestSessionExpiry(t *testing.T) {
	p := startInProcess(t, "--session-idle-timeout=1s")
	cs := connectHTTP(t, p.url, "", nil)
	if err := os.Mkdir(filepath.Join(p.dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	h, _ := newSession(t, cs, "bash", map[string]any{"command": "echo $$ > bg.pid; exec sleep 300", "run_in_background": true})
	mustOK(t, cs, "bash", map[string]any{"command": "cd sub; sleep 300 & echo $! > ../left.pid"})
	pids := []int{readPid(t, filepath.Join(p.dir, "bg.pid")), readPid(t, filepath.Join(p.dir, "left.pid"))}
	waitGone(t, 10*time.Second, pids...)
	mustErr(t, cs, "bash", map[string]any{"command": "true", "session": h}, "SESSION_NOT_FOUND")
	text := mustOK(t, cs, "bash", map[string]any{"command": "pwd"})
	if !strings.Contains(text, "stdout:\n"+p.dir+"\n") || !strings.Contains(text, "note: your previous session was closed after 1s without calls") {
		t.Fatalf("after expiry: %q", text)
	}
	if text := mustOK(t, cs, "bash", map[string]any{"command": "true"}); strings.Contains(text, "note:") {
		t.Fatalf("the restart note repeats: %q", text)
	}
}

// TestMaxSessions: when full, the least recently used session with
// nothing running makes room; with every session busy, SESSION_LIMIT.
func TestMaxSessions(t *testing.T) {
	p := startInProcess(t, "--max-sessions=2")
	cs := connectHTTP(t, p.url, "", nil)
	mustOK(t, cs, "bash", map[string]any{"command": "true"}) // the default session
	h1, _ := newSession(t, cs, "bash", map[string]any{"command": "true"})
	// Full: the least recently used idle session, the default one, makes room.
	h2, _ := newSession(t, cs, "bash", map[string]any{"command": "sleep 300", "run_in_background": true})
	// The default session comes back in place of h1 (h2 is busy) and says so.
	text := mustOK(t, cs, "bash", map[string]any{"command": "true"})
	if !strings.Contains(text, "note: your previous session was closed to make room") {
		t.Fatalf("no note on the evicted default session: %q", text)
	}
	mustErr(t, cs, "bash", map[string]any{"command": "true", "session": h1}, "SESSION_NOT_FOUND")
	mustOK(t, cs, "bash", map[string]any{"command": "true", "session": h2})
	// Both sessions busy: nothing can make room.
	mustOK(t, cs, "bash", map[string]any{"command": "sleep 300", "run_in_background": true})
	text = mustErr(t, cs, "bash", map[string]any{"command": "true", "session": "new"}, "SESSION_LIMIT")
	if !strings.Contains(text, "all 2 sessions are in use") {
		t.Fatalf("SESSION_LIMIT message: %q", text)
	}
}

// rawStateless sends one JSON-RPC request at 2026-07-28 the way the
// revision says: MCP-Protocol-Version, Mcp-Method and Mcp-Name headers, the
// version and client capabilities in _meta, no session id.
func rawStateless(ctx context.Context, url, method, name string, params map[string]any, header map[string]string) (*http.Response, string, error) {
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    statelessEra,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/mcp", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", statelessEra)
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
	if err != nil {
		return nil, "", err
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(raw), err
}

// TestStatelessWire checks the 2026-07-28 revision on the wire: a tools/call
// with no session is answered without Mcp-Session-Id; GET and DELETE are
// 405; server/discover lists the revisions; a header that contradicts the
// body is -32020.
func TestStatelessWire(t *testing.T) {
	p := startInProcess(t)
	ctx := context.Background()
	resp, body, err := rawStateless(ctx, p.url, "tools/call", "bash", map[string]any{"name": "bash", "arguments": map[string]any{"command": "echo stateless"}}, nil)
	if err != nil || resp.StatusCode != 200 || !strings.Contains(body, `stateless\n`) {
		t.Fatalf("tools/call: %v %v %s", err, resp, body)
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		t.Fatalf("a stateless answer set Mcp-Session-Id %q", id)
	}
	// A session id sent anyway is ignored, not looked up.
	resp, body, _ = rawStateless(ctx, p.url, "tools/call", "bash", map[string]any{"name": "bash", "arguments": map[string]any{"command": "true"}}, map[string]string{"Mcp-Session-Id": "made-up"})
	if resp.StatusCode != 200 || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("with a stray session id: %d %s", resp.StatusCode, body)
	}
	for _, method := range []string{"GET", "DELETE"} {
		req, _ := http.NewRequest(method, p.url+"/mcp", nil)
		req.Header.Set("Mcp-Protocol-Version", statelessEra)
		req.Header.Set("Accept", "text/event-stream")
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "POST" {
			t.Fatalf("%s at %s: %d Allow=%q", method, statelessEra, r.StatusCode, r.Header.Get("Allow"))
		}
	}
	// server/discover, with and without the version header.
	for _, h := range []bool{true, false} {
		req, _ := http.NewRequest("POST", p.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if h {
			req.Header.Set("Mcp-Protocol-Version", statelessEra)
			req.Header.Set("Mcp-Method", "server/discover")
		}
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if h {
			versions := regexp.MustCompile(`"supportedVersions":\[([^\]]*)\]`).FindStringSubmatch(string(raw))
			if versions == nil || !strings.HasPrefix(versions[1], `"2026-07-28"`) {
				t.Fatalf("discover: %s", raw)
			}
			for _, v := range []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"} {
				if !strings.Contains(versions[1], `"`+v+`"`) {
					t.Fatalf("discover lacks %s: %s", v, raw)
				}
			}
		} else if !strings.Contains(string(raw), "-32020") {
			// _meta without the header the revision requires.
			t.Fatalf("discover without MCP-Protocol-Version: %d %s", r.StatusCode, raw)
		}
	}
	// Headers that contradict the body.
	for _, h := range []map[string]string{{"Mcp-Name": "view"}, {"Mcp-Method": "tools/list"}} {
		resp, body, _ := rawStateless(ctx, p.url, "tools/call", "bash", map[string]any{"name": "bash", "arguments": map[string]any{"command": "touch should-not-exist"}}, h)
		if resp.StatusCode != 400 || !strings.Contains(body, "-32020") {
			t.Fatalf("mismatch %v: %d %s", h, resp.StatusCode, body)
		}
	}
	if _, err := os.Stat(filepath.Join(p.dir, "should-not-exist")); err == nil {
		t.Fatal("a refused request ran its command")
	}
	// The era is a label on request metrics.
	r, err := http.Get(p.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if !strings.Contains(string(metrics), `boris_mcp_requests_total{era="stateless",method="tools/call"} 2`) {
		t.Fatalf("metrics:\n%s", metrics)
	}
}

// TestStatelessAbandonKillsTheCommand: at 2026-07-28 the POST is the whole
// request; a client that closes it cancels the call and its process group.
func TestStatelessAbandonKillsTheCommand(t *testing.T) {
	p := startInProcess(t)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, _, err := rawStateless(ctx, p.url, "tools/call", "bash", map[string]any{"name": "bash", "arguments": map[string]any{"command": "echo $$ > fg.pid; sleep 300 & echo $! > child.pid; wait"}}, nil)
		errc <- err
	}()
	pids := []int{readPid(t, filepath.Join(p.dir, "fg.pid")), readPid(t, filepath.Join(p.dir, "child.pid"))}
	cancel()
	<-errc
	waitGone(t, 7*time.Second, pids...)
	// And through the go-sdk client: cancelling its context.
	cs := connectHTTP(t, p.url, "", nil)
	ctx, cancel = context.WithCancel(context.Background())
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo $$ > fg2.pid; exec sleep 300"}})
		errc <- err
	}()
	pid := readPid(t, filepath.Join(p.dir, "fg2.pid"))
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("a cancelled call returned no error")
	}
	waitGone(t, 7*time.Second, pid)
}

// TestHandshakeClientsUnchanged: an old client that initializes and then
// uses its Mcp-Session-Id gets a session id and is served as before.
func TestHandshakeClientsUnchanged(t *testing.T) {
	p := startInProcess(t)
	for _, v := range []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"} {
		cs := connectHTTPAt(t, p.url, "", v, nil)
		if cs.ID() == "" {
			t.Fatalf("%s: no Mcp-Session-Id", v)
		}
		if got := mustOK(t, cs, "bash", map[string]any{"command": fmt.Sprintf("echo %s", v)}); !strings.Contains(got, v) {
			t.Fatalf("%s: %q", v, got)
		}
	}
}
