package shell

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var shells = []string{"/bin/bash", "/bin/sh"}

// The server reaps its children itself; so do these tests, so that killed
// processes do not linger as zombies under a PID 1 that never reaps.
func TestMain(m *testing.M) {
	if err := EnableReaping(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func testRunner(t *testing.T, sh string, opts Options) *Runner {
	t.Helper()
	if _, err := os.Stat(sh); err != nil {
		t.Fatalf("shell %s is required for this test: %v", sh, err)
	}
	return NewRunner(sh, Environ(os.Environ()), opts)
}

func run(t *testing.T, r *Runner, dir, script string, timeout time.Duration) Result {
	t.Helper()
	p, err := r.Start(Command{Script: script, Dir: dir, Sentinel: testSentinel})
	if err != nil {
		t.Fatal(err)
	}
	res := p.Wait(context.Background(), timeout)
	t.Cleanup(func() { p.Terminate(); <-p.Terminated(); p.Close() })
	return res
}

func TestRunBasics(t *testing.T) {
	for _, sh := range shells {
		t.Run(filepath.Base(sh), func(t *testing.T) {
			r := testRunner(t, sh, Options{})
			dir := t.TempDir()
			sub := filepath.Join(dir, "sub dir")
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			tests := []struct {
				name       string
				script     string
				wantExit   int
				wantStdout string
				wantStderr string
				wantDir    string // "" = dir unchanged/unknown
			}{
				{"false", "false", 1, "", "", dir},
				{"ls missing", "ls /definitely/missing 2>/dev/null", 2, "", "", dir},
				{"exit 42 loses the sentinel", "echo before; exit 42", 42, "before\n", "", ""},
				{"echo", "echo hello", 0, "hello\n", "", dir},
				{"stderr", "echo err >&2", 0, "", "err\n", dir},
				{"no trailing newline", "printf abc", 0, "abc", "", dir},
				{"blank lines kept", "printf '\\n\\nx\\n\\n\\n'", 0, "\n\nx\n\n\n", "", dir},
				{"trailing comment", "echo hi # a comment", 0, "hi\n", "", dir},
				{"comment without newline then status", "false # comment", 1, "", "", dir},
				{"heredoc", "cat <<EOF\nline one\nline two\nEOF", 0, "line one\nline two\n", "", dir},
				{"cd is tracked", "cd 'sub dir'", 0, "", "", sub},
				{"cd then fail keeps status", "cd 'sub dir' && false", 1, "", "", sub},
				{"old sentinel text untouched", "echo __BORIS_CWD__", 0, "__BORIS_CWD__\n", "", dir},
				{"positional params are empty", "echo \"[$#][$1]\"", 0, "[0][]\n", "", dir},
				{"stdin is /dev/null", "cat; echo done", 0, "done\n", "", dir},
				{"set -e exits with the status", "set -e; false; echo unreachable", 1, "", "", ""},
				{"set -u does not break the epilogue", "set -u; echo ok", 0, "ok\n", "", dir},
				{"trap output after the sentinel", "trap 'echo bye' EXIT; echo hi", 0, "hi\nbye\n", "", dir},
				{"pager is cat", "echo \"$PAGER $GIT_PAGER $GIT_TERMINAL_PROMPT\"", 0, "cat cat 0\n", "", dir},
				{"boris settings are not exported", "echo \"[$BORIS_TOKEN]\"", 0, "[]\n", "", dir},
			}
			if sh == "/bin/bash" {
				tests = append(tests,
					struct {
						name, script                    string
						wantExit                        int
						wantStdout, wantStderr, wantDir string
					}{"unterminated heredoc", "cat <<EOF\nno end", 0, "no end\n", "bash: line 2: warning: here-document at line 1 delimited by end-of-file (wanted `EOF')\n", dir},
					struct {
						name, script                    string
						wantExit                        int
						wantStdout, wantStderr, wantDir string
					}{"set -x shows only the user's commands", "set -x; true", 0, "", "++ true\n", dir},
				)
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					res := run(t, r, dir, tt.script, 10*time.Second)
					if res.ExitCode != tt.wantExit || res.Stdout.Text != tt.wantStdout || res.Stderr.Text != tt.wantStderr || res.Dir != tt.wantDir {
						t.Fatalf("got exit %d stdout %q stderr %q dir %q\nwant exit %d stdout %q stderr %q dir %q",
							res.ExitCode, res.Stdout.Text, res.Stderr.Text, res.Dir, tt.wantExit, tt.wantStdout, tt.wantStderr, tt.wantDir)
					}
					if res.TimedOut || res.Canceled {
						t.Fatalf("timed out %v canceled %v", res.TimedOut, res.Canceled)
					}
				})
			}
		})
	}
}

