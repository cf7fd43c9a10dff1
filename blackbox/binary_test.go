package blackbox

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"
)

func tempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestStdioBinary(t *testing.T) {
	dir := tempDir(t)
	cs, _, logs := connectStdio(t, dir)
	defer cs.Close()
	if got := mustOK(t, cs, "bash", map[string]any{"command": "echo hi; false"}); got != "exit_code: 1\nstdout:\nhi\n" {
		t.Fatalf("bash: %q", got)
	}
	mustOK(t, cs, "create_file", map[string]any{"path": "a.txt", "content": "x\n"})
	if got := mustOK(t, cs, "view", map[string]any{"path": "a.txt"}); got != "     1\tx\n" {
		t.Fatalf("view: %q", got)
	}
	if !strings.Contains(logs.String(), `shell="/bin/bash (detected)"`) {
		t.Fatalf("start-up log does not name the shell:\n%s", logs)
	}
	if !strings.Contains(logs.String(), "tool=bash") {
		t.Fatalf("no debug line per tool call:\n%s", logs)
	}
}

// Closing stdin ends the session and every process it started.
func TestStdioEOFKillsProcesses(t *testing.T) {
	dir := tempDir(t)
	cs, cmd, _ := connectStdio(t, dir)
	mustOK(t, cs, "bash", map[string]any{"command": "echo $$ > bg.pid; trap '' TERM; while :; do sleep 0.1; done", "run_in_background": true})
	mustOK(t, cs, "bash", map[string]any{"command": "sleep 300 & echo $! > left.pid"})
	pids := []int{readPid(t, filepath.Join(dir, "bg.pid")), readPid(t, filepath.Join(dir, "left.pid"))}
	start := time.Now()
	_ = cs.Close() // closes boris's stdin and waits for it to exit
	if took := time.Since(start); took > 8*time.Second {
		t.Fatalf("exit after EOF took %v", took)
	}
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("boris exit state %v", cmd.ProcessState)
	}
	waitGone(t, time.Second, pids...)
}

// SIGTERM or SIGINT to the server with foreground and background commands
// running, some ignoring SIGTERM.
func TestSignalKillsEverything(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			signalKillsEverything(t, sig)
		})
	}
}

// signalKillsEverything: foreground, background and TERM-ignoring
// processes are all gone within the shutdown budget, and boris exits 0.
func signalKillsEverything(t *testing.T, sig syscall.Signal) {
	dir := tempDir(t)
	cmd := exec.Command(binPath, "--port=0", "--workdir="+dir)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	logs := &logBuffer{}
	url := scanLogs(t, stderr, logs)
	cs := connectHTTP(t, url, "", nil)
	mustOK(t, cs, "bash", map[string]any{"command": "echo $$ > bg.pid; trap '' TERM; while :; do sleep 0.1; done", "run_in_background": true})
	mustOK(t, cs, "bash", map[string]any{"command": "sh -c 'trap \"\" TERM; echo $$ > grand.pid; while :; do sleep 0.1; done' & echo started"})
	go func() {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "trap '' TERM; echo $$ > fg.pid; while :; do sleep 0.1; done"}})
	}()
	pids := []int{readPid(t, filepath.Join(dir, "bg.pid")), readPid(t, filepath.Join(dir, "grand.pid")), readPid(t, filepath.Join(dir, "fg.pid"))}
	start := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, logs)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("boris did not exit after %v\n%s", sig, logs)
	}
	if took := time.Since(start); took > 7*time.Second {
		t.Fatalf("shutdown took %v", took)
	}
	waitGone(t, 500*time.Millisecond, pids...)
}

// A command printing 1.5 GB costs the server a fixed buffer.
func TestHugeOutputBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("prints 1.5 GB through a pipe")
	}
	dir := tempDir(t)
	cs, cmd, _ := connectStdio(t, dir)
	defer cs.Close()
	text := mustOK(t, cs, "bash", map[string]any{"command": "head -c 1500000000 /dev/zero | tr '\\0' a; echo; echo done >&2"})
	if !strings.Contains(text, "1500000001 characters in total") || !strings.HasSuffix(text, "stderr:\ndone\n") {
		t.Fatalf("result tail %q", text[len(text)-300:])
	}
	hwm := peakRSS(t, cmd.Process.Pid)
	t.Logf("peak RSS of boris after 1.5 GB of output: %.1f MB", float64(hwm)/(1<<20))
	if hwm > 64<<20 {
		t.Fatalf("peak RSS %d MB exceeds 64 MB", hwm>>20)
	}
}

