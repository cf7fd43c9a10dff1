package session

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/boris-mcp/boris/internal/codes"
)

// Handles minted for "new" sessions: the prefix, then 24 random bytes
// (192 bits) in URL-safe base64.
const (
	HandlePrefix = "s_"
	handleBytes  = 24
)

// Kinds of session, by how a call finds it.
const (
	// KindDefault is a credential's default session over the stateless
	// protocol revision: calls that name no session share it.
	KindDefault = "default"
	// KindHandle is a session minted for session: "new" and named by its
	// handle afterwards.
	KindHandle = "handle"
	// KindTransport is the session of one connection: an Mcp-Session-Id of
	// a handshake-era HTTP client, or the stdio process.
	KindTransport = "transport"
)

// ManagerOptions configure a Manager.
type ManagerOptions struct {
	// Session is what every session is built with.
	Session Options
	// IdleTimeout closes a session that has had no call for this long
	// (0 = never). A call in progress keeps its session alive.
	IdleTimeout time.Duration
	// MaxSessions bounds the live sessions (0 = 1000).
	MaxSessions int
	// OnOpen and OnClose, if set, are called as sessions open and close
	// (for metrics and logs).
	OnOpen, OnClose func(id, kind string)
}

// Manager holds every live session of a process and finds the one a call
// belongs to: by handle, or the caller's implicit one. Every session is
// bound to the credential it was made under; another credential never
// finds it. It is safe for concurrent use.
type Manager struct {
	opts ManagerOptions

	mu      sync.Mutex
	live    map[key]*entry
	ended   map[key]ended   // implicit sessions closed by the manager, to say so once
	revoked map[string]bool // credentials no session may open under again
	closing bool
	wg      sync.WaitGroup // sessions being closed
}

// key names a session: the credential it belongs to, its kind and its id
// (the handle, the transport's id; empty for a default session).
type key struct{ cred, kind, id string }

// ended is why and when an implicit session was closed by the manager.
type ended struct {
	why string // EndedIdle or EndedLimit
	at  time.Time
}

// Why an implicit session was closed before the call that finds it gone.
const (
	EndedIdle  = "idle"
	EndedLimit = "limit"
)

type entry struct {
	k        key
	sess     *Session
	inflight int
	lastUsed time.Time
	pinned   bool // never closed for idleness or to make room
	timer    *time.Timer
}

// NewManager returns a Manager.
func NewManager(opts ManagerOptions) *Manager {
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = 1000
	}
	return &Manager{opts: opts, live: map[key]*entry{}, ended: map[key]ended{}, revoked: map[string]bool{}}
}

// Call is one tool call's hold on its session; Done releases it.
type Call struct {
	Session *Session
	// Minted is set when this call created a session for "new": the
	// handle to report.
	Minted string
	// Restarted says why, when the caller's implicit session had been
	// closed by the manager (EndedIdle, EndedLimit) and this call started a
	// fresh one; "" otherwise.
	Restarted string
	m         *Manager
	e         *entry
	once      sync.Once
}

// Done ends the call: the session's idle clock starts again once no call
// holds it. A Call made directly (Call{Session: s}, for a session that no
// Manager holds) has nothing to release.
func (c *Call) Done() {
	if c.m == nil {
		return
	}
	c.once.Do(func() { c.m.release(c.e) })
}

// Handle returns the session named by a handle under cred.
func (m *Manager) Handle(cred, handle string) (*Call, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.live[key{cred, KindHandle, handle}]
	if e == nil {
		return nil, codes.Errorf(codes.SessionNotFound, "no session %q: it never existed, was closed after %s idle, or belongs to another credential. Omit session to use your default session, or pass session: \"new\" to start a new one", handle, m.idleText())
	}
	return m.holdLocked(e), nil
}

// New mints a session under cred and returns it with its handle.
func (m *Manager) New(cred string) (*Call, error) {
	h, err := newHandle()
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, err := m.openLocked(key{cred, KindHandle, h}, false)
	if err != nil {
		return nil, err
	}
	c := m.holdLocked(e)
	c.Minted = h
	return c, nil
}

// Implicit returns the caller's implicit session, making it if needed: kind
// KindDefault (id empty) or KindTransport. A pinned session is never closed
// for idleness or to make room (the stdio process's).
func (m *Manager) Implicit(cred, kind, id string, pinned bool) (*Call, error) {
	k := key{cred, kind, id}
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.live[k]; e != nil {
		return m.holdLocked(e), nil
	}
	e, err := m.openLocked(k, pinned)
	if err != nil {
		return nil, err
	}
	c := m.holdLocked(e)
	if e, ok := m.ended[k]; ok {
		delete(m.ended, k)
		c.Restarted = e.why
	}
	return c, nil
}

// CloseTransport closes the session of a transport connection that has
// ended (DELETE, the SDK's idle close), if it exists.
func (m *Manager) CloseTransport(cred, id string) {
	m.mu.Lock()
	e := m.live[key{cred, KindTransport, id}]
	if e != nil {
		m.removeLocked(e)
	}
	m.mu.Unlock()
}

