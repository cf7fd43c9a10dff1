package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// indexEntryCost is what one object adds to a pack's index, roughly.
const indexEntryCost = 40

// mark returns every object reachable from roots.
func (s *Store) mark(roots []Hash) (map[Hash]struct{}, error) {
	live := map[Hash]struct{}{}
	var walk func(h Hash) error
	walk = func(h Hash) error {
		if _, ok := live[h]; ok {
			return nil
		}
		live[h] = struct{}{}
		es, err := s.readTree(h)
		if err != nil {
			return err
		}
		for i := range es {
			switch es[i].Kind {
			case KindDir:
				if err := walk(es[i].Hash); err != nil {
					return err
				}
			case KindFile:
				live[es[i].Hash] = struct{}{}
			}
		}
		return nil
	}
	for _, r := range roots {
		if err := walk(r); err != nil {
			return nil, err
		}
	}
	return live, nil
}

// liveBytes is what the objects of set take in packs, indexes included.
func (s *Store) liveBytes(set map[Hash]struct{}) int64 {
	var n int64
	for h := range set {
		if l, ok := s.index[h]; ok {
			n += l.n + indexEntryCost
		}
	}
	return n
}

func (s *Store) rootsOf(recs []*Record, extra ...Hash) []Hash {
	var out []Hash
	for _, h := range extra {
		if !h.IsZero() {
			out = append(out, h)
		}
	}
	for _, r := range recs {
		out = append(out, r.root())
	}
	return out
}

// recordsBytes estimates what records take.
func recordsBytes(recs []*Record) int64 { return int64(len(recs)) * 400 }

// makeRoom makes the store fit budget bytes once a checkpoint with root
// newRoot (already stored, not yet published) is added: the oldest
// checkpoints are dropped, then packs holding dropped objects are
// rewritten or deleted. It fails with errTooLarge, dropping nothing, when
// newRoot alone does not fit.
func (s *Store) makeRoom(newRoot Hash, budget int64) (dropped []*Record, err error) {
	if s.size <= budget {
		return nil, nil
	}
	fits := func(k int) (bool, error) {
		set, err := s.mark(s.rootsOf(s.records[k:], newRoot))
		if err != nil {
			return false, err
		}
		return s.liveBytes(set)+recordsBytes(s.records[k:])+400 <= budget, nil
	}
	ok, err := fits(len(s.records))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errTooLarge
	}
	// The smallest number of oldest checkpoints to drop: fewer never fit
	// when more do not, so a binary search finds it.
	k := sort.Search(len(s.records), func(k int) bool {
		ok, ferr := fits(k)
		if ferr != nil {
			err = ferr
			return true
		}
		return ok
	})
	if err != nil {
		return nil, err
	}
	dropped = append(dropped, s.records[:k]...)
	if err := s.removeRecords(dropped); err != nil {
		return dropped, err
	}
	return dropped, s.compact(newRoot, budget)
}

// compact deletes packs no checkpoint needs and rewrites those that hold
// dead objects while the store is over budget (the newest first, so the
// rewrite reads what is hot in the cache).
func (s *Store) compact(newRoot Hash, budget int64) error {
	set, err := s.mark(s.rootsOf(s.records, newRoot))
	if err != nil {
		return err
	}
	type packLive struct {
		p    *pack
		live int64
	}
	var partial []packLive
	for _, p := range s.packs {
		var live int64
		for _, pe := range p.entries {
			if _, ok := set[pe.hash]; ok {
				if l := s.index[pe.hash]; l.pack == p {
					live += pe.n
				}
			}
		}
		switch {
		case live == 0:
			s.dropPack(p)
		case live < p.size-int64(len(packMagic))-trailerLen-int64(len(p.entries))*indexEntryCost:
			partial = append(partial, packLive{p, live})
		}
	}
	sort.Slice(partial, func(i, j int) bool { return partial[i].p.name > partial[j].p.name })
	for _, pl := range partial {
		if s.size <= budget {
			break
		}
		if err := s.repack([]*pack{pl.p}, set); err != nil {
			return err
		}
	}
	s.bump(true)
	return nil
}

// dropPack deletes a pack and forgets its objects.
func (s *Store) dropPack(p *pack) {
	p.close()
	if err := os.Remove(p.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return
	}
	delete(s.packs, p.name)
	s.size -= p.size
	for _, pe := range p.entries {
		if l, ok := s.index[pe.hash]; ok && l.pack == p {
			delete(s.index, pe.hash)
		}
	}
	// Another pack may hold a copy of an object just forgotten.
	for _, q := range s.packs {
		for _, pe := range q.entries {
			if _, ok := s.index[pe.hash]; !ok {
				s.index[pe.hash] = loc{pack: q, off: pe.off, n: pe.n}
			}
		}
	}
}