// peakRSS reads VmHWM (peak resident set) in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// A command that leaves its process group (setsid) is still gone after
// shutdown: boris is the subreaper of everything its commands start.
func TestSigtermKillsEscapedDaemons(t *testing.T) {
	dir := tempDir(t)
	cmd := exec.Command(binPath, "--port=0", "--workdir="+dir)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	logs := &logBuffer{}
	url := scanLogs(t, stderr, logs)
	cs := connectHTTP(t, url, "", nil)
	mustOK(t, cs, "bash", map[string]any{"command": "setsid sh -c 'echo $$ > daemon.pid; exec sleep 300' > /dev/null 2>&1 < /dev/null &"})
	pid := readPid(t, filepath.Join(dir, "daemon.pid"))
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, logs)
	}
	waitGone(t, time.Second, pid)
}

// Running out of file descriptors gives tool calls a clear error, and once
// descriptors are free again boris serves as before. The soft limit of the
// running server is lowered below its lowest free descriptor, so every
// new one fails with EMFILE while those it holds keep working.
func TestFileDescriptorExhaustion(t *testing.T) {
	t.Run("tools", func(t *testing.T) {
		dir := tempDir(t)
		if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cs, cmd, _ := connectStdio(t, dir)
		defer cs.Close()
		mustOK(t, cs, "view", map[string]any{"path": "a.txt"})
		restore := exhaustDescriptors(t, cmd.Process.Pid)
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"view", map[string]any{"path": "a.txt"}},
			{"bash", map[string]any{"command": "echo hi"}},
			{"bash", map[string]any{"command": "sleep 1", "run_in_background": true}},
			{"str_replace", map[string]any{"path": "a.txt", "old_str": "hello", "new_str": "bye"}},
			{"create_file", map[string]any{"path": "b.txt", "content": "x"}},
			{"grep", map[string]any{"pattern": "hello"}},
			{"find", map[string]any{"pattern": "*.txt"}},
		} {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
			cancel()
			if err != nil {
				t.Fatalf("%s: %v", c.tool, err)
			}
			text := resultText(res)
			if !res.IsError || !strings.Contains(text, "too many open files") {
				t.Fatalf("%s with no descriptors left: IsError=%v %q", c.tool, res.IsError, text)
			}
			t.Logf("%s: %s", c.tool, text)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "hello\n" {
			t.Fatalf("a.txt changed: %q", b)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Fatalf("files left behind: %v", entries)
		}
		restore()
		mustOK(t, cs, "bash", map[string]any{"command": "echo hi"})
		mustOK(t, cs, "str_replace", map[string]any{"path": "a.txt", "old_str": "hello", "new_str": "bye"})
		mustOK(t, cs, "create_file", map[string]any{"path": "b.txt", "content": "x"})
		mustOK(t, cs, "grep", map[string]any{"pattern": "bye"})
	})
	t.Run("http accept", func(t *testing.T) {
		cmd := exec.Command(binPath, "--port=0", "--workdir="+tempDir(t))
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
		logs := &logBuffer{}
		url := scanLogs(t, stderr, logs)
		restore := exhaustDescriptors(t, cmd.Process.Pid)
		hc := &http.Client{Timeout: 300 * time.Millisecond}
		if resp, err := hc.Get(url + "/health"); err == nil {
			resp.Body.Close()
			t.Fatal("a connection was accepted with no descriptor free")
		}
		restore()
		hc.Timeout = 10 * time.Second
		resp, err := hc.Get(url + "/health")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("health after exhaustion: %v %v", err, resp)
		}
		resp.Body.Close()
		cs := connectHTTP(t, url, "", nil)
		mustOK(t, cs, "bash", map[string]any{"command": "echo hi"})
		// net/http's accept errors go through the structured logger.
		if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "too many open files") {
			t.Fatalf("no warning about the accept errors:\n%s", logs)
		}
	})
}

// exhaustDescriptors sets pid's soft RLIMIT_NOFILE to 3, so it can open
// nothing new, and returns the function that restores the limit.
func exhaustDescriptors(t *testing.T, pid int) func() {
	t.Helper()
	var old unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 3, Max: math.MaxUint64}, &old); err != nil {
		// Keep the hard limit if raising it is not allowed.
		if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &old); err != nil {
			t.Fatal(err)
		}
		if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 3, Max: old.Max}, nil); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &old, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// Requests piped in with stdin closed right after them are all answered
