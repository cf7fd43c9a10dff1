//go:build linux

package execcheck_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boris-mcp/boris/internal/execcheck"
	"github.com/boris-mcp/boris/internal/gittest"
	"github.com/boris-mcp/boris/internal/shell"
)

// session is what a boris session has when execs are checked: a thread
// the commands fork from, its filter's watcher, and a runner starting
// through both.
type session struct {
	th     *execcheck.Thread
	w      *execcheck.Watcher
	runner *shell.Runner
}

func newSession(t testing.TB, env []string) *session {
	t.Helper()
	th := execcheck.NewThread()
	w, err := execcheck.Attach(th.Do)
	if err != nil {
		th.Close()
		t.Fatalf("Attach: %v", err)
	}
	s := &session{th: th, w: w}
	s.runner = shell.NewRunner("/bin/bash", env, shell.Options{Start: th.Start})
	t.Cleanup(s.close)
	return s
}

func (s *session) close() { s.w.Close(); s.th.Close() }

// run runs script as a session does: gated, tracked with judge before the
// gate opens, then waited for.
func (s *session) run(t testing.TB, ctx context.Context, dir, script string, judge execcheck.Judge) (shell.Result, []execcheck.Refusal) {
	t.Helper()
	p, err := s.runner.Start(shell.Command{Script: script, Dir: dir, Gated: true, Sentinel: "__S__"})
	if err != nil {
		t.Fatalf("start %q: %v", script, err)
	}
	c := s.w.Track(p.Pgid(), ctx, judge)
	defer c.Untrack()
	if err := p.Open(); err != nil {
		t.Fatalf("open: %v", err)
	}
	res := p.Wait(context.Background(), time.Minute)
	p.Terminate()
	<-p.Terminated()
	p.Close()
	refused, _ := c.Refused()
	return res, refused
}

// noPush refuses git push, however it is reached.
func noPush(_ context.Context, _ int, argv []string) error {
	if filepath.Base(argv[0]) == "git" && slices.Contains(argv[1:], "push") {
		return errors.New("git push is forbidden here")
	}
	return nil
}

