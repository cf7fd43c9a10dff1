package scope

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// errUnsupported says the single-call no-symlink open is not available.
var errUnsupported = errors.New("not supported")

// ErrChanged is returned when a path changed between resolving it and
// opening it (for example a directory swapped for a symlink) in a way that
// would lead somewhere else.
var ErrChanged = errors.New("the path changed while it was being opened; try again")

// testHookResolved, when set by a test, runs after a path has been resolved
// and checked and before it is used: the window a symlink swap would aim at.
var testHookResolved func(resolved string)

func hookResolved(resolved string) {
	if testHookResolved != nil {
		testHookResolved(resolved)
	}
}

// relTo returns path relative to root for use with os.Root.
func relTo(root, path string) string {
	if path == root {
		return "."
	}
	if root == "/" {
		return path[1:]
	}
	return path[len(root)+1:]
}

// openRootFor opens the allowed directory that contains resolved.
func (p *Policy) openRootFor(resolved string) (*os.Root, string, error) {
	base := p.root(resolved)
	if base == "" {
		return nil, "", &DeniedError{Path: resolved, Reason: "outside the allowed directories"}
	}
	r, err := os.OpenRoot(base)
	if err != nil {
		return nil, "", err
	}
	return r, base, nil
}

// verifyOpened checks where an opened descriptor really is. The check runs
// on the descriptor, not on a path, so it judges exactly the object that
// will be read.
func (p *Policy) verifyOpened(f *os.File, want string) (string, error) {
	actual, err := fdPath(f)
	if err != nil {
		// No way to ask the kernel (no /proc): the os.Root confinement
		// still holds; fall back to the resolved path.
		return want, nil
	}
	if err := p.Check(actual); err != nil {
		return "", err
	}
	return actual, nil
}

// Open opens the resolved target for reading (a file or a directory). The
// open goes through an os.Root on the allowed directory, so nothing outside
// it can be reached whatever is swapped in meanwhile, and the descriptor's
// location is checked against the deny rules after opening. It returns the
// descriptor's real location.
func (p *Policy) Open(t Target) (*os.File, string, error) {
	if !t.Exists {
		return nil, "", &fs.PathError{Op: "open", Path: t.Path, Err: fs.ErrNotExist}
	}
	r, base, err := p.openRootFor(t.Resolved)
	if err != nil {
		return nil, "", err
	}
	defer r.Close()
	hookResolved(t.Resolved)
	f, err := r.Open(relTo(base, t.Resolved))
	if err != nil {
		return nil, "", translateRootErr(t, err)
	}
	actual, err := p.verifyOpened(f, t.Resolved)
	if err != nil {
		f.Close()
		return nil, "", err
	}
	return f, actual, nil
}

// translateRootErr turns os.Root's escape errors into ErrChanged and keeps
// not-exist errors recognisable.
func translateRootErr(t Target, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return &fs.PathError{Op: "open", Path: t.Path, Err: fs.ErrNotExist}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && (pe.Err.Error() == "path escapes from parent" || errors.Is(pe.Err, syscall.ELOOP)) {
		return ErrChanged
	}
	return err
}

// OpenRead resolves path (absolute, or relative to cwd), decides on it and
// opens it for reading, as Locate followed by Open. The common case — a
// path without symlinks — takes one system call: the path as written is
// checked, then opened with symlinks refused in every component, so what
// was checked is what is opened. If a symlink is met (or the platform
// cannot refuse them), it falls back to resolving and verifying.
func (p *Policy) OpenRead(cwd, path string) (*os.File, Target, error) {
	t, err := p.clean(cwd, path)
	if err != nil {
		return nil, t, err
	}
	if p.Check(t.Path) == nil {
		f, err := openNoSymlinks(t.Path)
		switch {
		case err == nil:
			t.Resolved, t.Exists = t.Path, true
			return f, t, nil
		case errors.Is(err, fs.ErrNotExist):
			// No symlink came before the missing component (that would
			// have been ELOOP), so the path resolves as written.
			t.Resolved = t.Path
			return nil, t, err
		case errors.Is(err, syscall.ELOOP), errors.Is(err, errUnsupported), errors.Is(err, syscall.EXDEV):
			// A symlink on the way: resolve it properly below.
		default:
			return nil, t, err
		}
	}
	t, err = p.Locate(cwd, path)
	if err != nil {
		return nil, t, err
	}
	f, real, err := p.Open(t)
	if err != nil {
		return nil, t, err
	}
	t.Resolved = real
	return f, t, nil
}