// (the SDK alone would drop the answers once it saw EOF); a command still
// running after --shutdown-timeout is cancelled and answered too; exit 0.
func TestStdioOneShotPipe(t *testing.T) {
	dir := tempDir(t)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo hi; false"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_file","arguments":{"path":"a.txt","content":"x"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo $$ > slow.pid; sleep 60"}}}`,
	}, "\n") + "\n"
	cmd := exec.Command(binPath, "--transport=stdio", "--workdir="+dir, "--shutdown-timeout=4s")
	cmd.Stdin = strings.NewReader(in)
	var out strings.Builder
	cmd.Stdout = &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("exit: %v\n%s", err, out.String())
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("took %v", took)
	}
	answers := map[float64]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var msg struct {
			ID     float64         `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("stdout line %q: %v", line, err)
		}
		answers[msg.ID] = string(msg.Result)
	}
	for id, want := range map[float64]string{1: `"serverInfo"`, 2: `exit_code: 1\nstdout:\nhi\n`, 3: `Created`, 4: `[SESSION_CLOSED] stdin ended and this call was still running 4s later (--shutdown-timeout): it was cancelled"},{"type":"text","text":"exit_code: 143\ncancelled: the process group was terminated\n`} {
		if !strings.Contains(answers[id], want) {
			t.Fatalf("answer %v lacks %q: %s\nall:\n%s", id, want, answers[id], out.String())
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a.txt")); err != nil || string(b) != "x" {
		t.Fatalf("a.txt: %q %v", b, err)
	}
	waitGone(t, time.Second, readPid(t, filepath.Join(dir, "slow.pid")))
}

// startStdioPipes starts the binary over stdio in dir, for a test that
// writes and reads the protocol's lines itself.
func startStdioPipes(t *testing.T, dir string, env ...string) (*exec.Cmd, io.WriteCloser, io.ReadCloser) {
	t.Helper()
	cmd := exec.Command(binPath, "--transport=stdio", "--workdir="+dir)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdin, stdout
}

// A client that vanishes, closing both pipes while a call still runs: the
// answer cannot be written (EPIPE, not a fatal SIGPIPE), the session's
// processes are ended anyway, and boris exits 0. Commands still get the
// default SIGPIPE behaviour.
func TestStdioClientVanishes(t *testing.T) {
	dir := tempDir(t)
	cmd, stdin, stdout := startStdioPipes(t, dir)
	defer cmd.Process.Kill()
	send := func(lines ...string) {
		for _, l := range lines {
			if _, err := io.WriteString(stdin, l+"\n"); err != nil {
				t.Fatal(err)
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"yes | head -1; echo ${PIPESTATUS[0]}"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo $$ > bg.pid; sleep 300","run_in_background":true}}}`)
	sc := bufio.NewScanner(stdout)
	var got []string
	for len(got) < 3 && sc.Scan() {
		got = append(got, sc.Text())
	}
	if all := strings.Join(got, "\n"); !strings.Contains(all, `y\n141\n`) || !strings.Contains(all, "task_id") {
		t.Fatalf("answers: %s", all)
	}
	bg := readPid(t, filepath.Join(dir, "bg.pid"))
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo $$ > late.pid; sleep 0.5; echo late"}}}`)
	// The call runs (boris has read it); then the client is gone: its
	// answer can no longer be written.
	readPid(t, filepath.Join(dir, "late.pid"))
	stdout.Close()
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("boris did not exit")
	}
	waitGone(t, time.Second, bg)
}

// A message over the stdio size limit is refused with a JSON-RPC error
// for its id; the session goes on (the SDK alone would end it).
func TestStdioOversizedMessage(t *testing.T) {
	dir := tempDir(t)
	cs, _, logs := connectStdio(t, dir, "--max-file-size=1KB") // limit: 16 MB
	defer cs.Close()
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_file", Arguments: map[string]any{"path": "big.txt", "content": strings.Repeat("x", 17<<20)}})
	if err == nil || !strings.Contains(err.Error(), "over the 16777216-byte limit") {
		t.Fatalf("oversized message: %v", err)
	}
	if got := mustOK(t, cs, "bash", map[string]any{"command": "echo still here"}); !strings.Contains(got, "still here") {
		t.Fatalf("after the refusal: %q", got)
	}
	mustErr(t, cs, "create_file", map[string]any{"path": "b.txt", "content": strings.Repeat("y", 2000)}, "FILE_TOO_LARGE")
	if !strings.Contains(logs.String(), "over the size limit refused") {
		t.Fatalf("no warning logged:\n%s", logs)
	}
}

