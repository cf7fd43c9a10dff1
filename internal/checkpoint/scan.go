package checkpoint

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boris-mcp/boris/internal/gitrepo"
	"github.com/boris-mcp/boris/internal/ignore"
	"github.com/boris-mcp/boris/internal/scope"
	"github.com/boris-mcp/boris/internal/walk"
)

// dirNode is a directory of the workspace as last scanned. The scanner
// keeps the whole tree in memory, with what it needs to tell whether a
// file changed without reading it (size, times, inode, mode) and the hash
// of every file and directory, so that a checkpoint costs only what
// changed.
type dirNode struct {
	parent *dirNode
	// root is the workspace directory this node is in; rel its path
	// relative to it ("" for the root itself).
	root *rootDir
	rel  string
	// entries are sorted by name.
	entries []fsEntry
	// ign holds the ignore rules that apply to the entries.
	ign *ignore.Stack
	// hash is the tree's hash when hashOK.
	hash   Hash
	hashOK bool
	// wd is the inotify watch (-1: none).
	wd int32
	// gone is set once the node is no longer part of the tree.
	gone bool
	// listed is set once the directory was read; ignKey identifies the
	// .gitignore (and .git) its rules were made from; sameRules says they
	// are those of the node it replaced (see list).
	listed    bool
	ignKey    ignoreKey
	sameRules bool
	// git is the repository the directory's files are tracked in (nil:
	// none), gitRel its path in that repository's work tree.
	git    *gitRepo
	gitRel string
}

// ignoreKey identifies a directory's .gitignore file and says whether it
// holds .git.
type ignoreKey struct {
	ino          uint64
	size         int64
	mtime, ctime int64
	git          bool
}

// rootDir is one directory of the workspace.
type rootDir struct {
	path string
	node *dirNode
	// fd is the directory, open during a scan or a store pass (-1 when
	// closed or missing); everything is opened below it.
	fd int
	// missing says the directory did not exist at the last scan.
	missing bool
	// ancKey identifies the ignore files above the directory.
	ancKey string
}

// fsEntry is an Entry with what tells whether it changed.
type fsEntry struct {
	Entry
	dev, ino     uint64
	mtime, ctime int64
	// racy says the stat above cannot vouch for the content: the file
	// changed too close to the scan for its times to tell a later change.
	racy bool
	// needHash says the content must be read.
	needHash bool
	// ghost marks a file that vanished before it could be read: it is
	// left out of the tree.
	ghost bool
	// gitCand says Hash is the git blob the index vouches for: the store
	// pass takes it instead of reading the file if the repository can
	// stand for its files and holds the blob.
	gitCand bool
	sub     *dirNode
}

// racyWindow covers the coarse clock file systems stamp times with: a
// file modified within it of a scan may change again without its times
// changing, so it is read again next time.
const racyWindow = 25 * time.Millisecond

// scanner keeps the workspace tree up to date.
type scanner struct {
	roots   []*rootDir
	policy  *scope.Policy // nil: nothing denied
	maxFile int64
	workers int
	logf    func(string, ...any)

	// w is the change tracker; nil means every scan is a full one.
	w         watcher
	watchErr  error // why w is nil
	needFull  bool  // the next scan must be a full one
	scanned   bool  // a scan has completed
	watchDead atomic.Bool

	// toHash are entries whose content the next store pass reads.
	toHash []hashJob
	// verify says the store may lack objects the tree names (a failed
	// write, or another process collected garbage): the next store pass
	// checks every hash.
	verify bool

	scanStart int64 // Unix ns
	// stop ends scans early (boris is shutting down).
	stop atomic.Bool
	// dirty are the directories to list again at the next scan (true:
	// with their whole subtree, as their ignore rules changed).
	dmu   sync.Mutex
	dirty map[*dirNode]bool
	// stats of the last scan, for the benchmarks and the log.
	lastListed int
	// git borrows what git work trees hold.
	git *gitState
	// borrowed and copied count the files the last store pass took from
	// git and read (the start-up log says them).
	borrowed, copied int
	// hashed and hashTotal tell how far the store pass is (progress).
	hashed, hashTotal atomic.Int64
	// lowPriority runs the workers that read files at a lower CPU and
	// I/O priority (the start-up checkpoint) until hurry is closed: a
	// call waits for them.
	lowPriority bool
	hurry       chan struct{}
	hurryOnce   sync.Once
}

