package checkpoint

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"

	"github.com/boris-mcp/boris/internal/gitrepo"
)

// Hash names an object of the store: the SHA-256 of its bytes (a file's
// content, or a tree's encoding).
type Hash [32]byte

func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports whether h is the zero hash (no object).
func (h Hash) IsZero() bool { return h == Hash{} }

func hashOf(b []byte) Hash { return sha256.Sum256(b) }

// ParseHash reads a hash written by String.
func ParseHash(s string) (Hash, error) {
	var h Hash
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(h) {
		return h, fmt.Errorf("not a hash: %q", s)
	}
	copy(h[:], b)
	return h, nil
}

// Kind is what a tree entry is.
type Kind byte

// Entry kinds, as encoded in trees.
const (
	KindFile Kind = 'f'
	KindDir  Kind = 'd'
	KindLink Kind = 'l'
	// KindLarge is a regular file over the per-file size cap: its size,
	// mode and modification time are recorded, its content is not.
	KindLarge Kind = 'b'
)

func (k Kind) String() string {
	switch k {
	case KindFile:
		return "file"
	case KindDir:
		return "directory"
	case KindLink:
		return "symlink"
	case KindLarge:
		return "file"
	}
	return "?"
}

// Entry is one name in a directory as a checkpoint records it.
type Entry struct {
	Name string
	Kind Kind
	// Mode holds the permission bits (and setuid, setgid, sticky).
	Mode uint32
	// Size is a file's length.
	Size int64
	// Hash is a file's content or a directory's tree.
	Hash Hash
	// Target is a symlink's target, as written.
	Target string
	// MTime (Unix nanoseconds) tells versions of a large file apart.
	MTime int64
}

// same reports whether two entries record the same thing.
func (e *Entry) same(o *Entry) bool {
	return e.Kind == o.Kind && e.Mode == o.Mode && e.Size == o.Size && e.Hash == o.Hash && e.Target == o.Target && e.MTime == o.MTime
}

// SameContent is same without the mode.
func (e *Entry) SameContent(o *Entry) bool {
	return e.Kind == o.Kind && e.Size == o.Size && e.Hash == o.Hash && e.Target == o.Target && e.MTime == o.MTime
}

// treeMagic starts every encoded tree.
const treeMagic = "T1"

// encodeTree appends the canonical encoding of entries (sorted by name) to
// b. Equal directories encode to equal bytes, hence equal hashes.
func encodeTree(b []byte, entries []Entry) []byte {
	b = append(b, treeMagic...)
	for i := range entries {
		e := &entries[i]
		b = append(b, byte(e.Kind))
		b = binary.AppendUvarint(b, uint64(e.Mode))
		b = binary.AppendUvarint(b, uint64(len(e.Name)))
		b = append(b, e.Name...)
		switch e.Kind {
		case KindFile:
			b = binary.AppendUvarint(b, uint64(e.Size))
			b = append(b, e.Hash[:]...)
		case KindDir:
			b = append(b, e.Hash[:]...)
		case KindLink:
			b = binary.AppendUvarint(b, uint64(len(e.Target)))
			b = append(b, e.Target...)
		case KindLarge:
			b = binary.AppendUvarint(b, uint64(e.Size))
			b = binary.AppendVarint(b, e.MTime)
		}
	}
	return b
}

var errBadTree = errors.New("malformed tree object")

// decodeTree parses an encoded tree.
func decodeTree(b []byte) ([]Entry, error) {
	if len(b) < len(treeMagic) || string(b[:len(treeMagic)]) != treeMagic {
		return nil, errBadTree
	}
	b = b[len(treeMagic):]
	var out []Entry
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	str := func() (string, bool) {
		n, ok := uv()
		if !ok || n > uint64(len(b)) {
			return "", false
		}
		s := string(b[:n])
		b = b[n:]
		return s, true
	}
	hash := func() (Hash, bool) {
		var h Hash
		if len(b) < len(h) {
			return h, false
		}
		copy(h[:], b)
		b = b[len(h):]
		return h, true
	}
	for len(b) > 0 {
		e := Entry{Kind: Kind(b[0])}
		b = b[1:]
		mode, ok := uv()
		if !ok {
			return nil, errBadTree
		}
		e.Mode = uint32(mode)
		if e.Name, ok = str(); !ok || e.Name == "" {
			return nil, errBadTree
		}
		switch e.Kind {
		case KindFile:
			var size uint64
			if size, ok = uv(); ok {
				e.Size = int64(size)
				e.Hash, ok = hash()
			}
		case KindDir:
			e.Hash, ok = hash()
		case KindLink:
			e.Target, ok = str()
		case KindLarge:
			var size uint64
			if size, ok = uv(); ok {
				e.Size = int64(size)
				var n int
				e.MTime, n = binary.Varint(b)
				ok = n > 0
				if ok {
					b = b[n:]
				}
			}
		default:
			ok = false
		}
		if !ok {
			return nil, errBadTree
		}
		out = append(out, e)
	}
	return out, nil
}

// sortEntries puts entries in the canonical (byte-wise name) order.
func sortEntries(es []Entry) {
	sort.Slice(es, func(i, j int) bool { return es[i].Name < es[j].Name })
}

// find returns the entry named name in sorted entries, or nil.
func find(es []Entry, name string) *Entry {
	i := sort.Search(len(es), func(i int) bool { return es[i].Name >= name })
	if i < len(es) && es[i].Name == name {
		return &es[i]
	}
	return nil
}

// gitMark starts a Hash that names a git blob by its SHA-1 instead of
// naming content by its SHA-256: a tracked file git's index vouches for
// is recorded by the blob git already holds, without reading the file.
// The store copies the blob (keeping this name) once the working file
// changes. No SHA-256 of real content starts with these 12 bytes but by a
// chance of 2⁻⁹⁶.
var gitMark = [12]byte{0, 'g', 'i', 't', '-', 'b', 'l', 'o', 'b', 0, 0, 1}

// gitHash is the Hash of a git blob.
func gitHash(id gitrepo.ID) Hash {
	var h Hash
	copy(h[:12], gitMark[:])
	copy(h[12:], id[:])
	return h
}

// gitID returns the git blob a Hash names, if it names one.
func (h Hash) gitID() (gitrepo.ID, bool) {
	var id gitrepo.ID
	if [12]byte(h[:12]) != gitMark {
		return id, false
	}
	copy(id[:], h[12:])
	return id, true
}

// contentMatches says whether data is the content h names.
func contentMatches(h Hash, data []byte) bool {
	if id, ok := h.gitID(); ok {
		return gitrepo.BlobID(data) == id
	}
	return hashOf(data) == h
}