// repo makes a clone of a local bare repository with one commit to push;
// it returns the clone and the bare repository.
func repo(t *testing.T) (work, bare string) {
	t.Helper()
	gittest.Require(t)
	root := t.TempDir()
	bare = filepath.Join(root, "remote.git")
	work = filepath.Join(root, "work")
	gittest.Run(t, root, nil, "init", "-q", "--bare", bare)
	gittest.Run(t, root, nil, "clone", "-q", bare, work)
	os.WriteFile(filepath.Join(work, "a.txt"), []byte("a\n"), 0o644)
	gittest.Run(t, work, nil, "add", "a.txt")
	gittest.Run(t, work, nil, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
	gittest.Run(t, work, nil, "branch", "-M", "main")
	return work, bare
}

// refs lists the bare repository's refs: empty while nothing was pushed.
func refs(t *testing.T, bare string) string {
	t.Helper()
	return strings.TrimSpace(string(gittest.Run(t, bare, nil, "for-each-ref")))
}

func gitEnv(t *testing.T) []string {
	home := t.TempDir()
	return shell.Environ(append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"))
}

// TestForbiddenExecRefused runs git push in every shape a check of the
// command line cannot see through: each exec fails with EPERM, nothing
// reaches the bare repository, and the refusal names the argv and the
// judge's reason.
func TestForbiddenExecRefused(t *testing.T) {
	work, bare := repo(t)
	s := newSession(t, gitEnv(t))
	os.WriteFile(filepath.Join(work, "push.sh"), []byte("#!/bin/sh\ngit push origin main\n"), 0o755)
	os.WriteFile(filepath.Join(work, "Makefile"), []byte("push:\n\tgit push origin main\n"), 0o644)
	gitPath, _ := exec.LookPath("git")
	loader := "/lib64/ld-linux-x86-64.so.2"
	if runtime.GOARCH == "arm64" {
		loader = "/lib/ld-linux-aarch64.so.1"
	}
	cases := []struct {
		name, script string
		needs        string
	}{
		{"variable", `x=git; $x push origin main`, ""},
		{"script file", `./push.sh`, ""},
		{"python subprocess", `python3 -c "import subprocess, sys; sys.exit(subprocess.run(['git','push','origin','main']).returncode)"`, "python3"},
		{"python os.execvp", `python3 -c "import os; os.execvp('git', ['git','push','origin','main'])"`, "python3"},
		{"makefile", `make push`, "make"},
		{"env", `env git push origin main`, ""},
		{"find -exec", `find . -maxdepth 0 -exec git push origin main \;`, ""},
		{"exec -a", `(exec -a ls git push origin main)`, ""},
		{"symlink", `ln -sf ` + gitPath + ` notgit && ./notgit push origin main`, ""},
		{"bash -c", `bash -c 'eval "g""it pu""sh origin main"'`, ""},
		{"dynamic loader", loader + ` --argv0 git ` + gitPath + ` push origin main`, loader},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.needs != "" {
				if _, err := exec.LookPath(tc.needs); err != nil {
					t.Skipf("%s not installed", tc.needs)
				}
			}
			res, refused := s.run(t, context.Background(), work, tc.script, noPush)
			if got := refs(t, bare); got != "" {
				t.Fatalf("the push happened: the bare repository has %s", got)
			}
			if res.ExitCode == 0 && tc.name != "find -exec" { // find reports the failed -exec and goes on
				t.Errorf("exit code 0; want the refused exec to fail the command\nstdout: %s\nstderr: %s", res.Stdout.Text, res.Stderr.Text)
			}
			if len(refused) == 0 {
				t.Fatalf("no refusal recorded\nstderr: %s", res.Stderr.Text)
			}
			r := refused[0]
			if !slices.Contains(r.Argv, "push") || r.Reason != "git push is forbidden here" || r.Pid <= 0 {
				t.Errorf("refusal %+v; want the push argv, the judge's reason and a pid", r)
			}
			if !strings.Contains(res.Stderr.Text+res.Stdout.Text, "ermission") && !strings.Contains(res.Stderr.Text+res.Stdout.Text, "not permitted") && tc.name != "makefile" {
				t.Errorf("the command saw no EPERM:\nstdout: %s\nstderr: %s", res.Stdout.Text, res.Stderr.Text)
			}
		})
	}
	// The same session still pushes when the judge allows it: the
	// refusals above were the judge's, not a broken exec.
	res, refused := s.run(t, context.Background(), work, `git push -q origin main`, func(context.Context, int, []string) error { return nil })
	if res.ExitCode != 0 || len(refused) != 0 {
		t.Fatalf("allowed push: exit %d, refused %v, stderr %s", res.ExitCode, refused, res.Stderr.Text)
	}
	if got := refs(t, bare); !strings.Contains(got, "refs/heads/main") {
		t.Fatalf("allowed push did not reach the bare repository: %q", got)
	}
}

