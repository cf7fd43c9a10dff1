package blackbox

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tests of this file are about what one agent's commands can do to
// another agent's commands and to boris, with two tokens. When the tests
// run as root, boris runs as nobody (65534): root may signal and read any
// process whatever the sandbox says, and the question is what the sandbox
// refuses, not what root's capabilities allow.

// agentsTree is a workdir and TMPDIR the boris under test may use as
// whichever user it runs as.
func agentsTree(t *testing.T) (ws, tmp string) {
	t.Helper()
	root, err := os.MkdirTemp("", "boris-agents-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	root, err = filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	ws, tmp = filepath.Join(root, "ws"), filepath.Join(root, "tmp")
	for _, d := range []string{ws, tmp} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	// MkdirTemp and Mkdir leave out what the umask or 0700 withhold.
	for _, d := range []string{root, ws, tmp} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	return ws, tmp
}

// startAgentsServer starts the binary over HTTP (as nobody when the test is
// root) with the tokens alpha and beta, and returns its URL, log and
// process.
func startAgentsServer(t *testing.T, ws, tmp string, env []string, args ...string) (string, *logBuffer, *exec.Cmd) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(binPath, append([]string{"--port=" + strconv.Itoa(port), "--workdir=" + ws, "--token=alpha", "--token=beta", "--checkpoints=off", "--lsp=off"}, args...)...)
	cmd.Env = append(os.Environ(), append([]string{"TMPDIR=" + tmp, "HOME=" + ws}, env...)...)
	if os.Getuid() == 0 {
		// The binary's directory is the test's (0700): nobody must reach it.
		if err := os.Chmod(filepath.Dir(binPath), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	logs := collectLogs(t, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status"); err != nil || !strings.Contains(string(b), "\nUid:\t65534\t") {
			t.Fatalf("boris does not run as nobody: %v", err)
		}
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get(url + "/health"); err == nil {
			resp.Body.Close()
			return url, logs, cmd
		}
		select {
		case <-exited:
			t.Fatalf("boris exited:\n%s", logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("boris does not answer on %s:\n%s", url, logs)
		}
	}
}

var pidRe = regexp.MustCompile(`(?m)^(\d+)$`)

// pidOf returns the pid a command printed on a line of its own.
func pidOf(t *testing.T, out string) string {
	t.Helper()
	m := pidRe.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no pid in %q", out)
	}
	return m[1]
}

// alive reports whether pid is a process that has not ended (a zombie has).
func alive(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

// victims has agent B leave two processes with a secret in their
// environment: one behind a finished command (&), one a background task.
func victims(t *testing.T, b *mcp.ClientSession) []string {
	t.Helper()
	_, out := bashExit(t, b, "B_SECRET=b0r1s-beta-secret sleep 300 & echo $!")
	left := pidOf(t, out)
	started := mustOK(t, b, "bash", map[string]any{"command": "export B_SECRET=b0r1s-beta-secret; echo $$; exec sleep 300", "run_in_background": true})
	id := between(started, "task_id: ", "\n")
	task := ""
	for deadline := time.Now().Add(10 * time.Second); task == ""; time.Sleep(20 * time.Millisecond) {
		out := mustOK(t, b, "task_output", map[string]any{"task_id": id})
		if m := pidRe.FindStringSubmatch(out); m != nil {
			task = m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task printed no pid: %q", out)
		}
	}
	for _, pid := range []string{left, task} {
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if b, err := os.ReadFile("/proc/" + pid + "/cmdline"); err == nil && strings.HasPrefix(string(b), "sleep\x00") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("process %s is not B's sleep", pid)
			}
		}
	}
	return []string{left, task}
}

