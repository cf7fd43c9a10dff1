package gitrepo

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"os"
	"sort"

	"golang.org/x/sys/unix"
)

// Entry is one tracked path of the index with the stat data git recorded
// when it last hashed the working file (each field cut to 32 bits, as git
// stores them).
type Entry struct {
	Path                 string
	CtimeS, CtimeNs      uint32
	MtimeS, MtimeNs      uint32
	Ino, Mode, Size      uint32
	ID                   ID
	stage                uint16
	skipWorktree, intent bool
}

// Index is a read index: the stage-0 entries, sorted by path, and the
// index file's modification time, which decides which entries are racy.
type Index struct {
	entries        []Entry
	mtimeS, mtimeN uint32
}

// Len is the number of entries.
func (x *Index) Len() int { return len(x.entries) }

// Lookup returns the entry of a path (slash-separated, relative to the
// work tree top).
func (x *Index) Lookup(path string) *Entry {
	if x == nil {
		return nil
	}
	es := x.entries
	i := sort.Search(len(es), func(i int) bool { return es[i].Path >= path })
	if i < len(es) && es[i].Path == path {
		return &es[i]
	}
	return nil
}

// Staged returns the blob id of path's stage-0 entry when it is a
// regular file's (not intent-to-add): what the file holds if its content
// hashes to it.
func (x *Index) Staged(path string) (ID, bool) {
	e := x.Lookup(path)
	if e == nil || e.stage != 0 || e.intent || e.Mode&0o170000 != 0o100000 || e.ID == (ID{}) {
		return ID{}, false
	}
	return e.ID, true
}

// Clean returns the blob id of path when git's index vouches that the
// working file, whose stat is st, holds exactly that blob: a stage-0
// entry of a regular file, not intent-to-add nor skip-worktree, whose
// recorded size, inode, modification and change times are the file's, and
// which is not racy (modified no earlier than the index was written, when
// its stat data cannot tell a later change). Anything else is false: the
// caller reads the file.
func (x *Index) Clean(path string, st *unix.Stat_t) (ID, bool) {
	e := x.Lookup(path)
	if e == nil || e.stage != 0 || e.intent || e.skipWorktree {
		return ID{}, false
	}
	if e.Mode&0o170000 != 0o100000 || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return ID{}, false
	}
	if e.Size != uint32(st.Size) || e.Ino != uint32(st.Ino) {
		return ID{}, false
	}
	if e.MtimeS != uint32(st.Mtim.Sec) || e.CtimeS != uint32(st.Ctim.Sec) {
		return ID{}, false
	}
	// A git built without nanosecond support records 0 and compares
	// seconds; otherwise the nanoseconds must match too.
	if (e.MtimeNs != 0 || e.CtimeNs != 0) && (e.MtimeNs != uint32(st.Mtim.Nsec) || e.CtimeNs != uint32(st.Ctim.Nsec)) {
		return ID{}, false
	}
	if e.MtimeS > x.mtimeS || (e.MtimeS == x.mtimeS && (e.MtimeNs >= x.mtimeN || x.mtimeN == 0 || e.MtimeNs == 0)) {
		return ID{}, false // racily clean: git itself would read the file
	}
	if e.ID == (ID{}) {
		return ID{}, false
	}
	return e.ID, true
}

// ReadIndex parses an index file (versions 2, 3 and 4, SHA-1). A split
// index, a sparse index's directory entries and unknown required
// extensions are refused (ErrUnsupported); the trailing checksum is
// checked unless git wrote none (index.skipHash).
func ReadIndex(path string) (*Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, err
	}
	b := make([]byte, st.Size)
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	x, err := parseIndex(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	x.mtimeS, x.mtimeN = uint32(st.Mtim.Sec), uint32(st.Mtim.Nsec)
	return x, nil
}

