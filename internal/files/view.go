package files

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/boris-mcp/boris/internal/codes"
	"golang.org/x/sys/unix"
)

// ViewKind says what a view found.
type ViewKind int

// The kinds of view result.
const (
	ViewText   ViewKind = iota // lines of a text file
	ViewEmpty                  // a file of 0 bytes
	ViewImage                  // an image file, returned whole
	ViewBinary                 // another binary file, only described
	ViewDir                    // a directory listing
)

// ViewResult is what a view found, for a dialect to render.
type ViewResult struct {
	// Path is the absolute path as named (relative paths resolved against
	// the session's directory, symlinks not expanded).
	Path string
	Kind ViewKind
	// Size is the file's size in bytes.
	Size int64
	// Lines are the text lines shown (ViewText, and ViewEmpty when the
	// limits number lines by SplitLines).
	Lines Lines
	// Image and MIMEType are set for ViewImage.
	Image    []byte
	MIMEType string
	// Dir lists a directory (ViewDir).
	Dir Listing
}

// Range is a 1-based inclusive line range; End -1 means the end of the
// file, and an End past the end is clamped to it. A nil *Range means the
// whole file (within the limits).
type Range struct{ Start, End int }

// ViewLimits say how a view counts lines and how much it collects. Zero
// means no limit.
type ViewLimits struct {
	// SplitLines numbers lines as the newline-split of the content: a file
	// ending in a newline has an empty last line after it (which a range
	// may name), and an empty file has one empty line. Otherwise only lines
	// with content or a newline count.
	SplitLines bool
	// MaxLines stops after this many lines.
	MaxLines int
	// MaxLineChars cuts each line after this many characters (Lines keeps
	// its full length).
	MaxLineChars int
	// MaxChars stops once the shown text — the lines joined by newlines —
	// is longer than this many characters; the line that crosses the limit
	// is kept to one character past it, so a renderer can tell.
	MaxChars int
	// Hidden lists hidden entries (names starting with ".") of a directory.
	Hidden bool
	// MaxEntries caps a directory listing (0: MaxListEntries).
	MaxEntries int
}

// FactRange is the fact of an INVALID_INPUT error for a view_range that
// does not fit the file: a start before line 1 or past the last line, or
// an end before the start.
type FactRange struct {
	Path  string
	Range Range
	// Lines is the file's line count as the view's limits count lines.
	Lines int
}

// FactRangeOnDir is the fact of an INVALID_INPUT error for a view_range
// given with a directory.
type FactRangeOnDir struct{ Path string }

// View shows a file's lines, an image, a note for a binary file, or a
// directory listing two levels deep.
func (s *Service) View(c Ctx, path string, rng *Range, lim ViewLimits) (*ViewResult, error) {
	if strings.TrimSpace(path) == "" {
		return nil, codes.Errorf(codes.InvalidInput, "path is required")
	}
	f, t, err := s.opts.Policy.OpenRead(c.Cwd, path)
	if err != nil {
		return nil, s.pathError(t, path, err)
	}
	defer f.Close()
	real := t.Resolved
	fi, err := f.Stat()
	if err != nil {
		return nil, codes.Errorf(codes.IOError, "stat %s: %v", t.Path, unwrapPathError(err))
	}
	if fi.IsDir() {
		if rng != nil {
			return nil, codes.Errorf(codes.InvalidInput, "%s is a directory; view_range applies to files", t.Path).WithFact(FactRangeOnDir{Path: t.Path})
		}
		max := lim.MaxEntries
		if max <= 0 {
			max = MaxListEntries
		}
		return &ViewResult{Path: t.Path, Kind: ViewDir, Dir: s.listDir(f, real, lim.Hidden, max)}, nil
	}
	if !fi.Mode().IsRegular() {
		return nil, codes.Errorf(codes.InvalidInput, "%s is not a regular file (%s)", t.Path, fi.Mode().Type())
	}
	if fi.Size() > s.opts.MaxFileSize {
		return nil, s.tooLarge(t.Path, fi.Size())
	}

	buf := bufPool.Get().(*[]byte)
	defer bufPool.Put(buf)
	head := (*buf)[:sniffLen]
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, codes.Errorf(codes.IOError, "read %s: %v", t.Path, unwrapPathError(err))
	}
	head = head[:n]

	res := &ViewResult{Path: t.Path, Size: fi.Size()}
	switch mime := imageType(t.Path, head); {
	case n == 0:
		res.Kind = ViewEmpty
		if lim.SplitLines {
			if err := collectLines(&res.Lines, bytes.NewReader(nil), t.Path, rng, lim); err != nil {
				return nil, err
			}
		}
	case mime != "":
		data, err := io.ReadAll(io.LimitReader(io.MultiReader(bytes.NewReader(head), f), s.opts.MaxFileSize+1))
		if err != nil {
			return nil, codes.Errorf(codes.IOError, "read %s: %v", t.Path, unwrapPathError(err))
		}
		if int64(len(data)) > s.opts.MaxFileSize {
			return nil, s.tooLarge(t.Path, int64(len(data)))
		}
		res.Kind, res.Image, res.MIMEType = ViewImage, data, mime
	case bytes.IndexByte(head, 0) >= 0:
		res.Kind = ViewBinary
	default:
		res.Kind = ViewText
		res.Lines.reserve(head, fi.Size(), lim)
		if err := collectLines(&res.Lines, io.MultiReader(bytes.NewReader(head), f), t.Path, rng, lim); err != nil {
			return nil, err
		}
	}
	if c.Viewed != nil {
		st := StampOf(fi)
		c.Viewed.MarkViewed(real, st)
		if real != t.Resolved {
			c.Viewed.MarkViewed(t.Resolved, st)
		}
	}
	return res, nil
}

