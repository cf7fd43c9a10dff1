package checkpoint

// Op is what happened to a path between two checkpoints.
type Op byte

// Ops.
const (
	Added    Op = 'A'
	Modified Op = 'M'
	Deleted  Op = 'D'
)

// Change is one path that differs between two trees. Files, symlinks and
// large files are named; a directory only when it is empty on the side
// where it exists, or when its mode changed.
type Change struct {
	// Root is the workspace directory the path is in; Rel the path
	// relative to it (slash-separated).
	Root, Rel string
	Op        Op
	// Old and New are the entry before and after (nil when absent).
	Old, New *Entry
}

// Abs is the absolute path of the change.
func (c *Change) Abs() string { return joinRel(c.Root, c.Rel) }

// pathFilter limits a diff or a restore to some paths: a path is in when
// it is one of them or below one.
type pathFilter struct {
	// byRoot maps a root to its relative paths ("" for the whole root).
	byRoot map[string][]string
}

// rootIn says whether anything of root is in the filter.
func (f *pathFilter) rootIn(root string) bool {
	if f == nil {
		return true
	}
	_, ok := f.byRoot[root]
	return ok
}

// covers says whether rel (in root) is in the filter.
func (f *pathFilter) covers(root, rel string) bool {
	if f == nil {
		return true
	}
	for _, p := range f.byRoot[root] {
		if p == "" || rel == p || below(rel, p) {
			return true
		}
	}
	return false
}

// below says whether rel is inside the directory dir (without building
// dir+"/": a restore of many paths asks this for every entry it visits).
func below(rel, dir string) bool {
	return len(rel) > len(dir) && rel[len(dir)] == '/' && rel[:len(dir)] == dir
}

// leads says whether something below the directory rel is in the filter.
func (f *pathFilter) leads(root, rel string) bool {
	if f == nil {
		return true
	}
	for _, p := range f.byRoot[root] {
		if p == "" || rel == "" || p == rel || below(p, rel) || below(rel, p) {
			return true
		}
	}
	return false
}

// diffRoots compares two workspace trees (the hashes of their top trees).
func (s *Store) diffRoots(from, to Hash, f *pathFilter) ([]Change, error) {
	var a, b []Entry
	var err error
	if !from.IsZero() {
		if a, err = s.readTree(from); err != nil {
			return nil, err
		}
	}
	if !to.IsZero() {
		if b, err = s.readTree(to); err != nil {
			return nil, err
		}
	}
	d := differ{s: s, f: f}
	err = d.merge(a, b, func(ea, eb *Entry) error {
		name := ""
		if ea != nil {
			name = ea.Name
		} else {
			name = eb.Name
		}
		if !f.rootIn(name) {
			return nil
		}
		// The top entries are the workspace roots: their own mode is
		// the one thing of theirs not compared.
		var ha, hb Hash
		if ea != nil {
			ha = ea.Hash
		}
		if eb != nil {
			hb = eb.Hash
		}
		if ha == hb {
			return nil
		}
		return d.dirs(name, "", ha, hb)
	})
	return d.out, err
}

type differ struct {
	s   *Store
	f   *pathFilter
	out []Change
}

// merge calls fn for each name of two sorted entry lists.
func (d *differ) merge(a, b []Entry, fn func(ea, eb *Entry) error) error {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j >= len(b) || (i < len(a) && a[i].Name < b[j].Name):
			if err := fn(&a[i], nil); err != nil {
				return err
			}
			i++
		case i >= len(a) || b[j].Name < a[i].Name:
			if err := fn(nil, &b[j]); err != nil {
				return err
			}
			j++
		default:
			if err := fn(&a[i], &b[j]); err != nil {
				return err
			}
			i++
			j++
		}
	}
	return nil
}

// dirs compares two directory trees (zero hash: absent).
func (d *differ) dirs(root, rel string, ha, hb Hash) error {
	var a, b []Entry
	var err error
	if !ha.IsZero() {
		if a, err = d.s.readTree(ha); err != nil {
			return err
		}
	}
	if !hb.IsZero() {
		if b, err = d.s.readTree(hb); err != nil {
			return err
		}
	}
	return d.merge(a, b, func(ea, eb *Entry) error {
		name := ""
		if ea != nil {
			name = ea.Name
		} else {
			name = eb.Name
		}
		p := joinRel(rel, name)
		if !d.f.leads(root, p) {
			return nil
		}
		switch {
		case ea == nil:
			return d.side(root, p, eb, Added)
		case eb == nil:
			return d.side(root, p, ea, Deleted)
		case ea.same(eb):
			return nil
		case ea.Kind == KindDir && eb.Kind == KindDir:
			if ea.Mode != eb.Mode && d.f.covers(root, p) {
				d.out = append(d.out, Change{Root: root, Rel: p, Op: Modified, Old: ea, New: eb})
			}
			if ea.Hash != eb.Hash {
				return d.dirs(root, p, ea.Hash, eb.Hash)
			}
			return nil
		case ea.Kind == KindDir || eb.Kind == KindDir:
			if err := d.side(root, p, ea, Deleted); err != nil {
				return err
			}
			return d.side(root, p, eb, Added)
		}
		if d.f.covers(root, p) && !d.sameBytes(ea, eb) {
			d.out = append(d.out, Change{Root: root, Rel: p, Op: Modified, Old: ea, New: eb})
		}
		return nil
	})
}

// sameBytes says whether two file entries that name their content
// differently — one by the git blob, one by its SHA-256 — hold the same
// bytes: a tracked file recorded while git's index vouched for it and
// again once it did not.
func (d *differ) sameBytes(a, b *Entry) bool {
	if a.Kind != KindFile || b.Kind != KindFile || a.Size != b.Size || a.Mode != b.Mode {
		return false
	}
	_, ga := a.Hash.gitID()
	_, gb := b.Hash.gitID()
	if ga == gb {
		return false
	}
	x, err := d.s.read(a.Hash)
	if err != nil {
		return false
	}
	y, err := d.s.read(b.Hash)
	return err == nil && string(x) == string(y)
}

// side reports an entry present on one side only: a directory by its
// content (or itself when empty).
func (d *differ) side(root, p string, e *Entry, op Op) error {
	if e.Kind != KindDir {
		if d.f.covers(root, p) {
			c := Change{Root: root, Rel: p, Op: op}
			if op == Added {
				c.New = e
			} else {
				c.Old = e
			}
			d.out = append(d.out, c)
		}
		return nil
	}
	es, err := d.s.readTree(e.Hash)
	if err != nil {
		return err
	}
	if len(es) == 0 {
		if d.f.covers(root, p) {
			c := Change{Root: root, Rel: p, Op: op}
			if op == Added {
				c.New = e
			} else {
				c.Old = e
			}
			d.out = append(d.out, c)
		}
		return nil
	}
	for i := range es {
		q := joinRel(p, es[i].Name)
		if !d.f.leads(root, q) {
			continue
		}
		if err := d.side(root, q, &es[i], op); err != nil {
			return err
		}
	}
	return nil
}

// CountOf sums changes up.
func CountOf(cs []Change) Counts { return count(cs) }

// count sums changes up.
func count(cs []Change) Counts {
	var c Counts
	for i := range cs {
		switch cs[i].Op {
		case Added:
			c.Added++
		case Modified:
			c.Modified++
		case Deleted:
			c.Deleted++
		}
	}
	return c
}
