package blackbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/app"
)

// TestToolListsAndServerInfo: over HTTP, the server lists exactly the
// tools the declarations give its configuration (which tools each dialect
// and --disable-tools yield is pinned in internal/tool/catalog), and says
// who it is and where it works.
func TestToolListsAndServerInfo(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"--anthropic-compat"},
		{"--disable-tools=bash"},
		{"--anthropic-compat", "--disable-tools=view"},
		{"--disable-tools=bash,create_file,apply_patch"},
		{"--lsp=off"},
		{"--anthropic-compat", "--disable-tools=LSP"},
		{"--openai-compat"},
		{"--openai-compat", "--disable-tools=shell"},
		{"--openai-compat", "--disable-tools=exec_command"},
		{"--checkpoints=off"},
		{"--disable-tools=checkpoint"},
		{"--openai-compat", "--checkpoints=off"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			p := startInProcess(t, args...)
			cs := connectHTTP(t, p.url, "", nil)
			if got, want := toolNames(t, cs), declaredTools(t, args...); !slices.Equal(got, want) {
				t.Fatalf("tools %v, want %v", got, want)
			}
			// The declarations are not the only witness: the served list
			// has the search tools too, none exempt.
			if len(args) == 0 {
				got := toolNames(t, cs)
				for _, name := range []string{"bash", "view", "str_replace", "create_file", "apply_patch", "grep", "find"} {
					if !slices.Contains(got, name) {
						t.Fatalf("the default tools %v lack %s", got, name)
					}
				}
			}
			init := cs.InitializeResult()
			if init.ServerInfo.Name != "boris" || init.ServerInfo.Version == "" || !strings.Contains(init.Instructions, p.dir) {
				t.Fatalf("server info %+v instructions %q", init.ServerInfo, init.Instructions)
			}
		})
	}
}

