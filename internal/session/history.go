package session

import "github.com/boris-mcp/boris/internal/files"

// Bounds of a session's undo history: the steps kept per file, and the
// bytes of earlier content kept over all files of the session. Beyond them
// the oldest steps are dropped (the newer ones can still be undone).
const (
	MaxUndoSteps = 10
	MaxUndoBytes = 10 << 20
)

// undoStep is one recorded edit; seq orders steps across files.
type undoStep struct {
	ch  files.Change
	seq uint64
}

// history is a session's undo history. Its fields are guarded by the
// session's mutex.
type history struct {
	steps map[string][]undoStep // by resolved path, oldest first
	bytes int
	seq   uint64
}

// Record implements files.History.
func (s *Session) Record(path string, ch files.Change) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := &s.undo
	if ch.Size() > MaxUndoBytes {
		h.forget(path) // too big to keep: no older step may be restored over it
		return
	}
	if h.steps == nil {
		h.steps = map[string][]undoStep{}
	}
	h.seq++
	steps := append(h.steps[path], undoStep{ch: ch, seq: h.seq})
	h.bytes += ch.Size()
	if len(steps) > MaxUndoSteps {
		h.bytes -= steps[0].ch.Size()
		steps = steps[1:]
	}
	h.steps[path] = steps
	for h.bytes > MaxUndoBytes {
		h.dropOldest()
	}
}

// Forget implements files.History.
func (s *Session) Forget(path string) {
	s.mu.Lock()
	s.undo.forget(path)
	s.mu.Unlock()
}

// Last implements files.History.
func (s *Session) Last(path string) (files.Change, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	steps := s.undo.steps[path]
	if len(steps) == 0 {
		return files.Change{}, false
	}
	return steps[len(steps)-1].ch, true
}

// Undone implements files.History.
func (s *Session) Undone(path string, now files.Stamp) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := &s.undo
	steps := h.steps[path]
	if len(steps) == 0 {
		return
	}
	h.bytes -= steps[len(steps)-1].ch.Size()
	if len(steps) == 1 {
		delete(h.steps, path)
		return
	}
	steps = steps[:len(steps)-1]
	steps[len(steps)-1].ch.After = now
	h.steps[path] = steps
}

func (h *history) forget(path string) {
	for _, st := range h.steps[path] {
		h.bytes -= st.ch.Size()
	}
	delete(h.steps, path)
}

// dropOldest removes the oldest step of all files.
func (h *history) dropOldest() {
	oldest, at := "", uint64(0)
	for p, steps := range h.steps {
		if len(steps) > 0 && (oldest == "" || steps[0].seq < at) {
			oldest, at = p, steps[0].seq
		}
	}
	if oldest == "" {
		h.bytes = 0
		return
	}
	steps := h.steps[oldest]
	h.bytes -= steps[0].ch.Size()
	if len(steps) == 1 {
		delete(h.steps, oldest)
		return
	}
	h.steps[oldest] = steps[1:]
}
