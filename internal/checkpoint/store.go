package checkpoint

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/sys/unix"
)

// The store of one workspace is a directory under the checkpoint
// directory, named after the workspace's roots:
//
//	roots             the workspace's directories, one per line
//	lock              flock'ed around every operation (processes share it)
//	owner             flock'ed shared by every process using the store
//	gen               "<generation> <epoch>": bumped on every change, the
//	                  epoch on every deletion, so a process sees when its
//	                  view of the store is stale
//	p-<time>-<rand>.pack   objects (see pack.go)
//	c-<seq>.json      one checkpoint each
//	restore.journal   the temporary files of a restore in progress
//	tmp/              files being written
//
// Every file is written under tmp/, synced, then renamed into place, and
// the directory synced: a crash or a full disk leaves either the old
// state or the new one, plus at most some garbage in tmp/ that the next
// process to open the store removes.

// Record is one checkpoint.
type Record struct {
	ID  string `json:"id"`
	Seq int    `json:"seq"`
	// Time is when the checkpoint was taken.
	Time time.Time `json:"time"`
	// Session is the display name of the session that made it, and
	// SessionKey tells sessions of the same name apart.
	Session    string `json:"session"`
	SessionKey string `json:"session_key"`
	// Label is the caller's label of an explicit checkpoint.
	Label string `json:"label,omitempty"`
	// Reason says what made it: "before bash: `make`", "on request", …
	Reason string `json:"reason"`
	// Root is the hash of the workspace tree.
	Root string `json:"root"`
	// Parent is the checkpoint it was compared with for Changes.
	Parent  string `json:"parent,omitempty"`
	Changes Counts `json:"changes"`
}

// Counts sums up a set of changes.
type Counts struct {
	Added    int `json:"added"`
	Modified int `json:"modified"`
	Deleted  int `json:"deleted"`
}

// Total is the number of changed paths.
func (c Counts) Total() int { return c.Added + c.Modified + c.Deleted }

func (r *Record) root() Hash {
	h, _ := ParseHash(r.Root)
	return h
}

// Store is the content-addressed object store and the checkpoint records
// of one workspace. Methods that read or change it run between lock and
// unlock.
type Store struct {
	Dir    string // the store's directory
	Parent string // the checkpoint directory holding it
	roots  []string

	mu        sync.Mutex // held between lock and unlock
	lockFile  *os.File
	ownerFile *os.File

	gen, epoch uint64
	// stale is set when the store changed under this process in a way
	// that may have removed objects (another process collected garbage):
	// what the caller knows to be stored must be checked again.
	stale bool

	packs   map[string]*pack
	index   map[Hash]loc
	records []*Record // by Seq
	size    int64     // bytes of packs and records

	enc *zstd.Encoder
	dec *zstd.Decoder

	// ext reads a git blob the store does not hold (nil: none can be
	// read); checkpoints name such blobs until their files change.
	ext func(Hash) ([]byte, error)

	// syncing is closed once a lazily committed pack is flushed;
	// flushing counts such flushes (Close waits for them).
	syncing  chan struct{}
	flushing sync.WaitGroup

	treeCache map[Hash][]Entry
	// sibCache is what the other stores of the directory took when last
	// counted.
	sibCache struct {
		total int64
		at    time.Time
	}
}

// storeKey names a workspace's store: a hash of its roots.
func storeKey(roots []string) string {
	h := sha256.Sum256([]byte(strings.Join(roots, "\x00")))
	return "ws-" + hex.EncodeToString(h[:8])
}

