package rules

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// CheckEvery is how often Watch looks at the rules files.
const CheckEvery = time.Second

// Live is the rules of a set of files as they are now: reloaded when a
// file's content changes. A change that does not load keeps the previous
// rules and is logged as a warning (once per distinct problem). Its
// methods are safe for concurrent use.
type Live struct {
	paths  []string
	dir    string
	logger *slog.Logger
	cur    atomic.Pointer[Rules]

	mu      sync.Mutex
	seen    [][]byte
	lastErr string
}

// NewLive loads the files (see LoadIn); an error names the file and line.
func NewLive(paths []string, dir string, logger *slog.Logger) (*Live, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	l := &Live{paths: paths, dir: dir, logger: logger}
	seen := l.read()
	r, err := LoadIn(paths, dir)
	if err != nil {
		return nil, err
	}
	l.seen = seen
	l.cur.Store(r)
	return l, nil
}

// Rules are the rules now (nil-safe: a nil Live has none).
func (l *Live) Rules() *Rules {
	if l == nil {
		return nil
	}
	return l.cur.Load()
}

// Paths are the files the rules come from.
func (l *Live) Paths() []string {
	if l == nil {
		return nil
	}
	return l.paths
}

func (l *Live) read() [][]byte {
	out := make([][]byte, len(l.paths))
	for i, p := range l.paths {
		data, err := os.ReadFile(p)
		if err != nil {
			data = []byte("\x00unreadable: " + err.Error())
		}
		out[i] = data
	}
	return out
}

// Check reloads the rules if a file changed, and reports whether new rules
// are in force.
func (l *Live) Check() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.read()
	same := len(now) == len(l.seen)
	for i := 0; same && i < len(now); i++ {
		same = bytes.Equal(now[i], l.seen[i])
	}
	if same {
		return false
	}
	r, err := LoadIn(l.paths, l.dir)
	if err != nil {
		if msg := err.Error(); msg != l.lastErr {
			l.lastErr = msg
			l.logger.Warn("rules: a changed rules file does not load; the previous rules stay in force", "err", msg)
		}
		return false
	}
	l.seen, l.lastErr = now, ""
	l.cur.Store(r)
	l.logger.Info("rules: reloaded", "files", len(l.paths), "restrictive", r.Restrictive())
	return true
}

// Watch checks the files every interval (CheckEvery when zero) until ctx
// is done.
func (l *Live) Watch(ctx context.Context, interval time.Duration) {
	if l == nil || len(l.paths) == 0 {
		return
	}
	if interval <= 0 {
		interval = CheckEvery
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			l.Check()
		}
	}
}