func TestLongLine(t *testing.T) {
	r := testRunner(t, "/bin/bash", Options{})
	// 200 KB on one line, no newline at all.
	res := run(t, r, t.TempDir(), "head -c 200000 /dev/zero | tr '\\0' x", 10*time.Second)
	if res.ExitCode != 0 || res.Stdout.Chars != 200000 || !res.Stdout.Truncated || len(res.Stdout.Text) != MaxOutputChars {
		t.Fatalf("exit %d chars %d truncated %v kept %d", res.ExitCode, res.Stdout.Chars, res.Stdout.Truncated, len(res.Stdout.Text))
	}
	if res.Dir == "" {
		t.Fatal("sentinel lost after a long line")
	}
}

func TestBackgroundChildDoesNotHoldTheCall(t *testing.T) {
	for _, sh := range shells {
		t.Run(filepath.Base(sh), func(t *testing.T) {
			r := testRunner(t, sh, Options{})
			start := time.Now()
			res := run(t, r, t.TempDir(), "sleep 30 & echo started", 20*time.Second)
			// Held, the call would take the child's 30 s.
			if took := time.Since(start); took > 20*time.Second {
				t.Fatalf("call took %v", took)
			}
			if res.ExitCode != 0 || res.Stdout.Text != "started\n" || !res.Leftover {
				t.Fatalf("exit %d stdout %q leftover %v", res.ExitCode, res.Stdout.Text, res.Leftover)
			}
		})
	}
}

func TestTimeoutRunsTermHandler(t *testing.T) {
	r := testRunner(t, "/bin/bash", Options{})
	script := "trap 'echo cleaning up; exit 3' TERM; echo working; while :; do sleep 0.05; done"
	start := time.Now()
	res := run(t, r, t.TempDir(), script, 500*time.Millisecond)
	// Not ended, the loop runs for ever: 20 s is a bound no loaded
	// machine reaches with a 500 ms timeout.
	if !res.TimedOut || time.Since(start) > 20*time.Second {
		t.Fatalf("timed out %v after %v", res.TimedOut, time.Since(start))
	}
	if res.Stdout.Text != "working\ncleaning up\n" || res.ExitCode != 3 {
		t.Fatalf("stdout %q exit %d", res.Stdout.Text, res.ExitCode)
	}
}

// A grandchild that ignores SIGTERM is killed when the grace runs out; the
// call itself returns once the shell is gone.
func TestTermIgnoringGrandchildIsKilled(t *testing.T) {
	r := testRunner(t, "/bin/bash", Options{Grace: 700 * time.Millisecond})
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	script := fmt.Sprintf("sh -c 'trap \"\" TERM; echo $$ > %s; while :; do sleep 0.05; done' & sleep 60", pidFile)
	p, err := r.Start(Command{Script: script, Dir: dir, Sentinel: testSentinel})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pid := waitPidFile(t, pidFile)
	res := p.Wait(context.Background(), 300*time.Millisecond)
	if !res.TimedOut {
		t.Fatal("not timed out")
	}
	if !processAlive(pid) {
		t.Fatal("grandchild died before the grace period; it should have ignored SIGTERM")
	}
	select {
	case <-p.Terminated():
	case <-time.After(5 * time.Second):
		t.Fatal("group not terminated")
	}
	if processAlive(pid) || GroupAlive(p.Pgid()) {
		t.Fatalf("grandchild %d survived SIGKILL", pid)
	}
}

func TestCancelKillsGroup(t *testing.T) {
	r := testRunner(t, "/bin/bash", Options{})
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	p, err := r.Start(Command{Script: "sleep 300 & echo $! > " + pidFile + "; wait", Dir: dir, Sentinel: testSentinel})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pid := waitPidFile(t, pidFile)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	res := p.Wait(ctx, 0)
	if !res.Canceled {
		t.Fatal("not canceled")
	}
	<-p.Terminated()
	if processAlive(pid) {
		t.Fatal("child survived cancellation")
	}
}