// OpenStore opens (creating it if need be) the store of the workspace
// roots under the checkpoint directory parent. Leftovers of a process
// killed while writing are removed.
func OpenStore(parent string, roots []string) (*Store, error) {
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, fmt.Errorf("create the checkpoint directory %s: %w", parent, err)
	}
	s := &Store{Parent: parent, Dir: filepath.Join(parent, storeKey(roots)), roots: roots, packs: map[string]*pack{}, index: map[Hash]loc{}, treeCache: map[Hash][]Entry{}}
	if err := os.MkdirAll(filepath.Join(s.Dir, "tmp"), 0o700); err != nil {
		return nil, fmt.Errorf("create the checkpoint store %s: %w", s.Dir, err)
	}
	var err error
	if s.enc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithLowerEncoderMem(true), zstd.WithWindowSize(bigObject)); err != nil {
		return nil, err
	}
	if s.dec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderLowmem(true)); err != nil {
		return nil, err
	}
	if s.ownerFile, err = os.OpenFile(filepath.Join(s.Dir, "owner"), os.O_RDWR|os.O_CREATE, 0o600); err != nil {
		return nil, fmt.Errorf("open the checkpoint store %s: %w", s.Dir, err)
	}
	if err := flock(s.ownerFile, unix.LOCK_SH); err != nil {
		s.ownerFile.Close()
		return nil, err
	}
	if s.lockFile, err = os.OpenFile(filepath.Join(s.Dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600); err != nil {
		s.ownerFile.Close()
		return nil, fmt.Errorf("open the checkpoint store %s: %w", s.Dir, err)
	}
	if err := s.lock(); err != nil {
		s.Close()
		return nil, err
	}
	defer s.unlock()
	// Whatever is in tmp/ belongs to a write that never finished: every
	// writer holds the lock, and we hold it now.
	if ents, err := os.ReadDir(filepath.Join(s.Dir, "tmp")); err == nil {
		for _, e := range ents {
			_ = os.RemoveAll(filepath.Join(s.Dir, "tmp", e.Name()))
		}
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "roots")); err != nil {
		// Not flushed (two syncs a first start would wait for): after a
		// power loss a store may lack it, and is then never taken for
		// another workspace's to remove — it is only this one's.
		if err := s.writeFile("roots", []byte(strings.Join(roots, "\n")+"\n"), false); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// Close releases the store's files.
func (s *Store) Close() {
	s.flushing.Wait()
	for _, p := range s.packs {
		p.close()
	}
	if s.lockFile != nil {
		s.lockFile.Close()
	}
	if s.ownerFile != nil {
		s.ownerFile.Close()
	}
	if s.enc != nil {
		s.enc.Close()
	}
	if s.dec != nil {
		s.dec.Close()
	}
}

func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			if err != nil {
				return fmt.Errorf("lock %s: %w", f.Name(), err)
			}
			return nil
		}
	}
}

// lock takes the store for this process and this goroutine and brings the
// in-memory view up to date with what other processes did.
func (s *Store) lock() error {
	s.mu.Lock()
	if err := flock(s.lockFile, unix.LOCK_EX); err != nil {
		s.mu.Unlock()
		return err
	}
	s.waitSync()
	if err := s.refresh(); err != nil {
		s.unlock()
		return err
	}
	return nil
}

// waitSync waits for a lazily committed pack to be flushed (s.mu held).
func (s *Store) waitSync() {
	if s.syncing != nil {
		<-s.syncing
		s.syncing = nil
	}
}

func (s *Store) unlock() {
	// Packs read during the operation are closed: between operations the
	// store holds no descriptor but its two lock files.
	for _, p := range s.packs {
		p.close()
	}
	_ = flock(s.lockFile, unix.LOCK_UN)
	s.mu.Unlock()
}

// readGen reads the generation file (zeros when there is none).
func (s *Store) readGen() (gen, epoch uint64) {
	b, err := os.ReadFile(filepath.Join(s.Dir, "gen"))
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(b))
	if len(f) == 2 {
		gen, _ = strconv.ParseUint(f[0], 10, 64)
		epoch, _ = strconv.ParseUint(f[1], 10, 64)
	}
	return gen, epoch
}

