package session

import (
	"sync"
	"time"

	"github.com/boris-mcp/boris/internal/shell"
)

// WarmPool bounds the prestarted shells of all the sessions of a server. A
// session that has run a bash command keeps its next shell started and
// waiting (shell.Runner.Prestart), so the next call only hands it the
// command instead of waiting for a process to be made; the pool caps how
// many wait at once, and each waits at most Idle, so idle sessions cost no
// process.
type WarmPool struct {
	mu   sync.Mutex
	n    int
	max  int
	idle time.Duration
}

// NewWarmPool returns a pool of at most max waiting shells, each ended
// after idle unused.
func NewWarmPool(max int, idle time.Duration) *WarmPool {
	return &WarmPool{max: max, idle: idle}
}

func (w *WarmPool) take() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n >= w.max {
		return false
	}
	w.n++
	return true
}

func (w *WarmPool) give() {
	w.mu.Lock()
	w.n--
	w.mu.Unlock()
}

// warmShell is a session's prestarted shell.
type warmShell struct {
	proc  *shell.Process
	timer *time.Timer
}

// prewarm starts the session's next shell, when the pool has room and the
// session has none waiting.
func (s *Session) prewarm() {
	pool, r := s.opts.Warm, s.opts.Runner
	if pool == nil || r == nil || !r.CanPrestart() {
		return
	}
	s.mu.Lock()
	if s.closed || s.warm != nil || s.warming {
		s.mu.Unlock()
		return
	}
	s.warming = true
	dir := s.cwd
	s.mu.Unlock()
	if !pool.take() {
		s.mu.Lock()
		s.warming = false
		s.mu.Unlock()
		return
	}
	r, err := s.commandRunner()
	var p *shell.Process
	if err == nil {
		p, err = r.Prestart(dir, s.sentinel)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.warming = false
	if err != nil || s.closed {
		pool.give()
		if p != nil {
			p.Close()
		}
		return
	}
	w := &warmShell{proc: p}
	w.timer = time.AfterFunc(pool.idle, func() { s.dropWarm(w) })
	s.warm = w
}

// takeWarmLocked hands out the waiting shell, if any.
func (s *Session) takeWarmLocked() *shell.Process {
	w := s.warm
	if w == nil {
		return nil
	}
	s.warm = nil
	w.timer.Stop()
	s.opts.Warm.give()
	select {
	case <-w.proc.Done():
		w.proc.Close() // it died waiting: not usable
		return nil
	default:
	}
	return w.proc
}

// dropWarm ends a waiting shell that has waited long enough (or any, for a
// nil w).
func (s *Session) dropWarm(w *warmShell) *shell.Process {
	s.mu.Lock()
	if s.warm == nil || (w != nil && s.warm != w) {
		s.mu.Unlock()
		return nil
	}
	p := s.takeWarmLocked()
	s.mu.Unlock()
	if p != nil {
		p.Close() // its command never comes: it reads end of file and exits
	}
	return p
}
