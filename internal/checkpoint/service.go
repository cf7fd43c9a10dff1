// Package checkpoint records the state of the workspace — every directory
// the file tools may touch, minus .git, node_modules and what .gitignore
// files exclude (the rules grep and find use), minus what --deny-dir
// denies — so that everything an agent changed, through any tool, can be
// reviewed as one diff and undone in one call.
//
// A checkpoint is a tree of content hashes in a content-addressed,
// deduplicated, compressed store outside the workspace (store.go,
// pack.go). The scanner (scan.go) keeps the last scanned tree in memory
// with the stat data of every file, and on Linux watches every directory
// with inotify, so a checkpoint lists only the directories that reported
// changes and reads only the files whose size, times, inode or mode
// changed; when changes may have been missed (a queue overflow, the watch
// limit) it scans everything, never trusting a stale tree.
//
// The package knows nothing of MCP: it takes paths and returns plain
// values.
package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/files"
	"github.com/boris-mcp/boris/internal/scope"
	"github.com/boris-mcp/boris/internal/textdiff"
)

// Options configure a Service.
type Options struct {
	// Dir is the checkpoint directory; each workspace has a store in it.
	Dir string
	// Roots are the workspace's directories (absolute, symlink-free).
	Roots []string
	// Policy says what is denied (never captured, never restored).
	Policy *scope.Policy
	// MaxBytes bounds the checkpoint directory; MaxFileSize the files
	// whose content is kept.
	MaxBytes, MaxFileSize int64
	Logger                *slog.Logger
	// NoGit turns borrowing from git off: every file is read and copied.
	NoGit bool
	// Home is the user's home directory, whose git configuration and
	// attributes say whether working files may differ from their blobs
	// ("": only the repository's and the system's are read).
	Home string
}

// Caller is the session a call comes from.
type Caller interface {
	// ID names the session for people (logs, list).
	ID() string
	// CheckpointKey tells sessions with the same ID apart.
	CheckpointKey() string
	// FirstCheckpoint is the first checkpoint the session saw ("" when
	// none); SetFirstCheckpoint records it once.
	FirstCheckpoint() string
	SetFirstCheckpoint(id string)
}

// MaxDiffChars bounds the text of a diff's patches.
const MaxDiffChars = 30000

// Service takes, lists, compares and restores the checkpoints of one
// workspace. It is safe for concurrent use; operations run one at a time.
type Service struct {
	opts  Options
	log   *slog.Logger
	store *Store
	sc    *scanner

	mu sync.Mutex
	// cur is the tree hash of the last stored scan.
	cur Hash
	// suspended holds the refusal of an automatic checkpoint too large
	// for the bound: automatic ones are not tried again (each try reads
	// the whole workspace) until an explicit create succeeds.
	suspended error
	// interrupted describes a restore cut short by a crash, found at
	// start-up.
	interrupted string
	ready       chan struct{}
	closed      bool
	// adopted counts the git blobs copied into the store.
	adopted int
	// cachedFiles is how many files the stat cache of the last run
	// named.
	cachedFiles int
	// openBytes is the store's size when it was opened.
	openBytes int64
	// bg counts what runs in the background (the stat cache being
	// written); Close closes closing and waits for it.
	bg        sync.WaitGroup
	closing   chan struct{}
	closeOnce sync.Once
}

// Open opens (or creates) the workspace's store, cleans up after a
// process killed mid-write or mid-restore, and takes the first checkpoint
// in the background.
func Open(opts Options) (*Service, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	roots := cleanRoots(opts.Roots)
	opts.Roots = roots
	st, err := OpenStore(opts.Dir, roots)
	if err != nil {
		return nil, err
	}
	sv := &Service{opts: opts, log: opts.Logger, store: st, ready: make(chan struct{}), closing: make(chan struct{})}
	if err := st.lock(); err != nil {
		st.Close()
		return nil, err
	}
	sv.openBytes = st.size
	j, jerr := st.recoverJournal()
	st.unlock()
	if jerr != nil {
		st.Close()
		return nil, fmt.Errorf("recover the restore journal of %s: %w", st.Dir, jerr)
	}
	if j != nil {
		sv.interrupted = fmt.Sprintf("a restore to %s was cut short (boris stopped while it ran): each file is either as it was before or as at %s. The state before it is checkpoint %s: restore %s again to finish it, or %s to undo it", j.Target, j.Target, j.Before, j.Target, j.Before)
		sv.log.Warn("checkpoint: " + sv.interrupted)
	}
	st.RemoveOrphans()
	sv.sc = newScanner(roots, opts.Policy, opts.MaxFileSize, func(f string, a ...any) { sv.log.Warn(fmt.Sprintf(f, a...)) })
	sv.sc.git.off, sv.sc.git.home = opts.NoGit, opts.Home
	st.ext = func(h Hash) ([]byte, error) {
		id, _ := h.gitID()
		return sv.sc.git.blob(id)
	}
	if sv.sc.w == nil {
		sv.log.Info("checkpoint: no change tracking; every checkpoint scans the workspace", "why", fmt.Sprint(sv.sc.watchErr))
	}
	sv.readStatCache()
	go sv.first()
	return sv, nil
}