// bump records a change of the store for other processes; deleted says
// objects or records were removed. The file is written in place, under
// the lock every reader holds, and not synced: it is a hint for caches,
// and after a crash every process starts from the disk anyway (a torn
// file reads as zeros, which makes the next reader reload).
func (s *Store) bump(deleted bool) {
	gen, epoch := s.readGen()
	gen = max(gen, s.gen) + 1
	epoch = max(epoch, s.epoch)
	if deleted {
		epoch++
	}
	f, err := os.OpenFile(filepath.Join(s.Dir, "gen"), os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	_, err = f.WriteAt([]byte(fmt.Sprintf("%020d %020d\n", gen, epoch)), 0)
	f.Close()
	if err == nil {
		s.gen, s.epoch = gen, epoch
	}
}

// refresh reloads the packs and records when another process changed the
// store since this one last looked (or on the first lock).
func (s *Store) refresh() error {
	gen, epoch := s.readGen()
	first := s.records == nil && len(s.packs) == 0
	if !first && gen == s.gen && epoch == s.epoch {
		return nil
	}
	if !first && epoch != s.epoch {
		s.stale = true
	}
	ents, err := os.ReadDir(s.Dir)
	if err != nil {
		return fmt.Errorf("read the checkpoint store %s: %w", s.Dir, err)
	}
	present := map[string]bool{}
	var recs []*Record
	var size int64
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, ".pack"):
			present[name] = true
			p := s.packs[name]
			if p == nil {
				entries, psize, err := readPackIndex(filepath.Join(s.Dir, name))
				if err != nil {
					// A pack that does not read back whole is not
					// used; what needs it is reported missing.
					continue
				}
				p = &pack{name: name, size: psize, path: filepath.Join(s.Dir, name), entries: entries}
				s.packs[name] = p
				for _, pe := range entries {
					if _, ok := s.index[pe.hash]; !ok {
						s.index[pe.hash] = loc{pack: p, off: pe.off, n: pe.n}
					}
				}
			}
			size += p.size
		case strings.HasPrefix(name, "c-") && strings.HasSuffix(name, ".json"):
			if r, n := s.readRecord(name); r != nil {
				recs = append(recs, r)
				size += n
			}
		}
	}
	removed := false
	for name, p := range s.packs {
		if !present[name] {
			p.close()
			delete(s.packs, name)
			removed = true
		}
	}
	if removed {
		s.reindex()
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Seq < recs[j].Seq })
	if recs == nil {
		recs = []*Record{}
	}
	s.records, s.size = recs, size
	s.gen, s.epoch = gen, epoch
	return nil
}

// readRecord reads one checkpoint record file and its size; nil when it
// cannot be read or holds no record.
func (s *Store) readRecord(name string) (*Record, int64) {
	b, err := os.ReadFile(filepath.Join(s.Dir, name))
	if err != nil {
		return nil, 0
	}
	var r Record
	if json.Unmarshal(b, &r) != nil || r.ID == "" {
		return nil, 0
	}
	return &r, int64(len(b))
}

// peek reads the checkpoint records and the store's size from its
// files without the lock and without changing what this process knows
// of the store.
func (s *Store) peek() ([]*Record, int64) {
	ents, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil, 0
	}
	var recs []*Record
	var size int64
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, ".pack"):
			if fi, err := e.Info(); err == nil {
				size += fi.Size()
			}
		case strings.HasPrefix(name, "c-") && strings.HasSuffix(name, ".json"):
			if r, n := s.readRecord(name); r != nil {
				recs = append(recs, r)
				size += n
			}
		}
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Seq < recs[j].Seq })
	return recs, size
}

// reindex rebuilds the object index from the open packs.
func (s *Store) reindex() {
	s.index = make(map[Hash]loc, len(s.index))
	for _, p := range s.packs {
		for _, pe := range p.entries {
			if _, ok := s.index[pe.hash]; !ok {
				s.index[pe.hash] = loc{pack: p, off: pe.off, n: pe.n}
			}
		}
	}
}

// Stale reports (and clears) whether objects may have been removed by
// another process since the last call.
func (s *Store) takeStale() bool {
	st := s.stale
	s.stale = false
	return st
}

func (s *Store) has(h Hash) bool {
	_, ok := s.index[h]
	return ok
}

// errMissing says an object a checkpoint needs is not in the store.
var errMissing = errors.New("object missing from the checkpoint store")

func (s *Store) read(h Hash) ([]byte, error) {
	l, ok := s.index[h]
	if !ok {
		if _, git := h.gitID(); git && s.ext != nil {
			data, err := s.ext(h)
			if err != nil {
				return nil, fmt.Errorf("%w: %s (a git blob the workspace's repository no longer has: %v)", errMissing, h, err)
			}
			return data, nil
		}
		return nil, fmt.Errorf("%w: %s", errMissing, h)
	}
	_, data, err := readRecord(l, h, s.dec)
	return data, err
}

