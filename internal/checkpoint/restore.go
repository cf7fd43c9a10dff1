package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/boris-mcp/boris/internal/scope"
)

// A restore runs in two phases. The first stages every file and symlink
// to write as a temporary file in a directory that exists now, on the
// file system of its final place; it changes nothing visible, and any
// failure (a full disk, a missing object) removes
// what it staged and leaves the workspace as it was. The second removes,
// creates and renames into place — each file replaced atomically by a
// rename — and, should a step fail, puts back the paths it had touched
// from the checkpoint taken just before. The temporary files are listed in
// the store's journal before they are made, so that a process killed in
// between has them removed when the store is opened again.

// Note says why a path was left as it is.
type Note struct {
	Path   string // absolute
	Reason string
}

// RestoreResult says what a restore did.
type RestoreResult struct {
	Written, Removed, DirsCreated, DirsRemoved, ModesChanged int
	// Skipped are paths the restore left as they are, and why.
	Skipped []Note
	// Changed are the paths the restore changed (absolute), for the
	// caller's bookkeeping.
	Changed []string
}

type relPath struct{ root, rel string }

func (p relPath) abs() string { return joinRel(p.root, p.rel) }

type writeOp struct {
	relPath
	e     Entry
	stage string // relative path of the directory staged in
	tmp   string // name of the staged file there
}

type modeOp struct {
	relPath
	mode uint32
}

// plan is what a restore will do.
type plan struct {
	removeFiles []relPath
	removeDirs  []relPath
	mkdirs      []modeOp
	writes      []writeOp
	chmods      []modeOp
	dirModes    []modeOp
	skipped     []Note
}

type planner struct {
	s      *Store
	f      *pathFilter
	policy *scope.Policy
	p      plan
	// removed are directories of the current tree the plan removes, and
	// created those it makes: staging goes above them.
	removed, created map[relPath]bool
}

func (pl *planner) ops() int {
	p := &pl.p
	return len(p.removeFiles) + len(p.removeDirs) + len(p.mkdirs) + len(p.writes) + len(p.chmods) + len(p.dirModes)
}

func (pl *planner) skip(root, rel, reason string) {
	pl.p.skipped = append(pl.p.skipped, Note{Path: joinRel(root, rel), Reason: reason})
}

// makePlan compares the current tree cur with the target tree to (both
// top trees) and plans the steps that turn one into the other.
func (pl *planner) makePlan(cur, to Hash) (*plan, error) {
	s, f := pl.s, pl.f
	a, err := s.readTree(cur)
	if err != nil {
		return nil, err
	}
	b, err := s.readTree(to)
	if err != nil {
		return nil, err
	}
	d := differ{}
	err = d.merge(a, b, func(ea, eb *Entry) error {
		switch {
		case eb == nil:
			return nil // a root the checkpoint does not know: left alone
		case !f.rootIn(eb.Name):
			return nil
		case ea == nil:
			// The root is missing now: made again.
			if err := os.MkdirAll(eb.Name, os.FileMode(eb.Mode&0o777)|0o700); err != nil {
				return err
			}
			return pl.dir(eb.Name, "", nil, eb.Hash)
		case ea.Hash == eb.Hash:
			return nil
		}
		var ha Hash = ea.Hash
		return pl.dir(eb.Name, "", &ha, eb.Hash)
	})
	if err != nil {
		return nil, err
	}
	return &pl.p, nil
}