// TestAgentsKeptApart: with two tokens and the default --sandbox auto,
// agent A's commands cannot signal B's processes (a leftover of a finished
// command, a background task), nor read their /proc/<pid>/environ, nor
// signal boris — whose kill -TERM is refused and who goes on serving —
// while A's own later command kills A's earlier leftover. With --sandbox
// off every one of those attacks succeeds, and boris warns at start.
func TestAgentsKeptApart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		apart bool
	}{
		{"auto", nil, true},
		{"off", []string{"--sandbox=off"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, tmp := agentsTree(t)
			url, logs, srv := startAgentsServer(t, ws, tmp, nil, tc.args...)
			a, b := connectHTTP(t, url, "alpha", nil), connectHTTP(t, url, "beta", nil)
			boris := strconv.Itoa(srv.Process.Pid)
			targets := victims(t, b)

			for _, pid := range targets {
				code, out := bashExit(t, a, "kill -0 "+pid)
				if signalled := code == 0; signalled == tc.apart {
					t.Errorf("A's kill -0 of B's process %s: exit %d, want refused=%v: %q", pid, code, tc.apart, out)
				}
				_, out = bashExit(t, a, "cat /proc/"+pid+"/environ | tr '\\0' '\\n' | grep B_SECRET")
				if read := strings.Contains(out, "b0r1s-beta-secret"); read == tc.apart {
					t.Errorf("A reading B's process %s environment: read=%v, want %v: %q", pid, read, !tc.apart, out)
				}
				if tc.apart && !alive(pid) {
					t.Errorf("B's process %s is gone", pid)
				}
			}
			code, out := bashExit(t, a, "kill -0 "+boris)
			if signalled := code == 0; signalled == tc.apart {
				t.Errorf("A's kill -0 of boris: exit %d, want refused=%v: %q", code, tc.apart, out)
			}
			if tc.apart {
				if code, out := bashExit(t, a, "kill -TERM "+boris+" && echo sent"); code == 0 || !strings.Contains(out, "Operation not permitted") {
					t.Errorf("A's kill -TERM of boris: %q", out)
				}
				if _, out := bashExit(t, b, "echo still here"); !strings.Contains(out, "still here") {
					t.Errorf("B after A's attack on boris: %q", out)
				}
				if !alive(boris) {
					t.Fatal("boris is gone")
				}
			}

			// A's own leftover, from an earlier call, is A's to kill.
			_, out = bashExit(t, a, "sleep 300 & echo $!")
			mine := pidOf(t, out)
			if code, out := bashExit(t, a, "kill "+mine); code != 0 {
				t.Fatalf("A could not kill its own leftover %s: %q", mine, out)
			}
			for deadline := time.Now().Add(5 * time.Second); alive(mine); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("A's leftover %s survived A's kill", mine)
				}
			}

			warned := strings.Contains(logs.String(), "the agents' commands are not kept apart")
			if warned == tc.apart {
				t.Errorf("start-up warning about --sandbox off with two tokens: %v, want %v\n%s", warned, !tc.apart, logs)
			}
			if on := strings.Contains(logs.String(), `mode="auto: 2 tokens"`); on != tc.apart {
				t.Errorf("start-up line of the sandbox (auto with 2 tokens): %v, want %v\n%s", on, tc.apart, logs)
			}
		})
	}
}

// TestSandboxAutoRefusedWithoutIsolation: with two tokens and --sandbox
// auto, a kernel without Landlock, or whose Landlock cannot scope signals
// (the probe capped through the test-only hook), refuses to start and
// names --sandbox off; --sandbox off, or a single token, starts there.
func TestSandboxAutoRefusedWithoutIsolation(t *testing.T) {
	ws, tmp := agentsTree(t)
	// run starts boris and returns its log once it exits or listens
	// (then it is stopped, and err is nil).
	run := func(abi string, args ...string) (string, error) {
		cmd := exec.Command(binPath, append([]string{"--workdir=" + ws, "--port=0"}, args...)...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "BORIS_SANDBOX_TEST_ABI="+abi)
		// A writer, not a pipe, so that Wait returns once all is read.
		logs := &logWriter{}
		cmd.Stderr = logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			select {
			case err := <-done:
				return logs.String(), err
			default:
			}
			if strings.Contains(logs.String(), "msg=listening") || time.Now().After(deadline) {
				_ = cmd.Process.Signal(syscall.SIGTERM)
				<-done
				return logs.String(), nil
			}
		}
	}
	for _, abi := range []string{"0", "5"} {
		out, err := run(abi, "--token=alpha", "--token=beta")
		if err == nil || !strings.Contains(out, "--sandbox auto: 2 tokens") || !strings.Contains(out, "--sandbox off") {
			t.Errorf("ABI %s, two tokens: want a refusal naming --sandbox off, got err=%v\n%s", abi, err, out)
		}
	}
	for _, args := range [][]string{{"--token=alpha", "--token=beta", "--sandbox=off"}, {"--token=alpha"}} {
		if out, err := run("0", args...); err != nil || !strings.Contains(out, "listening") {
			t.Errorf("%v with no Landlock: %v\n%s", args, err, out)
		}
	}
}

// logWriter collects what a process writes, for reading while it runs.
type logWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *logWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
