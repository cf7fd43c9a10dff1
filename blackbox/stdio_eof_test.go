package blackbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pipedCall is a tools/call line for a one-shot pipe at a protocol era: at
// the stateless revision the version rides in each request's _meta (no
// initialize).
func pipedCall(era string, id int, name string, args map[string]any) string {
	params := map[string]any{"name": name, "arguments": args}
	if era == statelessEra {
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    statelessEra,
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
	return string(b)
}

// pipedStart is what a one-shot pipe sends before its calls: the handshake
// in the handshake era, nothing in the stateless one.
func pipedStart(era string) []string {
	if era == statelessEra {
		return nil
	}
	return []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + era + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	}
}

// pipedAnswer is one answer of a one-shot pipe.
type pipedAnswer struct {
	Result struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func (a pipedAnswer) text() string {
	var b strings.Builder
	for _, c := range a.Result.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// runPiped runs boris over stdio with lines as its whole input (stdin
// closed after them) and returns its answers by id, everything it wrote
// (stdout and stderr) and its exit error.
// A watchdog kills it after limit.
func runPiped(t *testing.T, cmd *exec.Cmd, lines []string, limit time.Duration) (map[int]pipedAnswer, string, error) {
	t.Helper()
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(limit, func() { _ = cmd.Process.Kill() })
	err := cmd.Wait()
	timer.Stop()
	answers := map[int]pipedAnswer{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var msg struct {
			ID *int `json:"id"`
			pipedAnswer
		}
		if line == "" || json.Unmarshal([]byte(line), &msg) != nil || msg.ID == nil {
			continue // a notification
		}
		answers[*msg.ID] = msg.pipedAnswer
	}
	return answers, out.String() + "\n--- stderr:\n" + errb.String(), err
}

// TestStdioEOFAnswersEveryRequest: requests piped in with stdin closed
// right after them are all answered before boris exits 0, in both protocol
// eras — calls that wait seconds for the start-up checkpoint (held here by
// the test build's gate, as a large working directory holds it) and then
// run a command of a few seconds included; without the fix they were
// ended 2 s after the end of stdin, or never answered.
func TestStdioEOFAnswersEveryRequest(t *testing.T) {
	for _, era := range []string{handshakeEra, statelessEra} {
		t.Run(era, func(t *testing.T) {
			t.Parallel()
			dir := tempDir(t)
			writeFile(t, filepath.Join(dir, "a.txt"), "before\n")
			gate := filepath.Join(tempDir(t), "open")
			cmd := exec.Command(binPath, "--transport=stdio", "--workdir="+dir, "--checkpoint-dir="+tempDir(t))
			cmd.Env = append(os.Environ(), "BORIS_CHECKPOINT_TEST_BASELINE_GATE="+gate)
			lines := append(pipedStart(era),
				pipedCall(era, 2, "bash", map[string]any{"command": "sleep 3; echo done"}),
				pipedCall(era, 3, "bash", map[string]any{"command": "echo after > a.txt; echo written"}),
				pipedCall(era, 4, "view", map[string]any{"path": "a.txt"}))
			// The start-up checkpoint takes 3 s: the calls that change the
			// workspace wait for it, well past stdin's end.
			opener := time.AfterFunc(3*time.Second, func() { _ = os.WriteFile(gate, nil, 0o644) })
			defer opener.Stop()
			answers, all, err := runPiped(t, cmd, lines, 2*time.Minute)
			if err != nil {
				t.Fatalf("exit: %v\n%s", err, all)
			}
			want := map[int]string{2: "exit_code: 0\nstdout:\ndone\n", 3: "exit_code: 0\nstdout:\nwritten\n", 4: "before"}
			if era == handshakeEra {
				want[1] = ""
			}
			for id, text := range want {
				a, ok := answers[id]
				if !ok || a.Error != nil || a.Result.IsError || !strings.Contains(a.text(), text) {
					t.Fatalf("answer %d: want %q, got %+v\nall:\n%s", id, text, a, all)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "after\n" {
				t.Fatalf("a.txt: %q", b)
			}
		})
	}
}

// TestStdioEOFCancelsPastTheBound: at stdin's end a call still running
// after --shutdown-timeout is cancelled — its command's process group
// terminated — and answered with a SESSION_CLOSED error that names the
// flag, followed by what it had done; the other answers are written too,
// and boris exits 0, in both protocol eras.
func TestStdioEOFCancelsPastTheBound(t *testing.T) {
	for _, era := range []string{handshakeEra, statelessEra} {
		t.Run(era, func(t *testing.T) {
			t.Parallel()
			dir := tempDir(t)
			// The bound leaves a loaded machine ample time for the quick call.
			cmd := exec.Command(binPath, "--transport=stdio", "--workdir="+dir, "--shutdown-timeout=10s")
			lines := append(pipedStart(era),
				pipedCall(era, 2, "bash", map[string]any{"command": "echo $$ > slow.pid; echo started; sleep 300"}),
				pipedCall(era, 3, "bash", map[string]any{"command": "echo quick"}))
			answers, all, err := runPiped(t, cmd, lines, 2*time.Minute)
			if err != nil {
				t.Fatalf("exit: %v\n%s", err, all)
			}
			slow := answers[2]
			if !slow.Result.IsError || !strings.Contains(slow.text(), "[SESSION_CLOSED] stdin ended") ||
				!strings.Contains(slow.text(), "--shutdown-timeout") || !strings.Contains(slow.text(), "started") {
				t.Fatalf("the call past the bound: %+v\nall:\n%s", slow, all)
			}
			if q := answers[3]; q.Result.IsError || !strings.Contains(q.text(), "quick") {
				t.Fatalf("the quick call: %+v\nall:\n%s", q, all)
			}
			waitGone(t, time.Second, readPid(t, filepath.Join(dir, "slow.pid")))
		})
	}
}

// TestStdioSigtermAnswersRunningCalls: SIGTERM does not wait for
// --shutdown-timeout: a call still running over stdio (its command
// ignoring SIGTERM) is cancelled at once, answered with a SESSION_CLOSED
// error saying boris is shutting down, its processes are gone, and boris
// exits 0.
func TestStdioSigtermAnswersRunningCalls(t *testing.T) {
	dir := tempDir(t)
	cmd, stdin, stdout := startStdioPipes(t, dir)
	defer cmd.Process.Kill()
	defer stdin.Close()
	lines := append(pipedStart(handshakeEra),
		pipedCall(handshakeEra, 2, "bash", map[string]any{"command": "echo $$ > fg.pid; trap '' TERM; while :; do sleep 0.1; done"}))
	if _, err := stdin.Write([]byte(strings.Join(lines, "\n") + "\n")); err != nil {
		t.Fatal(err)
	}
	pid := readPid(t, filepath.Join(dir, "fg.pid"))
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	answers := make(chan map[int]pipedAnswer, 1)
	go func() {
		got := map[int]pipedAnswer{}
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var msg struct {
				ID *int `json:"id"`
				pipedAnswer
			}
			if json.Unmarshal(sc.Bytes(), &msg) == nil && msg.ID != nil {
				got[*msg.ID] = msg.pipedAnswer
			}
		}
		answers <- got
	}()
	// stdout ends when boris exits; it is read to the end before Wait.
	var got map[int]pipedAnswer
	select {
	case got = <-answers:
	case <-time.After(30 * time.Second):
		t.Fatal("boris did not exit after SIGTERM")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	a := got[2]
	if !a.Result.IsError || !strings.Contains(a.text(), "[SESSION_CLOSED] boris is shutting down") {
		t.Fatalf("the running call's answer: %+v", a)
	}
	waitGone(t, time.Second, pid)
}
