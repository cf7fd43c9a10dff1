package session

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// waitWarm waits until the session has a shell waiting.
func waitWarm(t *testing.T, s *Session) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		w := s.warm
		s.mu.Unlock()
		if w != nil {
			return w.proc.Pgid()
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no prestarted shell")
	return 0
}

// TestWarmShell: after a command the session prestarts its next shell; the
// next command runs in it (its $$ is that shell), from the session's
// directory as moved by cd; an unused one ends after the pool's idle time
// and when the session closes.
func TestWarmShell(t *testing.T) {
	pool := NewWarmPool(1, 300*time.Millisecond)
	s := newSession(t, Options{Warm: pool})
	sub := t.TempDir()
	mustRun(t, s, "cd "+sub)
	pid := waitWarm(t, s)
	res := mustRun(t, s, "echo $$; pwd")
	if res.Stdout.Text != strconv.Itoa(pid)+"\n"+sub+"\n" {
		t.Fatalf("ran in %q, want the prestarted shell %d in %s", res.Stdout.Text, pid, sub)
	}
	// Unused, it ends after the idle time.
	pid = waitWarm(t, s)
	for deadline := time.Now().Add(10 * time.Second); hasWarm(s) || alive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("an idle prestarted shell lived on (pid %d alive %v)", pid, alive(pid))
		}
	}
	// A pool with room for one, its shells never idle out: a second
	// session gets none. The second session's own prewarm (started by
	// its command) may still be on its way: wait until none is, then
	// prewarm here, so the answer cannot depend on how fast that was.
	full := NewWarmPool(1, time.Hour)
	first, other := newSession(t, Options{Warm: full}), newSession(t, Options{Warm: full})
	mustRun(t, first, "true")
	waitWarm(t, first)
	mustRun(t, other, "true")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		other.mu.Lock()
		warming := other.warming
		other.mu.Unlock()
		if !warming {
			other.prewarm()
			other.mu.Lock()
			warming = other.warming
			other.mu.Unlock()
			if !warming {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the second session's prewarm never finished")
		}
	}
	if hasWarm(other) {
		t.Fatal("the pool's limit was not kept")
	}
	// Closing the session ends it.
	mustRun(t, s, "true")
	pid = waitWarm(t, s)
	s.Close()
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(pid) {
		t.Fatal("the prestarted shell outlived its session")
	}
	if res := mustRunErr(s); !strings.Contains(res, "SESSION_CLOSED") {
		t.Fatalf("run after close: %s", res)
	}
}

func hasWarm(s *Session) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.warm != nil
}

func mustRunErr(s *Session) string {
	_, err := s.Run(context.Background(), Cmd{Script: "true"}, time.Second, nil)
	if err == nil {
		return ""
	}
	return err.Error()
}