// hurryUp says a call waits for the current store pass: it goes on at
// full priority.
func (sc *scanner) hurryUp() { sc.hurryOnce.Do(func() { close(sc.hurry) }) }

func (sc *scanner) hurried() bool {
	select {
	case <-sc.hurry:
		return true
	default:
		return false
	}
}

type hashJob struct {
	n *dirNode
	e *fsEntry
}

func newScanner(roots []string, policy *scope.Policy, maxFile int64, logf func(string, ...any)) *scanner {
	sc := &scanner{policy: policy, maxFile: maxFile, workers: runtime.GOMAXPROCS(0), logf: logf, needFull: true, dirty: map[*dirNode]bool{}, git: newGitState(logf), hurry: make(chan struct{})}
	if sc.workers > 4 {
		sc.workers = 4
	}
	for _, r := range roots {
		sc.roots = append(sc.roots, &rootDir{path: r, fd: -1})
	}
	if policy != nil && !policy.HasDenyRules() {
		sc.policy = nil
	}
	if w, err := newWatcher(); err == nil {
		sc.w = w
	} else {
		sc.watchErr = err
	}
	return sc
}

func (sc *scanner) close() {
	if sc.w != nil {
		sc.w.close()
		sc.w = nil
	}
	sc.git.close()
}

// tracking says whether scans are incremental.
func (sc *scanner) tracking() bool { return sc.w != nil }

// scan brings the tree up to date with the disk: everything when full
// (or when changes may have been missed), else the directories that
// reported changes. It returns whether anything may have changed.
func (sc *scanner) scan(full bool) (bool, error) {
	sc.scanStart = time.Now().UnixNano()
	sc.git.newScan()
	defer sc.openRoots()()
	if sc.w != nil {
		evs, overflow := sc.w.drain()
		if overflow {
			sc.needFull = true
			sc.logf("checkpoint: the change queue overflowed; scanning the whole workspace")
		}
		if !sc.needFull && !full {
			sc.apply(evs)
		}
	}
	if full || sc.needFull || sc.w == nil {
		sc.needFull = false
		err := sc.fullScan()
		sc.afterScan()
		if sc.stop.Load() {
			sc.needFull = true
			return true, errStopped
		}
		return true, err
	}
	sc.dmu.Lock()
	dirty := sc.dirty
	sc.dirty = map[*dirNode]bool{}
	sc.dmu.Unlock()
	if len(dirty) == 0 {
		return len(sc.toHash) > 0 || sc.verify, nil
	}
	// Listed in place, a directory reads its parent's rules: parents go
	// first, a level at a time (one a parent replaced is skipped).
	levels := map[int][]listJob{}
	for n, deep := range dirty {
		if n.gone || deepAbove(dirty, n) {
			continue // gone, or listed with a deep ancestor
		}
		d := depthOf(n)
		levels[d] = append(levels[d], listJob{n: n, old: n, deep: deep})
		invalidate(n)
	}
	depths := make([]int, 0, len(levels))
	for d := range levels {
		depths = append(depths, d)
	}
	slices.Sort(depths)
	for _, d := range depths {
		jobs := levels[d][:0]
		for _, j := range levels[d] {
			if !j.n.gone {
				jobs = append(jobs, j)
			}
		}
		sc.run(jobs)
	}
	sc.afterScan()
	if sc.stop.Load() {
		sc.needFull = true
		return true, errStopped
	}
	return true, nil
}

// ancestorKey identifies the .gitignore files and .git directories above
// root, up to the repository root, as of now: when it is unchanged, so are
// the rules they make.
func ancestorKey(root string) string {
	var b strings.Builder
	for d := root; d != "/"; {
		d = filepath.Dir(d)
		var st unix.Stat_t
		if unix.Lstat(filepath.Join(d, walk.IgnoreFile), &st) == nil {
			fmt.Fprintf(&b, "%s:%d:%d:%d:%d;", d, st.Ino, st.Size, mtimeOf(&st), ctimeOf(&st))
		}
		if unix.Lstat(filepath.Join(d, walk.GitDir), &st) == nil {
			b.WriteString(d + ":git;")
			break
		}
	}
	return b.String()
}

// openRoots opens the workspace's directories (a missing one stays -1)
// and returns the function that closes them.
func (sc *scanner) openRoots() func() {
	for _, r := range sc.roots {
		fd, err := openat(unix.AT_FDCWD, r.path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW)
		if err != nil {
			fd = -1
		}
		r.fd, r.missing = fd, err != nil
	}
	return func() {
		for _, r := range sc.roots {
			if r.fd >= 0 {
				unix.Close(r.fd)
				r.fd = -1
			}
		}
	}
}

