// Package files implements the file tools — view, str_replace, create and
// insert — on top of scope's race-free access: text handling, line
// numbering, CRLF-preserving edits and atomic writes. It knows nothing about
// MCP; results are plain values and errors carry codes.
package files

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/scope"
)

// Limits of what view shows.
const (
	MaxLineChars   = 2000
	MaxViewLines   = 2000
	MaxListEntries = 1000
	sniffLen       = 8 << 10
)

// Viewed is a session's record of the files it has viewed (by resolved
// path) and of what each was like then.
type Viewed interface {
	MarkViewed(path string, st Stamp)
	ViewedStamp(path string) (Stamp, bool)
}

// Stamp identifies a version of a file: the same stamp later means nobody
// has replaced or written it since (an atomic replace makes a new inode, a
// write changes the size or the modification time, kept in nanoseconds).
type Stamp struct {
	Dev, Ino uint64
	Size     int64
	ModNanos int64
}

// StampOf returns the stamp of a file's info.
func StampOf(fi os.FileInfo) Stamp {
	st := Stamp{Size: fi.Size(), ModNanos: fi.ModTime().UnixNano()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.Dev, st.Ino = uint64(sys.Dev), sys.Ino
	}
	return st
}

// Ctx is the session side of a call: where relative paths start, which
// files have been viewed, and (when undo is offered) the session's edit
// history.
type Ctx struct {
	Cwd    string
	Viewed Viewed
	// History, if set, records every edit for Undo.
	History History
}

// FactMissing is the fact of a PATH_NOT_FOUND error: the path does not
// exist; Suggest names files it may have meant ("" when none).
type FactMissing struct{ Path, Suggest string }

// FactIsDir is the fact of an INVALID_INPUT error for a file operation on a
// directory.
type FactIsDir struct{ Path string }

// Options configure a Service.
type Options struct {
	Policy                *scope.Policy
	MaxFileSize           int64
	RequireViewBeforeEdit bool
}

// Service performs file operations for all sessions. Edits of one file are
// serialised across sessions, so two concurrent edits never lose one.
type Service struct {
	opts  Options
	locks keyedMutex
}

// New returns a Service.
func New(opts Options) *Service {
	return &Service{opts: opts, locks: keyedMutex{m: map[string]*lockEntry{}}}
}

// locate resolves and checks a path, turning failures into coded errors.
func (s *Service) locate(c Ctx, path string) (scope.Target, error) {
	if strings.TrimSpace(path) == "" {
		return scope.Target{}, codes.Errorf(codes.InvalidInput, "path is required")
	}
	t, err := s.opts.Policy.Locate(c.Cwd, path)
	if err != nil {
		return t, s.pathError(t, path, err)
	}
	return t, nil
}

// locateExisting is locate for a file that must exist; fix says how to
// create it instead.
func (s *Service) locateExisting(c Ctx, path, fix string) (scope.Target, error) {
	t, err := s.locate(c, path)
	if err != nil {
		return t, err
	}
	if !t.Exists {
		hint := suggest(t.Path)
		return t, codes.Errorf(codes.PathNotFound, "%s does not exist%s; %s", t.Path, hint, fix).WithFact(FactMissing{Path: t.Path, Suggest: hint})
	}
	// Said before anything else (a view it lacks, say): only view works on
	// a directory.
	if fi, err := os.Stat(t.Resolved); err == nil && fi.IsDir() {
		return t, codes.Errorf(codes.InvalidInput, "%s is a directory, not a file", t.Path).WithFact(FactIsDir{Path: t.Path})
	}
	return t, nil
}