// WriteOptions controls WriteAtomic.
type WriteOptions struct {
	// NewFileMode is the permission of a file that does not exist yet.
	NewFileMode fs.FileMode
	// MkdirParents creates missing parent directories (0755).
	MkdirParents bool
	// Written, if set, receives the new file's info, taken from the file
	// itself before it replaces the target (so a change made by someone
	// else right after the rename is not mistaken for this write).
	Written *fs.FileInfo
}

// WriteAtomic replaces the target's content with data: a temporary file is
// written in the same directory, synced, given the original's permissions
// (or NewFileMode) and renamed over the target, so a reader sees the old
// content or the new, never a mix, and a failure leaves the original intact.
// All of it happens relative to a handle on the parent directory whose real
// location has been checked, so no symlink swap can redirect the write.
func (p *Policy) WriteAtomic(t Target, data []byte, opts WriteOptions) (err error) {
	par, err := p.openParent(t, opts.MkdirParents)
	if err != nil {
		return err
	}
	defer par.close()
	d, dh, name := par.dir, par.handle, par.name

	mode := opts.NewFileMode
	uid, gid := -1, -1
	if fi, err := d.Lstat(name); err == nil {
		switch {
		case fi.IsDir():
			return &fs.PathError{Op: "write", Path: t.Path, Err: syscall.EISDIR}
		case fi.Mode()&fs.ModeSymlink != 0:
			// It was resolved to a non-symlink a moment ago.
			return ErrChanged
		case !fi.Mode().IsRegular():
			return &fs.PathError{Op: "write", Path: t.Path, Err: errors.New("not a regular file")}
		}
		mode = fi.Mode().Perm()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			uid, gid = int(st.Uid), int(st.Gid)
			// The rename would replace a file we may not write; refuse
			// as writing it in place would.
			if id := currentIdentity(); !mayWrite(mode, int(st.Uid), int(st.Gid), id) {
				return &fs.PathError{Op: "write", Path: t.Path, Err: &ReadOnlyError{Mode: mode, UID: uid, GID: gid, ProcUID: id.uid, ProcGID: id.gid}}
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}

	tmp := tempName(name)
	f, err := d.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			_ = d.Remove(tmp)
		}
	}()
	write := f.Write
	if testHookWrite != nil {
		write = func(b []byte) (int, error) { return testHookWrite(f, b) }
	}
	if _, err = write(data); err != nil {
		return err
	}
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if uid >= 0 && (uid != os.Getuid() || gid != os.Getgid()) {
		_ = f.Chown(uid, gid) // keep the owner when we may; harmless when we may not
	} else if uid < 0 && os.Geteuid() == 0 {
		// A new file made by root in someone's checkout belongs to the
		// directory's owner, as if they had made it.
		if dfi, err := dh.Stat(); err == nil {
			if st, ok := dfi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 {
				_ = f.Chown(int(st.Uid), int(st.Gid))
			}
		}
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if opts.Written != nil {
		if *opts.Written, err = f.Stat(); err != nil {
			return err
		}
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = d.Rename(tmp, name); err != nil {
		return err
	}
	_ = dh.Sync() // make the rename durable; a failure here loses nothing
	return nil
}

// parent is an open handle on a target's parent directory whose real
// location has been checked, with the target's name in it checked too.
type parent struct {
	root   *os.Root // the allowed directory holding it
	dir    *os.Root // the parent directory
	handle *os.File // the parent directory itself (to check and sync)
	name   string
}

// openParent opens the target's parent directory below its allowed
// directory (creating it first with mkdirs) and checks where the handle
// really is, so what happens in it cannot be redirected by a symlink swap.
func (p *Policy) openParent(t Target, mkdirs bool) (*parent, error) {
	dir, name := filepath.Dir(t.Resolved), filepath.Base(t.Resolved)
	r, base, err := p.openRootFor(dir)
	if err != nil {
		return nil, err
	}
	hookResolved(t.Resolved)
	par := &parent{root: r, name: name}
	relDir := relTo(base, dir)
	if mkdirs && relDir != "." {
		if err := r.MkdirAll(relDir, 0o755); err != nil {
			par.close()
			return nil, translateRootErr(t, err)
		}
	}
	if par.dir, err = r.OpenRoot(relDir); err != nil {
		par.close()
		return nil, translateRootErr(t, err)
	}
	if par.handle, err = par.dir.Open("."); err != nil {
		par.close()
		return nil, err
	}
	realDir, err := p.verifyOpened(par.handle, dir)
	if err == nil {
		err = p.Check(filepath.Join(realDir, name))
	}
	if err != nil {
		par.close()
		return nil, err
	}
	return par, nil
}

func (par *parent) close() {
	if par.handle != nil {
		par.handle.Close()
	}
	if par.dir != nil {
		par.dir.Close()
	}
	par.root.Close()
}

// Remove deletes the target, a file or a symlink (never a directory),
// relative to a handle on its parent directory whose real location has
// been checked, so no symlink swap can redirect the removal.
func (p *Policy) Remove(t Target) error {
	par, err := p.openParent(t, false)
	if err != nil {
		return err
	}
	defer par.close()
	d, dh, name := par.dir, par.handle, par.name
	fi, err := d.Lstat(name)
	if err != nil {
		return translateRootErr(t, err)
	}
	if fi.IsDir() {
		return &fs.PathError{Op: "remove", Path: t.Path, Err: syscall.EISDIR}
	}
	if err := d.Remove(name); err != nil {
		return err
	}
	_ = dh.Sync() // make the removal durable; a failure here loses nothing
	return nil
}

// ErrReadOnly is returned for an existing file whose permissions do not let
// this process write it (as a *ReadOnlyError, which Is it).
var ErrReadOnly = errors.New("the file is read-only (its permissions do not allow writing)")

// ReadOnlyError says why a file may not be written: its mode and owner, and
// who boris runs as.
type ReadOnlyError struct {
	Mode             fs.FileMode
	UID, GID         int
	ProcUID, ProcGID int
}

func (e *ReadOnlyError) Error() string { return ErrReadOnly.Error() }

// Is makes errors.Is(err, ErrReadOnly) hold.
func (e *ReadOnlyError) Is(target error) bool { return target == ErrReadOnly }

// OtherOwner reports whether the file belongs to another uid than boris's.
func (e *ReadOnlyError) OtherOwner() bool { return e.UID != e.ProcUID }

// identity is who the permission bits are checked for.
type identity struct {
	uid, gid int
	groups   []int
}

func currentIdentity() identity {
	groups, _ := os.Getgroups()
	return identity{uid: os.Geteuid(), gid: os.Getegid(), groups: groups}
}

// mayWrite reports whether id may write a file with the given mode and
// owner, as the kernel decides (root may write anything).
func mayWrite(mode fs.FileMode, uid, gid int, id identity) bool {
	switch {
	case id.uid == 0:
		return true
	case uid == id.uid:
		return mode&0o200 != 0
	case gid == id.gid || slices.Contains(id.groups, gid):
		return mode&0o020 != 0
	}
	return mode&0o002 != 0
}

// testHookWrite, when set by a test, replaces the temp file's write (to
// inject a full disk where a real one cannot be made).
var testHookWrite func(f *os.File, data []byte) (int, error)

func tempName(name string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	n := name
	if len(n) > 100 {
		n = n[:100]
	}
	return fmt.Sprintf(".%s.boris-%s.tmp", n, hex.EncodeToString(b[:]))
}

// VerifyFile checks where an already opened descriptor really is: nil and its
// real location when the policy allows it. Walkers that open by path use it
// after following a symlink.
func (p *Policy) VerifyFile(f *os.File) (string, error) {
	return p.verifyOpened(f, f.Name())
}
