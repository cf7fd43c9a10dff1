package gitrepo

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// odb reads objects from an objects directory: loose objects, packs
// (version 2 indexes) and the stores its alternates name.
type odb struct {
	dirs  []string // the objects directory, then alternates
	packs []*packFile
	// loaded says the pack list was read; it is read again when an object
	// is not found (a gc may have repacked).
	loaded bool
	// retired are packs git deleted, kept open (see loadPacks).
	retired []*packFile
	// loose caches the names of each fan-out directory of loose objects
	// (by its first byte), listed once and again on a miss: one read of
	// a directory instead of a stat per object.
	loose [256]map[ID]struct{}
}

type packFile struct {
	path   string
	f      *os.File
	fanout [256]uint32
	ids    []byte // n × 20
	offs   []byte // n × 4
	big    []byte // 8 × k
}

// ErrNotFound says the object store does not hold an object.
var ErrNotFound = errors.New("git object not found")

func newODB(dir string) *odb {
	o := &odb{dirs: []string{dir}}
	o.alternates(dir, 0)
	return o
}

func (o *odb) alternates(dir string, depth int) {
	if depth > 5 {
		return
	}
	b, err := os.ReadFile(filepath.Join(dir, "info", "alternates"))
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || l[0] == '#' {
			continue
		}
		if !filepath.IsAbs(l) {
			l = filepath.Join(dir, l)
		}
		l = filepath.Clean(l)
		o.dirs = append(o.dirs, l)
		o.alternates(l, depth+1)
	}
}

func (o *odb) close() {
	for _, p := range o.packs {
		p.f.Close()
	}
	for _, p := range o.retired {
		p.f.Close()
	}
	o.packs, o.retired, o.loaded = nil, nil, false
}

// maxRetired bounds the packs kept open after git deleted them.
const maxRetired = 8

// loadPacks reads the pack list again. A pack already open is kept as it
// is; one whose files are gone (git gc repacked or pruned) stays open, its
// objects still readable through the open descriptor, so that a blob a
// checkpoint borrowed can still be copied once its file changed — up to
// maxRetired such packs, the oldest closed first (the disk space of a pack
// kept open is freed when it is closed).
func (o *odb) loadPacks() {
	o.loaded = true
	old := map[string]*packFile{}
	for _, p := range o.packs {
		old[p.path] = p
	}
	var packs []*packFile
	for _, d := range o.dirs {
		idxs, _ := filepath.Glob(filepath.Join(d, "pack", "pack-*.idx"))
		for _, idx := range idxs {
			path := strings.TrimSuffix(idx, ".idx") + ".pack"
			if p, ok := old[path]; ok && samePack(p) {
				packs = append(packs, p)
				delete(old, path)
				continue
			}
			if p, err := openPack(idx); err == nil {
				packs = append(packs, p)
			}
		}
	}
	for _, p := range old {
		o.retired = append(o.retired, p)
	}
	for len(o.retired) > maxRetired {
		o.retired[0].f.Close()
		o.retired = o.retired[1:]
	}
	o.packs = packs
}

// samePack says whether an open pack's file is still the one at its path.
func samePack(p *packFile) bool {
	a, err := p.f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(p.path)
	return err == nil && os.SameFile(a, b)
}

// all is every pack to look in: the present ones, then those git deleted
// that are still open.
func (o *odb) all() []*packFile {
	if len(o.retired) == 0 {
		return o.packs
	}
	return append(append([]*packFile(nil), o.packs...), o.retired...)
}

func openPack(idxPath string) (*packFile, error) {
	b, err := os.ReadFile(idxPath)
	if err != nil {
		return nil, err
	}
	if len(b) < 8+256*4+40 || string(b[:4]) != "\xfftOc" || binary.BigEndian.Uint32(b[4:]) != 2 {
		return nil, fmt.Errorf("%w: %s is not a version 2 pack index", ErrUnsupported, idxPath)
	}
	p := &packFile{path: strings.TrimSuffix(idxPath, ".idx") + ".pack"}
	for i := range p.fanout {
		p.fanout[i] = binary.BigEndian.Uint32(b[8+4*i:])
	}
	n := int(p.fanout[255])
	base := 8 + 256*4
	need := base + n*20 + n*4 + n*4 + 40
	if len(b) < need {
		return nil, fmt.Errorf("%w: %s is truncated", ErrUnsupported, idxPath)
	}
	p.ids = b[base : base+n*20]
	p.offs = b[base+n*24 : base+n*28]
	p.big = b[base+n*28 : len(b)-40]
	if p.f, err = os.Open(p.path); err != nil {
		return nil, err
	}
	return p, nil
}

