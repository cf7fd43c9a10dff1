// Package walk lists a directory tree in parallel for grep, find,
// checkpoints and the language servers' file watch, the
// way ripgrep's ignore crate does: a pool of workers (one per CPU) takes
// directories and files from a shared stack, and every decision about what
// to skip is made while listing, so skipped subtrees are never opened.
//
// Skipped: ".git" and "node_modules" at any depth, paths excluded by
// .gitignore files (see package ignore; those of the root's ancestors up to
// the repository root count too, with their patterns relative to their own
// directory; a directory holding ".git" starts a new repository, where the
// rules from above no longer apply), paths the scope policy denies, and
// special files (devices, FIFOs, sockets). Hidden files are included.
//
// Everything is opened relative to the descriptor of its parent directory
// with O_NOFOLLOW, so replacing a directory with a symlink while the walk
// runs cannot lead it anywhere the listing did not see. Symlinks are only
// followed on purpose: their target is resolved and checked against the
// policy first, and the opened descriptor's real location is checked again.
// Followed symlinked directories are checked for cycles against the
// device and inode of every directory above them.
package walk

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/boris-mcp/boris/internal/ignore"
	"github.com/boris-mcp/boris/internal/scope"
)

// Kind tells files from directories.
type Kind uint8

const (
	KindFile Kind = iota
	KindDir
)

// Options configure a walk.
type Options struct {
	// Root is the absolute, symlink-free directory to walk.
	Root string
	// Policy decides which paths may be seen; nil allows everything.
	Policy *scope.Policy
	// FollowSymlinks descends into symlinked directories (grep). Without
	// it (find) they are reported as directories but not descended.
	FollowSymlinks bool
	// Dirs reports directories to the visitor as well as files.
	Dirs bool
	// Workers is the number of goroutines (default GOMAXPROCS).
	Workers int
	// InlineFiles visits files from the goroutine listing their directory
	// instead of queueing them: right when the visitor is cheap (find),
	// wrong when it reads the file (grep), where files must spread over
	// the workers.
	InlineFiles bool
}

// Entry is a file or directory found by the walk. It is only valid during
// the visitor call that receives it.
type Entry struct {
	// Name is the base name.
	Name string
	Kind Kind
	// Symlink is set when the entry is a symbolic link to a file (or, when
	// not followed, to a directory).
	Symlink bool

	parent *dir
	link   *link
	w      *walker
}

// Rel returns the entry's path relative to the root, with slashes. Paths
// under a followed symlink go through the link's name.
func (e *Entry) Rel() string { return join(e.parent.rel, e.Name) }

// Open opens a file entry for reading. The open happens relative to the
// parent directory's descriptor, without following a symlink unless the
// entry is one whose target was checked; then the descriptor is verified.
func (e *Entry) Open() (File, error) {
	const flags = unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY
	if e.link == nil {
		fd, err := openat(e.parent.fd, e.Name, flags|unix.O_NOFOLLOW)
		return File{fd: fd, stop: &e.w.stop}, err
	}
	if !e.w.restricted {
		fd, err := openat(e.parent.fd, e.Name, flags)
		if err != nil {
			return File{}, err
		}
		if !isRegular(fd) {
			unix.Close(fd)
			return File{}, &fs.PathError{Op: "open", Path: e.Name, Err: unix.EINVAL}
		}
		return File{fd: fd, stop: &e.w.stop}, nil
	}
	fd, err := openat(unix.AT_FDCWD, e.link.target, flags|unix.O_NOFOLLOW)
	if err != nil {
		return File{}, err
	}
	if !isRegular(fd) {
		unix.Close(fd)
		return File{}, &fs.PathError{Op: "open", Path: e.link.target, Err: unix.EINVAL}
	}
	f := os.NewFile(uintptr(fd), e.link.target)
	if _, err := e.w.opts.Policy.VerifyFile(f); err != nil {
		f.Close()
		return File{}, err
	}
	return File{os: f, stop: &e.w.stop}, nil
}