// readTree returns the entries of a stored tree (shared: do not modify).
func (s *Store) readTree(h Hash) ([]Entry, error) {
	if es, ok := s.treeCache[h]; ok {
		return es, nil
	}
	b, err := s.read(h)
	if err != nil {
		return nil, err
	}
	es, err := decodeTree(b)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", h, err)
	}
	if len(s.treeCache) > 8192 {
		clear(s.treeCache)
	}
	s.treeCache[h] = es
	return es, nil
}

// writeFile writes name in the store directory atomically: a reader sees
// the old file or the new one. Durable (synced, with the directory) only
// when durable says so: a checkpoint record needs no sync, since every
// object it names was synced before it was written, so after a power
// loss it is either there and whole, or missing, or unreadable and
// skipped — never naming what is not stored.
func (s *Store) writeFile(name string, data []byte, durable bool) error {
	tmp := filepath.Join(s.Dir, "tmp", name+"."+randHex(4))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && durable {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(s.Dir, name))
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if !durable {
		return nil
	}
	return syncDir(s.Dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// batch is a pack being written by one checkpoint. put is safe for
// concurrent use; commit and abort are not.
type batch struct {
	s       *Store
	mu      sync.Mutex
	pw      *packWriter
	f       *os.File
	tmp     string
	pending map[Hash]struct{}
	err     error
	// written counts the bytes added; limit (0: none) makes put fail with
	// errTooLarge beyond it.
	written, limit int64
	// bigEnc compresses the big objects of this batch (see bigObject).
	encOnce sync.Once
	bigEnc  *zstd.Encoder
	// lazy commits the pack without waiting for the disk: the start-up
	// checkpoint's, which the first call that can change the workspace
	// waits for. Its record may then be written before the pack is on
	// the disk — after a power loss at that moment the start-up
	// checkpoint can be unreadable, never another one, as every later
	// operation waits for the flush (Store.syncing).
	lazy bool
}

// errTooLarge is returned by put once a batch grows past its limit.
var errTooLarge = errors.New("the checkpoint is larger than the store may hold")

func (s *Store) newBatch(limit int64) *batch {
	return &batch{s: s, pending: map[Hash]struct{}{}, limit: limit}
}

// reserve claims h for this batch: false when it is stored already or
// being stored.
func (b *batch) reserve(h Hash) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.s.index[h]; ok {
		return false
	}
	if _, ok := b.pending[h]; ok {
		return false
	}
	b.pending[h] = struct{}{}
	return true
}

// bigObject is the size from which objects are compressed by an encoder
// of the batch's own, dropped with it: an encoder keeps a history as large
// as the largest input it saw, and the store's long-lived one should stay
// small.
const bigObject = 1 << 20

// encode compresses raw; it is safe to call from several goroutines.
func (b *batch) encode(raw []byte, dst []byte) (byte, []byte) {
	if len(raw) < 64 {
		return codecRaw, raw
	}
	enc := b.s.enc
	if len(raw) >= bigObject {
		b.encOnce.Do(func() {
			b.bigEnc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithLowerEncoderMem(true))
		})
		if b.bigEnc != nil {
			enc = b.bigEnc
		}
	}
	out := enc.EncodeAll(raw, dst[:0])
	if len(out) >= len(raw) {
		return codecRaw, raw
	}
	return codecZstd, out
}

// put stores an object (once). scratch is reused for the compressed
// bytes and returned.
func (b *batch) put(h Hash, kind byte, raw, scratch []byte) ([]byte, error) {
	if !b.reserve(h) {
		return scratch, nil
	}
	// Trees are stored as they are: they are mostly hashes, which do not
	// compress, and compressing the thousands a start-up checkpoint
	// stores cost it more CPU than the rest of its work on them.
	codec, stored := codecRaw, raw
	if kind != objTree {
		codec, stored = b.encode(raw, scratch)
	}
	if codec == codecZstd {
		scratch = stored
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return scratch, b.err
	}
	if b.pw == nil {
		b.tmp = filepath.Join(b.s.Dir, "tmp", "p-"+randHex(8)+".pack")
		f, err := os.OpenFile(b.tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			b.err = err
			return scratch, err
		}
		b.f = f
		if b.pw, b.err = newPackWriter(f); b.err != nil {
			return scratch, b.err
		}
	}
	n, err := b.pw.add(h, kind, codec, len(raw), stored)
	if err != nil {
		b.err = err
		return scratch, err
	}
	b.written += n
	if b.limit > 0 && b.written > b.limit {
		b.err = errTooLarge
		return scratch, b.err
	}
	return scratch, nil
}

