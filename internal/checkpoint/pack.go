package checkpoint

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// A pack is one file of objects, written once by one checkpoint and never
// changed: records, then an index of them, then a fixed trailer.
//
//	"BCPACK01"
//	record*: hash[32] kind[1] codec[1] uvarint(raw length) uvarint(stored length) stored bytes
//	index:   uvarint(count) (hash[32] uvarint(offset) uvarint(record length))*  sorted by hash
//	trailer: index offset[8] sha256(index)[32] "BCPKEND1"
//
// A pack becomes visible only once it is complete and synced (it is
// written under tmp/ and renamed into place), so a reader never meets a
// partial one, and the index checksum catches a damaged one.
const (
	packMagic    = "BCPACK01"
	packEndMagic = "BCPKEND1"
	trailerLen   = 8 + 32 + 8
)

// Object kinds in a pack (for checks; a hash names the bytes alone).
const (
	objBlob byte = 'B'
	objTree byte = 'T'
)

// Codecs of stored bytes.
const (
	codecRaw  byte = 0
	codecZstd byte = 1
)

// loc is where an object is stored.
type loc struct {
	pack *pack
	off  int64
	n    int64 // record length, header included
}

// pack is an open pack file.
type pack struct {
	name string
	size int64
	mu   sync.Mutex
	f    *os.File // opened on first read
	path string
	// index of the pack, kept for collection and repacking.
	entries []packEntry
}

type packEntry struct {
	hash Hash
	off  int64
	n    int64
}

func (p *pack) file() (*os.File, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.f == nil {
		f, err := os.Open(p.path)
		if err != nil {
			return nil, err
		}
		p.f = f
	}
	return p.f, nil
}

func (p *pack) close() {
	p.mu.Lock()
	if p.f != nil {
		p.f.Close()
		p.f = nil
	}
	p.mu.Unlock()
}

// readPackIndex opens a pack file's index.
func readPackIndex(path string) ([]packEntry, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	size := fi.Size()
	if size < int64(len(packMagic))+trailerLen {
		return nil, 0, fmt.Errorf("pack %s: too short", path)
	}
	var tr [trailerLen]byte
	if _, err := f.ReadAt(tr[:], size-trailerLen); err != nil {
		return nil, 0, err
	}
	if string(tr[40:]) != packEndMagic {
		return nil, 0, fmt.Errorf("pack %s: no trailer", path)
	}
	idxOff := int64(binary.BigEndian.Uint64(tr[:8]))
	if idxOff < int64(len(packMagic)) || idxOff > size-trailerLen {
		return nil, 0, fmt.Errorf("pack %s: bad index offset", path)
	}
	idx := make([]byte, size-trailerLen-idxOff)
	if _, err := f.ReadAt(idx, idxOff); err != nil {
		return nil, 0, err
	}
	if sha256.Sum256(idx) != [32]byte(tr[8:40]) {
		return nil, 0, fmt.Errorf("pack %s: index checksum mismatch", path)
	}
	count, n := binary.Uvarint(idx)
	if n <= 0 || count > uint64(len(idx))/34 {
		return nil, 0, fmt.Errorf("pack %s: bad index", path)
	}
	idx = idx[n:]
	entries := make([]packEntry, 0, count)
	for i := uint64(0); i < count; i++ {
		if len(idx) < 32 {
			return nil, 0, fmt.Errorf("pack %s: short index", path)
		}
		var e packEntry
		copy(e.hash[:], idx)
		idx = idx[32:]
		off, n1 := binary.Uvarint(idx)
		if n1 <= 0 {
			return nil, 0, fmt.Errorf("pack %s: bad index entry", path)
		}
		idx = idx[n1:]
		ln, n2 := binary.Uvarint(idx)
		if n2 <= 0 {
			return nil, 0, fmt.Errorf("pack %s: bad index entry", path)
		}
		idx = idx[n2:]
		e.off, e.n = int64(off), int64(ln)
		if e.off < int64(len(packMagic)) || e.off+e.n > idxOff {
			return nil, 0, fmt.Errorf("pack %s: index entry out of range", path)
		}
		entries = append(entries, e)
	}
	return entries, size, nil
}