// afterScan gives up tracking when a watch could not be added (the limit
// was reached): from then on every scan is a full one, which is slower
// but never wrong.
func (sc *scanner) afterScan() {
	sc.scanned = true
	if sc.w != nil && sc.watchDead.Load() {
		sc.logf("checkpoint: tracking changes failed (%v); every checkpoint scans the whole workspace from now on", sc.watchErr)
		sc.w.close()
		sc.w = nil
	}
}

// depthOf is how many directories are above n.
func depthOf(n *dirNode) int {
	d := 0
	for a := n.parent; a != nil; a = a.parent {
		d++
	}
	return d
}

// deepAbove says whether an ancestor of n is to be listed deep.
func deepAbove(dirty map[*dirNode]bool, n *dirNode) bool {
	for a := n.parent; a != nil; a = a.parent {
		if dirty[a] {
			return true
		}
	}
	return false
}

// mark asks for n to be listed again at the next scan (deep: with its
// whole subtree); it is safe for concurrent use.
func (sc *scanner) mark(n *dirNode, deep bool) {
	sc.dmu.Lock()
	sc.dirty[n] = sc.dirty[n] || deep
	sc.dmu.Unlock()
}

// markPaths asks for the directories holding paths (absolute) to be
// listed again at the next scan: a directory named is listed with its
// whole subtree, a file's directory alone; a path the tree does not have
// lists its nearest ancestor it has, deep.
func (sc *scanner) markPaths(paths []string) {
	for _, p := range paths {
		for _, r := range sc.roots {
			if r.node == nil || !scope.Within(p, r.path) {
				continue
			}
			rel, err := filepath.Rel(r.path, p)
			if err != nil {
				continue
			}
			n := r.node
			if rel == "." {
				sc.mark(n, true)
				continue
			}
			parts := strings.Split(filepath.ToSlash(rel), "/")
			for i, part := range parts {
				e := findFS(n.entries, part)
				if e == nil {
					sc.mark(n, true)
					break
				}
				if i == len(parts)-1 {
					if e.sub != nil {
						sc.mark(e.sub, true)
					} else {
						sc.mark(n, false)
					}
					break
				}
				if e.sub == nil {
					sc.mark(n, true)
					break
				}
				n = e.sub
			}
		}
	}
}

// invalidate clears the hashes of n and its ancestors.
func invalidate(n *dirNode) {
	for ; n != nil; n = n.parent {
		n.hashOK = false
	}
}

// apply marks the directories that events name as dirty.
func (sc *scanner) apply(evs []event) {
	for _, ev := range evs {
		n := sc.w.node(ev.wd)
		if n == nil || n.gone {
			continue
		}
		switch {
		case ev.gone:
			// The watch is gone: the directory was removed (its parent
			// says so too) or its file system unmounted.
			sc.w.forget(n)
			sc.markDirty(n.parent, n)
			continue
		case ev.self, ev.name == "":
			// The directory itself moved, went, or changed mode: its
			// parent lists it again.
			sc.markDirty(n.parent, n)
			continue
		}
		switch ev.name {
		case walk.IgnoreFile, walk.GitDir:
			sc.mark(n, true)
			continue
		}
		if walk.Skipped(ev.name) {
			continue
		}
		if n.ign != nil && n.ign.Ignored(joinRel(n.rel, ev.name), ev.name, ev.dir) {
			continue
		}
		sc.mark(n, false)
	}
}

// markDirty marks parent dirty, or, for a workspace root, asks for a full
// scan.
func (sc *scanner) markDirty(parent, n *dirNode) {
	if parent == nil || n.rel == "" {
		sc.needFull = true
		return
	}
	sc.mark(parent, false)
}

// fullScan lists every directory again, keeping what the stat data says
// did not change.
func (sc *scanner) fullScan() error {
	sc.dmu.Lock()
	clear(sc.dirty)
	sc.dmu.Unlock()
	var jobs []listJob
	for _, r := range sc.roots {
		old := r.node
		n := &dirNode{root: r, wd: -1}
		r.node = n
		jobs = append(jobs, listJob{n: n, old: old, deep: true})
	}
	sc.toHash = sc.toHash[:0]
	sc.run(jobs)
	return nil
}

// listJob lists one directory. old is the previous version of the node
// (n itself when relisting in place, nil for a new directory); deep lists
// every subdirectory again too, rather than keeping the nodes of those
// that still exist.
type listJob struct {
	n, old *dirNode
	deep   bool
}