// dir plans a directory present in the target (and now when cur is set).
func (pl *planner) dir(root, rel string, cur *Hash, to Hash) error {
	var a, b []Entry
	var err error
	if cur != nil {
		if a, err = pl.s.readTree(*cur); err != nil {
			return err
		}
	}
	if b, err = pl.s.readTree(to); err != nil {
		return err
	}
	d := differ{}
	return d.merge(a, b, func(ea, eb *Entry) error {
		name := ""
		if ea != nil {
			name = ea.Name
		} else {
			name = eb.Name
		}
		p := joinRel(rel, name)
		if !pl.f.leads(root, p) {
			return nil
		}
		if pl.policy != nil && pl.policy.DeniedBy(joinRel(root, p)) != "" {
			if pl.f.covers(root, p) && (ea == nil || eb == nil || !ea.same(eb)) {
				pl.skip(root, p, "denied by --deny-dir")
			}
			return nil
		}
		switch {
		case eb == nil:
			return pl.remove(root, p, ea)
		case ea == nil:
			return pl.add(root, p, eb)
		case ea.same(eb):
			return nil
		case ea.Kind == KindDir && eb.Kind == KindDir:
			if ea.Hash != eb.Hash {
				h := ea.Hash
				if err := pl.dir(root, p, &h, eb.Hash); err != nil {
					return err
				}
			}
			if ea.Mode != eb.Mode && pl.f.covers(root, p) {
				pl.p.dirModes = append(pl.p.dirModes, modeOp{relPath{root, p}, eb.Mode})
			}
			return nil
		case ea.Kind == KindLarge:
			if pl.f.covers(root, p) {
				pl.skip(root, p, "kept: it is over the checkpoint size cap, so once replaced it could not be brought back")
			}
			return nil
		case eb.Kind == KindLarge:
			if pl.f.covers(root, p) {
				pl.skip(root, p, fmt.Sprintf("not restored: at the checkpoint it was %d bytes, over the checkpoint size cap, so its content was not recorded", eb.Size))
			}
			return nil
		case ea.Kind == KindDir:
			// A directory where the checkpoint had a file or symlink.
			if !pl.f.covers(root, p) {
				return nil
			}
			if extra, err := pl.uncaptured(root, p, ea.Hash); err != nil || extra != "" {
				if err != nil {
					return err
				}
				pl.skip(root, p, "not restored: the directory now there holds "+extra+", which checkpoints do not cover (ignored or denied); move it away and restore again")
				return nil
			}
			if err := pl.remove(root, p, ea); err != nil {
				return err
			}
			return pl.add(root, p, eb)
		case eb.Kind == KindDir:
			// A file or symlink where the checkpoint had a directory: it
			// goes, even when only paths below were asked for, since
			// they cannot be restored otherwise.
			if !pl.f.covers(root, p) {
				pl.p.removeFiles = append(pl.p.removeFiles, relPath{root, p})
				pl.removed[relPath{root, p}] = true
				return pl.add(root, p, eb)
			}
			if err := pl.remove(root, p, ea); err != nil {
				return err
			}
			return pl.add(root, p, eb)
		case ea.SameContent(eb):
			if pl.f.covers(root, p) {
				pl.p.chmods = append(pl.p.chmods, modeOp{relPath{root, p}, eb.Mode})
			}
			return nil
		}
		if pl.f.covers(root, p) {
			pl.p.writes = append(pl.p.writes, writeOp{relPath: relPath{root, p}, e: *eb})
		}
		return nil
	})
}

// remove plans the removal of an entry of the current tree.
func (pl *planner) remove(root, p string, e *Entry) error {
	switch e.Kind {
	case KindDir:
		es, err := pl.s.readTree(e.Hash)
		if err != nil {
			return err
		}
		for i := range es {
			q := joinRel(p, es[i].Name)
			if !pl.f.leads(root, q) {
				continue
			}
			if err := pl.remove(root, q, &es[i]); err != nil {
				return err
			}
		}
		if pl.f.covers(root, p) {
			pl.p.removeDirs = append(pl.p.removeDirs, relPath{root, p})
			pl.removed[relPath{root, p}] = true
		}
	case KindLarge:
		if pl.f.covers(root, p) {
			pl.skip(root, p, "kept: it is over the checkpoint size cap, so once removed it could not be brought back")
		}
	default:
		if pl.f.covers(root, p) {
			pl.p.removeFiles = append(pl.p.removeFiles, relPath{root, p})
			pl.removed[relPath{root, p}] = true
		}
	}
	return nil
}