func TestBashThroughMCP(t *testing.T) {
	p := startInProcess(t)
	cs := connectHTTP(t, p.url, "", nil)
	tests := []struct {
		command string
		want    string
	}{
		{"false", "exit_code: 1\n"},
		{"ls /definitely/missing", "exit_code: 2\nstderr:\n"},
		{"exit 42", "exit_code: 42\n"},
		{"echo hello", "exit_code: 0\nstdout:\nhello\n"},
		{"printf 'a\\n\\n\\nb\\n\\n'", "exit_code: 0\nstdout:\na\n\n\nb\n\n"},
		{"echo out; echo err >&2", "exit_code: 0\nstdout:\nout\nstderr:\nerr\n"},
		{"echo hi # trailing comment", "exit_code: 0\nstdout:\nhi\n"},
		{"cat <<'EOF'\n$HOME stays literal\nEOF", "exit_code: 0\nstdout:\n$HOME stays literal\n"},
		{"echo __BORIS_CWD__", "exit_code: 0\nstdout:\n__BORIS_CWD__\n"},
	}
	for _, tt := range tests {
		text, isErr := call(t, cs, "bash", map[string]any{"command": tt.command})
		if isErr || !strings.HasPrefix(text, tt.want) {
			t.Fatalf("%q: isError=%v\n%q\nwant prefix %q", tt.command, isErr, text, tt.want)
		}
		if tt.want == "exit_code: 1\n" && text != tt.want {
			t.Fatalf("false printed %q", text)
		}
	}
	mustErr(t, cs, "bash", map[string]any{"command": "   "}, "BASH_EMPTY_COMMAND")
	// command may be left out only with restart: true.
	mustErr(t, cs, "bash", map[string]any{}, "BASH_EMPTY_COMMAND")
	mustErr(t, cs, "bash", map[string]any{"command": "true", "timeout": "soon"}, "INVALID_INPUT")
	// Lenient numbers: "5000" and 5000.0 are fine.
	mustOK(t, cs, "bash", map[string]any{"command": "true", "timeout": "5000"})
	mustOK(t, cs, "bash", map[string]any{"command": "true", "timeout": 5000.0, "run_in_background": "false"})

	// cd persists; a 200 KB line comes back cut with a note.
	if err := os.Mkdir(filepath.Join(p.dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustOK(t, cs, "bash", map[string]any{"command": "cd sub"})
	if text := mustOK(t, cs, "bash", map[string]any{"command": "pwd"}); !strings.Contains(text, filepath.Join(p.dir, "sub")+"\n") {
		t.Fatalf("cwd not kept: %q", text)
	}
	text := mustOK(t, cs, "bash", map[string]any{"command": "head -c 200000 /dev/zero | tr '\\0' x"})
	if !strings.Contains(text, "[stdout truncated: 200000 characters in total, the first 30000 shown") || strings.Count(text, "x") < 30000 {
		t.Fatalf("long line: %d bytes, tail %q", len(text), text[len(text)-200:])
	}
	// A relative path in a file tool resolves against the bash cwd.
	if err := os.WriteFile(filepath.Join(p.dir, "sub", "f.txt"), []byte("in sub\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if text := mustOK(t, cs, "view", map[string]any{"path": "f.txt"}); text != "     1\tin sub\n" {
		t.Fatalf("view relative: %q", text)
	}
}

func TestBackgroundChildReturnsPromptly(t *testing.T) {
	p := startInProcess(t)
	cs := connectHTTP(t, p.url, "", nil)
	// Waiting for the child would take its 30 s; a loaded machine needs
	// far less than 20 s for the call itself.
	start := time.Now()
	text := mustOK(t, cs, "bash", map[string]any{"command": "sleep 30 & echo started"})
	if took := time.Since(start); took > 20*time.Second || !strings.HasPrefix(text, "exit_code: 0\nnote: processes the command started are left running (listed as task_1") || !strings.HasSuffix(text, "stdout:\nstarted\n") {
		t.Fatalf("took %v: %q", took, text)
	}
}

func TestBackgroundTasksThroughMCP(t *testing.T) {
	p := startInProcess(t, "--background-task-timeout=1")
	cs := connectHTTP(t, p.url, "", nil)
	text := mustOK(t, cs, "bash", map[string]any{"command": "echo first; sleep 0.2; echo second", "run_in_background": true})
	id := between(text, "task_id: ", "\n")
	if id == "" || !strings.Contains(text, "pgid: ") {
		t.Fatalf("start: %q", text)
	}
	// Reads are incremental: together they give the output once.
	var out, all string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		out = mustOK(t, cs, "task_output", map[string]any{"task_id": id})
		all += out
		if strings.HasPrefix(out, "status: completed") {
			break
		}
	}
	if !strings.HasPrefix(out, "status: completed\ntask_id: "+id+"\nexit_code: 0\n") || strings.Count(all, "first\n") != 1 || strings.Count(all, "second\n") != 1 {
		t.Fatalf("task output %q", all)
	}
	mustErr(t, cs, "task_output", map[string]any{"task_id": id}, "BASH_TASK_NOT_FOUND")
	// The background task timeout kills and says so.
	text = mustOK(t, cs, "bash", map[string]any{"command": "sleep 60", "run_in_background": true})
	id = between(text, "task_id: ", "\n")
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		out = mustOK(t, cs, "task_output", map[string]any{"task_id": id})
		if strings.HasPrefix(out, "status: completed") {
			break
		}
	}
	if !strings.Contains(out, "killed: the task ran out of time") {
		t.Fatalf("timeout kill not reported: %q", out)
	}
	// The limit of 10 running tasks.
	for i := 0; i < 10; i++ {
		mustOK(t, cs, "bash", map[string]any{"command": "sleep 30", "run_in_background": true})
	}
	mustErr(t, cs, "bash", map[string]any{"command": "sleep 30", "run_in_background": true}, "BASH_TASK_LIMIT")
}

func between(s, a, b string) string {
	_, rest, ok := strings.Cut(s, a)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, b)
	return v
}