// run lists directories in parallel; listing a directory queues its new
// (or, deep, all) subdirectories.
func (sc *scanner) run(jobs []listJob) {
	var (
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		stack   = jobs
		pending = len(jobs)
		dropped []*dirNode
		listed  int
	)
	var wg sync.WaitGroup
	for range sc.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ls := &lister{sc: sc, buf: make([]byte, 32<<10)}
			for {
				mu.Lock()
				for len(stack) == 0 && pending > 0 {
					cond.Wait()
				}
				if pending == 0 {
					mu.Unlock()
					return
				}
				j := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				mu.Unlock()

				ls.children, ls.dropped, ls.hash = ls.children[:0], ls.dropped[:0], ls.hash[:0]
				if !sc.stop.Load() {
					ls.list(j)
				}

				mu.Lock()
				listed++
				stack = append(stack, ls.children...)
				pending += len(ls.children) - 1
				dropped = append(dropped, ls.dropped...)
				sc.toHash = append(sc.toHash, ls.hash...)
				if pending == 0 {
					cond.Broadcast()
				} else if len(ls.children) > 0 {
					cond.Broadcast()
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sc.lastListed = listed
	for _, d := range dropped {
		sc.drop(d)
	}
}

// drop takes a subtree out of the tree: its watches end, unless the
// directory was found again at another path meanwhile.
func (sc *scanner) drop(n *dirNode) {
	if n == nil {
		return
	}
	n.gone = true
	if sc.w != nil && n.wd >= 0 {
		sc.w.forget(n)
	}
	for i := range n.entries {
		if s := n.entries[i].sub; s != nil && s.parent == n {
			sc.drop(s)
		}
	}
}

// lister is one worker's state.
type lister struct {
	sc       *scanner
	buf      []byte
	names    []byte
	ents     []rawDirent
	children []listJob
	dropped  []*dirNode
	hash     []hashJob
}

type rawDirent struct {
	start, end int
	typ        uint8
}

// list reads one directory into its node.
func (ls *lister) list(j listJob) {
	sc, n := ls.sc, j.n
	n.hashOK = false
	rootFd := n.root.fd
	if rootFd < 0 {
		ls.replace(j, nil)
		return
	}
	fd := rootFd
	var err error
	if n.rel != "" {
		fd, err = openBeneath(rootFd, n.rel, unix.O_RDONLY|unix.O_DIRECTORY)
		if err != nil {
			// Gone, or no longer a directory: its parent is listed
			// again next time and says what it is now.
			if n.parent != nil {
				sc.mark(n.parent, false)
			}
			ls.replace(j, nil)
			return
		}
		defer unix.Close(fd)
	}
	if sc.w != nil && !sc.watchDead.Load() && n.wd < 0 {
		if err := sc.w.add(fd, joinRel(n.root.path, n.rel), n); err != nil {
			sc.watchErr = err
			sc.watchDead.Store(true)
		}
	}
	ls.names, ls.ents = ls.names[:0], ls.ents[:0]
	hasGit, hasIgnore, hasAttrs := false, false, false
	err = walk.ReadDir(fd, ls.buf, func(name []byte, typ uint8, _ uint64) {
		switch string(name) {
		case walk.GitDir:
			hasGit = true
			return
		case walk.NodeModules:
			return
		case walk.IgnoreFile:
			hasIgnore = true
		case attributesFile:
			hasAttrs = true
		}
		start := len(ls.names)
		ls.names = append(ls.names, name...)
		ls.ents = append(ls.ents, rawDirent{start, len(ls.names), typ})
	})
	if err != nil && len(ls.ents) == 0 {
		if n.parent != nil {
			sc.mark(n.parent, false)
		}
		ls.replace(j, nil)
		return
	}
	// The rules for this directory's entries: the parent's (or, at a
	// root, those of the directories above it), reset where a nested
	// repository starts, plus this directory's own .gitignore. Relisted in
	// place with the same .gitignore and .git, they are the same.
	var key ignoreKey
	if hasIgnore {
		var st unix.Stat_t
		if unix.Fstatat(fd, walk.IgnoreFile, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			key = ignoreKey{ino: uint64(st.Ino), size: st.Size, mtime: mtimeOf(&st), ctime: ctimeOf(&st)}
		}
	}
	key.git = hasGit
	// A directory listed again (in place, or as a new node of a full
	// scan) whose own .gitignore and .git are as before, below a parent
	// whose rules are as before, has the same rules: the old stack is
	// kept, and entries it kept before need not be judged again.
	prev := j.old
	sameRules := prev != nil && prev.listed && key == prev.ignKey && key.mtime < sc.scanStart-int64(racyWindow)
	if sameRules {
		if n.parent != nil {
			sameRules = n.parent.sameRules || (j.old == n && n.parent.ign == prev.parent.ign)
		} else {
			ak := ancestorKey(n.root.path)
			sameRules = ak == n.root.ancKey
			n.root.ancKey = ak
		}
	} else if n.parent == nil {
		n.root.ancKey = ancestorKey(n.root.path)
	}
	if sameRules {
		n.ign = prev.ign
	} else {
		var ign *ignore.Stack
		if n.parent != nil {
			ign = n.parent.ign
		} else {
			ign = walk.AncestorIgnores(n.root.path, sc.policy)
		}
		if hasGit {
			ign = nil
		}
		if hasIgnore {
			if f := walk.ReadIgnoreAt(fd); f != nil {
				ign = ign.Push(f, n.rel)
			}
		}
		if j.old == n && n.listed {
			// The rules changed: every subdirectory is judged again.
			j.deep = true
		}
		n.ign = ign
	}
	n.ignKey, n.listed, n.sameRules = key, true, sameRules
	// The repository its files are tracked in: its own, its parent's, or
	// (a workspace root) one above.
	switch {
	case hasGit:
		n.git, n.gitRel = sc.git.repoAt(joinRel(n.root.path, n.rel)), ""
	case n.parent != nil:
		_, base := splitRel(n.rel)
		n.git, n.gitRel = n.parent.git, joinRel(n.parent.gitRel, base)
	default:
		n.git, n.gitRel = sc.git.repoAbove(n.root.path)
	}
	if hasAttrs && n.git.usable() && readAttributes(fd) {
		n.git.converts.Store(true)
		sc.logf("checkpoint: %s/%s converts working files (text, eol, filter, ident or working-tree-encoding); files of %s are copied, not borrowed from git", joinRel(n.root.path, n.rel), attributesFile, n.git.r.Top)
	}
	gitIdx := sc.git.index(n.git)
	ign := n.ign
	names := string(ls.names)
	out := make([]fsEntry, 0, len(ls.ents))
	var st unix.Stat_t
	for _, de := range ls.ents {
		name := names[de.start:de.end]
		isDir := de.typ == unix.DT_DIR
		if de.typ == unix.DT_UNKNOWN || de.typ == unix.DT_DIR || de.typ == unix.DT_REG || de.typ == unix.DT_LNK {
			// The stat below is needed anyway; do it first when the
			// type is unknown.
		} else {
			continue // devices, FIFOs, sockets
		}
		if de.typ == unix.DT_UNKNOWN {
			if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
				continue
			}
			isDir = st.Mode&unix.S_IFMT == unix.S_IFDIR
		}
		var old *fsEntry
		if prev != nil {
			old = findFS(prev.entries, name)
		}
		// What was kept before under the same rules is kept now (the deny
		// rules never change); only new names are judged.
		judged := sameRules && old != nil && (old.Kind == KindDir) == isDir
		if !judged && ign != nil && ign.Ignored(joinRel(n.rel, name), name, isDir) {
			continue
		}
		if !judged && sc.policy != nil && sc.policy.DeniedLeaf(joinRel(n.root.path, joinRel(n.rel, name))) {
			continue
		}
		if de.typ != unix.DT_UNKNOWN {
			if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
				continue // gone meanwhile
			}
		}
		e := fsEntry{Entry: Entry{Name: name, Mode: uint32(st.Mode) & 0o7777}, dev: uint64(st.Dev), ino: uint64(st.Ino), mtime: mtimeOf(&st), ctime: ctimeOf(&st)}
		unchanged := old != nil && !old.racy && !old.needHash && old.ino == e.ino && old.dev == e.dev && old.mtime == e.mtime && old.ctime == e.ctime && old.Mode == e.Mode
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			e.Size = st.Size
			switch {
			case e.Size > sc.maxFile:
				e.Kind, e.MTime = KindLarge, e.mtime
			case unchanged && old.Kind == KindFile && old.Size == e.Size:
				e.Kind, e.Hash = KindFile, old.Hash
			default:
				e.Kind, e.needHash = KindFile, true
				if gitIdx != nil {
					if id, ok := gitIdx.Clean(joinRel(n.gitRel, name), &st); ok {
						e.Hash, e.gitCand = gitHash(id), true
					}
				}
			}
		case unix.S_IFLNK:
			e.Kind = KindLink
			if unchanged && old.Kind == KindLink {
				e.Target = old.Target
			} else if t, err := readlinkat(fd, name); err == nil {
				e.Target = t
			} else {
				continue
			}
		case unix.S_IFDIR:
			e.Kind = KindDir
		default:
			continue
		}
		e.racy = e.mtime >= sc.scanStart-int64(racyWindow) || e.ctime >= sc.scanStart-int64(racyWindow)
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b fsEntry) int { return strings.Compare(a.Name, b.Name) })
	// Subdirectories: kept as they are when relisting in place (their
	// own watches report their changes), listed when new or deep.
	for i := range out {
		e := &out[i]
		if e.Kind != KindDir {
			continue
		}
		var old *fsEntry
		if j.old != nil {
			old = findFS(j.old.entries, e.Name)
		}
		// Kept when it is the same directory, still watched: a directory
		// removed and made again may get the same inode number, but its
		// watch ended with the old one.
		if old != nil && old.Kind == KindDir && old.sub != nil && !j.deep && j.old == n && old.ino == e.ino && old.dev == e.dev && (sc.w == nil || old.sub.wd >= 0) {
			e.sub = old.sub
			continue
		}
		// A new node asks for its watch itself when it is listed: the
		// kernel returns the existing watch when the directory is the same
		// one, and makes a new one when it is not — which inode numbers
		// cannot tell, as they are reused.
		child := &dirNode{parent: n, root: n.root, rel: joinRel(n.rel, e.Name), wd: -1}
		var oldSub *dirNode
		if old != nil && old.Kind == KindDir {
			oldSub = old.sub
		}
		e.sub = child
		ls.children = append(ls.children, listJob{n: child, old: oldSub, deep: true})
	}
	ls.replace(j, out)
}

