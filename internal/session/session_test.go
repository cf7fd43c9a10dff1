package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/files"
	"github.com/boris-mcp/boris/internal/shell"
)

func TestMain(m *testing.M) {
	if err := shell.EnableReaping(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func newSession(t *testing.T, opts Options) *Session {
	t.Helper()
	if opts.Workdir == "" {
		opts.Workdir = t.TempDir()
	}
	if opts.Runner == nil {
		opts.Runner = shell.NewRunner("/bin/bash", shell.Environ(os.Environ()), shell.Options{Grace: time.Second})
	}
	s := New("test", opts)
	t.Cleanup(s.Close)
	return s
}

func mustRun(t *testing.T, s *Session, script string) RunResult {
	t.Helper()
	res, err := s.Run(context.Background(), Cmd{Script: script}, 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func wantCode(t *testing.T, err error, code codes.Code) {
	t.Helper()
	e, ok := codes.As(err)
	if !ok || e.Code != code {
		t.Fatalf("got error %v, want code %s", err, code)
	}
}

func TestCwdTracking(t *testing.T) {
	s := newSession(t, Options{})
	work := s.Cwd()
	sub := filepath.Join(work, "a")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, "cd a")
	if s.Cwd() != sub {
		t.Fatalf("cwd %q", s.Cwd())
	}
	if res := mustRun(t, s, "pwd"); res.Stdout.Text != sub+"\n" {
		t.Fatalf("pwd printed %q", res.Stdout.Text)
	}
	// A background command never moves the session.
	info, err := s.StartBackground("cd /")
	if err != nil {
		t.Fatal(err)
	}
	waitTask(t, s, info.ID)
	if s.Cwd() != sub {
		t.Fatalf("background cd moved the session to %q", s.Cwd())
	}
	// The tracked directory disappears: fall back to the workdir and say so.
	if err := os.Remove(sub); err != nil {
		t.Fatal(err)
	}
	res := mustRun(t, s, "pwd")
	if res.CwdReset != sub || res.RanIn != work || res.Stdout.Text != work+"\n" || s.Cwd() != work {
		t.Fatalf("reset %q ran in %q stdout %q cwd %q", res.CwdReset, res.RanIn, res.Stdout.Text, s.Cwd())
	}
	// The workdir itself disappears: run in / and keep serving.
	mustRun(t, s, "cd "+sub[:len(work)]) // back to the workdir
	if err := os.RemoveAll(work); err != nil {
		t.Fatal(err)
	}
	res = mustRun(t, s, "pwd")
	if res.CwdReset != work || res.RanIn != "/" || res.Stdout.Text != "/\n" {
		t.Fatalf("workdir gone: reset %q ran in %q stdout %q", res.CwdReset, res.RanIn, res.Stdout.Text)
	}
}

func waitTask(t *testing.T, s *Session, id string) TaskStatus {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		st, err := s.TaskOutput(id, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !st.Running {
			return st
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("task %s still running", id)
	return TaskStatus{}
}

func TestBackgroundTasks(t *testing.T) {
	s := newSession(t, Options{})
	info, err := s.StartBackground("echo one; sleep 0.3; echo two; exit 7")
	if err != nil {
		t.Fatal(err)
	}
	if info.Pgid <= 1 || !strings.HasPrefix(info.ID, "task_") {
		t.Fatalf("info %+v", info)
	}
	st, err := s.TaskOutput(info.ID, 0)
	if err != nil || !st.Running {
		t.Fatalf("first read: %+v %v", st, err)
	}
	st = waitTask(t, s, info.ID)
	if st.Result.ExitCode != 7 || st.Result.Stdout.Text != "one\ntwo\n" {
		t.Fatalf("finished: exit %d stdout %q", st.Result.ExitCode, st.Result.Stdout.Text)
	}
	// Single read: gone now.
	_, err = s.TaskOutput(info.ID, 0)
	wantCode(t, err, codes.TaskNotFound)
	// Another session cannot see this one's tasks.
	other := newSession(t, Options{})
	info2, err := s.StartBackground("sleep 5")
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.TaskOutput(info2.ID, 0)
	wantCode(t, err, codes.TaskNotFound)
}

func TestTaskLimit(t *testing.T) {
	s := newSession(t, Options{MaxTasks: 3})
	for i := range 3 {
		if _, err := s.StartBackground("sleep 30"); err != nil {
			t.Fatalf("task %d: %v", i, err)
		}
	}
	_, err := s.StartBackground("sleep 30")
	wantCode(t, err, codes.TaskLimit)
	// Concurrent starts never exceed the limit.
	s2 := newSession(t, Options{MaxTasks: 4})
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for range 12 {
		wg.Go(func() {
			if _, err := s2.StartBackground("sleep 30"); err == nil {
				mu.Lock()
				ok++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if ok != 4 {
		t.Fatalf("%d tasks started concurrently with a limit of 4", ok)
	}
}

func TestBackgroundTimeout(t *testing.T) {
	s := newSession(t, Options{TaskTimeout: 300 * time.Millisecond})
	info, err := s.StartBackground("echo start; sleep 30")
	if err != nil {
		t.Fatal(err)
	}
	st := waitTask(t, s, info.ID)
	if !st.KilledByTimeout || st.Result.Stdout.Text != "start\n" {
		t.Fatalf("status %+v", st)
	}
}

// Close kills background tasks, leftovers of foreground commands and
// running foreground commands, and a closed session starts nothing.
func TestCloseKillsEverything(t *testing.T) {
	s := newSession(t, Options{})
	dir := s.Cwd()
	bg, err := s.StartBackground("echo $$ > bg.pid; exec sleep 300")
	if err != nil {
		t.Fatal(err)
	}
	res := mustRun(t, s, "sleep 300 & echo $! > left.pid")
	if !res.Leftover {
		t.Fatal("the & child should be a leftover")
	}
	fgDone := make(chan RunResult)
	go func() {
		r, _ := s.Run(context.Background(), Cmd{Script: "trap '' TERM; echo $$ > fg.pid; while :; do sleep 0.05; done"}, time.Minute, nil)
		fgDone <- r
	}()
	pids := []int{readPid(t, filepath.Join(dir, "bg.pid")), readPid(t, filepath.Join(dir, "left.pid")), readPid(t, filepath.Join(dir, "fg.pid"))}
	start := time.Now()
	s.Close()
	// The foreground command ignores TERM and would run its minute:
	// 20 s is far beyond the grace period and far below that.
	if took := time.Since(start); took > 20*time.Second {
		t.Fatalf("close took %v", took)
	}
	<-fgDone
	for _, pid := range pids {
		if alive(pid) {
			t.Fatalf("process %d survived session close", pid)
		}
	}
	_ = bg
	_, err = s.Run(context.Background(), Cmd{Script: "true"}, time.Second, nil)
	wantCode(t, err, codes.SessionClosed)
	_, err = s.StartBackground("true")
	wantCode(t, err, codes.SessionClosed)
	s.Close() // idempotent
}

func TestViewedSetIsConcurrentSafe(t *testing.T) {
	s := New("a", Options{Workdir: "/"})
	other := New("b", Options{Workdir: "/"})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 200 {
				p := fmt.Sprintf("/w/%d/%d", i, j)
				s.MarkViewed(p, files.Stamp{Size: int64(j)})
				if st, ok := s.ViewedStamp(p); !ok || st.Size != int64(j) {
					t.Errorf("%s not viewed", p)
				}
			}
		})
	}
	wg.Wait()
	if _, ok := other.ViewedStamp("/w/0/0"); ok {
		t.Fatal("viewed set leaked across sessions")
	}
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z'
}

// TestNewDomainHook: a session asks for its domain at its first process,
// once, starts every process with it (foreground, background task,
// prestarted shell), closes it when the session closes, after its
// processes are gone, and starts nothing afterwards; a session that runs
// nothing asks for none.
func TestNewDomainHook(t *testing.T) {
	var mu sync.Mutex
	var made, closed, started int
	var alive []int // pids of the session's processes when the domain closed
	var pids []int
	opts := Options{Warm: NewWarmPool(4, time.Minute)}
	opts.NewDomain = func() (Domain, error) {
		mu.Lock()
		made++
		mu.Unlock()
		start := func(c *exec.Cmd) error {
			err := c.Start()
			mu.Lock()
			started++
			if err == nil {
				pids = append(pids, c.Process.Pid)
			}
			mu.Unlock()
			return err
		}
		closeDomain := func() {
			mu.Lock()
			defer mu.Unlock()
			closed++
			for _, p := range pids {
				if syscall.Kill(p, 0) == nil {
					alive = append(alive, p)
				}
			}
		}
		return DomainFuncs{StartFunc: start, CloseFunc: closeDomain}, nil
	}
	idle := newSession(t, opts)
	idle.Close()

	s := newSession(t, opts)
	mustRun(t, s, "true")
	if _, err := s.StartBackground("sleep 300"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		s.mu.Lock()
		warm := s.warm != nil
		s.mu.Unlock()
		if warm {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no prestarted shell")
		}
	}
	mustRun(t, s, "sleep 300 & echo left")
	mu.Lock()
	if made != 1 || started < 3 {
		mu.Unlock()
		t.Fatalf("domains made %d (want 1), processes started in it %d (want 3 at least: a command, a task, a prestarted shell)", made, started)
	}
	mu.Unlock()
	s.Close()
	mu.Lock()
	defer mu.Unlock()
	if closed != 1 || len(alive) != 0 {
		t.Fatalf("domains closed %d (want 1); processes alive when it closed: %v", closed, alive)
	}
	if _, err := s.Run(context.Background(), Cmd{Script: "true"}, time.Second, nil); err == nil {
		t.Fatal("a closed session ran a command")
	}
}

// TestNewDomainFailure: a session whose domain cannot be made says so and
// starts nothing unconfined.
func TestNewDomainFailure(t *testing.T) {
	s := newSession(t, Options{NewDomain: func() (Domain, error) {
		return nil, errors.New("no more threads")
	}})
	_, err := s.Run(context.Background(), Cmd{Script: "true"}, time.Second, nil)
	wantCode(t, err, codes.CommandStartFailed)
	if !strings.Contains(err.Error(), "sandbox domain: no more threads") {
		t.Fatalf("error: %v", err)
	}
}

// TestIsolate: a session given a directory of its own works there from
// its first command, goes back there (not to the workdir) on a restart or
// when its directory is lost, starts its commands in the domain it was
// given, and cannot be moved once it has run a command.
func TestIsolate(t *testing.T) {
	base := t.TempDir()
	own := filepath.Join(base, "own")
	os.Mkdir(own, 0o755)
	var shared, mine int
	opts := Options{Workdir: base, NewDomain: func() (Domain, error) {
		shared++
		return DomainFuncs{StartFunc: func(c *exec.Cmd) error { return c.Start() }}, nil
	}}
	s := newSession(t, opts)
	if err := s.Isolate(own, func() (Domain, error) {
		mine++
		return DomainFuncs{StartFunc: func(c *exec.Cmd) error { return c.Start() }}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if s.Root() != own || s.Cwd() != own {
		t.Fatalf("root %s cwd %s", s.Root(), s.Cwd())
	}
	if out := mustRun(t, s, "pwd").Stdout.Text; strings.TrimSpace(out) != own {
		t.Fatalf("ran in %q", out)
	}
	if shared != 0 || mine != 1 {
		t.Fatalf("domains: shared %d, own %d", shared, mine)
	}
	mustRun(t, s, "mkdir gone && cd gone")
	os.Remove(filepath.Join(own, "gone"))
	if res := mustRun(t, s, "pwd"); strings.TrimSpace(res.Stdout.Text) != own || res.CwdReset == "" {
		t.Fatalf("after the directory went: %+v", res)
	}
	mustRun(t, s, "cd /")
	if err := s.Restart(); err != nil || s.Cwd() != own {
		t.Fatalf("restart: %v, cwd %s", err, s.Cwd())
	}
	if err := s.Isolate(base, nil); err == nil {
		t.Fatal("a session that ran commands was moved")
	}
	plain := newSession(t, Options{Workdir: base})
	if plain.Root() != base {
		t.Fatalf("root without Isolate: %s", plain.Root())
	}
}