// commit makes the pack durable and visible and adds it to the index.
func (b *batch) commit() error {
	if b.err != nil {
		b.abort()
		return b.err
	}
	b.release()
	if b.pw == nil {
		return nil
	}
	b.pw.noSync = b.lazy
	err := b.pw.finish()
	if cerr := b.f.Close(); err == nil {
		err = cerr
	}
	b.f = nil
	if err != nil {
		b.abort()
		return err
	}
	name := fmt.Sprintf("p-%d-%s.pack", time.Now().UnixNano(), randHex(4))
	final := filepath.Join(b.s.Dir, name)
	if err := os.Rename(b.tmp, final); err != nil {
		b.abort()
		return err
	}
	if b.lazy {
		// Flushed in the background; the next operation on the store
		// (lock) waits for it, so no later record can be written before.
		done := make(chan struct{})
		b.s.syncing = done
		dir := b.s.Dir
		b.s.flushing.Add(1)
		go func() {
			defer b.s.flushing.Done()
			defer close(done)
			if f, err := os.Open(final); err == nil {
				_ = f.Sync()
				f.Close()
			}
			_ = syncDir(dir)
		}()
	} else if err := syncDir(b.s.Dir); err != nil {
		_ = os.Remove(final)
		return err
	}
	p := &pack{name: name, size: b.pw.off, path: final, entries: b.pw.entries}
	b.s.packs[name] = p
	for _, pe := range p.entries {
		if _, ok := b.s.index[pe.hash]; !ok {
			b.s.index[pe.hash] = loc{pack: p, off: pe.off, n: pe.n}
		}
	}
	b.s.size += p.size
	b.s.bump(false)
	b.pw = nil
	return nil
}

// release drops the batch's encoder.
func (b *batch) release() {
	if b.bigEnc != nil {
		b.bigEnc.Close()
		b.bigEnc = nil
	}
}

// abort drops the batch's file.
func (b *batch) abort() {
	b.release()
	if b.f != nil {
		b.f.Close()
		b.f = nil
	}
	if b.tmp != "" {
		_ = os.Remove(b.tmp)
	}
	b.pw = nil
}

// nextSeq is the sequence number of the next checkpoint.
func (s *Store) nextSeq() int {
	if n := len(s.records); n > 0 {
		return s.records[n-1].Seq + 1
	}
	return 1
}

// newest returns the latest checkpoint, or nil.
func (s *Store) newest() *Record {
	if n := len(s.records); n > 0 {
		return s.records[n-1]
	}
	return nil
}

// find returns the checkpoint with the id, or nil.
func (s *Store) find(id string) *Record {
	for _, r := range s.records {
		if r.ID == id {
			return r
		}
	}
	return nil
}

func recordName(seq int) string { return fmt.Sprintf("c-%08d.json", seq) }

// publish writes a checkpoint record durably.
func (s *Store) publish(r *Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := s.writeFile(recordName(r.Seq), b, false); err != nil {
		return err
	}
	s.records = append(s.records, r)
	s.size += int64(len(b))
	s.bump(false)
	return nil
}

// removeRecords deletes checkpoints (their objects are collected later).
func (s *Store) removeRecords(drop []*Record) error {
	if len(drop) == 0 {
		return nil
	}
	gone := map[*Record]bool{}
	var err error
	for _, r := range drop {
		p := filepath.Join(s.Dir, recordName(r.Seq))
		if fi, serr := os.Stat(p); serr == nil {
			s.size -= fi.Size()
		}
		if rerr := os.Remove(p); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = rerr
			continue
		}
		gone[r] = true
	}
	keep := s.records[:0]
	for _, r := range s.records {
		if !gone[r] {
			keep = append(keep, r)
		}
	}
	s.records = keep
	_ = syncDir(s.Dir)
	s.bump(true)
	return err
}