// replace installs the new entries of j.n, queueing what needs hashing
// and dropping the subtrees that are no longer there.
func (ls *lister) replace(j listJob, out []fsEntry) {
	n := j.n
	if j.old != nil {
		for i := range j.old.entries {
			oe := &j.old.entries[i]
			if oe.sub == nil {
				continue
			}
			kept := false
			if ne := findFS(out, oe.Name); ne != nil && ne.sub == oe.sub {
				kept = true
			}
			if !kept && oe.sub.parent == j.old {
				ls.dropped = append(ls.dropped, oe.sub)
			}
		}
	}
	n.entries = out
	for i := range n.entries {
		if n.entries[i].needHash {
			ls.hash = append(ls.hash, hashJob{n: n, e: &n.entries[i]})
		}
		if s := n.entries[i].sub; s != nil {
			s.parent = n
		}
	}
}

func findFS(es []fsEntry, name string) *fsEntry {
	i := sort.Search(len(es), func(i int) bool { return es[i].Name >= name })
	if i < len(es) && es[i].Name == name {
		return &es[i]
	}
	return nil
}

// countFiles counts the files of the tree.
func (sc *scanner) countFiles() int {
	n := 0
	var walkNode func(d *dirNode)
	walkNode = func(d *dirNode) {
		for i := range d.entries {
			e := &d.entries[i]
			switch {
			case e.sub != nil:
				walkNode(e.sub)
			case (e.Kind == KindFile || e.Kind == KindLarge) && !e.ghost:
				n++
			}
		}
	}
	for _, r := range sc.roots {
		if r.node != nil {
			walkNode(r.node)
		}
	}
	return n
}

