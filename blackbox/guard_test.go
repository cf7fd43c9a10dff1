package blackbox

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// asUnprivileged prepares cmd to run the boris binary as an ordinary user:
// uid 65534 when the tests run as root (whose processes RLIMIT_NPROC does
// not bind, and who may read any /proc file), with a copy of the binary
// and a workspace that user can reach. It returns the workspace.
func asUnprivileged(t *testing.T, args ...string) (*exec.Cmd, string) {
	t.Helper()
	top, err := os.MkdirTemp("", "boris-unpriv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	bin := filepath.Join(top, "boris")
	src, err := os.Open(binPath)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	src.Close()
	dst.Close()
	ws := filepath.Join(top, "ws")
	state := filepath.Join(top, "state")
	for _, d := range []string{ws, state} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(top, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"--port=0", "--workdir=" + ws}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state, "HOME="+top)
	if os.Getuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	return cmd, ws
}

var budgetRe = regexp.MustCompile(`process budget \((\d+) processes`)

// TestGuardForkBombStaysInItsBudget: a fork bomb in one session hits its
// process budget and says so, while another session's commands keep
// starting; what the bomb left running is listed, and bash restart ends
// it. Commands run at a lower priority than boris and are the OOM
// killer's first choice. Without the guard (BORIS_UNGUARDED=1) the same
// command takes every process the user may have, and the other session's
// commands fail to start: the test sees the difference.
func TestGuardForkBombStaysInItsBudget(t *testing.T) {
	// A cap on the user's processes stands in for the container's pids
	// limit, for the unguarded run (as root, the tests would not feel it).
	// The shell is /bin/sh, which (like the image's busybox) does not
	// retry a refused fork as bash does.
	const cap = 300
	run := func(t *testing.T, unguarded bool) (failures int, bomb string) {
		cmd, _ := asUnprivileged(t, "--token=alpha", "--token=beta", "--command-max-procs=40", "--sandbox=off", "--shell=/bin/sh")
		if unguarded {
			cmd.Env = append(cmd.Env, "BORIS_UNGUARDED=1")
		}
		// The user's process limit counts every process of that uid on
		// the machine: as nobody, other tests (or other test runs beside
		// this one) would spend this server's processes. A uid of its
		// own for each run, which nothing else uses, keeps the count this
		// server's.
		if cmd.SysProcAttr != nil && cmd.SysProcAttr.Credential != nil {
			uid := uint32(3_000_000 + (os.Getpid()%1_000_000)*2)
			if unguarded {
				uid++
			}
			cmd.SysProcAttr.Credential.Uid, cmd.SysProcAttr.Credential.Gid = uid, uid
		}
		// The user's process limit on the server itself: what the kernel
		// enforces for the user, as a container's pids limit would.
		cmd.Args = append([]string{"bash", "-c", "ulimit -u " + strconv.Itoa(cap) + " && exec \"$0\" \"$@\""}, cmd.Args...)
		cmd.Path = "/bin/bash"
		url, logs := serveBinary(t, cmd)
		a := connectHTTP(t, url, "alpha", nil)
		b := connectHTTP(t, url, "beta", nil)

		if !unguarded {
			got := mustOK(t, a, "bash", map[string]any{"command": "cat /proc/self/oom_score_adj; cut -d' ' -f19 /proc/self/stat"})
			if got != "exit_code: 0\nstdout:\n1000\n10\n" {
				t.Fatalf("command's OOM score and nice: %q\n%s", got, logs)
			}
		}

		var stop atomic.Bool
		var wg sync.WaitGroup
		var fails atomic.Int32
		var firstFail atomic.Value
		// during counts B's calls that began before the bomb's call
		// returned and succeeded: a B too slow to call at all while the
		// bomb ran would otherwise count as undisturbed.
		var bombDone atomic.Bool
		var during atomic.Int32
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				began := !bombDone.Load()
				// A protocol error is a failure too: unguarded, the bomb
				// can take the threads boris itself needs.
				res, err := b.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo ok | cat"}})
				if err != nil {
					fails.Add(1)
					firstFail.CompareAndSwap(nil, "protocol error: "+err.Error())
				} else if out := resultText(res); res.IsError || !strings.Contains(out, "stdout:\nok\n") {
					fails.Add(1)
					firstFail.CompareAndSwap(nil, out)
				} else if began {
					during.Add(1)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
		// Relaunched for about three seconds: a shell whose fork fails
		// exits, so one bomb alone can die out before it fills the cap.
		bombArgs := map[string]any{"command": "bomb() { bomb | bomb & }; i=0; while [ $i -lt 30 ]; do bomb; i=$((i+1)); sleep 0.1 2>/dev/null; done; sleep 1", "timeout": 20000}
		if unguarded {
			// Each bomb also holds its slot for two seconds (a bomb whose
			// fork fails exits at once, so on a fast machine the cap is
			// full only in moments B's calls can miss), and bombs are
			// relaunched beside each other.
			bombArgs = map[string]any{"command": "bomb() { bomb | bomb & sleep 2 2>/dev/null; }; i=0; while [ $i -lt 30 ]; do bomb & i=$((i+1)); sleep 0.1 2>/dev/null; done; sleep 3", "timeout": 20000}
			// Unguarded, boris may not survive its own user's fork bomb:
			// that is the disturbance the guarded run must not show.
			if res, err := a.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: bombArgs}); err == nil {
				bomb = resultText(res)
			}
		} else {
			bomb = mustOK(t, a, "bash", bombArgs)
		}
		bombDone.Store(true)
		time.Sleep(2 * time.Second)
		stop.Store(true)
		wg.Wait()
		if f := firstFail.Load(); f != nil {
			t.Logf("first failure of B: %v", f)
		}
		if unguarded {
			_, _ = a.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"restart": true}})
		} else {
			mustOK(t, a, "bash", map[string]any{"restart": true})
		}
		if !unguarded && fails.Load() == 0 && during.Load() == 0 {
			t.Fatal("no call of session B ran while the bomb did: nothing was proved")
		}
		return int(fails.Load()), bomb
	}

	t.Run("guarded", func(t *testing.T) {
		failures, bomb := run(t, false)
		if failures != 0 {
			t.Fatalf("session B had %d failed calls during A's fork bomb", failures)
		}
		if m := budgetRe.FindStringSubmatch(bomb); m == nil {
			t.Fatalf("the bomb's answer does not name its process budget: %q", bomb)
		}
	})
	t.Run("unguarded", func(t *testing.T) {
		// The control only has to show that the bomb can disturb B: how
		// often B calls into a full cap depends on the machine's speed,
		// so it gets three tries (the guarded run gets one, and must
		// never be disturbed).
		var answers []string
		for range 3 {
			failures, bomb := run(t, true)
			if failures > 0 {
				return
			}
			answers = append(answers, bomb)
		}
		t.Fatalf("without the guard the fork bomb did not disturb session B in three tries: the guarded run proves nothing (the bomb's answers: %q)", answers)
	})
}