// readRecord reads and checks the object at l.
func readRecord(l loc, want Hash, dec *zstd.Decoder) (kind byte, data []byte, err error) {
	f, err := l.pack.file()
	if err != nil {
		return 0, nil, err
	}
	buf := make([]byte, l.n)
	if _, err := f.ReadAt(buf, l.off); err != nil {
		return 0, nil, fmt.Errorf("read object %s: %w", want, err)
	}
	if len(buf) < 34 || Hash(buf[:32]) != want {
		return 0, nil, fmt.Errorf("object %s: record header does not match", want)
	}
	kind, codec := buf[32], buf[33]
	rest := buf[34:]
	raw, n := binary.Uvarint(rest)
	if n <= 0 {
		return 0, nil, fmt.Errorf("object %s: bad record", want)
	}
	rest = rest[n:]
	stored, n := binary.Uvarint(rest)
	if n <= 0 || stored != uint64(len(rest)-n) {
		return 0, nil, fmt.Errorf("object %s: bad record length", want)
	}
	rest = rest[n:]
	switch codec {
	case codecRaw:
		data = rest
	case codecZstd:
		data, err = dec.DecodeAll(rest, make([]byte, 0, raw))
		if err != nil {
			return 0, nil, fmt.Errorf("object %s: %w", want, err)
		}
	default:
		return 0, nil, fmt.Errorf("object %s: unknown codec %d", want, codec)
	}
	if uint64(len(data)) != raw || !contentMatches(want, data) {
		return 0, nil, fmt.Errorf("object %s: content does not match its hash (the store is damaged)", want)
	}
	return kind, data, nil
}

// packWriter writes a new pack under tmp/.
type packWriter struct {
	f       *os.File
	w       *bufio.Writer
	off     int64
	entries []packEntry
	hdr     []byte
	// noSync leaves the flush to the caller (see batch.lazy).
	noSync bool
}

func newPackWriter(f *os.File) (*packWriter, error) {
	pw := &packWriter{f: f, w: bufio.NewWriterSize(f, 128<<10)}
	if _, err := pw.w.WriteString(packMagic); err != nil {
		return nil, err
	}
	pw.off = int64(len(packMagic))
	return pw, nil
}

// add appends a record with already encoded bytes.
func (pw *packWriter) add(h Hash, kind, codec byte, rawLen int, stored []byte) (int64, error) {
	hdr := append(pw.hdr[:0], h[:]...)
	hdr = append(hdr, kind, codec)
	hdr = binary.AppendUvarint(hdr, uint64(rawLen))
	hdr = binary.AppendUvarint(hdr, uint64(len(stored)))
	pw.hdr = hdr
	if _, err := pw.w.Write(hdr); err != nil {
		return 0, err
	}
	if _, err := pw.w.Write(stored); err != nil {
		return 0, err
	}
	n := int64(len(hdr) + len(stored))
	pw.entries = append(pw.entries, packEntry{hash: h, off: pw.off, n: n})
	pw.off += n
	return n, nil
}

// finish writes the index and trailer and syncs the file.
func (pw *packWriter) finish() error {
	sort.Slice(pw.entries, func(i, j int) bool { return bytes.Compare(pw.entries[i].hash[:], pw.entries[j].hash[:]) < 0 })
	idx := binary.AppendUvarint(nil, uint64(len(pw.entries)))
	for _, e := range pw.entries {
		idx = append(idx, e.hash[:]...)
		idx = binary.AppendUvarint(idx, uint64(e.off))
		idx = binary.AppendUvarint(idx, uint64(e.n))
	}
	var tr [trailerLen]byte
	binary.BigEndian.PutUint64(tr[:8], uint64(pw.off))
	sum := sha256.Sum256(idx)
	copy(tr[8:40], sum[:])
	copy(tr[40:], packEndMagic)
	if _, err := pw.w.Write(idx); err != nil {
		return err
	}
	if _, err := pw.w.Write(tr[:]); err != nil {
		return err
	}
	if err := pw.w.Flush(); err != nil {
		return err
	}
	pw.off += int64(len(idx)) + trailerLen
	if pw.noSync {
		return nil
	}
	return pw.f.Sync()
}

// copyRecord copies a stored record as it is into pw (repacking).
func copyRecord(pw *packWriter, l loc, h Hash) error {
	f, err := l.pack.file()
	if err != nil {
		return err
	}
	buf := make([]byte, l.n)
	if _, err := f.ReadAt(buf, l.off); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if Hash(buf[:32]) != h {
		return fmt.Errorf("object %s: record header does not match", h)
	}
	if _, err := pw.w.Write(buf); err != nil {
		return err
	}
	pw.entries = append(pw.entries, packEntry{hash: h, off: pw.off, n: l.n})
	pw.off += l.n
	return nil
}