// checkStored walks the whole tree and queues for storing every file and
// tree the store does not hold (after a failed write, or when another
// process collected garbage).
func (sc *scanner) checkStored(has func(Hash) bool) {
	sc.toHash = sc.toHash[:0]
	var walkNode func(n *dirNode) bool
	walkNode = func(n *dirNode) bool {
		ok := n.hashOK && has(n.hash)
		for i := range n.entries {
			e := &n.entries[i]
			switch {
			case e.sub != nil:
				if !walkNode(e.sub) {
					ok = false
				}
			case e.Kind == KindFile && (e.needHash || !has(e.Hash)):
				e.needHash = true
				sc.toHash = append(sc.toHash, hashJob{n: n, e: e})
				ok = false
			}
		}
		if !ok {
			n.hashOK = false
		}
		return ok
	}
	for _, r := range sc.roots {
		if r.node != nil {
			walkNode(r.node)
		}
	}
}

// store reads the files queued for hashing and stores their content,
// then stores every changed tree, and returns the hash of the workspace.
func (sc *scanner) store(b *batch) (Hash, error) {
	defer sc.openRoots()()
	sc.borrow()
	if err := sc.hashFiles(b); err != nil {
		return Hash{}, err
	}
	var top []Entry
	var scratch, enc []byte
	for _, r := range sc.roots {
		if r.node == nil {
			continue
		}
		h, err := sc.storeTree(b, r.node, &scratch, &enc)
		if err != nil {
			return Hash{}, err
		}
		mode := uint32(0o755)
		var st unix.Stat_t
		if unix.Stat(r.path, &st) == nil {
			mode = uint32(st.Mode) & 0o7777
		}
		top = append(top, Entry{Name: r.path, Kind: KindDir, Mode: mode, Hash: h})
	}
	sortEntries(top)
	enc = encodeTree(enc[:0], top)
	h := hashOf(enc)
	if _, err := b.put(h, objTree, enc, scratch); err != nil {
		return Hash{}, err
	}
	return h, nil
}