// find returns the offset of an object in the pack.
func (p *packFile) find(id ID) (int64, bool) {
	lo := 0
	if id[0] > 0 {
		lo = int(p.fanout[id[0]-1])
	}
	hi := int(p.fanout[id[0]])
	i := lo + sort.Search(hi-lo, func(i int) bool { return bytes.Compare(p.ids[(lo+i)*20:(lo+i)*20+20], id[:]) >= 0 })
	if i >= hi || !bytes.Equal(p.ids[i*20:i*20+20], id[:]) {
		return 0, false
	}
	off := binary.BigEndian.Uint32(p.offs[i*4:])
	if off&0x80000000 == 0 {
		return int64(off), true
	}
	k := int(off & 0x7fffffff)
	if (k+1)*8 > len(p.big) {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(p.big[k*8:])), true
}

func (o *odb) loosePath(dir string, id ID) string {
	s := id.String()
	return filepath.Join(dir, s[:2], s[2:])
}

func (o *odb) has(id ID) bool {
	if !o.loaded {
		o.loadPacks()
	}
	for _, p := range o.all() {
		if _, ok := p.find(id); ok {
			return true
		}
	}
	if set := o.loose[id[0]]; set != nil {
		if _, ok := set[id]; ok {
			return true
		}
	}
	// A miss: list the fan-out directory again, then the packs.
	o.listLoose(id[0])
	if _, ok := o.loose[id[0]][id]; ok {
		return true
	}
	o.loadPacks()
	for _, p := range o.all() {
		if _, ok := p.find(id); ok {
			return true
		}
	}
	return false
}

// listLoose reads the loose objects whose names start with b.
func (o *odb) listLoose(b byte) {
	set := map[ID]struct{}{}
	pre := fmt.Sprintf("%02x", b)
	for _, d := range o.dirs {
		f, err := os.Open(filepath.Join(d, pre))
		if err != nil {
			continue
		}
		names, _ := f.Readdirnames(-1)
		f.Close()
		for _, n := range names {
			var id ID
			if len(n) != 38 {
				continue
			}
			if _, err := hex.Decode(id[:], []byte(pre+n)); err == nil {
				set[id] = struct{}{}
			}
		}
	}
	o.loose[b] = set
}

// blob reads a blob and checks that its content has its name.
func (o *odb) blob(id ID) ([]byte, error) {
	typ, data, err := o.object(id, 0)
	if err != nil {
		return nil, err
	}
	if typ != objBlob {
		return nil, fmt.Errorf("git object %s is not a blob", id)
	}
	if BlobID(data) != id {
		return nil, fmt.Errorf("git object %s does not match its name (the repository is damaged)", id)
	}
	return data, nil
}

// BlobID is the git name of a blob with this content.
func BlobID(data []byte) ID {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	var id ID
	copy(id[:], h.Sum(nil))
	return id
}

const (
	objCommit   = 1
	objTree     = 2
	objBlob     = 3
	objTag      = 4
	objOfsDelta = 6
	objRefDelta = 7
)

// maxObject bounds what one object (or a delta's base) may inflate to: the
// sizes come from files of the work tree's repository, which whoever can
// write there controls. Checkpoints borrow files of up to 32 MB by default.
const maxObject = 256 << 20

func (o *odb) object(id ID, depth int) (int, []byte, error) {
	if depth > 10000 {
		return 0, nil, fmt.Errorf("git object %s: delta chain too deep", id)
	}
	for _, d := range o.dirs {
		if typ, data, err := readLoose(o.loosePath(d, id)); err == nil {
			return typ, data, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return 0, nil, err
		}
	}
	for pass := 0; pass < 2; pass++ {
		if !o.loaded || pass == 1 {
			o.loadPacks()
		}
		for _, p := range o.all() {
			if off, ok := p.find(id); ok {
				return o.packed(p, off, depth)
			}
		}
	}
	return 0, nil, fmt.Errorf("%w: %s", ErrNotFound, id)
}

func readLoose(path string) (int, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	zr, err := zlib.NewReader(bufio.NewReader(f))
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", path, err)
	}
	defer zr.Close()
	br := bufio.NewReader(zr)
	hdr, err := br.ReadString(0)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", path, err)
	}
	kind, size, ok := strings.Cut(strings.TrimSuffix(hdr, "\x00"), " ")
	n, err := strconv.ParseInt(size, 10, 64)
	if !ok || err != nil || n < 0 || n > maxObject {
		return 0, nil, fmt.Errorf("%s: bad object header", path)
	}
	typ := map[string]int{"commit": objCommit, "tree": objTree, "blob": objBlob, "tag": objTag}[kind]
	if typ == 0 {
		return 0, nil, fmt.Errorf("%s: unknown object type %q", path, kind)
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(br, data); err != nil {
		return 0, nil, fmt.Errorf("%s: %w", path, err)
	}
	return typ, data, nil
}