// Lines are the lines a view collected, numbered from Start, each without
// its line ending (and without a carriage return before it).
type Lines struct {
	// Start is the number of the first line.
	Start int
	// Total is the number of lines in the file, counted as the limits
	// count them (see ViewLimits.SplitLines).
	Total int
	// More is true when the limits stopped the view before the end of
	// the range (or of the file).
	More bool
	buf  []byte
	ends []int // end offset in buf of each line
	full []int // full length of each line in characters
}

// Len returns the number of lines collected.
func (l *Lines) Len() int { return len(l.ends) }

// Keep keeps the first n lines collected (a renderer's bound on what it
// shows); the view then has more.
func (l *Lines) Keep(n int) {
	if n >= l.Len() {
		return
	}
	end := 0
	if n > 0 {
		end = l.ends[n-1]
	}
	l.buf, l.ends, l.full, l.More = l.buf[:end], l.ends[:n], l.full[:n], true
}

// Line returns the i-th collected line (0-based): its text, possibly cut
// by MaxLineChars or MaxChars, and its full length in characters.
func (l *Lines) Line(i int) (text []byte, chars int) {
	from := 0
	if i > 0 {
		from = l.ends[i-1]
	}
	return l.buf[from:l.ends[i]], l.full[i]
}

// reserve sizes the buffers for a view of a file of size bytes whose first
// bytes are head, so that a small file's lines are collected without
// growing them.
func (l *Lines) reserve(head []byte, size int64, lim ViewLimits) {
	if int64(len(head)) < size {
		return // a large file: let the buffers grow with what is shown
	}
	n := bytes.Count(head, []byte{'\n'}) + 1
	if lim.MaxLines > 0 {
		n = min(n, lim.MaxLines)
	}
	l.buf = make([]byte, 0, len(head))
	l.ends = make([]int, 0, n)
	l.full = make([]int, 0, n)
}

func (l *Lines) add(text []byte, chars int) {
	l.buf = append(l.buf, text...)
	l.ends = append(l.ends, len(l.buf))
	l.full = append(l.full, chars)
}

// Buffers reused across views: the sniffed head and the line reader.
var (
	bufPool    = sync.Pool{New: func() any { b := make([]byte, sniffLen); return &b }}
	readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 32<<10) }}
)

// imageType returns the MIME type of an image file, sniffed from its first
// bytes (SVG, being text, by extension), or "".
func imageType(path string, head []byte) string {
	if strings.EqualFold(filepath.Ext(path), ".svg") {
		return "image/svg+xml"
	}
	if len(head) == 0 {
		return ""
	}
	if mime := http.DetectContentType(head); strings.HasPrefix(mime, "image/") {
		return mime
	}
	return ""
}

// collectLines streams r into dst: the lines of the range (or all of
// them) within the limits, and the count of every line. Only the
// collected lines are held; the rest is counted.
func collectLines(dst *Lines, r io.Reader, path string, rng *Range, lim ViewLimits) error {
	start, end := 1, -1
	if rng != nil {
		start, end = rng.Start, rng.End
	}
	dst.Start = start
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(r)
	defer func() { br.Reset(nil); readerPool.Put(br) }()

	line := 0         // lines finished
	shown := 0        // characters collected, with a newline between lines
	stopped := false  // the limits ended collecting
	atStart := true   // at the beginning of a line
	take := -1        // characters of the current line to keep; -1: not collecting it
	var curChars int  // characters of the current line so far
	var cur []byte    // the kept part of the current line
	var last byte     // the last byte of the current line so far
	begin := func() { // decide whether the line about to start is collected
		n := line + 1
		take = -1
		if stopped || n < start || (end != -1 && n > end) || end != -1 && end < start {
			return
		}
		if lim.MaxLines > 0 && dst.Len() >= lim.MaxLines {
			stopped, dst.More = true, true
			return
		}
		take = int(^uint(0) >> 1)
		if lim.MaxLineChars > 0 {
			take = lim.MaxLineChars
		}
		if lim.MaxChars > 0 {
			room := lim.MaxChars + 1 - shown
			if dst.Len() > 0 {
				room-- // the newline before this line
			}
			if room <= 0 {
				stopped, dst.More, take = true, true, -1
				return
			}
			take = min(take, room)
		}
	}
	finish := func() {
		if take >= 0 {
			if dst.Len() > 0 {
				shown++
			}
			shown += curChars
			dst.add(bytes.TrimSuffix(cur, []byte("\r")), curChars)
		}
		line++
		cur, curChars, last, atStart = cur[:0], 0, 0, true
	}
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			if atStart {
				begin()
				atStart = false
			}
			body := bytes.TrimSuffix(chunk, []byte("\n"))
			if take >= 0 && curChars < take {
				cur = appendChars(cur, body, take-curChars)
			}
			curChars += utf8.RuneCount(body)
			if len(body) > 0 {
				last = body[len(body)-1]
			}
			if chunk[len(chunk)-1] == '\n' {
				if last == '\r' {
					curChars-- // the CR of a CRLF belongs to the line ending
				}
				finish()
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return codes.Errorf(codes.IOError, "read %s: %v", path, unwrapPathError(err))
		}
	}
	if !atStart || lim.SplitLines {
		// A last line without a newline, or (split) the empty line after
		// the final newline.
		if atStart {
			begin()
		}
		finish()
	}
	dst.Total = line
	if rng == nil {
		return nil
	}
	switch {
	case start < 1, end != -1 && end < start:
		return codes.Errorf(codes.InvalidInput, "invalid view_range [%d, %d]: use [start, end] with 1 <= start <= end, or end = -1 for the end of the file", start, end).WithFact(FactRange{Path: path, Range: *rng, Lines: line})
	case start > line:
		return codes.Errorf(codes.InvalidInput, "view_range start %d is past the end of %s, which has %d lines", start, path, line).WithFact(FactRange{Path: path, Range: *rng, Lines: line})
	}
	return nil
}