// storeTree computes (and stores) the hashes of the directories below n
// whose content changed.
func (sc *scanner) storeTree(b *batch, n *dirNode, scratch, enc *[]byte) (Hash, error) {
	if n.hashOK {
		return n.hash, nil
	}
	es := make([]Entry, 0, len(n.entries))
	for i := range n.entries {
		e := &n.entries[i]
		if e.ghost {
			continue
		}
		if e.sub != nil {
			h, err := sc.storeTree(b, e.sub, scratch, enc)
			if err != nil {
				return Hash{}, err
			}
			e.Hash = h
		}
		es = append(es, e.Entry)
	}
	*enc = encodeTree((*enc)[:0], es)
	h := hashOf(*enc)
	var err error
	if *scratch, err = b.put(h, objTree, *enc, *scratch); err != nil {
		return Hash{}, err
	}
	n.hash, n.hashOK = h, true
	return h, nil
}

// borrow takes, for each queued file git's index vouched for, the blob
// git holds instead of reading the file, when its repository can stand
// for its files (no converting attributes were found in the scan) and
// holds the blob; the others stay queued, to be read.
func (sc *scanner) borrow() {
	sc.borrowed, sc.copied = 0, 0
	keep := sc.toHash[:0]
	for _, j := range sc.toHash {
		e := j.e
		if e.gitCand {
			e.gitCand = false
			if id, _ := e.Hash.gitID(); j.n.git.usable() && j.n.git.r.Has(id) {
				e.needHash = false
				sc.borrowed++
				continue
			}
			e.Hash = Hash{}
		}
		keep = append(keep, j)
	}
	sc.toHash = keep
	sc.copied = len(keep)
}

// errStopped ends a checkpoint cut short by shutdown.
var errStopped = errors.New("boris is shutting down")

// bigFile is the size above which a file is read by one worker at a time,
// to bound the memory a scan takes.
const bigFile = 4 << 20

