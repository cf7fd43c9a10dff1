package session

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/boris-mcp/boris/internal/codes"
)

// readUntil reads a task until its new output contains want, and returns
// everything read.
func readUntil(t *testing.T, s *Session, id, want string) string {
	t.Helper()
	var all strings.Builder
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		st, err := s.TaskOutput(id, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		all.WriteString(st.Stdout)
		if strings.Contains(all.String(), want) {
			return all.String()
		}
	}
	t.Fatalf("no %q in %q", want, all.String())
	return ""
}

// TestInteractivePipe: input reaches an interactive task, reads are
// incremental, ^D closes stdin, and a task that is not interactive refuses
// input.
func TestInteractivePipe(t *testing.T) {
	s := newSession(t, Options{})
	info, err := s.StartTask(TaskOptions{Script: `read -p 'Name: ' n; echo "hello $n"; cat; echo done`, Interactive: true})
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.TaskInput(info.ID, "boris\n", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.Stdout, "hello boris\n") || !st.Running {
		t.Fatalf("after input: %+v", st)
	}
	st, err = s.TaskInput(info.ID, "line\n\x04", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := st.Stdout
	if st.Running {
		got += readUntilDone(t, s, info.ID)
	}
	if got != "line\ndone\n" {
		t.Fatalf("after ^D: %q", got)
	}

	plain, err := s.StartBackground("sleep 5")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.TaskInput(plain.ID, "x", 0)
	wantCode(t, err, codes.InvalidInput)
}

// readUntilDone reads a task until it ends and returns the new output.
func readUntilDone(t *testing.T, s *Session, id string) string {
	t.Helper()
	var all strings.Builder
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		st, err := s.TaskOutput(id, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		all.WriteString(st.Stdout)
		if !st.Running {
			return all.String()
		}
	}
	t.Fatal("the task did not end")
	return ""
}

// TestTTYTask: a task under a terminal reads as text (escapes removed,
// carriage returns applied), answers input, draws a screen, and ^C
// interrupts it.
func TestTTYTask(t *testing.T) {
	s := newSession(t, Options{})
	info, err := s.StartTask(TaskOptions{Script: `printf '\033[31mred\033[0m\n10%%\r100%%\n'; test -t 0 && echo tty; exec cat`, TTY: true})
	if err != nil {
		t.Fatal(err)
	}
	got := readUntil(t, s, info.ID, "tty\n")
	if got != "red\n100%\ntty\n" {
		t.Fatalf("filtered output %q", got)
	}
	st, err := s.TaskInput(info.ID, "echo me\n", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if st.Stdout != "echo me\necho me\n" { // the terminal echoes, cat repeats
		t.Fatalf("after input: %q", st.Stdout)
	}
	snap, _, err := s.TaskScreen(info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Rows[0] != "red" || snap.Rows[1] != "100%" || snap.Rows[2] != "tty" || snap.Row != 6 {
		t.Fatalf("screen %q, cursor row %d", snap.Rows[:5], snap.Row)
	}
	st, err = s.TaskInput(info.ID, "\x03", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if st.Running {
		readUntilDone(t, s, info.ID)
	}

	plain, err := s.StartBackground("sleep 5")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.TaskScreen(plain.ID)
	wantCode(t, err, codes.InvalidInput)
}

// TestTaskKillAndList: the list shows running tasks; task_kill stops a
// task that ignores the signal (SIGKILL after the grace period) and forgets
// it.
func TestTaskKillAndList(t *testing.T) {
	s := newSession(t, Options{})
	a, err := s.StartTask(TaskOptions{Script: `trap '' INT; echo started; sleep 100`})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.StartTask(TaskOptions{Script: `python3 -q -i`, TTY: true})
	if err != nil {
		t.Fatal(err)
	}
	list := s.Tasks()
	if len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID || !list[1].TTY || !list[0].Running {
		t.Fatalf("list %+v", list)
	}
	readUntil(t, s, a.ID, "started")
	start := time.Now()
	st, err := s.TaskKill(a.ID, syscall.SIGINT)
	if err != nil {
		t.Fatal(err)
	}
	if st.Running || st.Result.ExitCode != 128+int(syscall.SIGKILL) || time.Since(start) < time.Second {
		t.Fatalf("kill: %+v after %v", st, time.Since(start))
	}
	if _, err := s.TaskOutput(a.ID, 0); err == nil {
		t.Fatal("a killed task is still listed")
	}
	if _, err := s.TaskKill(b.ID, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if len(s.Tasks()) != 0 {
		t.Fatalf("tasks left: %+v", s.Tasks())
	}
}

// TestYield: a command still running after its yield goes on as a task
// whose reads start after the output already returned; one that ends in
// time is an ordinary result.
func TestYield(t *testing.T) {
	s := newSession(t, Options{})
	res, err := s.Run(context.Background(), Cmd{Script: "echo one; sleep 0.5; echo two", Yield: 200 * time.Millisecond}, 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Task == nil || res.Stdout.Text != "one\n" {
		t.Fatalf("not yielded: %+v", res)
	}
	if got := readUntilDone(t, s, res.Task.ID); got != "two\n" {
		t.Fatalf("task output %q", got)
	}
	res, err = s.Run(context.Background(), Cmd{Script: "echo quick", Yield: 5 * time.Second}, 10*time.Second, nil)
	if err != nil || res.Task != nil || res.Stdout.Text != "quick\n" {
		t.Fatalf("%v %+v", err, res)
	}
	// The command's timeout still applies once it is a task.
	res, err = s.Run(context.Background(), Cmd{Script: "sleep 30", Yield: 100 * time.Millisecond}, time.Second, nil)
	if err != nil || res.Task == nil {
		t.Fatalf("%v %+v", err, res)
	}
	var st TaskStatus
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if st, err = s.TaskOutput(res.Task.ID, time.Second); err != nil || !st.Running {
			break
		}
	}
	if err != nil || st.Running || !st.KilledByTimeout {
		t.Fatalf("%v %+v", err, st)
	}
}

// TestLeftoverTask: what a finished foreground command left running is a
// task (listed, read, killed) until it is gone.
func TestLeftoverTask(t *testing.T) {
	s := newSession(t, Options{})
	res, err := s.Run(context.Background(), Cmd{Script: "sleep 300 & echo left"}, 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.LeftRunning == "" || res.LeftPgid == 0 {
		t.Fatalf("no leftover named: %+v", res)
	}
	list := s.Tasks()
	if len(list) != 1 || !list[0].Leftover || !list[0].Running || list[0].Command != "sleep 300 & echo left" {
		t.Fatalf("task list %+v", list)
	}
	st, err := s.TaskOutput(res.LeftRunning, 0)
	if err != nil || !st.Running || st.Stdout != "" {
		t.Fatalf("read: %+v %v", st, err)
	}
	st, err = s.TaskKill(res.LeftRunning, syscall.SIGTERM)
	if err != nil || st.Running {
		t.Fatalf("kill: %+v %v", st, err)
	}
	if list := s.Tasks(); len(list) != 0 {
		t.Fatalf("still listed after the kill: %+v", list)
	}
}