// ModTime returns the modification time (Unix nanoseconds) of the entry,
// or of a symlink's target.
func (e *Entry) ModTime() (int64, error) {
	if e.link != nil {
		return e.link.st.Mtim.Nano(), nil
	}
	var st unix.Stat_t
	if err := unix.Fstatat(e.parent.fd, e.Name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, err
	}
	return st.Mtim.Nano(), nil
}

// Canceled reports whether the walk's context is done; long visitors may
// poll it.
func (e *Entry) Canceled() bool { return e.w.stop.Load() }

// link is what a symlink leads to.
type link struct {
	target string // resolved target; set when the policy is restricted
	st     unix.Stat_t
}

// dir is a directory being walked. Its descriptor stays open while jobs
// for its entries are pending.
type dir struct {
	parent *dir
	fd     int
	refs   atomic.Int32
	rel    string // relative to the root, through followed links
	real   string // real absolute path; kept when the policy is restricted
	ign    *ignore.Stack
	// dev and ino identify the directory for cycle detection. For a
	// directory reached without a symlink they come from the parent's
	// listing (and the parent's device), which saves a stat per directory;
	// at a mount point that pair is not the mounted directory's, so a cycle
	// through it is caught one round later, when the followed link's own
	// (stat) identity is met again.
	dev, ino uint64
}

func (d *dir) release() {
	if d.refs.Add(-1) == 0 {
		unix.Close(d.fd)
	}
}

type walker struct {
	opts       Options
	restricted bool // the policy can deny something
	denyRules  bool
	q          queue
	stop       atomic.Bool
}

