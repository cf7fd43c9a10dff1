package session

import (
	"crypto/rand"
	"encoding/hex"
)

// checkpointMarks is what a session remembers of the workspace
// checkpoints: which it saw first (the default start of its diffs) and
// which failure of an automatic checkpoint it was last told about.
type checkpointMarks struct {
	key      string
	first    string
	notified string
}

func newCheckpointKey() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// CheckpointKey tells this session apart from others with the same ID
// (a later stdio process, another credential's default session) in the
// checkpoints it made.
func (s *Session) CheckpointKey() string { return s.ckpt.key }

// FirstCheckpoint is the first checkpoint this session saw ("" before
// its first call that could change the workspace).
func (s *Session) FirstCheckpoint() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ckpt.first
}

// SetFirstCheckpoint records the first checkpoint the session saw; later
// calls change nothing.
func (s *Session) SetFirstCheckpoint(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ckpt.first == "" {
		s.ckpt.first = id
	}
}

// NoteCheckpointFailure reports whether the session has not yet been told
// about this kind of failure of automatic checkpoints, and remembers it;
// "" (success) clears the memory, so a failure after a success is told
// again.
func (s *Session) NoteCheckpointFailure(kind string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ckpt.notified == kind {
		return false
	}
	s.ckpt.notified = kind
	return kind != ""
}