// add plans the creation of an entry of the target tree where the
// current tree has none.
func (pl *planner) add(root, p string, e *Entry) error {
	if pl.f.covers(root, p) || e.Kind == KindDir {
		// Something the checkpoints do not cover (an ignored file) may
		// be there: it is never overwritten.
		var st unix.Stat_t
		if err := unix.Lstat(joinRel(root, p), &st); err == nil && !pl.removedAbove(root, p) {
			if pl.f.covers(root, p) {
				pl.skip(root, p, "not restored: something checkpoints do not cover (an ignored or denied file) is in its place; move it away and restore again")
			}
			return nil
		}
	}
	switch e.Kind {
	case KindDir:
		before := pl.ops()
		pl.created[relPath{root, p}] = true
		if err := pl.dir(root, p, nil, e.Hash); err != nil {
			return err
		}
		if pl.f.covers(root, p) || pl.ops() > before {
			pl.p.mkdirs = append(pl.p.mkdirs, modeOp{relPath{root, p}, e.Mode})
		} else {
			delete(pl.created, relPath{root, p})
		}
	case KindLarge:
		if pl.f.covers(root, p) {
			pl.skip(root, p, fmt.Sprintf("not restored: at the checkpoint it was %d bytes, over the checkpoint size cap, so its content was not recorded", e.Size))
		}
	default:
		if pl.f.covers(root, p) {
			pl.p.writes = append(pl.p.writes, writeOp{relPath: relPath{root, p}, e: *e})
		}
	}
	return nil
}

// removedAbove says whether p or a directory above it is removed by the
// plan (so what is on disk there now goes first).
func (pl *planner) removedAbove(root, p string) bool {
	for q := p; ; {
		if pl.removed[relPath{root, q}] {
			return true
		}
		i := strings.LastIndexByte(q, '/')
		if i < 0 {
			return false
		}
		q = q[:i]
	}
}

// uncaptured finds something on disk in the directory p that the tree h
// does not hold (an ignored or denied file), or "".
func (pl *planner) uncaptured(root, p string, h Hash) (string, error) {
	es, err := pl.s.readTree(h)
	if err != nil {
		return "", err
	}
	ents, err := os.ReadDir(joinRel(root, p))
	if err != nil {
		return "", nil
	}
	for _, de := range ents {
		e := find(es, de.Name())
		if e == nil {
			return joinRel(p, de.Name()), nil
		}
		if e.Kind == KindDir && de.IsDir() {
			if extra, err := pl.uncaptured(root, joinRel(p, de.Name()), e.Hash); err != nil || extra != "" {
				return extra, err
			}
		}
	}
	return "", nil
}

// stageDir is the directory a file for p is staged in: its parent if the
// parent is there now and stays, else the nearest such ancestor.
func (pl *plan) stageDir(created, removed map[relPath]bool, root, p string) string {
	dir, _ := splitRel(p)
	for dir != "" && (created[relPath{root, dir}] || removed[relPath{root, dir}]) {
		dir, _ = splitRel(dir)
	}
	return dir
}

// journal is the store's record of a restore in progress.
type journal struct {
	Target string   `json:"target"`
	Before string   `json:"before"`
	Temps  []string `json:"temps"`
}

const journalName = "restore.journal"