// Lines that are not valid messages are answered with JSON-RPC errors
// (-32700 for text that is not JSON, -32600 for JSON that is not a
// message, with the id when it can be read, "id": null when not) and the
// session goes on: the SDK's own transport ended the connection, and
// boris with it, on the first one. Before protocol 2025-06-18 a batch is
// answered as one array in the batch's order, its bad members in place;
// from 2025-06-18 on a batch is refused and the session goes on.
func TestStdioBadLines(t *testing.T) {
	exchange := func(version string, lines ...string) (answers []map[string]any, raw []string) {
		t.Helper()
		cmd, stdin, stdout := startStdioPipes(t, tempDir(t))
		defer cmd.Process.Kill()
		sc := bufio.NewScanner(stdout)
		send := func(l string) {
			if _, err := io.WriteString(stdin, l+"\n"); err != nil {
				t.Fatal(err)
			}
		}
		send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		if !sc.Scan() || !strings.Contains(sc.Text(), `"protocolVersion":"`+version+`"`) {
			t.Fatalf("initialize: %q %v", sc.Text(), sc.Err())
		}
		send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		// Each line is answered before the next is sent, so the answers
		// come in order; a last ping shows the session survived them all.
		for _, l := range append(lines, `{"jsonrpc":"2.0","id":"last","method":"ping"}`) {
			send(l)
			if !sc.Scan() {
				t.Fatalf("no answer to %s: %v", l, sc.Err())
			}
			raw = append(raw, sc.Text())
			var v any
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				t.Fatalf("answer to %s is not JSON: %q", l, sc.Text())
			}
			if m, ok := v.(map[string]any); ok {
				answers = append(answers, m)
			} else {
				answers = append(answers, map[string]any{"batch": v})
			}
		}
		if last := answers[len(answers)-1]; last["id"] != "last" || last["result"] == nil {
			t.Fatalf("the session did not survive: %v", raw)
		}
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Fatalf("exit: %v", err)
		}
		return answers[:len(answers)-1], raw
	}
	code := func(m map[string]any) float64 {
		e, _ := m["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}

	answers, raw := exchange("2025-03-26",
		`this is not JSON`,
		`{"jsonrpc":"2.0","id":7,"method":"ping"} trailing`,
		`42`,
		`{"jsonrpc":"1.0","id":8,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":{"no":1},"method":"ping"}`,
		`{"jsonrpc":"2.0","result":{}}`,
		`[]`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}},"bad",{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"bash","arguments":{"command":"echo batched"}}}]`,
	)
	for i, want := range []struct {
		code float64
		id   any
		hint string
	}{
		{-32700, nil, "not JSON"}, {-32700, nil, "after top-level value"}, {-32600, nil, "JSON object"},
		{-32600, 8.0, `must be \"2.0\"`}, {-32600, nil, "string or a number"}, {-32600, nil, "has an id"}, {-32600, nil, "empty batch"},
	} {
		if id, has := answers[i]["id"]; code(answers[i]) != want.code || !has || id != want.id || !strings.Contains(raw[i], want.hint) {
			t.Errorf("answer %d: %s; want code %v, id %v, %q", i, raw[i], want.code, want.id, want.hint)
		}
	}
	batch, ok := answers[7]["batch"].([]any)
	if !ok || len(batch) != 3 {
		t.Fatalf("batch answer: %s", raw[7])
	}
	first, _ := batch[0].(map[string]any)
	bad, _ := batch[1].(map[string]any)
	last, _ := batch[2].(map[string]any)
	if first["id"] != 1.0 || first["result"] == nil || code(bad) != -32600 || last["id"] != "b" || !strings.Contains(raw[7], `batched`) {
		t.Fatalf("batch answer out of order or wrong: %s", raw[7])
	}

	answers, raw = exchange("2025-06-18", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `{"jsonrpc":"2.0","id":2,"method":"ping"`)
	if code(answers[0]) != -32600 || !strings.Contains(raw[0], "not part of protocol 2025-06-18") || code(answers[1]) != -32700 {
		t.Fatalf("answers: %v", raw)
	}
}