// Walk walks opts.Root and calls a visitor for every file (and, with
// Dirs, directory) that is not skipped, concurrently from several
// goroutines. newVisitor is called once per goroutine, so each visitor can
// keep its own buffers. Walk returns when every visitor call has returned;
// it fails only when the root cannot be opened. Unreadable entries below
// the root are skipped silently. When ctx is done the walk stops promptly
// and returns ctx's error.
func Walk(ctx context.Context, opts Options, newVisitor func() func(*Entry)) error {
	w := &walker{opts: opts}
	if opts.Policy != nil && !opts.Policy.Unrestricted() {
		w.restricted = true
		w.denyRules = opts.Policy.HasDenyRules()
	}
	if w.opts.Workers <= 0 {
		w.opts.Workers = runtime.GOMAXPROCS(0)
	}
	fd, err := openat(unix.AT_FDCWD, opts.Root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		return &fs.PathError{Op: "open", Path: opts.Root, Err: err}
	}
	if w.restricted {
		if err := w.verify(fd, opts.Root); err != nil {
			unix.Close(fd)
			return err
		}
	}
	root := &dir{fd: fd, real: opts.Root, ign: w.ancestorIgnores()}
	if opts.FollowSymlinks {
		root.dev, root.ino = devIno(fd)
	}
	root.refs.Store(1)
	w.q.init()
	w.q.push([]job{{kind: jobDir, opened: root}})

	stopWatch := context.AfterFunc(ctx, func() {
		w.stop.Store(true)
	})
	defer stopWatch()
	if ctx.Err() != nil {
		w.stop.Store(true) // AfterFunc runs it asynchronously
	}

	var wg sync.WaitGroup
	for range w.opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws := &workerState{visit: newVisitor(), dirBuf: make([]byte, 32<<10)}
			for {
				j, ok := w.q.pop()
				if !ok {
					return
				}
				w.run(j, ws)
				w.q.finish()
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

type jobKind uint8

const (
	jobFile jobKind = iota
	jobDir
)

type job struct {
	kind   jobKind
	parent *dir
	name   string
	ino    uint64 // from the listing; 0 when unknown
	link   *link
	opened *dir // the root, opened by Walk
}

type workerState struct {
	visit   func(*Entry)
	entry   Entry
	dirBuf  []byte
	names   []byte // arena for one directory's names
	offsets []dirent
	pathBuf []byte
}

type dirent struct {
	start, end int
	typ        uint8
	ino        uint64
}

func (w *walker) run(j job, ws *workerState) {
	switch j.kind {
	case jobFile:
		if !w.stop.Load() {
			ws.entry = Entry{Name: j.name, Kind: KindFile, Symlink: j.link != nil, parent: j.parent, link: j.link, w: w}
			ws.visit(&ws.entry)
		}
		j.parent.release()
	case jobDir:
		d := j.opened
		if d == nil {
			if !w.stop.Load() {
				d = w.openDir(j.parent, j.name, j.ino, j.link)
			}
			j.parent.release()
		}
		if d == nil {
			return
		}
		if !w.stop.Load() {
			w.list(d, ws)
		}
		d.release()
	}
}

// openDir opens a subdirectory (or a symlink's checked target).
func (w *walker) openDir(parent *dir, name string, ino uint64, lk *link) *dir {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	var fd int
	var err error
	real := ""
	switch {
	case lk == nil:
		fd, err = openat(parent.fd, name, flags|unix.O_NOFOLLOW)
		if w.restricted {
			real = joinAbs(parent.real, name)
		}
	case !w.restricted:
		fd, err = openat(parent.fd, name, flags)
	default:
		fd, err = openat(unix.AT_FDCWD, lk.target, flags|unix.O_NOFOLLOW)
		if err == nil {
			if verr := w.verify(fd, lk.target); verr != nil {
				unix.Close(fd)
				return nil
			}
		}
		real = lk.target
	}
	if err != nil {
		return nil
	}
	d := &dir{parent: parent, fd: fd, rel: join(parent.rel, name), real: real, ign: parent.ign}
	if w.opts.FollowSymlinks {
		switch {
		case lk != nil:
			d.dev, d.ino = devIno(fd)
			for a := parent; a != nil; a = a.parent {
				if a.dev == d.dev && a.ino == d.ino {
					unix.Close(fd)
					return nil // a cycle
				}
			}
		case ino != 0:
			d.dev, d.ino = parent.dev, ino
		default:
			d.dev, d.ino = devIno(fd)
		}
	}
	d.refs.Store(1)
	return d
}

// verify checks where an opened descriptor really is.
func (w *walker) verify(fd int, path string) error {
	dup, err := unix.Dup(fd)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(dup), path)
	defer f.Close()
	_, err = w.opts.Policy.VerifyFile(f)
	return err
}

// list reads a directory and queues what is not skipped.
func (w *walker) list(d *dir, ws *workerState) {
	ws.names, ws.offsets = ws.names[:0], ws.offsets[:0]
	hasGit, hasIgnore := false, false
	err := readDir(d.fd, ws.dirBuf, func(name []byte, typ uint8, ino uint64) {
		switch string(name) {
		case GitDir:
			hasGit = true
			return
		case NodeModules:
			return
		case IgnoreFile:
			hasIgnore = true
		}
		start := len(ws.names)
		ws.names = append(ws.names, name...)
		ws.offsets = append(ws.offsets, dirent{start, len(ws.names), typ, ino})
	})
	if err != nil && len(ws.offsets) == 0 {
		return
	}
	if hasGit {
		d.ign = nil // a repository root: the rules from above stop here
	}
	if hasIgnore {
		if f := ReadIgnoreAt(d.fd); f != nil {
			d.ign = d.ign.Push(f, d.rel)
		}
	}
	names := string(ws.names) // one allocation for all names
	jobs := make([]job, 0, len(ws.offsets))
	for _, de := range ws.offsets {
		if w.stop.Load() {
			break
		}
		name := names[de.start:de.end]
		typ := de.typ
		if typ == unix.DT_UNKNOWN {
			typ = w.lstatType(d, name)
		}
		var lk *link
		isDir := false
		switch typ {
		case unix.DT_DIR:
			isDir = true
		case unix.DT_REG:
		case unix.DT_LNK:
			lk = w.resolveLink(d, name)
			if lk == nil {
				continue // broken, denied or a loop
			}
			switch lk.st.Mode & unix.S_IFMT {
			case unix.S_IFDIR:
				isDir = true
			case unix.S_IFREG:
			default:
				continue
			}
		default:
			continue
		}
		if d.ign != nil && w.ignored(d, name, isDir, ws) {
			continue
		}
		if w.denyRules && w.denied(d, name, ws) {
			continue
		}
		switch {
		case !isDir && w.opts.InlineFiles:
			ws.entry = Entry{Name: name, Kind: KindFile, Symlink: lk != nil, parent: d, link: lk, w: w}
			ws.visit(&ws.entry)
		case !isDir:
			jobs = append(jobs, job{kind: jobFile, parent: d, name: name, link: lk})
		case lk != nil && !w.opts.FollowSymlinks:
			if w.opts.Dirs {
				ws.entry = Entry{Name: name, Kind: KindDir, Symlink: true, parent: d, link: lk, w: w}
				ws.visit(&ws.entry)
			}
		default:
			if w.opts.Dirs {
				ws.entry = Entry{Name: name, Kind: KindDir, Symlink: lk != nil, parent: d, link: lk, w: w}
				ws.visit(&ws.entry)
			}
			jobs = append(jobs, job{kind: jobDir, parent: d, name: name, ino: de.ino, link: lk})
		}
	}
	if len(jobs) > 0 {
		d.refs.Add(int32(len(jobs)))
		w.q.push(jobs)
	}
}

func (w *walker) ignored(d *dir, name string, isDir bool, ws *workerState) bool {
	rel := name
	if d.rel != "" && d.ign.NeedsPath() {
		ws.pathBuf = append(append(append(ws.pathBuf[:0], d.rel...), '/'), name...)
		rel = unsafeString(ws.pathBuf)
	}
	return d.ign.Ignored(rel, name, isDir)
}

func (w *walker) denied(d *dir, name string, ws *workerState) bool {
	ws.pathBuf = appendAbs(ws.pathBuf[:0], d.real, name)
	return w.opts.Policy.DeniedLeaf(unsafeString(ws.pathBuf))
}

// resolveLink finds what a symlink leads to, or nil when it is broken,
// loops, or leads somewhere the policy denies.
func (w *walker) resolveLink(d *dir, name string) *link {
	lk := &link{}
	if !w.restricted {
		if unix.Fstatat(d.fd, name, &lk.st, 0) != nil {
			return nil
		}
		return lk
	}
	resolved, exists, err := scope.Resolve(joinAbs(d.real, name))
	if err != nil || !exists || w.opts.Policy.Check(resolved) != nil {
		return nil
	}
	if unix.Stat(resolved, &lk.st) != nil {
		return nil
	}
	lk.target = resolved
	return lk
}

func (w *walker) lstatType(d *dir, name string) uint8 {
	var st unix.Stat_t
	if unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return unix.DT_UNKNOWN
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return unix.DT_DIR
	case unix.S_IFREG:
		return unix.DT_REG
	case unix.S_IFLNK:
		return unix.DT_LNK
	}
	return unix.DT_UNKNOWN
}

