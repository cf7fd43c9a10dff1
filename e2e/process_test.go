package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTimeoutInContainer runs commands past their timeout in boris:latest,
// where boris is PID 1 and the shell is busybox: the group gets SIGTERM (a
// trap's cleanup output is returned), and whatever ignores it is SIGKILLed
// 5 s later, leaving neither a survivor nor a zombie in the container.
func TestTimeoutInContainer(t *testing.T) {
	requireImages(t)
	t.Parallel()
	srv := startBoris(t, spec{image: imageLatest})
	cs := srv.connect(t)

	t.Run("trap output is captured", func(t *testing.T) {
		res := mustOK(t, cs, "bash", map[string]any{
			"command": "trap 'echo cleanup-ran; exit 3' TERM\necho started\nwhile :; do sleep 1; done",
			"timeout": 1000,
		})
		for _, want := range []string{"timed out after 1000 ms", "started\n", "cleanup-ran\n"} {
			if !strings.Contains(res, want) {
				t.Fatalf("result lacks %q:\n%s", want, res)
			}
		}
		if code := exitCode(t, res); code != 3 {
			t.Fatalf("exit code %d, want the trap's 3:\n%s", code, res)
		}
	})

	t.Run("TERM-ignoring tree is killed", func(t *testing.T) {
		// Three levels, all ignoring SIGTERM (an ignored signal stays ignored
		// across exec): the shell itself, a subshell with a grandchild, and
		// a child.
		cmd := `trap "" TERM
sh -c 'trap "" TERM; sleep 1001' &
sh -c 'trap "" TERM; sleep 1002 & wait' &
sleep 1003`
		start := time.Now()
		res := mustOK(t, cs, "bash", map[string]any{"command": cmd, "timeout": 1000})
		elapsed := time.Since(start)
		if !strings.Contains(res, "timed out after 1000 ms") {
			t.Fatalf("no timeout reported:\n%s", res)
		}
		// 1 s timeout + 5 s grace before SIGKILL.
		if elapsed < 5500*time.Millisecond || elapsed > 20*time.Second {
			t.Fatalf("the call took %s; want about 6 s (1 s timeout, 5 s grace)", elapsed)
		}
		// Orphans are reaped by boris asynchronously: poll briefly.
		var table string
		deadline := time.Now().Add(5 * time.Second)
		for {
			var survivors, zombies []string
			table, survivors, zombies = processTable(t, srv)
			if len(survivors) == 0 && len(zombies) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after the kill: survivors %q, zombies %q\n%s", survivors, zombies, table)
			}
			time.Sleep(200 * time.Millisecond)
		}
		// boris itself is still there, as PID 1.
		if !strings.Contains(table, "\n    1 ") || !strings.Contains(table, "/usr/local/bin/boris") {
			t.Fatalf("boris is not PID 1:\n%s", table)
		}
	})
}

// processTable lists the container's processes with busybox ps and returns
// the table, the lines of leftover test processes ("sleep 100…") and the
// lines of zombies.
func processTable(t *testing.T, srv *server) (table string, survivors, zombies []string) {
	t.Helper()
	code, out := srv.exec(t, "ps", "-o", "pid,stat,args")
	if code != 0 {
		t.Fatalf("ps: exit %d: %s", code, out)
	}
	for _, line := range strings.Split(out, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 3 || f[len(f)-1] == "pid,stat,args" { // ps itself
			continue
		}
		if strings.HasPrefix(f[1], "Z") {
			zombies = append(zombies, line)
		}
		if strings.Contains(line, "sleep 100") {
			survivors = append(survivors, line)
		}
	}
	return out, survivors, zombies
}

// TestDockerStop stops a container with background tasks running: boris
// (PID 1) gets SIGTERM from docker, terminates every session's process
// groups — a trap in one task records the SIGTERM on the mounted workspace,
// another task ignores it and is SIGKILLed after the grace — and exits 0
// well before docker's own timeout would SIGKILL it (exit code 137).
func TestDockerStop(t *testing.T) {
	requireImages(t)
	t.Parallel()
	ws := workspace(t)
	srv := startBoris(t, spec{image: imageLatest, workspace: ws})
	cs := srv.connect(t)

	for _, cmd := range []string{
		"trap 'echo got-term > /workspace/bg-term; exit 0' TERM; echo ready > /workspace/bg-ready; while :; do sleep 0.2; done",
		"trap '' TERM; sleep 1004",
	} {
		res := mustOK(t, cs, "bash", map[string]any{"command": cmd, "run_in_background": true})
		if !strings.HasPrefix(res, "task_id: ") {
			t.Fatalf("background start: %s", res)
		}
	}
	waitFile(t, filepath.Join(ws, "bg-ready"), 10*time.Second)
	if table, _, _ := processTable(t, srv); !strings.Contains(table, " sleep 1004\n") {
		t.Fatalf("the sleep 1004 task is not running:\n%s", table)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	grace := 30 * time.Second
	start := time.Now()
	if err := srv.c.Stop(ctx, &grace); err != nil {
		t.Fatalf("docker stop: %v", err)
	}
	elapsed := time.Since(start)
	state := srv.inspect(t).State
	t.Logf("docker stop took %s; exit code %d", elapsed.Round(10*time.Millisecond), state.ExitCode)
	if state.Running || state.ExitCode != 0 || state.OOMKilled {
		t.Fatalf("after stop: running=%v exit=%d oom=%v", state.Running, state.ExitCode, state.OOMKilled)
	}
	// boris's own budget is ~6 s (5 s grace for the TERM-ignoring task);
	// docker's SIGKILL comes at 30 s (exit code 137, checked above).
	if elapsed > 25*time.Second {
		t.Fatalf("stop took %s, want about 6 s", elapsed)
	}
	if got, err := os.ReadFile(filepath.Join(ws, "bg-term")); err != nil || string(got) != "got-term\n" {
		t.Fatalf("the background task did not get SIGTERM: %q, %v", got, err)
	}
	if logs := srv.logs(t); !strings.Contains(logs, "boris stopped") {
		t.Fatalf("no clean shutdown in the log:\n%s", logs)
	}
}

// TestDockerStopDistroless: the image without a shell stops cleanly too.
func TestDockerStopDistroless(t *testing.T) {
	requireImages(t)
	t.Parallel()
	srv := startBoris(t, spec{image: imageDistroless})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	grace := 30 * time.Second
	start := time.Now()
	if err := srv.c.Stop(ctx, &grace); err != nil {
		t.Fatalf("docker stop: %v", err)
	}
	if state := srv.inspect(t).State; state.Running || state.ExitCode != 0 || time.Since(start) > 25*time.Second {
		t.Fatalf("after %s: running=%v exit=%d", time.Since(start), state.Running, state.ExitCode)
	}
}

func waitFile(t *testing.T, path string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within %s", path, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