// TestAllowedExecsRun: what the rules allow runs as ever, with its real
// argv shown to the judge, and a command's own shell is not judged.
func TestAllowedExecsRun(t *testing.T) {
	work, bare := repo(t)
	s := newSession(t, gitEnv(t))
	var mu sync.Mutex
	var seen [][]string
	judge := func(ctx context.Context, pid int, argv []string) error {
		mu.Lock()
		seen = append(seen, argv)
		mu.Unlock()
		return noPush(ctx, pid, argv)
	}
	res, refused := s.run(t, context.Background(), work, `echo git push; grep -r "git push" . || true; git status --short; x=git; $x log --oneline | wc -l`, judge)
	if res.ExitCode != 0 || len(refused) != 0 {
		t.Fatalf("exit %d, refused %v\nstderr: %s", res.ExitCode, refused, res.Stderr.Text)
	}
	if !strings.Contains(res.Stdout.Text, "git push") || !strings.HasSuffix(strings.TrimSpace(res.Stdout.Text), "1") {
		t.Errorf("stdout %q", res.Stdout.Text)
	}
	mu.Lock()
	defer mu.Unlock()
	want := [][]string{{"grep", "-r", "git push", "."}, {"git", "status", "--short"}, {"git", "log", "--oneline"}, {"wc", "-l"}}
	for _, w := range want {
		if !slices.ContainsFunc(seen, func(a []string) bool { return slices.Equal(a, w) }) {
			t.Errorf("the judge never saw %q; it saw %q", w, seen)
		}
	}
	for _, a := range seen {
		if filepath.Base(a[0]) == "bash" {
			t.Errorf("the command's own shell was judged: %q", a)
		}
	}
	if got := refs(t, bare); got != "" {
		t.Fatalf("bare repository changed: %s", got)
	}
}

// TestSessionsApart runs two sessions' commands at once: each judge is
// asked about its own session's execs only.
func TestSessionsApart(t *testing.T) {
	env := shell.Environ(os.Environ())
	a, b := newSession(t, env), newSession(t, env)
	dir := t.TempDir()
	type log struct {
		mu   sync.Mutex
		seen []string
	}
	judge := func(l *log) execcheck.Judge {
		return func(_ context.Context, _ int, argv []string) error {
			l.mu.Lock()
			l.seen = append(l.seen, strings.Join(argv, " "))
			l.mu.Unlock()
			return nil
		}
	}
	var la, lb log
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			a.run(t, context.Background(), dir, fmt.Sprintf(`for i in 1 2 3; do /bin/echo session-a-%d; done`, i), judge(&la))
		}()
		go func() {
			defer wg.Done()
			b.run(t, context.Background(), dir, fmt.Sprintf(`for i in 1 2 3; do /bin/echo session-b-%d; done`, i), judge(&lb))
		}()
	}
	wg.Wait()
	for name, l := range map[string]*log{"a": &la, "b": &lb} {
		l.mu.Lock() // the judges ran on the watchers' goroutines
		defer l.mu.Unlock()
		if len(l.seen) != 12 {
			t.Errorf("session %s's judge saw %d execs; want 12: %q", name, len(l.seen), l.seen)
		}
		for _, s := range l.seen {
			if !strings.Contains(s, "session-"+name) {
				t.Errorf("session %s's judge saw %q", name, s)
			}
		}
	}
}