// ancestorIgnores loads the .gitignore files above the root (see
// AncestorIgnores), those the policy denies left out.
func (w *walker) ancestorIgnores() *ignore.Stack {
	var p *scope.Policy
	if w.restricted {
		p = w.opts.Policy
	}
	return AncestorIgnores(w.opts.Root, p)
}

func exists(p string) bool {
	var st unix.Stat_t
	return unix.Lstat(p, &st) == nil
}

func readIgnorePath(p string) *ignore.File {
	fd, err := openat(unix.AT_FDCWD, p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK)
	if err != nil {
		return nil
	}
	return readIgnoreFD(fd)
}

func readIgnoreFD(fd int) *ignore.File {
	f := File{fd: fd}
	defer f.Close()
	if !isRegular(fd) {
		return nil
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(&f, maxIgnoreFile+1)); err != nil || buf.Len() > maxIgnoreFile {
		return nil
	}
	return ignore.Parse(buf.Bytes())
}

func openat(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func devIno(fd int) (dev, ino uint64) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return 0, 0
	}
	return uint64(st.Dev), uint64(st.Ino)
}

func join(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}

func joinAbs(dir, name string) string {
	return string(appendAbs(nil, dir, name))
}

func appendAbs(b []byte, dir, name string) []byte {
	b = append(b, dir...)
	if !strings.HasSuffix(dir, "/") {
		b = append(b, '/')
	}
	return append(b, name...)
}

func isDots(name []byte) bool {
	return len(name) > 0 && len(name) <= 2 && name[0] == '.' && (len(name) == 1 || name[1] == '.')
}