func TestFileToolsThroughMCP(t *testing.T) {
	p := startInProcess(t)
	cs := connectHTTP(t, p.url, "", nil)
	path := filepath.Join(p.dir, "main.go")
	mustOK(t, cs, "create_file", map[string]any{"path": "main.go", "content": "package main\n\nfunc main() {}\n"})
	// Created in this session counts as viewed.
	text := mustOK(t, cs, "str_replace", map[string]any{"path": path, "old_str": "func main() {}", "new_str": "func main() {\n\tprintln(1)\n}"})
	if !strings.Contains(text, "     4\t\tprintln(1)\n") {
		t.Fatalf("snippet %q", text)
	}
	if err := os.WriteFile(filepath.Join(p.dir, "other.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustErr(t, cs, "str_replace", map[string]any{"path": "other.txt", "old_str": "x", "new_str": "y"}, "FILE_NOT_VIEWED")
	mustErr(t, cs, "create_file", map[string]any{"path": "other.txt", "content": "y"}, "FILE_NOT_VIEWED")
	mustOK(t, cs, "view", map[string]any{"path": "other.txt", "view_range": []int{1, -1}})
	mustOK(t, cs, "str_replace", map[string]any{"path": "other.txt", "old_str": "x", "new_str": "y"})
	mustErr(t, cs, "view", map[string]any{"path": "nope.txt"}, "PATH_NOT_FOUND")
	mustErr(t, cs, "view", map[string]any{"path": "other.txt", "view_range": []int{1}}, "INVALID_INPUT")
	mustErr(t, cs, "view", map[string]any{"path": "other.txt", "view_range": []int{5, 9}}, "INVALID_INPUT")

	// The viewed set is per session.
	mustErr(t, cs, "str_replace", map[string]any{"path": "other.txt", "old_str": "y", "new_str": "z", "session": "new"}, "FILE_NOT_VIEWED")

	// An image comes back as ImageContent.
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
	if err := os.WriteFile(filepath.Join(p.dir, "pixel.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "view", Arguments: map[string]any{"path": "pixel.png"}})
	if err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("image view: %v %+v", err, res)
	}
	if img, ok := res.Content[0].(*mcp.ImageContent); !ok || img.MIMEType != "image/png" || !bytes.Equal(img.Data, png) {
		t.Fatalf("image content %T", res.Content[0])
	}
}

// The compat editor and the split tools make the same edits (one
// implementation), each answering in its own dialect; an unknown command is
// a tool error naming the valid ones.
func TestEditorMatchesSplitTools(t *testing.T) {
	split := startInProcess(t)
	compat := startInProcess(t, "--anthropic-compat")
	cs, cc := connectHTTP(t, split.url, "", nil), connectHTTP(t, compat.url, "", nil)
	for _, p := range []*inProcess{split, compat} {
		if err := os.WriteFile(filepath.Join(p.dir, "f.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sameFiles := func() {
		t.Helper()
		for _, name := range []string{"f.txt", "g.txt"} {
			a, errA := os.ReadFile(filepath.Join(split.dir, name))
			b, errB := os.ReadFile(filepath.Join(compat.dir, name))
			if string(a) != string(b) || (errA == nil) != (errB == nil) {
				t.Fatalf("%s: split %q (%v), compat %q (%v)", name, a, errA, b, errB)
			}
		}
	}
	a := mustOK(t, cs, "view", map[string]any{"path": "f.txt", "view_range": []int{2, 3}})
	b := mustOK(t, cc, "str_replace_editor", map[string]any{"command": "view", "path": "f.txt", "view_range": []int{2, 3}})
	if a != "     2\ttwo\n     3\tthree\n" || b != "Here's the result of running `cat -n` on "+filepath.Join(compat.dir, "f.txt")+":\n"+a {
		t.Fatalf("split %q\ncompat %q", a, b)
	}
	mustOK(t, cs, "str_replace", map[string]any{"path": "f.txt", "old_str": "two", "new_str": "2"})
	mustOK(t, cc, "str_replace_editor", map[string]any{"command": "str_replace", "path": "f.txt", "old_str": "two", "new_str": "2"})
	sameFiles()
	mustOK(t, cs, "create_file", map[string]any{"path": "g.txt", "content": "new\n"})
	mustOK(t, cc, "str_replace_editor", map[string]any{"command": "create", "path": "g.txt", "file_text": "new\n"})
	sameFiles()
	mustErr(t, cs, "str_replace", map[string]any{"path": "f.txt", "old_str": "absent", "new_str": "x"}, "STR_REPLACE_NOT_FOUND")
	mustErr(t, cc, "str_replace_editor", map[string]any{"command": "str_replace", "path": "f.txt", "old_str": "absent", "new_str": "x"}, "STR_REPLACE_NOT_FOUND")
	sameFiles()

	mustOK(t, cc, "str_replace_editor", map[string]any{"command": "insert", "path": "f.txt", "insert_line": 0, "new_str": "zero"})
	if got, _ := os.ReadFile(filepath.Join(compat.dir, "f.txt")); string(got) != "zero\none\n2\nthree\n" {
		t.Fatalf("after insert %q", got)
	}
	text := mustErr(t, cc, "str_replace_editor", map[string]any{"command": "delete", "path": "f.txt"}, "EDITOR_INVALID_COMMAND")
	if !strings.Contains(text, "view, create, str_replace, insert, undo_edit") {
		t.Fatalf("valid commands not named: %q", text)
	}
	mustErr(t, cc, "str_replace_editor", map[string]any{"command": "create", "path": "h.txt"}, "INVALID_INPUT")
}

// Handshake era: each Mcp-Session-Id connection is its own session.
func TestSessionsAreIndependent(t *testing.T) {
	p := startInProcess(t)
	a, b := connectHTTPAt(t, p.url, "", handshakeEra, nil), connectHTTPAt(t, p.url, "", handshakeEra, nil)
	if a.ID() == "" || a.ID() == b.ID() {
		t.Fatalf("session ids %q %q", a.ID(), b.ID())
	}
	for _, d := range []string{"da", "db"} {
		if err := os.Mkdir(filepath.Join(p.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { mustOK(t, a, "bash", map[string]any{"command": "cd da"}) })
	wg.Go(func() { mustOK(t, b, "bash", map[string]any{"command": "cd db"}) })
	wg.Wait()
	if got := mustOK(t, a, "bash", map[string]any{"command": "pwd"}); !strings.HasSuffix(got, "/da\n") {
		t.Fatalf("a: %q", got)
	}
	if got := mustOK(t, b, "bash", map[string]any{"command": "pwd"}); !strings.HasSuffix(got, "/db\n") {
		t.Fatalf("b: %q", got)
	}
	task := between(mustOK(t, a, "bash", map[string]any{"command": "sleep 5", "run_in_background": true}), "task_id: ", "\n")
	mustErr(t, b, "task_output", map[string]any{"task_id": task}, "BASH_TASK_NOT_FOUND")
	mustOK(t, a, "task_output", map[string]any{"task_id": task})

	// Reconnecting with the same session id (a new HTTP connection, raw
	// JSON-RPC) keeps the session's state.
	body := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"bash","arguments":{"command":"pwd"}}}`
	req, _ := http.NewRequest("POST", p.url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", a.ID())
	req.Header.Set("Mcp-Protocol-Version", a.InitializeResult().ProtocolVersion)
	resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(raw), `/da\n`) {
		t.Fatalf("reconnect: %d %s", resp.StatusCode, raw)
	}
}

func TestAuthHealthMetrics(t *testing.T) {
	p := startInProcess(t, "--token=s3cret-token")
	// No token, a wrong token: 401 with a JSON body.
	for _, tok := range []string{"", "wrong"} {
		req, _ := http.NewRequest("POST", p.url+"/mcp", strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]string
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != 401 || body["error"] != "unauthorized" {
			t.Fatalf("token %q: %d %v", tok, resp.StatusCode, body)
		}
	}
	// The right token works.
	cs := connectHTTP(t, p.url, "s3cret-token", nil)
	mustOK(t, cs, "bash", map[string]any{"command": "true"})
	// /health and /metrics need no token.
	resp, err := http.Get(p.url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var health map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&health)
	resp.Body.Close()
	if resp.StatusCode != 200 || health["status"] != "ok" || health["version"] == "" {
		t.Fatalf("health %d %v", resp.StatusCode, health)
	}
	resp, err = http.Get(p.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`boris_tool_calls_total{outcome="ok",tool="bash"} 1`, "boris_sessions_active 1", "boris_build_info{version=", "go_goroutines", "process_resident_memory_bytes"} {
		if !strings.Contains(string(metrics), want) {
			t.Fatalf("metrics lack %q", want)
		}
	}
	// The container health probe.
	port := p.url[strings.LastIndexByte(p.url, ':')+1:]
	if err := app.Run(context.Background(), []string{"--healthcheck", "--port=" + port}, func(string) string { return "" }, nil, io.Discard, io.Discard); err != nil {
		t.Fatalf("healthcheck: %v", err)
	}
	if err := app.Run(context.Background(), []string{"--healthcheck", "--port=1"}, func(string) string { return "" }, nil, io.Discard, io.Discard); err == nil {
		t.Fatal("healthcheck of a closed port succeeded")
	}
	// A preflight from an origin nobody listed is refused, token or not.
	req, _ := http.NewRequest("OPTIONS", p.url+"/mcp", nil)
	req.Header.Set("Origin", "https://example.com")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("preflight %d %v", resp.StatusCode, resp.Header)
	}
	if strings.Contains(p.logs.String(), "s3cret-token") || strings.Contains(string(metrics), "s3cret-token") {
		t.Fatal("the token appears in logs or metrics")
	}
}

// TestProgressNotifications: a command printing three short lines (each far
// shorter than the cwd sentinel) yields a progress notification for each
// line while it runs, over both transports and in both protocol eras. The
// command waits after each line until the test has seen it in a
// notification, so a notification held back until the end fails the test.
func TestProgressNotifications(t *testing.T) {
	script := `for i in 1 2 3; do echo line$i; n=0; while [ ! -e seen$i ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n+1)); done; done; ls seen1 seen2 seen3`
	for _, transport := range []string{"http", "stdio"} {
		for _, era := range []string{handshakeEra, statelessEra} {
			t.Run(transport+"/"+era, func(t *testing.T) {
				var dir string
				var mu sync.Mutex
				var msgs []string
				opts := &mcp.ClientOptions{
					ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
						if strings.Contains(req.Params.Message, "start-up checkpoint") || heartbeatRe.MatchString(req.Params.Message) {
							return // the wait before the call, or a heartbeat: not output
						}
						mu.Lock()
						msgs = append(msgs, req.Params.Message)
						mu.Unlock()
						for i := 1; i <= 3; i++ {
							if strings.Contains(req.Params.Message, fmt.Sprintf("line%d\n", i)) {
								os.WriteFile(filepath.Join(dir, fmt.Sprintf("seen%d", i)), nil, 0o644)
							}
						}
					},
				}
				var cs *mcp.ClientSession
				if transport == "http" {
					p := startInProcess(t)
					dir = p.dir
					cs = connectHTTPAt(t, p.url, "", era, opts)
				} else {
					dir = t.TempDir()
					cs, _, _ = connectStdioWith(t, dir, era, opts)
				}
				params := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": script}}
				params.SetProgressToken("tok-1")
				res, err := cs.CallTool(context.Background(), params)
				if err != nil || res.IsError {
					t.Fatalf("%v %v", err, res)
				}
				mu.Lock()
				defer mu.Unlock()
				out := resultText(res)
				if strings.Contains(out, "No such file") || !strings.Contains(out, "seen3") {
					t.Fatalf("a line was not streamed while the command ran: result %q, progress %q", out, msgs)
				}
				// A call that comes before the start-up checkpoint is
				// recorded is told so first, in a progress message of its
				// own: whether it does depends on the machine's speed.
				var output []string
				for _, m := range msgs {
					if !strings.HasPrefix(m, "waiting for the start-up checkpoint") {
						output = append(output, m)
					}
				}
				joined := strings.Join(output, "")
				if !strings.HasPrefix(joined, "line1\nline2\nline3\n") {
					t.Fatalf("progress %q", msgs)
				}
				if strings.Contains(joined, "BORIS_CWD") {
					t.Fatalf("the sentinel leaked into progress: %q", msgs)
				}
			})
		}
	}
}

func TestCancellationKillsTheCommand(t *testing.T) {
	p := startInProcess(t)
	cs := connectHTTP(t, p.url, "", nil)
	pidFile := filepath.Join(p.dir, "pid")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "sleep 300 & echo $! > pid; wait"}})
		errc <- err
	}()
	pid := readPid(t, pidFile)
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("cancelled call returned no error")
	}
	waitGone(t, 7*time.Second, pid)
}

// Handshake era: the client's DELETE ends its connection's session.
func TestDeleteClosesSession(t *testing.T) {
	p := startInProcess(t)
	cs := connectHTTPAt(t, p.url, "", handshakeEra, nil)
	mustOK(t, cs, "bash", map[string]any{"command": "sleep 300 & echo $! > left.pid"})
	mustOK(t, cs, "bash", map[string]any{"command": "echo $$ > bg.pid; exec sleep 300", "run_in_background": true})
	pids := []int{readPid(t, filepath.Join(p.dir, "left.pid")), readPid(t, filepath.Join(p.dir, "bg.pid"))}
	start := time.Now()
	if err := cs.Close(); err != nil { // the client sends DELETE
		t.Fatal(err)
	}
	// Left alone they would run their 300 s.
	waitGone(t, 30*time.Second, pids...)
	t.Logf("processes of the deleted session ended after %v", time.Since(start))
}

func TestShutdownKillsEverything(t *testing.T) {
	p := startInProcess(t)
	cs := connectHTTP(t, p.url, "", nil)
	shutdownEndsCommands(t, p, cs)
}

// shutdownEndsCommands starts a background and a foreground command,
// stops the server, and checks that it stopped within the budget and
// both commands are gone.
func shutdownEndsCommands(t *testing.T, p *inProcess, cs *mcp.ClientSession) {
	t.Helper()
	mustOK(t, cs, "bash", map[string]any{"command": "echo $$ > bg.pid; exec sleep 300", "run_in_background": true})
	go func() {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo $$ > fg.pid; exec sleep 300"}})
	}()
	pids := []int{readPid(t, filepath.Join(p.dir, "bg.pid")), readPid(t, filepath.Join(p.dir, "fg.pid"))}
	start := time.Now()
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 7*time.Second {
		t.Fatalf("shutdown took %v", took)
	}
	waitGone(t, time.Second, pids...)
}

// Handshake era: an idle connection is closed with its session.
func TestIdleSessionIsClosed(t *testing.T) {
	p := startInProcess(t, "--session-idle-timeout=1s")
	cs := connectHTTPAt(t, p.url, "", handshakeEra, nil)
	mustOK(t, cs, "bash", map[string]any{"command": "echo $$ > bg.pid; exec sleep 300", "run_in_background": true})
	pid := readPid(t, filepath.Join(p.dir, "bg.pid"))
	waitGone(t, 8*time.Second, pid)
	// The session's processes end before its close is counted: the gauge
	// follows within moments.
	inactive := func() bool {
		resp, err := http.Get(p.url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return strings.Contains(string(body), "boris_sessions_active 0")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !inactive() {
		if time.Now().After(deadline) {
			t.Fatal("the idle session is still counted as active")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "true"}}); err == nil {
		t.Fatal("a call on the closed session succeeded")
	}
}

// A client that drops its HTTP connection in the middle of a call does not
// leave the command running.
func TestDroppedConnectionKillsTheCommand(t *testing.T) {
	p := startInProcess(t)
	cs := connectHTTPAt(t, p.url, "", handshakeEra, nil)
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo $$ > fg.pid; exec sleep 300"}}}`
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", p.url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", cs.InitializeResult().ProtocolVersion)
	errc := make(chan error, 1)
	go func() {
		resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		errc <- err
	}()
	pid := readPid(t, filepath.Join(p.dir, "fg.pid"))
	cancel() // the client goes away
	<-errc
	waitGone(t, 7*time.Second, pid)
	// The session itself lives on for its other requests.
	mustOK(t, cs, "bash", map[string]any{"command": "true"})
}