// pathError maps an access error to a code and a message that helps.
func (s *Service) pathError(t scope.Target, given string, err error) error {
	shown := t.Path
	if shown == "" {
		shown = given
	}
	var denied *scope.DeniedError
	switch {
	case errors.As(err, &denied):
		return codes.Errorf(codes.AccessDenied, "access to %s is denied: %s", denied.Path, denied.Reason)
	case errors.Is(err, fs.ErrNotExist):
		hint := suggest(shown)
		return codes.Errorf(codes.PathNotFound, "%s does not exist%s", shown, hint).WithFact(FactMissing{Path: shown, Suggest: hint})
	case errors.Is(err, scope.ErrSymlinkLoop):
		return codes.Errorf(codes.InvalidInput, "%s: too many levels of symbolic links", shown)
	case errors.Is(err, scope.ErrChanged):
		return codes.Errorf(codes.IOError, "%s: %v", shown, err)
	case errors.Is(err, syscall.ENOTDIR):
		return codes.Errorf(codes.PathNotFound, "%s does not exist: a parent of it is a file, not a directory", shown)
	case errors.Is(err, syscall.ENAMETOOLONG):
		return codes.Errorf(codes.InvalidInput, "the path is too long (%d bytes, or a component over 255 bytes)", len(shown))
	case errors.Is(err, fs.ErrPermission):
		return codes.Errorf(codes.IOError, "%s: permission denied by the file system", shown)
	case strings.Contains(err.Error(), "NUL byte"):
		return codes.Errorf(codes.InvalidInput, "path contains a NUL byte")
	}
	return codes.Errorf(codes.IOError, "%s: %v", shown, unwrapPathError(err))
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// suggest names files next to a missing path that it may have meant.
func suggest(path string) string {
	dir, base := filepath.Dir(path), filepath.Base(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
			if _, err := os.Stat(d); err == nil {
				return fmt.Sprintf(" (the closest existing directory is %s)", d)
			}
		}
		return ""
	}
	stem := strings.ToLower(strings.TrimSuffix(base, filepath.Ext(base)))
	var close []string
	for _, e := range entries {
		n := e.Name()
		ln := strings.ToLower(n)
		if ln == strings.ToLower(base) || (stem != "" && strings.TrimSuffix(ln, filepath.Ext(ln)) == stem) {
			close = append(close, filepath.Join(dir, n))
		}
	}
	if len(close) == 0 {
		return ""
	}
	sort.Strings(close)
	if len(close) > 5 {
		close = close[:5]
	}
	return "; did you mean " + strings.Join(close, " or ") + "?"
}