// cleanRoots sorts the roots and drops those inside another.
func cleanRoots(roots []string) []string {
	rs := append([]string(nil), roots...)
	sort.Strings(rs)
	var out []string
	for _, r := range rs {
		r = filepath.Clean(r)
		inside := false
		for _, o := range out {
			if scope.Within(r, o) {
				inside = true
			}
		}
		if !inside {
			out = append(out, r)
		}
	}
	return out
}

// first takes the checkpoint of the workspace as boris found it.
func (sv *Service) first() {
	defer close(sv.ready)
	baselineGate(sv.sc.stop.Load)
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.closed {
		return
	}
	t0 := time.Now()
	// In the background, and behind everything else boris and the
	// agent's commands do: the workers of this checkpoint run at a lower
	// CPU and I/O priority. A call that can change the workspace waits
	// for what is left of it.
	sv.sc.lowPriority = true
	rec, _, err := sv.checkpointLocked(nil, fixed("at start-up"), "", true, false)
	sv.sc.lowPriority = false
	if err != nil {
		if code, ok := codes.As(err); ok && code.Code == codes.CheckpointTooLarge {
			sv.suspended = err
		}
		sv.log.Warn("checkpoint: the start-up checkpoint failed", "err", err)
		return
	}
	// The stat cache is written once the calls waiting have gone on.
	sv.bg.Add(1)
	go func() {
		// A second later, behind everything else: encoding the tree holds
		// the service's lock, which the first calls should not wait for.
		defer sv.bg.Done()
		select {
		case <-time.After(time.Second):
		case <-sv.closing:
			return // Close writes it
		}
		lowerPriority()
		sv.saveStatCache()
	}()
	var size int64
	if sv.store.lock() == nil {
		size = sv.store.size
		sv.store.unlock()
	}
	n := sv.sc.countFiles()
	sv.log.Info("checkpoint: start-up checkpoint taken", "id", rec.ID, "duration", time.Since(t0).Round(time.Millisecond),
		"files", n, "borrowed_from_git", sv.sc.borrowed, "read", sv.sc.copied, "unchanged_since_last_run", max(n-sv.sc.borrowed-sv.sc.copied, 0),
		"store", sv.store.Dir, "store_bytes", files.HumanSize(size), "max_bytes", files.HumanSize(sv.opts.MaxBytes), "tracking", sv.sc.tracking())
	// Reading a big tree leaves the heap grown with buffers no longer
	// used: give them back now rather than hold them between calls.
	debug.FreeOSMemory()
}

// Holding says what the store held when it was opened: its bytes (every
// checkpoint of this workspace, from earlier runs) and how many files the
// last run recorded (0: none, or no stat cache).
func (sv *Service) Holding() (bytes int64, files int) { return sv.openBytes, sv.cachedFiles }

// Ready is closed once the start-up checkpoint is done.
func (sv *Service) Ready() <-chan struct{} { return sv.ready }

