package session

import (
	"os"
	"testing"
	"time"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/shell"
)

func newManager(t *testing.T, opts ManagerOptions) *Manager {
	t.Helper()
	if opts.Session.Workdir == "" {
		opts.Session.Workdir = t.TempDir()
	}
	if opts.Session.Runner == nil {
		opts.Session.Runner = shell.NewRunner("/bin/bash", shell.Environ(os.Environ()), shell.Options{Grace: time.Second})
	}
	m := NewManager(opts)
	t.Cleanup(m.CloseAll)
	return m
}

func TestHandlesAreBoundToTheirCredential(t *testing.T) {
	m := newManager(t, ManagerOptions{})
	c, err := m.New("token-1")
	if err != nil {
		t.Fatal(err)
	}
	c.Done()
	if !IsHandle(c.Minted) || len(c.Minted) < len(HandlePrefix)+22 {
		t.Fatalf("handle %q", c.Minted)
	}
	if _, err := m.Handle("token-2", c.Minted); err == nil {
		t.Fatal("another credential found the session")
	} else {
		wantCode(t, err, codes.SessionNotFound)
	}
	got, err := m.Handle("token-1", c.Minted)
	if err != nil || got.Session != c.Session {
		t.Fatalf("the minting credential lost its session: %v", err)
	}
	got.Done()
	// Two mints never collide, and default sessions are per credential.
	c2, _ := m.New("token-1")
	c2.Done()
	if c2.Minted == c.Minted {
		t.Fatal("two sessions got one handle")
	}
	a, _ := m.Implicit("token-1", KindDefault, "", false)
	b, _ := m.Implicit("token-2", KindDefault, "", false)
	a2, _ := m.Implicit("token-1", KindDefault, "", false)
	if a.Session == b.Session || a.Session != a2.Session {
		t.Fatal("default sessions are not one per credential")
	}
}

// entryOf returns the manager's live entry of sess, or nil.
func entryOf(m *Manager, sess *Session) *entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.live {
		if e.sess == sess {
			return e
		}
	}
	return nil
}

// TestIdleExpiry: an idle handle is closed after the idle timeout; a
// session holding a call and a pinned one arm no idle timer at all, and
// an expiry that comes while a call holds its session leaves it; released,
// the held session expires too and the next call says it starts afresh.
// Every wait is for an event (a session closed), never a fixed sleep, so
// a slow machine cannot make a wrong answer pass.
func TestIdleExpiry(t *testing.T) {
	m := newManager(t, ManagerOptions{IdleTimeout: 200 * time.Millisecond})
	held, _ := m.Implicit("", KindDefault, "", false)
	minted, _ := m.New("")
	minted.Done()
	pinned, _ := m.Implicit("", KindTransport, "stdio", true)
	pinned.Done()
	waitClosed := func(s *Session, what string) {
		t.Helper()
		select {
		case <-s.Closed():
		case <-time.After(10 * time.Second):
			t.Fatalf("%s was not closed after its idle timeout", what)
		}
	}
	waitClosed(minted.Session, "an idle handle")
	if _, err := m.Handle("", minted.Minted); err == nil {
		t.Fatal("an idle handle survived its timeout")
	}
	// A call in progress keeps its session: no timer, and an expiry
	// arriving anyway (one armed before the call came) changes nothing.
	he, pe := entryOf(m, held.Session), entryOf(m, pinned.Session)
	if he == nil || pe == nil {
		t.Fatal("the held or the pinned session is gone")
	}
	m.mu.Lock()
	heldTimer, pinnedTimer := he.timer, pe.timer
	he.lastUsed = time.Now().Add(-time.Hour)
	m.mu.Unlock()
	if heldTimer != nil || pinnedTimer != nil {
		t.Fatalf("idle timers armed: held %v, pinned %v", heldTimer != nil, pinnedTimer != nil)
	}
	m.expire(he)
	again, _ := m.Implicit("", KindDefault, "", false)
	if again.Session != held.Session || again.Restarted != "" {
		t.Fatal("a session holding a call expired")
	}
	again.Done()
	held.Done()
	waitClosed(held.Session, "the released default session")
	fresh, _ := m.Implicit("", KindDefault, "", false)
	defer fresh.Done()
	if fresh.Session == held.Session || fresh.Restarted != EndedIdle {
		t.Fatalf("after idling: same session %v, restarted %q", fresh.Session == held.Session, fresh.Restarted)
	}
	p, _ := m.Implicit("", KindTransport, "stdio", true)
	defer p.Done()
	if p.Session != pinned.Session {
		t.Fatal("the pinned session expired")
	}
}