func TestProgressIsCoalescedAndHidesSentinel(t *testing.T) {
	r := testRunner(t, "/bin/bash", Options{ProgressInterval: 50 * time.Millisecond})
	var msgs []string
	var last int64
	p, err := r.Start(Command{
		Script:   "for i in $(seq 1 20); do echo line$i; sleep 0.02; done",
		Dir:      t.TempDir(),
		Sentinel: testSentinel,
		OnProgress: func(text string, total int64) {
			if total <= last {
				t.Errorf("progress total did not grow: %d after %d", total, last)
			}
			last = total
			msgs = append(msgs, text)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	res := p.Wait(context.Background(), 10*time.Second)
	joined := strings.Join(msgs, "")
	if len(msgs) == 0 || len(msgs) > 15 {
		t.Fatalf("%d progress messages", len(msgs))
	}
	if strings.Contains(joined, "BORIS_CWD") || !strings.HasPrefix(res.Stdout.Text, joined) {
		t.Fatalf("progress %q not a clean prefix of %q", joined, res.Stdout.Text)
	}
}

func TestEnviron(t *testing.T) {
	env := Environ([]string{"PAGER=less", "BORIS_TOKEN=secret", "HOME=/root", "PATH="})
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := m[k]; dup {
			t.Fatalf("duplicate %s", k)
		}
		m[k] = v
	}
	if m["PAGER"] != "cat" || m["HOME"] != "/root" || m["PATH"] == "" || m["GIT_TERMINAL_PROMPT"] != "0" {
		t.Fatalf("env %v", m)
	}
	if _, ok := m["BORIS_TOKEN"]; ok {
		t.Fatal("BORIS_TOKEN leaked into the command environment")
	}
}

func waitPidFile(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && pid > 0 {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z'
}

// waitAtGate waits until the shell pid is blocked in a system call on a
// descriptor that is its gate (descriptor 3, or a copy of it the shell's
// redirection made): /proc/pid/syscall names the call and its first
// argument. A shell that ran its command instead never gets there.
func waitAtGate(t *testing.T, pid int) {
	t.Helper()
	proc := "/proc/" + strconv.Itoa(pid)
	deadline := time.Now().Add(10 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		gate, gerr := os.Readlink(proc + "/fd/3")
		b, err := os.ReadFile(proc + "/syscall")
		last = strings.TrimSpace(string(b))
		if err != nil || gerr != nil {
			t.Fatalf("the gated shell %d: %v %v", pid, err, gerr)
		}
		if f := strings.Fields(last); len(f) > 1 && f[0] != "running" {
			if fd, err := strconv.ParseInt(strings.TrimPrefix(f[1], "0x"), 16, 32); err == nil {
				if l, err := os.Readlink(proc + "/fd/" + strconv.Itoa(int(fd))); err == nil && l == gate {
					return
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the gated shell %d never waited on its gate (last system call %q)", pid, last)
}

// TestGatedRunsNothingUntilOpen: a gated command has not run (its file
// is not there) until Open; a gate closed unopened ends the shell without
// running it; an Argv command is gated too.
func TestGatedRunsNothingUntilOpen(t *testing.T) {
	r := testRunner(t, "/bin/sh", Options{})
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	p, err := r.Start(Command{Script: "touch " + mark, Dir: dir, Gated: true})
	if err != nil {
		t.Fatal(err)
	}
	// The shell is seen blocked reading the gate: from here nothing but
	// Open lets the command run, however slow the machine is.
	waitAtGate(t, p.Pgid())
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the gated command ran before Open")
	}
	if err := p.Open(); err != nil {
		t.Fatal(err)
	}
	if res := p.Wait(context.Background(), 10*time.Second); res.ExitCode != 0 {
		t.Fatalf("after Open: %+v", res)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Fatal("the command did not run after Open")
	}

	shut := filepath.Join(dir, "shut")
	p, err = r.Start(Command{Script: "touch " + shut, Dir: dir, Gated: true})
	if err != nil {
		t.Fatal(err)
	}
	p.Terminate()
	<-p.Terminated()
	if _, err := os.Stat(shut); err == nil {
		t.Fatal("a gate closed unopened let the command run")
	}
	p.Close()

	p, err = r.Start(Command{Argv: []string{"sh", "-c", "echo $0 argv", "named"}, Dir: dir, Gated: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Open(); err != nil {
		t.Fatal(err)
	}
	if res := p.Wait(context.Background(), 10*time.Second); res.Stdout.Text != "named argv\n" {
		t.Fatalf("gated argv: %q", res.Stdout.Text)
	}
}