// packed reads the object at off in a pack, resolving deltas.
func (o *odb) packed(p *packFile, off int64, depth int) (int, []byte, error) {
	var hdr [32]byte
	n, err := p.f.ReadAt(hdr[:], off)
	if n == 0 && err != nil {
		return 0, nil, fmt.Errorf("%s: %w", p.path, err)
	}
	h := hdr[:n]
	c := h[0]
	typ := int(c>>4) & 7
	size := uint64(c & 15)
	shift := uint(4)
	i := 1
	for c&0x80 != 0 {
		if i >= len(h) || shift > 60 {
			return 0, nil, fmt.Errorf("%s: bad object header at %d", p.path, off)
		}
		c = h[i]
		i++
		size |= uint64(c&0x7f) << shift
		shift += 7
	}
	if size > maxObject {
		return 0, nil, fmt.Errorf("%s: object at %d too large", p.path, off)
	}
	var baseTyp int
	var base []byte
	switch typ {
	case objCommit, objTree, objBlob, objTag:
	case objOfsDelta:
		if i >= len(h) {
			return 0, nil, fmt.Errorf("%s: bad delta at %d", p.path, off)
		}
		c = h[i]
		i++
		rel := int64(c & 127)
		for c&128 != 0 {
			if i >= len(h) {
				return 0, nil, fmt.Errorf("%s: bad delta at %d", p.path, off)
			}
			rel++
			c = h[i]
			i++
			rel = (rel << 7) + int64(c&127)
		}
		if rel <= 0 || rel > off {
			return 0, nil, fmt.Errorf("%s: bad delta base at %d", p.path, off)
		}
		if depth > 10000 {
			return 0, nil, fmt.Errorf("%s: delta chain too deep", p.path)
		}
		if baseTyp, base, err = o.packed(p, off-rel, depth+1); err != nil {
			return 0, nil, err
		}
	case objRefDelta:
		if i+20 > len(h) {
			return 0, nil, fmt.Errorf("%s: bad delta at %d", p.path, off)
		}
		var bid ID
		copy(bid[:], h[i:i+20])
		i += 20
		if baseTyp, base, err = o.object(bid, depth+1); err != nil {
			return 0, nil, err
		}
	default:
		return 0, nil, fmt.Errorf("%s: unknown object type %d at %d", p.path, typ, off)
	}
	zr, err := zlib.NewReader(bufio.NewReader(io.NewSectionReader(p.f, off+int64(i), 1<<62)))
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", p.path, err)
	}
	data := make([]byte, size)
	_, err = io.ReadFull(zr, data)
	zr.Close()
	if err != nil {
		return 0, nil, fmt.Errorf("%s: inflate at %d: %w", p.path, off, err)
	}
	if base == nil {
		return typ, data, nil
	}
	out, err := applyDelta(base, data)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: delta at %d: %w", p.path, off, err)
	}
	return baseTyp, out, nil
}

func deltaSize(d []byte) (uint64, []byte, bool) {
	var v uint64
	var shift uint
	for i, c := range d {
		if shift > 63 {
			return 0, nil, false
		}
		v |= uint64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			return v, d[i+1:], true
		}
	}
	return 0, nil, false
}

func applyDelta(base, d []byte) ([]byte, error) {
	srcSize, d, ok := deltaSize(d)
	if !ok || srcSize != uint64(len(base)) {
		return nil, errors.New("base size mismatch")
	}
	dstSize, d, ok := deltaSize(d)
	if !ok || dstSize > maxObject {
		return nil, errors.New("bad target size")
	}
	out := make([]byte, 0, dstSize)
	for len(d) > 0 {
		c := d[0]
		d = d[1:]
		switch {
		case c&0x80 != 0:
			var off, n uint64
			for k := uint(0); k < 4; k++ {
				if c&(1<<k) != 0 {
					if len(d) == 0 {
						return nil, errors.New("truncated copy")
					}
					off |= uint64(d[0]) << (8 * k)
					d = d[1:]
				}
			}
			for k := uint(0); k < 3; k++ {
				if c&(0x10<<k) != 0 {
					if len(d) == 0 {
						return nil, errors.New("truncated copy")
					}
					n |= uint64(d[0]) << (8 * k)
					d = d[1:]
				}
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > uint64(len(base)) {
				return nil, errors.New("copy out of range")
			}
			out = append(out, base[off:off+n]...)
		case c != 0:
			if int(c) > len(d) {
				return nil, errors.New("truncated insert")
			}
			out = append(out, d[:c]...)
			d = d[c:]
		default:
			return nil, errors.New("reserved delta opcode")
		}
	}
	if uint64(len(out)) != dstSize {
		return nil, errors.New("target size mismatch")
	}
	return out, nil
}
