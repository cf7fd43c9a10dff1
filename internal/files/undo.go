package files

import (
	"errors"
	"io/fs"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/scope"
)

// History is a session's record of its own edits, newest last per file,
// so undo can step back through them. Implementations bound it.
type History interface {
	// Record adds an edit of the file at the resolved path.
	Record(path string, ch Change)
	// Forget drops the file's history: an edit was made whose prior state
	// is unknown, so no older state may be restored over it.
	Forget(path string)
	// Last returns the newest edit of the file.
	Last(path string) (Change, bool)
	// Undone removes the newest edit of the file, which undo has just
	// reverted: the file is now as the edit before left it, in the new
	// version now (so that edit can be undone in turn).
	Undone(path string, now Stamp)
}

// Change is one edit of a file: what the file was before it, and what the
// edit left, so undo can tell whether anyone changed the file since.
type Change struct {
	// Existed says whether the file existed before the edit; Before and
	// Mode are its content and permissions then.
	Existed bool
	Before  []byte
	Mode    fs.FileMode
	// After is the file as the edit left it; AfterExists is false when the
	// edit removed it.
	After       Stamp
	AfterExists bool
}

// Size is what the change costs the history, in bytes.
func (ch Change) Size() int { return len(ch.Before) }

// UndoResult is what an undo did.
type UndoResult struct {
	Path string
	// Content is the file's restored content; Removed is true when the
	// undone edit had created the file, which is now gone again.
	Content string
	Removed bool
}

// FactNoHistory is the fact of an UNDO_NO_HISTORY error.
type FactNoHistory struct{ Path string }

// FactChangedSinceEdit is the fact of a FILE_CHANGED_SINCE_VIEW error from
// undo: the file is no longer what this session's last edit left.
type FactChangedSinceEdit struct{ Path string }

// Undo restores the file as it was before this session's last edit of it,
// through any edit operation, and drops that edit from the history. It is
// refused when the file has changed since that edit, so it never overwrites
// somebody else's change.
func (s *Service) Undo(c Ctx, path string) (*UndoResult, error) {
	t, err := s.locate(c, path)
	if err != nil {
		return nil, err
	}
	var ch Change
	ok := false
	if c.History != nil {
		ch, ok = c.History.Last(t.Resolved)
	}
	if !ok && !t.Exists {
		hint := suggest(t.Path)
		return nil, codes.Errorf(codes.PathNotFound, "%s does not exist%s", t.Path, hint).WithFact(FactMissing{Path: t.Path, Suggest: hint})
	}
	if !ok {
		return nil, codes.Errorf(codes.UndoNoHistory, "%s has no edit of this session to undo (undo steps back through this session's own edits of a file, the most recent first)", t.Path).WithFact(FactNoHistory{Path: t.Path})
	}
	unlock := s.locks.lock(t.Resolved)
	defer unlock()
	if !s.unchangedSince(t, ch) {
		return nil, codes.Errorf(codes.FileChangedSinceView, "%s has changed on disk since this session's last edit of it (by a command or another client); undoing would overwrite that change, so nothing was done. View the file and edit it instead", t.Path).WithFact(FactChangedSinceEdit{Path: t.Path})
	}
	if !ch.Existed {
		if err := s.opts.Policy.Remove(t); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, s.writeError(t, err)
		}
		c.History.Undone(t.Resolved, Stamp{})
		return &UndoResult{Path: t.Path, Removed: true}, nil
	}
	var written fs.FileInfo
	mode := ch.Mode
	if mode == 0 {
		mode = 0o644
	}
	if err := s.opts.Policy.WriteAtomic(t, ch.Before, scope.WriteOptions{NewFileMode: mode, MkdirParents: true, Written: &written}); err != nil {
		return nil, s.writeError(t, err)
	}
	var now Stamp
	if written != nil {
		now = StampOf(written)
		if c.Viewed != nil {
			c.Viewed.MarkViewed(t.Resolved, now)
		}
	}
	c.History.Undone(t.Resolved, now)
	return &UndoResult{Path: t.Path, Content: string(ch.Before)}, nil
}

// unchangedSince reports whether the file is as the change left it.
func (s *Service) unchangedSince(t scope.Target, ch Change) bool {
	if !ch.AfterExists {
		return !t.Exists
	}
	if !t.Exists {
		return false
	}
	f, _, fi, err := s.openFile(t)
	if err != nil {
		return false
	}
	f.Close()
	return StampOf(fi) == ch.After
}