// appendChars appends at most n characters of b to dst.
func appendChars(dst, b []byte, n int) []byte {
	i := 0
	for k := 0; k < n && i < len(b); k++ {
		_, size := utf8.DecodeRune(b[i:])
		i += size
	}
	return append(dst, b[:i]...)
}

// Listing is a directory listed two levels deep.
type Listing struct {
	// Entries are in walk order: sorted by name, each directory followed
	// by its own entries.
	Entries []DirEntry
	// Truncated is true when the listing stopped at its cap.
	Truncated bool
	// Max is the cap.
	Max int
}

// Keep keeps the first n entries (a renderer's bound on what it shows);
// the listing is then truncated.
func (d *Listing) Keep(n int) {
	if n < len(d.Entries) {
		d.Entries, d.Truncated = d.Entries[:n], true
	}
}

// DirEntry is one listed entry.
type DirEntry struct {
	// Rel is the path relative to the listed directory, slash-separated.
	Rel string
	Dir bool
	// Symlink is set for a symbolic link, with its Target as written.
	Symlink bool
	Target  string
}

// listDir lists a directory two levels deep, relative to the open handle
// dir, so nothing is listed from anywhere else whatever changes meanwhile.
// .git and node_modules are never listed; hidden entries (and what is under
// them) only with hidden.
func (s *Service) listDir(dir *os.File, real string, hidden bool, max int) Listing {
	l := Listing{Max: max}
	var walk func(d *os.File, realDir, prefix string, depth int)
	walk = func(d *os.File, realDir, prefix string, depth int) {
		entries, err := d.ReadDir(-1)
		if err != nil {
			return
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, e := range entries {
			name := e.Name()
			if name == ".git" || name == "node_modules" || (!hidden && strings.HasPrefix(name, ".")) {
				continue
			}
			child := filepath.Join(realDir, name)
			if s.opts.Policy.HasDenyRules() && s.opts.Policy.DeniedBy(child) != "" {
				continue
			}
			if len(l.Entries) >= max {
				l.Truncated = true
				return
			}
			rel := prefix + name
			switch {
			case e.Type()&os.ModeSymlink != 0:
				target, err := readlinkAt(d, name)
				if err != nil {
					target = "?"
				}
				l.Entries = append(l.Entries, DirEntry{Rel: rel, Symlink: true, Target: target})
			case e.IsDir():
				l.Entries = append(l.Entries, DirEntry{Rel: rel, Dir: true})
				if depth < 2 {
					if sub, err := openDirAt(d, name); err == nil {
						walk(sub, child, rel+"/", depth+1)
						sub.Close()
					}
				}
			default:
				l.Entries = append(l.Entries, DirEntry{Rel: rel})
			}
		}
	}
	walk(dir, real, "", 1)
	return l
}

// openDirAt opens a subdirectory relative to d without following symlinks.
func openDirAt(d *os.File, name string) (*os.File, error) {
	var fd int
	var err error
	rc, cerr := d.SyscallConn()
	if cerr != nil {
		return nil, cerr
	}
	cerr = rc.Control(func(dfd uintptr) {
		fd, err = unix.Openat(int(dfd), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), filepath.Join(d.Name(), name)), nil
}

// readlinkAt reads a symlink relative to d.
func readlinkAt(d *os.File, name string) (string, error) {
	buf := make([]byte, 4096)
	var n int
	var err error
	rc, cerr := d.SyscallConn()
	if cerr != nil {
		return "", cerr
	}
	cerr = rc.Control(func(dfd uintptr) { n, err = unix.Readlinkat(int(dfd), name, buf) })
	if cerr != nil {
		return "", cerr
	}
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}