// hashFiles reads, hashes and stores the queued files in parallel, the
// largest first.
func (sc *scanner) hashFiles(b *batch) error {
	jobs := sc.toHash
	if len(jobs) == 0 {
		return nil
	}
	sort.Slice(jobs, func(i, j int) bool { return jobs[i].e.Size > jobs[j].e.Size })
	sc.hashed.Store(0)
	sc.hashTotal.Store(int64(len(jobs)))
	defer sc.hashTotal.Store(0)
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		errMu sync.Mutex
		first error
		bigMu sync.Mutex
	)
	// work reads jobs until none is left; a worker at low priority also
	// stops once a call waits for this pass (hurry), and workers at full
	// priority take over what is left.
	work := func(low bool) {
		defer wg.Done()
		if low {
			lowerPriority()
		}
		var buf, scratch []byte
		for {
			if low && sc.hurried() {
				return
			}
			i := int(next.Add(1) - 1)
			if i >= len(jobs) {
				return
			}
			j := jobs[i]
			if sc.stop.Load() {
				errMu.Lock()
				first = errStopped
				errMu.Unlock()
				return
			}
			big := j.e.Size > bigFile
			if big {
				bigMu.Lock()
			}
			var err error
			buf, scratch, err = sc.hashOne(b, j, buf, scratch)
			sc.hashed.Add(1)
			if big {
				bigMu.Unlock()
				buf, scratch = nil, nil // give the memory back
			}
			if err != nil {
				errMu.Lock()
				if first == nil {
					first = err
				}
				errMu.Unlock()
				next.Store(int64(len(jobs))) // stop the others
				return
			}
		}
	}
	if !sc.lowPriority || sc.hurried() {
		for range sc.workers {
			wg.Add(1)
			go work(false)
		}
	} else {
		var lowWG sync.WaitGroup
		lowDone := make(chan struct{})
		for range sc.workers {
			wg.Add(1)
			lowWG.Add(1)
			go func() {
				defer lowWG.Done()
				work(true)
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			go func() {
				lowWG.Wait()
				close(lowDone)
			}()
			select {
			case <-sc.hurry:
				for range sc.workers {
					wg.Add(1)
					go work(false)
				}
			case <-lowDone:
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	sc.toHash = sc.toHash[:0]
	return nil
}

// hashOne reads one file (relative to its workspace root, no symlink
// followed), stores its content and records what it read.
func (sc *scanner) hashOne(b *batch, j hashJob, buf, scratch []byte) ([]byte, []byte, error) {
	e, n := j.e, j.n
	if n.root.fd < 0 {
		return buf, scratch, sc.vanished(j)
	}
	fd, err := openBeneath(n.root.fd, joinRel(n.rel, e.Name), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY)
	if err != nil {
		return buf, scratch, sc.vanished(j)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return buf, scratch, sc.vanished(j)
	}
	e.dev, e.ino, e.mtime, e.ctime = uint64(st.Dev), uint64(st.Ino), mtimeOf(&st), ctimeOf(&st)
	e.Mode = uint32(st.Mode) & 0o7777
	if st.Size > sc.maxFile {
		e.Kind, e.Size, e.MTime, e.needHash = KindLarge, st.Size, e.mtime, false
		return buf, scratch, nil
	}
	want := int(st.Size) + 1
	if cap(buf) < want {
		buf = make([]byte, 0, want)
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > sc.maxFile {
				break
			}
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if err != nil {
			return buf, scratch, fmt.Errorf("read %s: %w", joinRel(n.root.path, joinRel(n.rel, e.Name)), err)
		}
		if m == 0 {
			break
		}
		buf = buf[:len(buf)+m]
		if st.Size > 0 && int64(len(buf)) >= st.Size {
			break // all of it; growth meanwhile shows in the stat below
		}
	}
	if int64(len(buf)) > sc.maxFile {
		e.Kind, e.Size, e.MTime, e.needHash = KindLarge, int64(len(buf)), e.mtime, false
		return buf, scratch, nil
	}
	h, borrowed := sc.stagedBlob(n, e.Name, buf)
	if !borrowed {
		h = hashOf(buf)
		scratch, err = b.put(h, objBlob, buf, scratch)
		if err != nil {
			return buf, scratch, err
		}
	}
	e.Kind, e.Hash, e.Size, e.needHash = KindFile, h, int64(len(buf)), false
	// A change while reading leaves times that differ from those taken
	// before: the content cannot be trusted to match them.
	var after unix.Stat_t
	if unix.Fstat(fd, &after) != nil || mtimeOf(&after) != e.mtime || ctimeOf(&after) != e.ctime || after.Size != int64(len(buf)) {
		e.racy = true
	}
	if e.mtime >= sc.scanStart-int64(racyWindow) || e.ctime >= sc.scanStart-int64(racyWindow) {
		e.racy = true
	}
	return buf, scratch, nil
}

// stagedBlob returns the git blob of a file read whose content is the
// one its index entry names (a file touched, or changed and changed back,
// whose stat no longer matches the index): it keeps the name git gives it
// and need not be copied.
func (sc *scanner) stagedBlob(n *dirNode, name string, data []byte) (Hash, bool) {
	if !n.git.usable() {
		return Hash{}, false
	}
	idx := sc.git.index(n.git)
	if idx == nil {
		return Hash{}, false
	}
	id, ok := idx.Staged(joinRel(n.gitRel, name))
	if !ok || gitrepo.BlobID(data) != id || !n.git.r.Has(id) {
		return Hash{}, false
	}
	return gitHash(id), true
}

// vanished handles a queued file that is gone (or no longer a file):
// the checkpoint leaves it out, and its directory is listed again.
func (sc *scanner) vanished(j hashJob) error {
	sc.mark(j.n, false)
	if sc.w == nil {
		sc.needFull = true
	}
	j.e.ghost, j.e.needHash = true, false
	return nil
}
