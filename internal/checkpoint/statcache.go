package checkpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// The stat cache is what a process learned of the workspace — for every
// file recorded its size, inode, times, mode and content hash (or git
// blob) — kept with the store, so that the next process to start on the
// same workspace scans it as this one would: it stats every entry and
// reads only the files whose stat data changed, as git's index spares
// `git status` from reading files. It is written a second after the
// start-up checkpoint (at a low priority) and at shutdown; a process killed in between leaves the
// older one, which is only slower (the files changed since are read
// again), never wrong: an entry is trusted only when the file's stat data
// are still those recorded, and entries that were racy when recorded are
// marked so and read again.
const statCacheName = "statcache"

const statCacheMagic = "BSTAT1\n"

// encodeStatCache writes the scanner's tree.
func (sc *scanner) encodeStatCache() []byte {
	b := []byte(statCacheMagic)
	b = binary.AppendUvarint(b, uint64(len(sc.roots)))
	for _, r := range sc.roots {
		b = appendString(b, r.path)
	}
	for _, r := range sc.roots {
		if r.node == nil {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		b = encodeNode(b, r.node)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func encodeNode(b []byte, n *dirNode) []byte {
	keep := 0
	for i := range n.entries {
		if cacheable(&n.entries[i]) {
			keep++
		}
	}
	b = binary.AppendUvarint(b, uint64(keep))
	for i := range n.entries {
		e := &n.entries[i]
		if !cacheable(e) {
			continue
		}
		b = appendString(b, e.Name)
		b = append(b, byte(e.Kind))
		var flags byte
		if e.racy {
			flags |= 1
		}
		b = append(b, flags)
		b = binary.AppendUvarint(b, uint64(e.Mode))
		b = binary.AppendUvarint(b, e.dev)
		b = binary.AppendUvarint(b, e.ino)
		b = binary.AppendVarint(b, e.mtime)
		b = binary.AppendVarint(b, e.ctime)
		switch e.Kind {
		case KindFile:
			b = binary.AppendUvarint(b, uint64(e.Size))
			b = append(b, e.Hash[:]...)
		case KindLarge:
			b = binary.AppendUvarint(b, uint64(e.Size))
			b = binary.AppendVarint(b, e.MTime)
		case KindLink:
			b = appendString(b, e.Target)
		case KindDir:
			sub := e.sub
			if sub == nil {
				sub = &dirNode{}
			}
			b = encodeNode(b, sub)
		}
	}
	return b
}

// cacheable says whether an entry's record can be trusted later: it was
// read (or borrowed) and is in the tree.
func cacheable(e *fsEntry) bool {
	return !e.needHash && !e.ghost && !e.gitCand
}

var errBadCache = errors.New("malformed stat cache")

type cacheReader struct{ b []byte }

func (r *cacheReader) uv() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		panic(errBadCache)
	}
	r.b = r.b[n:]
	return v
}

func (r *cacheReader) sv() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		panic(errBadCache)
	}
	r.b = r.b[n:]
	return v
}

func (r *cacheReader) bytes(n uint64) []byte {
	if n > uint64(len(r.b)) {
		panic(errBadCache)
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *cacheReader) str() string { return string(r.bytes(r.uv())) }

// loadStatCache gives the scanner the tree a previous process recorded;
// the next scan is a full one that trusts what did not change. A cache of
// other roots, or one that does not parse, is ignored.
func (sc *scanner) loadStatCache(b []byte) (files int, err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok && errors.Is(e, errBadCache) {
				files, err = 0, errBadCache
				for _, rt := range sc.roots {
					rt.node = nil
				}
				return
			}
			panic(r)
		}
	}()
	if len(b) < len(statCacheMagic) || string(b[:len(statCacheMagic)]) != statCacheMagic {
		return 0, errBadCache
	}
	r := &cacheReader{b: b[len(statCacheMagic):]}
	if int(r.uv()) != len(sc.roots) {
		return 0, fmt.Errorf("the stat cache is of other directories")
	}
	for _, rt := range sc.roots {
		if r.str() != rt.path {
			return 0, fmt.Errorf("the stat cache is of other directories")
		}
	}
	for _, rt := range sc.roots {
		if r.bytes(1)[0] == 0 {
			continue
		}
		n := &dirNode{root: rt, wd: -1}
		files += decodeNode(r, n)
		rt.node = n
	}
	if len(r.b) != 0 {
		panic(errBadCache)
	}
	return files, nil
}

func decodeNode(r *cacheReader, n *dirNode) int {
	count := r.uv()
	if count > uint64(len(r.b)) {
		panic(errBadCache)
	}
	files := 0
	n.entries = make([]fsEntry, 0, count)
	for i := uint64(0); i < count; i++ {
		var e fsEntry
		e.Name = r.str()
		e.Kind = Kind(r.bytes(1)[0])
		flags := r.bytes(1)[0]
		e.racy = flags&1 != 0
		e.Mode = uint32(r.uv())
		e.dev, e.ino = r.uv(), r.uv()
		e.mtime, e.ctime = r.sv(), r.sv()
		switch e.Kind {
		case KindFile:
			e.Size = int64(r.uv())
			copy(e.Hash[:], r.bytes(32))
			files++
		case KindLarge:
			e.Size = int64(r.uv())
			e.MTime = r.sv()
			files++
		case KindLink:
			e.Target = r.str()
		case KindDir:
			sub := &dirNode{parent: n, root: n.root, rel: joinRel(n.rel, e.Name), wd: -1}
			files += decodeNode(r, sub)
			e.sub = sub
		default:
			panic(errBadCache)
		}
		if k := len(n.entries); k > 0 && n.entries[k-1].Name >= e.Name {
			panic(errBadCache)
		}
		n.entries = append(n.entries, e)
	}
	return files
}

// saveStatCache writes the scanner's tree to the store (the store is
// locked).
func (sv *Service) saveStatCacheLocked() error {
	if !sv.sc.scanned {
		return nil
	}
	raw := sv.sc.encodeStatCache()
	data := sv.store.enc.EncodeAll(raw, make([]byte, 0, len(raw)/4))
	return sv.store.writeFile(statCacheName, data, false)
}

// saveStatCache writes the stat cache in the background: the tree is
// encoded under the service's lock, compressed outside it, and written
// under the store's.
func (sv *Service) saveStatCache() {
	sv.mu.Lock()
	if sv.closed || !sv.sc.scanned {
		sv.mu.Unlock()
		return
	}
	raw := sv.sc.encodeStatCache()
	sv.mu.Unlock()
	data := sv.store.enc.EncodeAll(raw, make([]byte, 0, len(raw)/4))
	if err := sv.store.lock(); err != nil {
		return
	}
	defer sv.store.unlock()
	if err := sv.store.writeFile(statCacheName, data, false); err != nil {
		sv.log.Warn("checkpoint: writing the stat cache failed (the next start reads every file again)", "err", err)
	}
}

// readStatCache loads the stat cache a previous process left, if any.
func (sv *Service) readStatCache() {
	data, err := os.ReadFile(filepath.Join(sv.store.Dir, statCacheName))
	if err != nil {
		return
	}
	raw, err := sv.store.dec.DecodeAll(data, nil)
	if err == nil {
		sv.cachedFiles, err = sv.sc.loadStatCache(raw)
	}
	if err != nil {
		sv.log.Info("checkpoint: the stat cache of the last run is not used; the start-up checkpoint reads every file", "why", err.Error())
		return
	}
	// What it names may have been pruned from the store since: the
	// first store pass checks.
	sv.sc.verify = true
}