// WaitBaseline waits for the start-up checkpoint (which goes on at full
// priority meanwhile), or until ctx is done: then it returns ctx's cause
// and the caller must not change the workspace, which no checkpoint holds
// yet.
func (sv *Service) WaitBaseline(ctx context.Context) error {
	select {
	case <-sv.ready:
		return nil
	default:
	}
	sv.sc.hurryUp()
	select {
	case <-sv.ready:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Baseline says how far the start-up checkpoint is: done once it is
// taken; read and total count the files it reads and has to read (total
// is 0 while it still lists the workspace).
func (sv *Service) Baseline() (done bool, read, total int64) {
	select {
	case <-sv.ready:
		return true, 0, 0
	default:
	}
	return false, sv.sc.hashed.Load(), sv.sc.hashTotal.Load()
}

// Close stops tracking changes and releases the store. A checkpoint in
// progress is cut short (nothing of it is kept).
func (sv *Service) Close() {
	sv.sc.stop.Store(true)
	<-sv.ready
	sv.closeOnce.Do(func() { close(sv.closing) })
	sv.bg.Wait()
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.closed {
		return
	}
	sv.closed = true
	if sv.store.lock() == nil {
		// What this run learned spares the next one from reading files.
		if err := sv.saveStatCacheLocked(); err != nil {
			sv.log.Warn("checkpoint: writing the stat cache failed (the next start reads every file again)", "err", err)
		}
		sv.store.unlock()
	}
	sv.sc.close()
	sv.store.Close()
}

// errClosed answers calls that come during shutdown.
var errClosed = codes.Errorf(codes.CheckpointDisabled, "boris is shutting down; checkpoints are closed")

// fixed is a reason known in advance.
func fixed(s string) func() string { return func() string { return s } }

// Roots are the workspace's directories.
func (sv *Service) Roots() []string { return sv.opts.Roots }

// StoreDir is the directory of the workspace's store.
func (sv *Service) StoreDir() string { return sv.store.Dir }

// Auto takes a checkpoint before a call that may change the workspace,
// unless nothing changed since the last one. reason says what call
// follows ("before bash: `make`").
func (sv *Service) Auto(c Caller, reason func() string) error {
	if done, _, _ := sv.Baseline(); !done {
		// This call waits for the rest of the start-up checkpoint: no
		// longer behind everything else.
		sv.sc.hurryUp()
	}
	// The start-up checkpoint comes first, whichever goroutine takes the
	// lock first.
	<-sv.ready
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.closed {
		return nil
	}
	if sv.suspended != nil {
		return sv.suspended
	}
	_, _, err := sv.checkpointLocked(c, reason, "", false, false)
	if code, ok := codes.As(err); ok && code.Code == codes.CheckpointTooLarge {
		sv.suspended = err
	}
	return err
}

// checkpointLocked scans (full: everything) and stores the workspace and
// records a checkpoint, unless the tree is the newest checkpoint's and
// force is false; then it returns that one. changes are those since the
// previous checkpoint.
func (sv *Service) checkpointLocked(c Caller, reason func() string, label string, full, force bool) (*Record, []Change, error) {
	changed, err := sv.sc.scan(full)
	if err != nil {
		return nil, nil, sv.failed(err)
	}
	if !changed && !force && !sv.cur.IsZero() {
		if n := sv.store.newest(); n != nil && n.Root == sv.cur.String() {
			sv.seen(c, n)
			return n, nil, nil
		}
	}
	st := sv.store
	if err := st.lock(); err != nil {
		return nil, nil, sv.failed(err)
	}
	defer st.unlock()
	root, err := sv.storeLocked()
	if err != nil {
		return nil, nil, err
	}
	prev := st.newest()
	if prev != nil && prev.root() == root && (!force || label == "") {
		sv.seen(c, prev)
		return prev, nil, nil
	}
	var changes []Change
	if prev != nil {
		if changes, err = st.diffRoots(prev.root(), root, nil); err != nil {
			return nil, nil, sv.failed(err)
		}
		if err := sv.adoptLocked(changes); err != nil {
			return nil, nil, err
		}
	}
	budget := st.budget(sv.opts.MaxBytes)
	dropped, err := st.makeRoom(root, budget)
	if errors.Is(err, errTooLarge) {
		_ = st.compact(Hash{}, budget)
		return nil, nil, sv.tooLarge()
	}
	if err != nil {
		return nil, nil, sv.failed(err)
	}
	if len(dropped) > 0 {
		sv.log.Info("checkpoint: pruned the oldest checkpoints to stay within --checkpoint-max-bytes", "pruned", len(dropped), "from", dropped[0].ID, "to", dropped[len(dropped)-1].ID)
	}
	if p := st.newest(); p != prev {
		// The previous checkpoint was pruned: the changes are counted
		// from the one kept.
		prev, changes = p, nil
		if prev != nil {
			if changes, err = st.diffRoots(prev.root(), root, nil); err != nil {
				return nil, nil, sv.failed(err)
			}
		}
	}
	seq := st.nextSeq()
	rec := &Record{ID: fmt.Sprintf("c%d", seq), Seq: seq, Time: time.Now().UTC(), Reason: reason(), Label: label, Root: root.String(), Changes: count(changes)}
	if prev != nil {
		rec.Parent = prev.ID
	}
	if c != nil {
		rec.Session, rec.SessionKey = c.ID(), c.CheckpointKey()
	} else {
		rec.Session = "boris"
	}
	if err := st.publish(rec); err != nil {
		return nil, nil, sv.failed(err)
	}
	if err := st.consolidate(); err != nil {
		sv.log.Warn("checkpoint: merging packs failed (the store stays as it is)", "err", err)
	}
	sv.seen(c, rec)
	return rec, changes, nil
}

// seen notes that the caller's session has seen checkpoint r.
func (sv *Service) seen(c Caller, r *Record) {
	if c != nil && c.FirstCheckpoint() == "" {
		c.SetFirstCheckpoint(r.ID)
	}
}

// storeLocked stores what the scan found and returns the workspace's
// tree hash. The store is locked.
func (sv *Service) storeLocked() (Hash, error) {
	st := sv.store
	if st.takeStale() {
		sv.sc.verify = true
	}
	if sv.sc.verify {
		sv.sc.checkStored(sv.held)
	}
	b := st.newBatch(st.budget(sv.opts.MaxBytes))
	b.lazy = sv.sc.lowPriority // the start-up checkpoint
	root, err := sv.sc.store(b)
	if err == nil {
		err = b.commit()
	} else {
		b.abort()
	}
	if err != nil {
		// Objects of this pass may have been counted as stored: check
		// them all next time.
		sv.sc.verify = true
		sv.cur = Hash{}
		if errors.Is(err, errTooLarge) {
			return Hash{}, sv.tooLarge()
		}
		return Hash{}, sv.failed(err)
	}
	sv.sc.verify = false
	sv.cur = root
	return root, nil
}

// held says whether the content h names can be had: the store holds it,
// or it is a blob a repository of the workspace holds.
func (sv *Service) held(h Hash) bool {
	if sv.store.has(h) {
		return true
	}
	if id, ok := h.gitID(); ok {
		return sv.sc.git.has(id)
	}
	return false
}

// adoptLocked copies into the store the git blobs that files recorded by
// the previous checkpoint held and no longer hold (changed, removed,
// renamed): from now on that checkpoint's content no longer depends on
// the workspace's git keeping them. A blob git no longer has is lost for
// that checkpoint; it is logged, and the new checkpoint is taken all the
// same.
func (sv *Service) adoptLocked(changes []Change) error {
	st := sv.store
	var want []Hash
	seen := map[Hash]bool{}
	for i := range changes {
		o := changes[i].Old
		if o == nil || o.Kind != KindFile || seen[o.Hash] || st.has(o.Hash) {
			continue
		}
		if _, ok := o.Hash.gitID(); ok {
			seen[o.Hash] = true
			want = append(want, o.Hash)
		}
	}
	if len(want) == 0 {
		return nil
	}
	b := st.newBatch(0)
	var scratch []byte
	lost := 0
	for _, h := range want {
		id, _ := h.gitID()
		data, err := sv.sc.git.blob(id)
		if err != nil {
			lost++
			sv.log.Warn("checkpoint: a file's earlier content, recorded as a git blob, can no longer be copied from git; checkpoints holding it cannot restore it", "blob", id.String(), "err", err)
			continue
		}
		if scratch, err = b.put(h, objBlob, data, scratch); err != nil {
			b.abort()
			return sv.failed(err)
		}
	}
	if err := b.commit(); err != nil {
		return sv.failed(err)
	}
	sv.adopted += len(want) - lost
	return nil
}

// tooLarge is the refusal of a workspace too large for the bound.
func (sv *Service) tooLarge() error {
	return codes.Errorf(codes.CheckpointTooLarge, "the workspace (%s) does not fit in --checkpoint-max-bytes (%s) even compressed and with every older checkpoint dropped; nothing was written. Raise --checkpoint-max-bytes, add large generated files to .gitignore, or lower --checkpoint-max-file-size (%s) so big files are recorded without their content",
		strings.Join(sv.opts.Roots, ", "), files.HumanSize(sv.opts.MaxBytes), files.HumanSize(sv.opts.MaxFileSize))
}

// failed words an error of the store or the scan.
func (sv *Service) failed(err error) error {
	if _, ok := codes.As(err); ok {
		return err
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return codes.Errorf(codes.CheckpointFailed, "no checkpoint was taken: the disk holding the checkpoint store (%s) is full (%v); the store and the workspace are unchanged. Free space there, or lower --checkpoint-max-bytes", sv.store.Parent, err)
	}
	return codes.Errorf(codes.CheckpointFailed, "no checkpoint was taken: %v; the store (%s) and the workspace are unchanged", err, sv.store.Dir)
}

// Created is the answer to Create.
type Created struct {
	Record *Record
	// Previous is the checkpoint compared with ("" for the first).
	Previous string
	Changes  []Change
	// Existing says nothing changed since Record, which is returned
	// instead of a new one (no label was given to keep).
	Existing bool
}

// Create takes a checkpoint on request, scanning the whole workspace.
func (sv *Service) Create(c Caller, label string) (*Created, error) {
	<-sv.ready
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.closed {
		return nil, errClosed
	}
	prev := sv.store.newest()
	rec, changes, err := sv.checkpointLocked(c, fixed("on request"), label, true, true)
	if err != nil {
		return nil, err
	}
	sv.suspended = nil
	if rec == prev {
		// Nothing changed and no label to keep: that checkpoint already
		// records this state.
		return &Created{Record: rec, Existing: true}, nil
	}
	return &Created{Record: rec, Previous: rec.Parent, Changes: changes}, nil
}

// Listing is the answer to List.
type Listing struct {
	// Checkpoints, newest first.
	Checkpoints []*Record
	// Caller is the asking session's key.
	Caller string
	Roots  []string
	// Bytes is what the store takes; MaxBytes the bound of the
	// checkpoint directory.
	Bytes, MaxBytes int64
	// Tracking says how changes are found.
	Tracking string
	// Notes are things the caller should know (an interrupted restore,
	// suspended automatic checkpoints).
	Notes []string
}

// List returns every checkpoint of the workspace, of every session.
// While the start-up checkpoint is being taken it does not wait: it
// answers with the checkpoints the store holds and says how far the
// start-up one is.
func (sv *Service) List(c Caller) (*Listing, error) {
	if done, read, total := sv.Baseline(); !done {
		return sv.listEarly(c, read, total)
	}
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.closed {
		return nil, errClosed
	}
	st := sv.store
	if err := st.lock(); err != nil {
		return nil, sv.failed(err)
	}
	defer st.unlock()
	l := &Listing{Roots: sv.opts.Roots, Bytes: st.size, MaxBytes: sv.opts.MaxBytes}
	if c != nil {
		l.Caller = c.CheckpointKey()
	}
	for i := len(st.records) - 1; i >= 0; i-- {
		l.Checkpoints = append(l.Checkpoints, st.records[i])
	}
	switch {
	case sv.sc.tracking():
		l.Tracking = "changes are tracked as they happen (inotify); each checkpoint reads only what changed"
	case sv.sc.watchErr != nil:
		l.Tracking = fmt.Sprintf("each checkpoint scans the workspace (no change tracking: %v)", sv.sc.watchErr)
	}
	if sv.interrupted != "" {
		l.Notes = append(l.Notes, sv.interrupted)
	}
	if sv.suspended != nil {
		l.Notes = append(l.Notes, "automatic checkpoints are suspended: "+sv.suspended.Error())
	}
	return l, nil
}

// listEarly answers List during the start-up checkpoint, from what the
// store's files say (read without its lock, which the start-up checkpoint
// holds: records and packs are renamed into place whole).
func (sv *Service) listEarly(c Caller, read, total int64) (*Listing, error) {
	recs, size := sv.store.peek()
	l := &Listing{Roots: sv.opts.Roots, Bytes: size, MaxBytes: sv.opts.MaxBytes}
	if c != nil {
		l.Caller = c.CheckpointKey()
	}
	for i := len(recs) - 1; i >= 0; i-- {
		l.Checkpoints = append(l.Checkpoints, recs[i])
	}
	if sv.interrupted != "" {
		// Set by Open, before the start-up checkpoint began.
		l.Notes = append(l.Notes, sv.interrupted)
	}
	note := "the start-up checkpoint is being taken (listing the workspace)"
	if total > 0 {
		note = fmt.Sprintf("the start-up checkpoint is being taken: %d of %d files read", read, total)
	}
	l.Notes = append(l.Notes, note+"; calls that can change the workspace wait for it")
	return l, nil
}

// FileDiff is the difference of one changed path.
type FileDiff struct {
	Change
	// Patch is a unified diff of a text file ("" when not shown).
	Patch string
	// Binary is set when either side is not text.
	Binary bool
	// Omitted is set when the patch was left out to keep the answer
	// bounded.
	Omitted bool
}

// DiffResult is the answer to Diff.
type DiffResult struct {
	From, To string // ids, or "now"
	// FromNote says how the default was chosen.
	FromNote string
	Roots    []string
	Files    []FileDiff
	Counts   Counts
}

// Diff compares two checkpoints, or one with the workspace now. from ""
// is the caller's first checkpoint; to "" or "now" is the workspace now.
// paths (absolute) limit it.
func (sv *Service) Diff(c Caller, from, to string, paths []string) (*DiffResult, error) {
	<-sv.ready
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.closed {
		return nil, errClosed
	}
	f, err := sv.filter(paths)
	if err != nil {
		return nil, err
	}
	res := &DiffResult{Roots: sv.opts.Roots}
	var toHash Hash
	if to == "" || to == "now" {
		res.To = "now"
		if _, err := sv.sc.scan(true); err != nil {
			return nil, sv.failed(err)
		}
	}
	st := sv.store
	if err := st.lock(); err != nil {
		return nil, sv.failed(err)
	}
	defer st.unlock()
	if res.To == "now" {
		if toHash, err = sv.storeLocked(); err != nil {
			return nil, err
		}
	} else {
		r, err := sv.findLocked(to)
		if err != nil {
			return nil, err
		}
		res.To, toHash = r.ID, r.root()
	}
	fromRec, note, err := sv.defaultFrom(c, from)
	if err != nil {
		return nil, err
	}
	res.From, res.FromNote = fromRec.ID, note
	changes, err := st.diffRoots(fromRec.root(), toHash, f)
	if err != nil {
		return nil, sv.failed(err)
	}
	res.Counts = count(changes)
	total := 0
	for _, ch := range changes {
		fd := FileDiff{Change: ch}
		if total > MaxDiffChars {
			fd.Omitted = textLike(ch)
			res.Files = append(res.Files, fd)
			continue
		}
		fd.Patch, fd.Binary = sv.patch(ch, len(sv.opts.Roots) > 1)
		total += len(fd.Patch)
		res.Files = append(res.Files, fd)
	}
	return res, nil
}

// textLike says whether a change could have a text patch.
func textLike(ch Change) bool {
	for _, e := range []*Entry{ch.Old, ch.New} {
		if e != nil && e.Kind != KindFile {
			return false
		}
	}
	return true
}

// maxPatchFile bounds the files a patch is made of.
const maxPatchFile = 4 << 20

// patch makes the unified diff of a changed file (both sides files, or
// one side absent). abs names paths absolutely (several roots).
func (sv *Service) patch(ch Change, abs bool) (string, bool) {
	if !textLike(ch) {
		return "", false
	}
	var a, b []byte
	if ch.Old != nil {
		if ch.Old.Size > maxPatchFile {
			return "", false
		}
		var err error
		if a, err = sv.store.read(ch.Old.Hash); err != nil {
			return "", false
		}
	}
	if ch.New != nil {
		if ch.New.Size > maxPatchFile {
			return "", false
		}
		var err error
		if b, err = sv.store.read(ch.New.Hash); err != nil {
			return "", false
		}
	}
	if !textdiff.IsText(a) || !textdiff.IsText(b) {
		return "", true
	}
	name := ch.Rel
	if abs {
		name = ch.Abs()
	}
	oldName, newName := "a/"+name, "b/"+name
	if abs {
		oldName, newName = "a"+name, "b"+name
	}
	if ch.Old == nil {
		oldName = "/dev/null"
	}
	if ch.New == nil {
		newName = "/dev/null"
	}
	return textdiff.Unified(oldName, newName, a, b, 3), false
}

// defaultFrom resolves the from side of a diff.
func (sv *Service) defaultFrom(c Caller, from string) (*Record, string, error) {
	st := sv.store
	if from != "" {
		r, err := sv.findLocked(from)
		return r, "", err
	}
	if c != nil {
		if id := c.FirstCheckpoint(); id != "" {
			if r := st.find(id); r != nil {
				return r, fmt.Sprintf("%s is this session's first checkpoint", id), nil
			}
			if len(st.records) > 0 {
				return st.records[0], fmt.Sprintf("this session's first checkpoint %s was pruned (--checkpoint-max-bytes); %s is the oldest kept", id, st.records[0].ID), nil
			}
		}
	}
	if n := st.newest(); n != nil {
		return n, fmt.Sprintf("this session has made no checkpoint yet; %s is the newest", n.ID), nil
	}
	return nil, "", codes.Errorf(codes.CheckpointNotFound, "there is no checkpoint yet to compare with: take one with action \"create\"")
}

// findLocked returns the checkpoint with an id.
func (sv *Service) findLocked(id string) (*Record, error) {
	id = strings.TrimSpace(id)
	if r := sv.store.find(id); r != nil {
		return r, nil
	}
	rs := sv.store.records
	if len(rs) == 0 {
		return nil, codes.Errorf(codes.CheckpointNotFound, "no checkpoint %q: there are none yet (take one with action \"create\")", id)
	}
	return nil, codes.Errorf(codes.CheckpointNotFound, "no checkpoint %q: the checkpoints kept are %s to %s (action \"list\" shows them); older ones are pruned to stay within --checkpoint-max-bytes", id, rs[0].ID, rs[len(rs)-1].ID)
}

// filter turns absolute paths into a path filter (nil: everything).
func (sv *Service) filter(paths []string) (*pathFilter, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	f := &pathFilter{byRoot: map[string][]string{}}
	for _, p := range paths {
		p = filepath.Clean(p)
		root := ""
		for _, r := range sv.opts.Roots {
			if scope.Within(p, r) && len(r) > len(root) {
				root = r
			}
		}
		if root == "" {
			return nil, codes.Errorf(codes.InvalidInput, "%s is outside the workspace (%s): checkpoints cover only those directories", p, strings.Join(sv.opts.Roots, ", "))
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			rel = ""
		}
		f.byRoot[root] = append(f.byRoot[root], filepath.ToSlash(rel))
	}
	return f, nil
}

// Restored is the answer to Restore.
type Restored struct {
	Target *Record
	// Before is the checkpoint of the state before the restore (taken
	// for it, or the newest when nothing had changed since).
	Before *Record
	RestoreResult
	// Paths are the paths asked for (nil: all).
	Paths []string
}

// Restore puts the workspace (or paths, absolute) back as it was at a
// checkpoint, after checkpointing the state before.
func (sv *Service) Restore(c Caller, id string, paths []string) (*Restored, error) {
	<-sv.ready
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.closed {
		return nil, errClosed
	}
	f, err := sv.filter(paths)
	if err != nil {
		return nil, err
	}
	st := sv.store
	if err := st.lock(); err != nil {
		return nil, sv.failed(err)
	}
	target, err := sv.findLocked(id)
	st.unlock()
	if err != nil {
		return nil, err
	}
	// The state before: restoring some paths, with changes tracked, the
	// directories that hold them are listed again (every entry stat'ed,
	// which also sees what inotify cannot report) on top of what the
	// tracker reported, as `git checkout -- <paths>` looks only at its
	// paths; a whole restore scans everything.
	full := true
	if f != nil && sv.sc.tracking() && sv.sc.scanned && !sv.sc.needFull {
		sv.sc.markPaths(paths)
		full = false
	}
	before, _, err := sv.checkpointLocked(c, fixed("before restore to "+target.ID), "", full, false)
	if err != nil {
		return nil, err
	}
	if err := st.lock(); err != nil {
		return nil, sv.failed(err)
	}
	defer st.unlock()
	if st.find(target.ID) == nil {
		return nil, codes.Errorf(codes.CheckpointNotFound, "checkpoint %s was pruned to make room for the checkpoint of the state before the restore (%s); nothing was restored", target.ID, before.ID)
	}
	res, err := sv.restoreLocked(before.root(), target.root(), f, journal{Target: target.ID, Before: before.ID})
	out := &Restored{Target: target, Before: before, Paths: paths}
	if res != nil {
		out.RestoreResult = *res
	}
	sv.afterRestore()
	if err != nil {
		return nil, err
	}
	return out, nil
}

// afterRestore makes the next checkpoint store what the restore wrote.
// The scan finds it like any other change: the restore's own removals,
// directories and renames are reported to the tracker as they happen.
func (sv *Service) afterRestore() {
	sv.cur = Hash{}
}

// restoreLocked plans and carries out a restore from the tree cur (the
// disk now) to the tree to; a failure in the middle puts back what was
// changed.
func (sv *Service) restoreLocked(cur, to Hash, f *pathFilter, j journal) (*RestoreResult, error) {
	st := sv.store
	pl, created, removed, err := sv.plan(cur, to, f)
	if err != nil {
		return nil, sv.restoreFailed(err, j)
	}
	res, err := st.execute(pl, created, removed, j)
	if err == nil {
		return res, nil
	}
	var ae *applyError
	if !errors.As(err, &ae) {
		return nil, sv.restoreFailed(err, j)
	}
	// Put back what the second phase changed, from the checkpoint of the
	// state before.
	back := &pathFilter{byRoot: map[string][]string{}}
	for _, p := range ae.done {
		for _, r := range sv.opts.Roots {
			if scope.Within(p, r) {
				rel, _ := filepath.Rel(r, p)
				if rel == "." {
					rel = ""
				}
				back.byRoot[r] = append(back.byRoot[r], filepath.ToSlash(rel))
			}
		}
	}
	undo := ""
	if len(ae.done) > 0 {
		sv.sc.needFull = true
		if _, serr := sv.sc.scan(true); serr == nil {
			if now, serr := sv.storeLocked(); serr == nil {
				if bpl, bc, br, perr := sv.plan(now, cur, back); perr == nil {
					if _, xerr := st.execute(bpl, bc, br, journal{Target: j.Before, Before: j.Before}); xerr == nil {
						undo = "the paths it had changed were put back as they were"
					} else {
						undo = fmt.Sprintf("putting back the paths it had changed failed too (%v): restore %s to get them back", xerr, j.Before)
					}
				}
			}
		}
		if undo == "" {
			undo = fmt.Sprintf("it had changed %d paths: restore %s to put them back", len(ae.done), j.Before)
		}
	} else {
		undo = "nothing had been changed"
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return nil, codes.Errorf(codes.CheckpointFailed, "restore to %s failed: the disk is full (%v); %s. Free space and restore again", j.Target, err, undo)
	}
	return nil, codes.Errorf(codes.CheckpointFailed, "restore to %s failed: %v; %s", j.Target, err, undo)
}

func (sv *Service) plan(cur, to Hash, f *pathFilter) (*plan, map[relPath]bool, map[relPath]bool, error) {
	pl := &planner{s: sv.store, f: f, policy: sv.opts.Policy, removed: map[relPath]bool{}, created: map[relPath]bool{}}
	p, err := pl.makePlan(cur, to)
	return p, pl.created, pl.removed, err
}

// restoreFailed words a failure of the first phase: nothing changed.
func (sv *Service) restoreFailed(err error, j journal) error {
	if _, ok := codes.As(err); ok {
		return err
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return codes.Errorf(codes.CheckpointFailed, "restore to %s failed: the disk is full (%v); nothing was changed (every staged file was removed). Free space and restore again", j.Target, err)
	}
	return codes.Errorf(codes.CheckpointFailed, "restore to %s failed before changing anything: %v", j.Target, err)
}

// Verify reads every object every checkpoint needs and checks its hash;
// it returns what is wrong (for tests and diagnostics).
func (sv *Service) Verify() error {
	<-sv.ready
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return sv.store.Verify()
}

// Verify checks every checkpoint of the store: all their objects are
// there and match their hashes.
func (s *Store) Verify() error {
	if err := s.lock(); err != nil {
		return err
	}
	defer s.unlock()
	if s.ext == nil {
		// Opened alone: the blobs checkpoints borrow from git are read
		// from the repositories the workspace's roots are in.
		g := newGitState(func(string, ...any) {})
		defer g.close()
		for _, r := range s.roots {
			g.repoAbove(r)
		}
		s.ext = func(h Hash) ([]byte, error) {
			id, _ := h.gitID()
			return g.blob(id)
		}
		defer func() { s.ext = nil }()
	}
	set, err := s.mark(s.rootsOf(s.records))
	if err != nil {
		return err
	}
	for h := range set {
		if _, err := s.read(h); err != nil {
			return err
		}
	}
	return nil
}