func TestLimitClosesTheLeastRecentlyUsedIdleSession(t *testing.T) {
	m := newManager(t, ManagerOptions{MaxSessions: 3})
	pinned, _ := m.Implicit("", KindTransport, "stdio", true)
	pinned.Done()
	busy, _ := m.New("")
	if _, err := busy.Session.StartBackground("sleep 30"); err != nil {
		t.Fatal(err)
	}
	busy.Done()
	idle, _ := m.Implicit("", KindDefault, "", false)
	idle.Done()
	// Full: the idle default session goes, not the older busy or pinned ones.
	c, err := m.New("")
	if err != nil {
		t.Fatal(err)
	}
	c.Done()
	if b, err := m.Handle("", busy.Minted); err != nil {
		t.Fatal("the busy session was closed to make room")
	} else {
		b.Done()
	}
	// The default session comes back, saying why it had gone, in place of
	// c, now the least recently used idle one.
	back, _ := m.Implicit("", KindDefault, "", false)
	if back.Session == idle.Session || back.Restarted != EndedLimit {
		t.Fatalf("the evicted default session: restarted %q", back.Restarted)
	}
	if _, err := m.Handle("", c.Minted); err == nil {
		t.Fatal("the least recently used idle session did not make room")
	}
	// Everything busy, pinned or holding a call: SESSION_LIMIT.
	_, err = m.New("")
	wantCode(t, err, codes.SessionLimit)
	back.Done()
	if m.Len() != 3 {
		t.Fatalf("%d sessions alive, limit 3", m.Len())
	}
}

func TestCloseAll(t *testing.T) {
	m := newManager(t, ManagerOptions{})
	c, _ := m.New("")
	info, err := c.Session.StartBackground("exec sleep 30")
	if err != nil {
		t.Fatal(err)
	}
	c.Done()
	m.CloseAll()
	if shell.GroupAlive(info.Pgid) {
		t.Fatal("a process outlived CloseAll")
	}
	_, err = m.New("")
	wantCode(t, err, codes.SessionClosed)
	_, err = m.Implicit("", KindDefault, "", false)
	wantCode(t, err, codes.SessionClosed)
}

func TestCloseTransport(t *testing.T) {
	m := newManager(t, ManagerOptions{})
	c, _ := m.Implicit("token-1", KindTransport, "abc", false)
	c.Done()
	m.CloseTransport("token-2", "abc") // another credential's id: nothing
	if m.Len() != 1 {
		t.Fatal("another credential closed the session")
	}
	m.CloseTransport("token-1", "abc")
	<-c.Session.Closed()
	if m.Len() != 0 {
		t.Fatal("the transport's session is still counted")
	}
}

// TestCloseCredential: every session of a revoked credential closes, its
// processes end, none opens under it again, and other credentials'
// sessions carry on.
func TestCloseCredential(t *testing.T) {
	m := newManager(t, ManagerOptions{})
	var infos []TaskInfo
	for _, open := range []func() (*Call, error){
		func() (*Call, error) { return m.New("token-1") },
		func() (*Call, error) { return m.Implicit("token-1", KindDefault, "", false) },
		func() (*Call, error) { return m.Implicit("token-1", KindTransport, "abc", false) },
	} {
		c, err := open()
		if err != nil {
			t.Fatal(err)
		}
		info, err := c.Session.StartBackground("exec sleep 30")
		if err != nil {
			t.Fatal(err)
		}
		infos = append(infos, info)
		c.Done()
	}
	other, _ := m.Implicit("token-2", KindDefault, "", false)
	kept, err := other.Session.StartBackground("exec sleep 30")
	if err != nil {
		t.Fatal(err)
	}
	other.Done()

	if n := m.CloseCredential("token-1"); n != 3 {
		t.Fatalf("closed %d sessions, want 3", n)
	}
	m.wg.Wait()
	for _, info := range infos {
		if shell.GroupAlive(info.Pgid) {
			t.Fatal("a process of a revoked credential's session outlived it")
		}
	}
	if m.Len() != 1 || !shell.GroupAlive(kept.Pgid) {
		t.Fatalf("another credential's session was closed: %d live", m.Len())
	}
	_, err = m.New("token-1")
	wantCode(t, err, codes.SessionClosed)
	_, err = m.Implicit("token-1", KindDefault, "", false)
	wantCode(t, err, codes.SessionClosed)
}