func parseIndex(b []byte) (*Index, error) {
	if len(b) < 12+20 || string(b[:4]) != "DIRC" {
		return nil, fmt.Errorf("%w: not an index file", ErrUnsupported)
	}
	body, sum := b[:len(b)-20], b[len(b)-20:]
	if !bytes.Equal(sum, make([]byte, 20)) {
		if h := sha1.Sum(body); !bytes.Equal(h[:], sum) {
			return nil, fmt.Errorf("%w: index checksum mismatch", ErrUnsupported)
		}
	}
	version := binary.BigEndian.Uint32(b[4:])
	if version < 2 || version > 4 {
		return nil, fmt.Errorf("%w: index version %d", ErrUnsupported, version)
	}
	count := binary.BigEndian.Uint32(b[8:])
	if uint64(count) > uint64(len(b))/62 {
		return nil, fmt.Errorf("%w: %d entries cannot fit in %d bytes", ErrUnsupported, count, len(b))
	}
	x := &Index{entries: make([]Entry, 0, count)}
	p := b[12 : len(b)-20]
	var prev []byte
	for i := uint32(0); i < count; i++ {
		if len(p) < 62 {
			return nil, fmt.Errorf("%w: truncated entry", ErrUnsupported)
		}
		var e Entry
		e.CtimeS = binary.BigEndian.Uint32(p[0:])
		e.CtimeNs = binary.BigEndian.Uint32(p[4:])
		e.MtimeS = binary.BigEndian.Uint32(p[8:])
		e.MtimeNs = binary.BigEndian.Uint32(p[12:])
		e.Ino = binary.BigEndian.Uint32(p[20:])
		e.Mode = binary.BigEndian.Uint32(p[24:])
		e.Size = binary.BigEndian.Uint32(p[36:])
		copy(e.ID[:], p[40:60])
		flags := binary.BigEndian.Uint16(p[60:])
		e.stage = (flags >> 12) & 3
		nameLen := int(flags & 0xfff)
		off := 62
		if flags&0x4000 != 0 {
			if version < 3 || len(p) < 64 {
				return nil, fmt.Errorf("%w: bad extended flags", ErrUnsupported)
			}
			ext := binary.BigEndian.Uint16(p[62:])
			e.skipWorktree = ext&0x4000 != 0
			e.intent = ext&0x2000 != 0
			off = 64
		}
		var name []byte
		if version == 4 {
			// The name is the previous one minus a number of bytes, plus
			// a NUL-terminated suffix.
			strip, n := gitVarint(p[off:])
			if n <= 0 || strip > uint64(len(prev)) {
				return nil, fmt.Errorf("%w: bad path compression", ErrUnsupported)
			}
			off += n
			end := bytes.IndexByte(p[off:], 0)
			if end < 0 {
				return nil, fmt.Errorf("%w: unterminated path", ErrUnsupported)
			}
			name = append(append([]byte(nil), prev[:len(prev)-int(strip)]...), p[off:off+end]...)
			off += end + 1
			p = p[off:]
		} else {
			end := bytes.IndexByte(p[off:], 0)
			if end < 0 || (nameLen < 0xfff && end != nameLen) {
				return nil, fmt.Errorf("%w: bad path", ErrUnsupported)
			}
			name = p[off : off+end]
			// Entries are padded with 1 to 8 NULs to a multiple of 8.
			entLen := (off + end + 8) &^ 7
			if entLen > len(p) {
				return nil, fmt.Errorf("%w: truncated entry", ErrUnsupported)
			}
			p = p[entLen:]
		}
		prev = name
		if e.Mode&0o170000 == 0o040000 {
			return nil, fmt.Errorf("%w: a sparse index", ErrUnsupported)
		}
		e.Path = string(name)
		x.entries = append(x.entries, e)
	}
	// Extensions: a split index names another file for most entries.
	for len(p) >= 8 {
		sig := string(p[:4])
		n := binary.BigEndian.Uint32(p[4:])
		if uint64(n) > uint64(len(p)-8) {
			return nil, fmt.Errorf("%w: bad extension %q", ErrUnsupported, sig)
		}
		switch {
		case sig == "link":
			return nil, fmt.Errorf("%w: a split index", ErrUnsupported)
		case sig == "sdir":
			return nil, fmt.Errorf("%w: a sparse index", ErrUnsupported)
		case sig[0] < 'A' || sig[0] > 'Z':
			return nil, fmt.Errorf("%w: required extension %q", ErrUnsupported, sig)
		}
		p = p[8+n:]
	}
	// Sorted by path then stage; keep stage-0 entries findable by a
	// binary search on the path alone: a path in conflict has no stage 0
	// and its higher stages sort after any stage 0 of the same path.
	out := x.entries[:0]
	for _, e := range x.entries {
		if n := len(out); n > 0 && out[n-1].Path == e.Path {
			out[n-1].stage = 3 // several stages: a conflict, never clean
			continue
		}
		out = append(out, e)
	}
	x.entries = out
	if !sort.SliceIsSorted(x.entries, func(i, j int) bool { return x.entries[i].Path < x.entries[j].Path }) {
		return nil, fmt.Errorf("%w: entries out of order", ErrUnsupported)
	}
	return x, nil
}

// gitVarint decodes git's offset varint (each continuation adds one).
func gitVarint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v := uint64(c & 127)
	i := 1
	for c&128 != 0 {
		if i >= len(b) || i > 9 {
			return 0, 0
		}
		v++
		c = b[i]
		i++
		v = (v << 7) + uint64(c&127)
	}
	return v, i
}