// TestCommandsOfOneSessionApart: two commands of one session at once, each
// judged by its own judge (found through its process group).
func TestCommandsOfOneSessionApart(t *testing.T) {
	s := newSession(t, shell.Environ(os.Environ()))
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan string, 100)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mark := fmt.Sprintf("cmd-%d", i)
			_, refused := s.run(t, context.Background(), dir, `for i in 1 2 3; do /bin/echo `+mark+`; done; (setsid /bin/echo `+mark+`)`, func(_ context.Context, _ int, argv []string) error {
				if !slices.Contains(argv, mark) && filepath.Base(argv[0]) != "setsid" {
					errs <- fmt.Sprintf("%s's judge saw %q", mark, argv)
				}
				return nil
			})
			if len(refused) != 0 {
				errs <- fmt.Sprintf("%s refused %v", mark, refused)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestWaitingJudgeRefusedAtDeadline: a judge that waits for an answer that
// never comes refuses the exec when the call's time is up.
func TestWaitingJudgeRefusedAtDeadline(t *testing.T) {
	s := newSession(t, shell.Environ(os.Environ()))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	asked := make(chan struct{}, 1)
	judge := func(ctx context.Context, _ int, argv []string) error {
		asked <- struct{}{}
		<-ctx.Done()
		return fmt.Errorf("no answer before the call's timeout: %w", ctx.Err())
	}
	res, refused := s.run(t, ctx, t.TempDir(), `/bin/true; echo "status $?"`, judge)
	if len(asked) != 1 {
		t.Fatal("the judge was not asked")
	}
	if len(refused) != 1 || !strings.Contains(refused[0].Reason, "deadline") || !slices.Equal(refused[0].Argv, []string{"/bin/true"}) {
		t.Fatalf("refused %+v", refused)
	}
	if !strings.Contains(res.Stdout.Text, "status 126") {
		t.Errorf("stdout %q; want the exec to have failed (126)", res.Stdout.Text)
	}
}

// TestOrphanRefusedWithoutFallback: a process that left its command's
// group and parent chain (setsid, its parent gone) belongs to no call;
// without a fallback judge its exec is refused.
func TestOrphanRefusedWithoutFallback(t *testing.T) {
	s := newSession(t, shell.Environ(os.Environ()))
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	allow := func(context.Context, int, []string) error { return nil }
	// The orphan detaches while its parent waits (builtins only), then
	// waits for the test's go-ahead, by when its command is gone.
	s.run(t, context.Background(), dir, `(setsid sh -c ': > ready; while [ ! -e go ]; do :; done; /bin/echo orphan > out' </dev/null >/dev/null 2>&1 & while [ ! -e ready ]; do :; done)`, allow)
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(s.w.Orphans()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the orphan's exec was never refused")
		}
		time.Sleep(10 * time.Millisecond)
	}
	o := s.w.Orphans()
	if len(o) != 1 || !slices.Equal(o[0].Argv, []string{"/bin/echo", "orphan"}) {
		t.Errorf("orphans %+v", o)
	}
	if b, _ := os.ReadFile(out); len(b) > 0 { // the shell's redirection made it; echo would fill it
		t.Errorf("the orphan's echo ran: %q", b)
	}
}