// CloseCredential closes every session of a credential that is no longer
// accepted (its token was removed), terminating their processes, and
// refuses new sessions under it from then on: a call that was let in just
// before the removal cannot open one afterwards. It returns the number of
// sessions closed.
func (m *Manager) CloseCredential(cred string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.revoked[cred] = true
	n := 0
	for k, e := range m.live {
		if k.cred == cred {
			m.removeLocked(e)
			n++
		}
	}
	for k := range m.ended {
		if k.cred == cred {
			delete(m.ended, k)
		}
	}
	return n
}

// CloseAll closes every session, terminating their processes, and waits
// until they are gone. No session opens afterwards.
func (m *Manager) CloseAll() {
	m.mu.Lock()
	m.closing = true
	for _, e := range m.live {
		m.removeLocked(e)
	}
	m.mu.Unlock()
	m.wg.Wait()
}

// Len returns the number of live sessions.
func (m *Manager) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.live)
}

func (m *Manager) idleText() string {
	if m.opts.IdleTimeout <= 0 {
		return "a long time"
	}
	return m.opts.IdleTimeout.String()
}

// openLocked makes a session, closing the least recently used idle one to
// make room when the limit is reached.
func (m *Manager) openLocked(k key, pinned bool) (*entry, error) {
	if m.closing {
		return nil, codes.Errorf(codes.SessionClosed, "the server is shutting down; no new session can start")
	}
	if m.revoked[k.cred] {
		return nil, codes.Errorf(codes.SessionClosed, "the bearer token of this call is no longer accepted (it was removed from the token file); no session can start under it")
	}
	if len(m.live) >= m.opts.MaxSessions {
		var lru *entry
		for _, e := range m.live {
			if e.pinned || e.inflight > 0 || e.sess.Busy() {
				continue
			}
			if lru == nil || e.lastUsed.Before(lru.lastUsed) {
				lru = e
			}
		}
		if lru == nil {
			return nil, codes.Errorf(codes.SessionLimit, "all %d sessions are in use and none is idle (each has a call or a process running); wait for one to finish, or reuse an existing session instead of starting new ones", m.opts.MaxSessions)
		}
		m.noteEndedLocked(lru.k, EndedLimit)
		m.removeLocked(lru)
	}
	// The id names the session in logs: a handle is shortened there, as
	// it is the capability to use the session.
	id := k.id
	switch k.kind {
	case KindDefault:
		id = "default"
	case KindHandle:
		id = id[:len(HandlePrefix)+6] + "…"
	}
	e := &entry{k: k, sess: New(id, m.opts.Session), pinned: pinned, lastUsed: time.Now()}
	m.live[k] = e
	if m.opts.OnOpen != nil {
		m.opts.OnOpen(id, k.kind)
	}
	return e, nil
}

func (m *Manager) holdLocked(e *entry) *Call {
	e.inflight++
	e.lastUsed = time.Now()
	if e.timer != nil {
		e.timer.Stop()
	}
	return &Call{Session: e.sess, m: m, e: e}
}

func (m *Manager) release(e *entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e.inflight--
	e.lastUsed = time.Now()
	if e.inflight > 0 || e.pinned || m.opts.IdleTimeout <= 0 || m.live[e.k] != e {
		return
	}
	if e.timer == nil {
		e.timer = time.AfterFunc(m.opts.IdleTimeout, func() { m.expire(e) })
	} else {
		e.timer.Reset(m.opts.IdleTimeout)
	}
}

// expire closes a session whose idle timer fired, unless a call came in
// meanwhile.
func (m *Manager) expire(e *entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.live[e.k] != e || e.inflight > 0 || time.Since(e.lastUsed) < m.opts.IdleTimeout {
		return
	}
	m.noteEndedLocked(e.k, EndedIdle)
	m.removeLocked(e)
}

// noteEndedLocked remembers that an implicit session was closed by the
// manager, so the next call can say it starts afresh. Handles need no note:
// a gone handle is SESSION_NOT_FOUND. Bounded: the oldest notes go first.
func (m *Manager) noteEndedLocked(k key, why string) {
	if k.kind == KindHandle {
		return
	}
	const maxNotes = 10000
	if len(m.ended) >= maxNotes {
		var oldest key
		var at time.Time
		for k2, e := range m.ended {
			if at.IsZero() || e.at.Before(at) {
				oldest, at = k2, e.at
			}
		}
		delete(m.ended, oldest)
	}
	m.ended[k] = ended{why: why, at: time.Now()}
}

// removeLocked forgets a session and closes it in the background: its
// processes get SIGTERM, then SIGKILL after the grace period.
func (m *Manager) removeLocked(e *entry) {
	if m.live[e.k] != e {
		return
	}
	delete(m.live, e.k)
	if e.timer != nil {
		e.timer.Stop()
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		e.sess.Close()
		if m.opts.OnClose != nil {
			m.opts.OnClose(e.sess.ID(), e.k.kind)
		}
	}()
}

// newHandle returns an unguessable session handle.
func newHandle() (string, error) {
	var b [handleBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("make a session handle: %w", err)
	}
	return HandlePrefix + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// IsHandle reports whether s looks like a minted handle.
func IsHandle(s string) bool {
	return strings.HasPrefix(s, HandlePrefix) && len(s) == len(HandlePrefix)+base64.RawURLEncoding.EncodedLen(handleBytes)
}