// repack copies the live objects of packs into one new pack, then deletes
// them. Until the new pack is in place the old ones stay, so a crash in
// between leaves duplicates, never a loss.
func (s *Store) repack(packs []*pack, live map[Hash]struct{}) error {
	tmp := filepath.Join(s.Dir, "tmp", "r-"+randHex(8)+".pack")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		f.Close()
		_ = os.Remove(tmp)
		return err
	}
	pw, err := newPackWriter(f)
	if err != nil {
		return fail(err)
	}
	seen := map[Hash]bool{}
	for _, p := range packs {
		for _, pe := range p.entries {
			if _, ok := live[pe.hash]; !ok || seen[pe.hash] {
				continue
			}
			seen[pe.hash] = true
			if err := copyRecord(pw, loc{pack: p, off: pe.off, n: pe.n}, pe.hash); err != nil {
				return fail(err)
			}
		}
	}
	if len(pw.entries) > 0 {
		if err := pw.finish(); err != nil {
			return fail(err)
		}
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	var np *pack
	if len(pw.entries) > 0 {
		name := fmt.Sprintf("p-%d-%s.pack", time.Now().UnixNano(), randHex(4))
		final := filepath.Join(s.Dir, name)
		if err := os.Rename(tmp, final); err != nil {
			_ = os.Remove(tmp)
			return err
		}
		if err := syncDir(s.Dir); err != nil {
			return err
		}
		np = &pack{name: name, size: pw.off, path: final, entries: pw.entries}
		s.packs[name] = np
		s.size += np.size
		for _, pe := range np.entries {
			s.index[pe.hash] = loc{pack: np, off: pe.off, n: pe.n}
		}
	} else {
		_ = os.Remove(tmp)
	}
	for _, p := range packs {
		s.dropPack(p)
	}
	return syncDir(s.Dir)
}

// maxPacks is how many packs a store keeps before small ones are merged:
// every checkpoint that stores something writes one, and each costs a
// descriptor when read.
const maxPacks = 48

// consolidate merges the smaller half of the packs into one when there
// are too many.
func (s *Store) consolidate() error {
	if len(s.packs) <= maxPacks {
		return nil
	}
	ps := make([]*pack, 0, len(s.packs))
	for _, p := range s.packs {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].size < ps[j].size })
	small := ps[:len(ps)/2]
	set, err := s.mark(s.rootsOf(s.records))
	if err != nil {
		return err
	}
	if err := s.repack(small, set); err != nil {
		return err
	}
	s.bump(true)
	return nil
}

// sibling is another workspace's store in the same checkpoint directory.
type sibling struct {
	dir    string
	size   int64
	newest time.Time
	roots  []string
}

// siblings lists the other stores of the checkpoint directory.
func (s *Store) siblings() []sibling {
	ents, err := os.ReadDir(s.Parent)
	if err != nil {
		return nil
	}
	var out []sibling
	for _, e := range ents {
		dir := filepath.Join(s.Parent, e.Name())
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "ws-") || dir == s.Dir {
			continue
		}
		sb := sibling{dir: dir}
		files, _ := os.ReadDir(dir)
		for _, f := range files {
			fi, err := f.Info()
			if err != nil || fi.IsDir() {
				continue
			}
			sb.size += fi.Size()
			if strings.HasPrefix(f.Name(), "c-") && fi.ModTime().After(sb.newest) {
				sb.newest = fi.ModTime()
			}
		}
		// Only what is certainly a store: its roots and owner files.
		b, err := os.ReadFile(filepath.Join(dir, "roots"))
		if err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "owner")); err != nil {
			continue
		}
		sb.roots = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		out = append(out, sb)
	}
	return out
}

// removeIfUnused deletes a sibling store unless a process uses it.
func removeIfUnused(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, "owner"), os.O_RDWR, 0)
	if err != nil {
		return false // not a store, or not ours to judge
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return false // in use
	}
	// Renamed first, so a half-removed store is never opened as one.
	trash := filepath.Join(filepath.Dir(dir), ".trash-"+randHex(6))
	if os.Rename(dir, trash) != nil {
		return false
	}
	return os.RemoveAll(trash) == nil
}

// RemoveOrphans deletes the stores of workspaces that no longer exist and
// of those left without a checkpoint, when no process uses them, and
// leftovers of removals cut short.
func (s *Store) RemoveOrphans() {
	ents, _ := os.ReadDir(s.Parent)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".trash-") {
			_ = os.RemoveAll(filepath.Join(s.Parent, e.Name()))
		}
	}
	for _, sb := range s.siblings() {
		gone := false
		for _, r := range sb.roots {
			if _, err := os.Stat(r); err != nil {
				gone = true
			}
		}
		if gone || sb.newest.IsZero() {
			removeIfUnused(sb.dir)
		}
	}
}

// budget is what this store may take of the checkpoint directory's bound:
// the bound minus the other stores, after dropping the unused ones whose
// newest checkpoint is older than this store's oldest (oldest first).
func (s *Store) budget(max int64) int64 {
	// The other stores are counted again at most every half minute while
	// there is room to spare: listing them costs a stat per file.
	if c := s.sibCache; !c.at.IsZero() && time.Since(c.at) < 30*time.Second && s.size+c.total <= max-max/10 {
		return max - c.total
	}
	sibs := s.siblings()
	var total int64
	for _, sb := range sibs {
		total += sb.size
	}
	s.sibCache.total, s.sibCache.at = total, time.Now()
	if total+s.size <= max {
		return max - total
	}
	oldest := time.Now()
	if len(s.records) > 0 {
		oldest = s.records[0].Time
	}
	sort.Slice(sibs, func(i, j int) bool { return sibs[i].newest.Before(sibs[j].newest) })
	for _, sb := range sibs {
		if total+s.size <= max || !sb.newest.Before(oldest) {
			break
		}
		if removeIfUnused(sb.dir) {
			total -= sb.size
		}
	}
	s.sibCache.total = total
	return max - total
}