// recoverJournal removes the temporary files of a restore that was cut
// short; it returns the journal found, if any.
func (s *Store) recoverJournal() (*journal, error) {
	b, err := os.ReadFile(filepath.Join(s.Dir, journalName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var j journal
	if err := json.Unmarshal(b, &j); err != nil {
		_ = os.Remove(filepath.Join(s.Dir, journalName))
		return nil, nil
	}
	for _, t := range j.Temps {
		// Only names this package makes: never anything else.
		if strings.HasPrefix(filepath.Base(t), tempPrefix) {
			_ = os.Remove(t)
		}
	}
	if err := os.Remove(filepath.Join(s.Dir, journalName)); err != nil {
		return &j, err
	}
	_ = syncDir(s.Dir)
	return &j, nil
}

const tempPrefix = ".boris-restore-"

// afterRename runs after each file a restore puts in place, and
// renameFault, when set, can fail the n-th (test hooks, as is
// baselineGate).
var (
	afterRename = func() {}
	renameFault func(n int) error
	// baselineGate runs before the start-up checkpoint and may hold it
	// (until stopped says boris is shutting down).
	baselineGate = func(stopped func() bool) {}
)

// execute carries a plan out. before is the top tree of the current state
// (checkpointed), used to put things back if a step of the second phase
// fails.
func (s *Store) execute(pl *plan, created, removed map[relPath]bool, j journal) (*RestoreResult, error) {
	res := &RestoreResult{Skipped: pl.skipped}
	// Phase 1: stage.
	for i := range pl.writes {
		w := &pl.writes[i]
		w.stage = pl.stageDir(created, removed, w.root, w.rel)
		w.tmp = tempPrefix + randHex(8)
		j.Temps = append(j.Temps, joinRel(joinRel(w.root, w.stage), w.tmp))
	}
	if len(pl.writes) > 0 {
		b, err := json.Marshal(j)
		if err != nil {
			return nil, err
		}
		// Not synced: it serves a process killed mid-restore, whose
		// writes the kernel keeps; after a power loss the worst left is
		// a temporary file named .boris-restore-*.
		if err := s.writeFile(journalName, b, false); err != nil {
			return nil, fmt.Errorf("write the restore journal: %w", err)
		}
	}
	dirs := &dirCache{fds: map[relPath]int{}}
	defer dirs.close()
	cleanup := func() {
		for _, w := range pl.writes {
			if fd, err := dirs.open(relPath{w.root, w.stage}); err == nil {
				_ = unix.Unlinkat(fd, w.tmp, 0)
			}
		}
		_ = os.Remove(filepath.Join(s.Dir, journalName))
	}
	for i := range pl.writes {
		w := &pl.writes[i]
		fd, err := dirs.open(relPath{w.root, w.stage})
		if err != nil {
			cleanup()
			return nil, fmt.Errorf("open %s: %w", joinRel(w.root, w.stage), err)
		}
		if err := s.stage(fd, w); err != nil {
			cleanup()
			return nil, fmt.Errorf("stage %s: %w", w.abs(), err)
		}
	}
	// Not flushed to the disk, as git checkout does not: each file
	// is still replaced whole by a rename (a reader sees the old content
	// or the new), and a flush of the file system (syncfs) cost more than
	// the whole restore on a busy machine, holding the call for other
	// processes' writes too.

	// Phase 2: apply.
	var done []string
	fail := func(p relPath, op string, err error) (*RestoreResult, error) {
		// What is still staged goes; the caller puts back what changed.
		cleanup()
		res.Changed = done
		return res, &applyError{path: p.abs(), op: op, err: err, done: done}
	}
	sort.Slice(pl.removeDirs, func(a, b int) bool { return depth(pl.removeDirs[a].rel) > depth(pl.removeDirs[b].rel) })
	for _, p := range pl.removeFiles {
		dir, name := splitRel(p.rel)
		fd, err := dirs.open(relPath{p.root, dir})
		if err == nil {
			err = unix.Unlinkat(fd, name, 0)
		}
		if err != nil && err != unix.ENOENT {
			return fail(p, "remove", err)
		}
		done = append(done, p.abs())
		res.Removed++
	}
	for _, p := range pl.removeDirs {
		dir, name := splitRel(p.rel)
		dirs.forget(p)
		fd, err := dirs.open(relPath{p.root, dir})
		if err == nil {
			err = unix.Unlinkat(fd, name, unix.AT_REMOVEDIR)
		}
		switch {
		case err == unix.ENOTEMPTY || err == unix.EEXIST:
			res.Skipped = append(res.Skipped, Note{Path: p.abs(), Reason: "kept: it holds files checkpoints do not cover (ignored or denied)"})
			continue
		case err != nil && err != unix.ENOENT:
			return fail(p, "remove", err)
		}
		done = append(done, p.abs())
		res.DirsRemoved++
	}
	sort.Slice(pl.mkdirs, func(a, b int) bool { return depth(pl.mkdirs[a].rel) < depth(pl.mkdirs[b].rel) })
	for _, m := range pl.mkdirs {
		dir, name := splitRel(m.rel)
		fd, err := dirs.open(relPath{m.root, dir})
		if err == nil {
			// Writable for the steps below; the mode comes last.
			err = unix.Mkdirat(fd, name, 0o700)
			if err == unix.EEXIST {
				err = nil
			}
		}
		if err != nil {
			return fail(m.relPath, "create directory", err)
		}
		done = append(done, m.abs())
		res.DirsCreated++
		pl.dirModes = append(pl.dirModes, m)
	}
	for _, w := range pl.writes {
		sfd, err := dirs.open(relPath{w.root, w.stage})
		if err != nil {
			return fail(w.relPath, "open", err)
		}
		dir, name := splitRel(w.rel)
		tfd, err := dirs.open(relPath{w.root, dir})
		if err == nil && renameFault != nil {
			err = renameFault(res.Written)
		}
		if err == nil {
			err = unix.Renameat(sfd, w.tmp, tfd, name)
		}
		if err != nil {
			return fail(w.relPath, "write", err)
		}
		done = append(done, w.abs())
		res.Written++
		afterRename()
	}
	for _, m := range pl.chmods {
		dir, name := splitRel(m.rel)
		fd, err := dirs.open(relPath{m.root, dir})
		if err == nil {
			err = fchmodat(fd, name, m.mode)
		}
		if err != nil {
			return fail(m.relPath, "change the mode of", err)
		}
		done = append(done, m.abs())
		res.ModesChanged++
	}
	sort.Slice(pl.dirModes, func(a, b int) bool { return depth(pl.dirModes[a].rel) > depth(pl.dirModes[b].rel) })
	for _, m := range pl.dirModes {
		dir, name := splitRel(m.rel)
		fd, err := dirs.open(relPath{m.root, dir})
		if err == nil {
			err = fchmodat(fd, name, m.mode)
		}
		if err != nil {
			return fail(m.relPath, "change the mode of", err)
		}
		done = append(done, m.abs())
	}
	res.ModesChanged += len(pl.dirModes) - len(pl.mkdirs)
	_ = os.Remove(filepath.Join(s.Dir, journalName))
	res.Changed = done
	return res, nil
}

// applyError is a failure in the second phase of a restore.
type applyError struct {
	path, op string
	err      error
	done     []string
}

func (e *applyError) Error() string { return fmt.Sprintf("%s %s: %v", e.op, e.path, e.err) }
func (e *applyError) Unwrap() error { return e.err }

func depth(rel string) int { return strings.Count(rel, "/") }

// stage writes one file or symlink of the target as a temporary file.
func (s *Store) stage(dirfd int, w *writeOp) error {
	if w.e.Kind == KindLink {
		return unix.Symlinkat(w.e.Target, dirfd, w.tmp)
	}
	data, err := s.read(w.e.Hash)
	if err != nil {
		return err
	}
	fd, err := openat(dirfd, w.tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), w.tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(os.FileMode(w.e.Mode & 0o777))
		if err == nil && w.e.Mode&^0o777 != 0 {
			err = unix.Fchmod(fd, w.e.Mode)
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = unix.Unlinkat(dirfd, w.tmp, 0)
	}
	return err
}

// dirCache holds open directories of a restore, opened below their root
// without following symlinks.
type dirCache struct {
	roots map[string]int
	fds   map[relPath]int
}

func (c *dirCache) open(p relPath) (int, error) {
	if fd, ok := c.fds[p]; ok {
		return fd, nil
	}
	if c.roots == nil {
		c.roots = map[string]int{}
	}
	rfd, ok := c.roots[p.root]
	if !ok {
		var err error
		rfd, err = openat(unix.AT_FDCWD, p.root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW)
		if err != nil {
			return -1, err
		}
		c.roots[p.root] = rfd
	}
	if p.rel == "" {
		return rfd, nil
	}
	fd, err := openBeneath(rfd, p.rel, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return -1, err
	}
	c.fds[p] = fd
	return fd, nil
}

// forget closes a directory about to be removed.
func (c *dirCache) forget(p relPath) {
	if fd, ok := c.fds[p]; ok {
		unix.Close(fd)
		delete(c.fds, p)
	}
}

func (c *dirCache) close() {
	for _, fd := range c.fds {
		unix.Close(fd)
	}
	for _, fd := range c.roots {
		unix.Close(fd)
	}
}