// openFile opens an existing target for reading and returns it with its real
// location and info.
func (s *Service) openFile(t scope.Target) (*os.File, string, os.FileInfo, error) {
	f, real, err := s.opts.Policy.Open(t)
	if err != nil {
		return nil, "", nil, s.pathError(t, t.Path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, "", nil, codes.Errorf(codes.IOError, "stat %s: %v", t.Path, unwrapPathError(err))
	}
	return f, real, fi, nil
}

func (s *Service) tooLarge(path string, size int64) error {
	return codes.Errorf(codes.FileTooLarge, "%s is %s, over the %s limit (--max-file-size); read part of it with bash (sed -n '100,200p', head, tail) or search it with grep",
		path, HumanSize(size), HumanSize(s.opts.MaxFileSize))
}

// readForEdit reads a whole text file that is about to be edited, after
// checking that it is the version this session viewed (see checkFresh). It
// returns the content, the file's real location and its permissions.
func (s *Service) readForEdit(c Ctx, t scope.Target) ([]byte, string, fs.FileMode, error) {
	f, real, fi, err := s.openFile(t)
	if err != nil {
		return nil, "", 0, err
	}
	defer f.Close()
	if fi.IsDir() {
		return nil, "", 0, codes.Errorf(codes.InvalidInput, "%s is a directory, not a file", t.Path).WithFact(FactIsDir{Path: t.Path})
	}
	if !fi.Mode().IsRegular() {
		return nil, "", 0, codes.Errorf(codes.InvalidInput, "%s is not a regular file", t.Path)
	}
	if err := s.checkFresh(c, t, fi); err != nil {
		return nil, "", 0, err
	}
	if fi.Size() > s.opts.MaxFileSize {
		return nil, "", 0, s.tooLarge(t.Path, fi.Size())
	}
	data, err := io.ReadAll(io.LimitReader(f, s.opts.MaxFileSize+1))
	if err != nil {
		return nil, "", 0, codes.Errorf(codes.IOError, "read %s: %v", t.Path, unwrapPathError(err))
	}
	if int64(len(data)) > s.opts.MaxFileSize {
		return nil, "", 0, s.tooLarge(t.Path, int64(len(data)))
	}
	if bytes.IndexByte(data[:min(len(data), sniffLen)], 0) >= 0 {
		return nil, "", 0, codes.Errorf(codes.InvalidInput, "%s is a binary file; the edit tools change text files only", t.Path)
	}
	return data, real, fi.Mode().Perm(), nil
}

// prior is what a file was before an edit, for the undo history.
type prior struct {
	known   bool // the state before is known (else the history forgets the file)
	existed bool
	data    []byte
	mode    fs.FileMode
}

// priorOf is the prior state of a file whose content was read for the edit.
func priorOf(data []byte, mode fs.FileMode) prior {
	return prior{known: true, existed: true, data: data, mode: mode}
}

// absent is the prior state of a file the edit creates.
var absent = prior{known: true}

// write replaces a file atomically, maps failures, and records the new
// version as this session's: its own edit does not make the file stale.
func (s *Service) write(c Ctx, t scope.Target, data []byte, mkdirs bool, before prior) error {
	var written fs.FileInfo
	err := s.opts.Policy.WriteAtomic(t, data, scope.WriteOptions{NewFileMode: 0o644, MkdirParents: mkdirs, Written: &written})
	if err != nil {
		return s.writeError(t, err)
	}
	if written != nil {
		st := StampOf(written)
		if c.Viewed != nil {
			c.Viewed.MarkViewed(t.Resolved, st)
		}
		s.record(c, t.Resolved, before, st, true)
	}
	return nil
}

// record adds an edit to the session's undo history.
func (s *Service) record(c Ctx, resolved string, before prior, after Stamp, afterExists bool) {
	if c.History == nil {
		return
	}
	if !before.known {
		c.History.Forget(resolved)
		return
	}
	c.History.Record(resolved, Change{Existed: before.existed, Before: before.data, Mode: before.mode, After: after, AfterExists: afterExists})
}

// readPrior reads what an existing file holds before it is overwritten,
// for the undo history (only when there is one).
func (s *Service) readPrior(c Ctx, t scope.Target) prior {
	if c.History == nil {
		return prior{}
	}
	f, _, fi, err := s.openFile(t)
	if err != nil {
		return prior{}
	}
	defer f.Close()
	if !fi.Mode().IsRegular() || fi.Size() > s.opts.MaxFileSize {
		return prior{}
	}
	data, err := io.ReadAll(io.LimitReader(f, s.opts.MaxFileSize+1))
	if err != nil || int64(len(data)) > s.opts.MaxFileSize {
		return prior{}
	}
	return priorOf(data, fi.Mode().Perm())
}

// writeError maps a failed write to a code and a message.
func (s *Service) writeError(t scope.Target, err error) error {
	var denied *scope.DeniedError
	var ro *scope.ReadOnlyError
	switch {
	case errors.As(err, &denied):
		return codes.Errorf(codes.AccessDenied, "access to %s is denied: %s", denied.Path, denied.Reason)
	case errors.Is(err, syscall.EISDIR):
		return codes.Errorf(codes.InvalidInput, "%s is a directory, not a file", t.Path).WithFact(FactIsDir{Path: t.Path})
	case errors.As(err, &ro) && ro.OtherOwner():
		return codes.Errorf(codes.IOError, "%s belongs to uid %d (gid %d, mode %04o) and boris runs as uid %d (gid %d), which may not write it. The file is unchanged. chmod will not help: only its owner may change its mode. Run boris as the owner of the files (docker run --user %d:%d; Kubernetes: runAsUser %d, runAsGroup %d)", t.Path, ro.UID, ro.GID, ro.Mode.Perm(), ro.ProcUID, ro.ProcGID, ro.UID, ro.GID, ro.UID, ro.GID)
	case errors.Is(err, scope.ErrReadOnly):
		return codes.Errorf(codes.IOError, "%s is read-only; make it writable (chmod u+w) if it should be edited. The file is unchanged", t.Path)
	case errors.Is(err, fs.ErrPermission):
		if msg := foreignDir(t.Path); msg != "" {
			return codes.Errorf(codes.IOError, "write %s: permission denied: %s. The file is unchanged", t.Path, msg)
		}
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return codes.Errorf(codes.IOError, "write %s: no space left on the device; the file is unchanged", t.Path)
	case errors.Is(err, syscall.ENOTDIR):
		return codes.Errorf(codes.InvalidInput, "cannot create %s: a parent of it is a file, not a directory", t.Path)
	}
	return codes.Errorf(codes.IOError, "write %s: %v; the file is unchanged", t.Path, unwrapPathError(err))
}

// foreignDir explains a permission denied in writing path when its nearest
// existing directory belongs to another uid ("" otherwise).
func foreignDir(path string) string {
	dir := filepath.Dir(path)
	for {
		fi, err := os.Stat(dir)
		if err == nil {
			st, ok := fi.Sys().(*syscall.Stat_t)
			if !ok || int(st.Uid) == os.Geteuid() {
				return ""
			}
			return fmt.Sprintf("the directory %s belongs to uid %d (gid %d, mode %04o) and boris runs as uid %d (gid %d), which may not create files in it; run boris as the owner of the files (docker run --user %d:%d; Kubernetes: runAsUser %d, runAsGroup %d)", dir, st.Uid, st.Gid, fi.Mode().Perm(), os.Geteuid(), os.Getegid(), st.Uid, st.Gid, st.Uid, st.Gid)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// checkViewed enforces view-before-edit: the file must have been viewed in
// this session. It runs before anything is read or written.
func (s *Service) checkViewed(c Ctx, t scope.Target, what string) error {
	if !s.opts.RequireViewBeforeEdit || c.Viewed == nil {
		return nil
	}
	if _, ok := c.Viewed.ViewedStamp(t.Resolved); ok {
		return nil
	}
	return codes.Errorf(codes.FileNotViewed, "%s has not been viewed in this session; view it first so the %s is based on its current content", t.Path, what)
}

// checkFresh refuses to edit a file that changed on disk since this session
// viewed it (or last edited it): the edit would be based on stale content.
// fi is the info of the file about to be edited, taken under the edit lock.
func (s *Service) checkFresh(c Ctx, t scope.Target, fi os.FileInfo) error {
	if !s.opts.RequireViewBeforeEdit || c.Viewed == nil {
		return nil
	}
	seen, ok := c.Viewed.ViewedStamp(t.Resolved)
	if !ok {
		return s.checkViewed(c, t, "edit")
	}
	now := StampOf(fi)
	if now == seen {
		return nil
	}
	what := "was replaced"
	switch {
	case now.Dev != seen.Dev || now.Ino != seen.Ino:
	case now.Size != seen.Size:
		what = fmt.Sprintf("was modified (%d bytes then, %d now)", seen.Size, now.Size)
	default:
		what = "was modified (its modification time changed)"
	}
	return codes.Errorf(codes.FileChangedSinceView, "%s %s on disk since this session last viewed or edited it, by a command or another client; view it again so the edit is based on its current content. Nothing was changed", t.Path, what)
}

// HumanSize formats a byte count with 1024-based units.
func HumanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 3; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "KMGT"[exp])
}

// keyedMutex serialises work on one key (a resolved path).
type keyedMutex struct {
	mu sync.Mutex
	m  map[string]*lockEntry
}

type lockEntry struct {
	mu   sync.Mutex
	refs int
}

func (k *keyedMutex) lock(key string) func() {
	k.mu.Lock()
	e := k.m[key]
	if e == nil {
		e = &lockEntry{}
		k.m[key] = e
	}
	e.refs++
	k.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		k.mu.Lock()
		e.refs--
		if e.refs == 0 {
			delete(k.m, key)
		}
		k.mu.Unlock()
	}
}
