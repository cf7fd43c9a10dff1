//go:build linux

package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/boris-mcp/boris/internal/execcheck"
	"github.com/boris-mcp/boris/internal/gittest"
	"github.com/boris-mcp/boris/internal/sandbox"
	"github.com/boris-mcp/boris/internal/shell"
)

// noGitPush refuses git push.
func noGitPush(_ context.Context, _ int, argv []string) error {
	if filepath.Base(argv[0]) == "git" && slices.Contains(argv, "push") {
		return errors.New("no pushing from here")
	}
	return nil
}

// pushRepo makes a clone with a commit to push to a local bare repository
// (git run through a session: the test process reaps every child).
func pushRepo(t *testing.T) (work, bare string, env []string) {
	t.Helper()
	gittest.Require(t)
	root := t.TempDir()
	bare, work = filepath.Join(root, "remote.git"), filepath.Join(root, "work")
	home := t.TempDir()
	env = shell.Environ(append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"))
	setup := newSession(t, Options{Workdir: root, Runner: shell.NewRunner("/bin/bash", env, shell.Options{Grace: time.Second})})
	res := mustRun(t, setup, `git init -q --bare remote.git && git clone -q remote.git work 2>/dev/null && cd work && echo a > a && git add a && git -c user.name=t -c user.email=t@t commit -q -m a`)
	if res.ExitCode != 0 {
		t.Fatalf("setup: %s", res.Stderr.Text)
	}
	return work, bare, env
}

// pushed lists the bare repository's branches: none until a push.
func pushed(t *testing.T, bare string) string {
	t.Helper()
	heads, _ := os.ReadDir(filepath.Join(bare, "refs", "heads"))
	packed, _ := os.ReadFile(filepath.Join(bare, "packed-refs"))
	var names []string
	for _, h := range heads {
		names = append(names, h.Name())
	}
	return strings.TrimSpace(strings.Join(names, " ") + " " + string(packed))
}

// TestExecCheckRun: with ExecCheck, a foreground command's forbidden exec
// (through a variable, a script) fails and the result names it; the
// prestarted shells of a warm pool are judged alike; allowed execs run.
func TestExecCheckRun(t *testing.T) {
	work, bare, env := pushRepo(t)
	os.WriteFile(filepath.Join(work, "ship.sh"), []byte("#!/bin/sh\nexec git push -q origin HEAD\n"), 0o755)
	s := newSession(t, Options{Workdir: work, ExecCheck: true, Warm: NewWarmPool(4, time.Minute),
		Runner: shell.NewRunner("/bin/bash", env, shell.Options{Grace: time.Second})})
	for i, script := range []string{`x=git; $x push -q origin HEAD`, `./ship.sh`, `x=git; $x push -q origin HEAD`, `./ship.sh`} {
		res, err := s.Run(context.Background(), Cmd{Script: script, Judge: noGitPush}, 30*time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		// (dash's exec tries git in every directory of PATH that has it:
		// /usr/bin and /bin on a merged /usr, each refused.)
		if res.ExitCode == 0 || res.RefusedCount < 1 || len(res.Refused) != res.RefusedCount {
			t.Fatalf("run %d %q: exit %d, refused %d %+v\nstderr %s", i, script, res.ExitCode, res.RefusedCount, res.Refused, res.Stderr.Text)
		}
		if i == 0 {
			t.Logf("stderr of a refused exec: %q, exit %d", res.Stderr.Text, res.ExitCode)
		}
		if r := res.Refused[0]; !slices.Equal(r.Argv, []string{"git", "push", "-q", "origin", "HEAD"}) || r.Reason != "no pushing from here" {
			t.Fatalf("run %d: refusal %+v", i, r)
		}
		if got := pushed(t, bare); got != "" {
			t.Fatalf("run %d pushed: %s", i, got)
		}
	}
	res := mustRunJudged(t, s, `git status --short && echo ok`, noGitPush)
	if strings.TrimSpace(res.Stdout.Text) != "?? ship.sh\nok" || res.RefusedCount != 0 {
		t.Fatalf("allowed: %q refused %v", res.Stdout.Text, res.Refused)
	}
	// Without a judge, the command's execs run unjudged.
	if res := mustRun(t, s, `git push -q origin HEAD`); res.ExitCode != 0 || pushed(t, bare) == "" {
		t.Fatalf("unjudged push: exit %d, stderr %s", res.ExitCode, res.Stderr.Text)
	}
}

func mustRunJudged(t *testing.T, s *Session, script string, judge execcheck.Judge) RunResult {
	t.Helper()
	res, err := s.Run(context.Background(), Cmd{Script: script, Judge: judge}, 30*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestExecCheckTask: a background task's status names what its judge
// refused.
func TestExecCheckTask(t *testing.T) {
	work, bare, env := pushRepo(t)
	s := newSession(t, Options{Workdir: work, ExecCheck: true,
		Runner: shell.NewRunner("/bin/bash", env, shell.Options{Grace: time.Second})})
	info, err := s.StartTask(TaskOptions{Script: `sleep 0.2; env git push origin HEAD; echo "after $?"`, Judge: noGitPush})
	if err != nil {
		t.Fatal(err)
	}
	st := waitTask(t, s, info.ID)
	if st.RefusedCount != 1 || !slices.Equal(st.Refused[0].Argv, []string{"git", "push", "origin", "HEAD"}) {
		t.Fatalf("task status refused %d %+v", st.RefusedCount, st.Refused)
	}
	if !strings.Contains(st.Result.Stdout.Text, "after 126") {
		t.Errorf("stdout %q", st.Result.Stdout.Text)
	}
	if got := pushed(t, bare); got != "" {
		t.Fatalf("pushed: %s", got)
	}
}

// TestExecCheckSeccompOnlyWhenOn: the filter is on a session's commands
// only with ExecCheck; without it nothing changes.
func TestExecCheckSeccompOnlyWhenOn(t *testing.T) {
	mode := func(opts Options) string {
		s := newSession(t, opts)
		res := mustRun(t, s, `grep '^Seccomp:' /proc/self/status`)
		return strings.TrimSpace(strings.TrimPrefix(res.Stdout.Text, "Seccomp:"))
	}
	if got := mode(Options{}); got != "0" {
		t.Errorf("without ExecCheck: Seccomp mode %q; want 0 (no filter)", got)
	}
	if got := mode(Options{ExecCheck: true}); got != "2" {
		t.Errorf("with ExecCheck: Seccomp mode %q; want 2 (a filter)", got)
	}
	if got, _ := os.ReadFile("/proc/self/status"); strings.Contains(string(got), "Seccomp:\t2") {
		t.Error("the filter reached boris's own threads")
	}
}

// TestExecCheckInSandboxDomain: the filter goes on a session's sandbox
// domain thread, beside Landlock: both hold.
func TestExecCheckInSandboxDomain(t *testing.T) {
	work, bare, env := pushRepo(t)
	sb, err := sandbox.New(sandbox.Config{Writable: []string{work, bare, os.TempDir()}})
	if err != nil {
		t.Skipf("no Landlock sandbox here: %v", err)
	}
	defer sb.Close()
	s := newSession(t, Options{Workdir: work, ExecCheck: true,
		NewDomain: func() (Domain, error) { return sb.NewDomain() },
		Runner:    shell.NewRunner("/bin/bash", env, shell.Options{Grace: time.Second})})
	res := mustRunJudged(t, s, `touch /outside-the-sandbox 2>/dev/null || echo confined; x=git; $x push -q origin HEAD`, noGitPush)
	if !strings.Contains(res.Stdout.Text, "confined") || res.RefusedCount != 1 {
		t.Fatalf("stdout %q refused %+v stderr %s", res.Stdout.Text, res.Refused, res.Stderr.Text)
	}
	if got := pushed(t, bare); got != "" {
		t.Fatalf("pushed: %s", got)
	}
}

// TestExecCheckSessionsLeaveNothing: sessions with the exec check, each
// running commands and closed, leave no OS thread, descriptor or goroutine
// behind (the filtered thread and the watcher end with the session).
func TestExecCheckSessionsLeaveNothing(t *testing.T) {
	count := func(dir string) int { e, _ := os.ReadDir(dir); return len(e) }
	cycle := func() {
		s := New("leak", Options{Workdir: t.TempDir(), ExecCheck: true, Warm: NewWarmPool(2, time.Minute),
			Runner: shell.NewRunner("/bin/bash", shell.Environ(os.Environ()), shell.Options{Grace: time.Second})})
		for range 5 {
			if _, err := s.Run(context.Background(), Cmd{Script: `/bin/true | /bin/cat`, Judge: noGitPush}, 10*time.Second, nil); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
	}
	cycle()
	threads, fds, gs := count("/proc/self/task"), count("/proc/self/fd"), runtime.NumGoroutine()
	for range 5 {
		cycle()
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		th, f, g := count("/proc/self/task"), count("/proc/self/fd"), runtime.NumGoroutine()
		if th <= threads && f <= fds && g <= gs {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("threads %d → %d, descriptors %d → %d, goroutines %d → %d", threads, th, fds, f, gs, g)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