// TestNoLeaks: many commands, then Close, leave no descriptors and no
// goroutines behind.
func TestNoLeaks(t *testing.T) {
	fds := func() int { e, _ := os.ReadDir("/proc/self/fd"); return len(e) }
	dir := t.TempDir()
	run := func() {
		s := newSession(t, shell.Environ(os.Environ()))
		for range 20 {
			s.run(t, context.Background(), dir, `/bin/true && /bin/echo x | /bin/cat >/dev/null`, noPush)
		}
		s.close()
	}
	run() // warm up whatever the runtime keeps
	beforeFDs, beforeG := fds(), runtime.NumGoroutine()
	for range 3 {
		run()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		f, g := fds(), runtime.NumGoroutine()
		if f <= beforeFDs && g <= beforeG {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("descriptors %d → %d, goroutines %d → %d", beforeFDs, f, beforeG, g)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestUntrackedTreeUnchanged: a process not forked from the filtered
// thread is not checked at all (the rest of boris keeps its execs).
func TestUnfilteredElsewhere(t *testing.T) {
	s := newSession(t, shell.Environ(os.Environ()))
	_ = s
	out, err := exec.Command("/bin/sh", "-c", "/bin/echo free").Output()
	if err != nil || strings.TrimSpace(string(out)) != "free" {
		t.Fatalf("an exec outside the filtered thread: %q, %v", out, err)
	}
	if checked, _ := s.w.Counts(); checked != 0 {
		t.Fatalf("the watcher checked %d execs of a process it does not filter", checked)
	}
}

// TestJudgePanicRefuses: a judge that panics refuses the exec; the watcher
// goes on.
func TestJudgePanicRefuses(t *testing.T) {
	s := newSession(t, shell.Environ(os.Environ()))
	dir := t.TempDir()
	res, refused := s.run(t, context.Background(), dir, `/bin/echo hi; echo "status $?"`, func(context.Context, int, []string) error { panic("a broken judge") })
	if !strings.Contains(res.Stdout.Text, "status 126") || len(refused) != 0 {
		t.Fatalf("stdout %q refused %v", res.Stdout.Text, refused)
	}
	res, _ = s.run(t, context.Background(), dir, `/bin/echo hi`, noPush)
	if res.Stdout.Text != "hi\n" {
		t.Fatalf("after a panic: %q %s", res.Stdout.Text, res.Stderr.Text)
	}
}

// TestNoStallOnOneCore: commands of two sessions started at once, with one
// P and garbage collections running: boris's own execs in the children it
// forks are never held (Go's vfork keeps the forking thread's P until the
// child has exec'd), so nothing waits for an answer that cannot be
// computed. A stall here ends in the test's timeout.
func TestNoStallOnOneCore(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	env := shell.Environ(os.Environ())
	a, b := newSession(t, env), newSession(t, env)
	dir := t.TempDir()
	stop := make(chan struct{})
	gcDone := make(chan struct{})
	go func() {
		defer close(gcDone)
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	var wg sync.WaitGroup
	for _, s := range []*session{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				res, _ := s.run(t, context.Background(), dir, `/bin/true`, noPush)
				if res.ExitCode != 0 {
					t.Errorf("exit %d: %s", res.ExitCode, res.Stderr.Text)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-gcDone
}

// TestBorisBinaryRefused: a command may not run boris's own binary (or a
// copy) as anything that could start programs — their execs, made by the
// instruction boris's own starts use, would not be held — but its policy
// check, version and help run.
func TestBorisBinaryRefused(t *testing.T) {
	s := newSession(t, shell.Environ(os.Environ()))
	dir := t.TempDir()
	self, err := os.Executable() // this test binary stands for boris
	if err != nil {
		t.Fatal(err)
	}
	allow := func(context.Context, int, []string) error { return nil }
	for _, script := range []string{self + ` -test.run=NONE`, `cp ` + self + ` ./copy && ./copy -test.run=NONE`} {
		res, refused := s.run(t, context.Background(), dir, script, allow)
		if res.ExitCode == 0 || len(refused) != 1 || !strings.Contains(refused[0].Reason, "boris's own binary") {
			t.Errorf("%s: exit %d, refused %+v", script, res.ExitCode, refused)
		}
	}
	if _, refused := s.run(t, context.Background(), dir, self+` -h`, allow); len(refused) != 0 {
		t.Errorf("help refused: %+v", refused)
	}
}

// TestFexecve: a program executed by descriptor (a memfd: no path) is
// judged by its argv, and runs when allowed.
func TestFexecve(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	s := newSession(t, shell.Environ(os.Environ()))
	dir := t.TempDir()
	script := `python3 -c "import os; fd = os.memfd_create('e'); os.write(fd, open('/bin/echo', 'rb').read()); os.execve(fd, ['echo', 'memfd-ran', os.environ['WORD']], {})"`
	res, refused := s.run(t, context.Background(), dir, "WORD=allowed "+script, func(_ context.Context, _ int, argv []string) error {
		if slices.Contains(argv, "forbidden") {
			return errors.New("no")
		}
		return nil
	})
	if res.Stdout.Text != "memfd-ran allowed\n" || len(refused) != 0 {
		t.Fatalf("allowed: stdout %q stderr %q refused %v", res.Stdout.Text, res.Stderr.Text, refused)
	}
	res, refused = s.run(t, context.Background(), dir, "WORD=forbidden "+script, func(_ context.Context, _ int, argv []string) error {
		if slices.Contains(argv, "forbidden") {
			return errors.New("no")
		}
		return nil
	})
	if res.Stdout.Text != "" || len(refused) != 1 || !slices.Equal(refused[0].Argv, []string{"echo", "memfd-ran", "forbidden"}) {
		t.Fatalf("refused: stdout %q refused %+v", res.Stdout.Text, refused)
	}
}