// TestGuardLeftoversListedAndEnded: processes a finished command left
// running are a task of the session (kind leftover), lowered to the
// lowest priority; task_kill ends them, and so does bash restart.
func TestGuardLeftoversListedAndEnded(t *testing.T) {
	cmd, ws := asUnprivileged(t, "--token=alpha")
	url, _ := serveBinary(t, cmd)
	a := connectHTTP(t, url, "alpha", nil)

	res := callRaw(t, a, "bash", map[string]any{"command": "sleep 300 & echo $! > " + ws + "/one.pid"})
	left, _ := res.StructuredContent.(map[string]any)["left_running"].(string)
	if left == "" || !strings.Contains(resultText(res), "left running (listed as "+left) {
		t.Fatalf("no leftover named: %s %v", resultText(res), res.StructuredContent)
	}
	one := readPid(t, filepath.Join(ws, "one.pid"))
	list := mustOK(t, a, "task_output", map[string]any{})
	if !strings.Contains(list, left+"\trunning\tleft running by") || !strings.Contains(list, "sleep 300 &") {
		t.Fatalf("task list: %q", list)
	}
	if n := niceOfPid(t, one); n != 19 {
		t.Fatalf("leftover's nice: %d, want 19", n)
	}
	mustOK(t, a, "task_kill", map[string]any{"task_id": left})
	waitGone(t, 10*time.Second, one)

	mustOK(t, a, "bash", map[string]any{"command": "sleep 300 & echo $! > " + ws + "/two.pid"})
	two := readPid(t, filepath.Join(ws, "two.pid"))
	if got := mustOK(t, a, "bash", map[string]any{"restart": true}); !strings.HasPrefix(got, "restarted: every process") {
		t.Fatalf("restart: %q", got)
	}
	waitGone(t, 10*time.Second, two)
}

// TestGuardLeftoverForksPastBudget: processes a command left running that
// fork past the command's budget after its answer (a fork bomb's answer
// comes before the bomb has grown) are reported where the agent looks
// next: the leftover task's status, the task list, and task_kill's answer,
// in text and in structuredContent.
func TestGuardLeftoverForksPastBudget(t *testing.T) {
	cmd, _ := asUnprivileged(t, "--token=alpha", "--command-max-procs=6", "--sandbox=off", "--shell=/bin/sh")
	url, logs := serveBinary(t, cmd)
	a := connectHTTP(t, url, "alpha", nil)

	res := callRaw(t, a, "bash", map[string]any{"command": "(sleep 1; i=0; while [ $i -lt 20 ]; do sleep 60 & i=$((i+1)); done; sleep 60) & echo started"})
	answer := resultText(res)
	left, _ := res.StructuredContent.(map[string]any)["left_running"].(string)
	if left == "" || strings.Contains(answer, "process budget") {
		t.Fatalf("the answer came before the forks: %q %v", answer, res.StructuredContent)
	}
	var status string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		status = mustOK(t, a, "task_output", map[string]any{"task_id": left})
		if budgetRe.MatchString(status) || time.Now().After(deadline) {
			break
		}
	}
	if m := budgetRe.FindStringSubmatch(status); m == nil || m[1] != "6" || !strings.Contains(status, "status: running") {
		t.Fatalf("the leftover's status does not say its forks were refused by its budget of 6: %q\n%s", status, logs)
	}
	if list := mustOK(t, a, "task_output", map[string]any{}); !strings.Contains(list, left+"\trunning, forks refused (process budget)\tleft running by") {
		t.Fatalf("task list: %q", list)
	}
	res = callRaw(t, a, "task_output", map[string]any{})
	tasks, _ := res.StructuredContent.(map[string]any)["tasks"].([]any)
	if len(tasks) != 1 || tasks[0].(map[string]any)["process_budget"] != 6.0 {
		t.Fatalf("structured task list: %v", res.StructuredContent)
	}
	res = callRaw(t, a, "task_kill", map[string]any{"task_id": left})
	if !budgetRe.MatchString(resultText(res)) || res.StructuredContent.(map[string]any)["process_budget"] != 6.0 {
		t.Fatalf("task_kill's answer: %q %v", resultText(res), res.StructuredContent)
	}
}

func callRaw(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("%s: %s", name, resultText(res))
	}
	return res
}

func niceOfPid(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	n, _ := strconv.Atoi(f[16])
	return n
}
