package files

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/boris-mcp/boris/internal/codes"
	"golang.org/x/sys/unix"
)

// ViewResult is what view shows: text, or an image.
type ViewResult struct {
	Text string
	// Image and MIMEType are set for image files.
	Image    []byte
	MIMEType string
}

// Range is a 1-based inclusive line range; End -1 means the end of the
// file. A nil *Range means the default view.
type Range struct{ Start, End int }

// View shows a file with numbered lines, an image, a note for a binary file,
// or a directory listing two levels deep.
func (s *Service) View(c Ctx, path string, rng *Range) (*ViewResult, error) {
	if rng != nil && (rng.Start < 1 || (rng.End != -1 && rng.End < rng.Start)) {
		return nil, codes.Errorf(codes.InvalidInput, "invalid view_range [%d, %d]: use [start, end] with 1 <= start <= end, or end = -1 for the end of the file", rng.Start, rng.End)
	}
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
			return nil, codes.Errorf(codes.InvalidInput, "%s is a directory; view_range applies to files", t.Path)
		}
		return &ViewResult{Text: s.listDir(f, t.Path, real)}, nil
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

	var res *ViewResult
	switch mime := imageType(t.Path, head); {
	case n == 0:
		res = &ViewResult{Text: fmt.Sprintf("%s is empty (0 bytes).", t.Path)}
	case mime != "":
		data, err := io.ReadAll(io.LimitReader(io.MultiReader(bytes.NewReader(head), f), s.opts.MaxFileSize+1))
		if err != nil {
			return nil, codes.Errorf(codes.IOError, "read %s: %v", t.Path, unwrapPathError(err))
		}
		if int64(len(data)) > s.opts.MaxFileSize {
			return nil, s.tooLarge(t.Path, int64(len(data)))
		}
		res = &ViewResult{Image: data, MIMEType: mime}
	case bytes.IndexByte(head, 0) >= 0:
		res = &ViewResult{Text: fmt.Sprintf("Binary file (%s): %s", HumanSize(fi.Size()), t.Path)}
	default:
		text, err := numberLines(io.MultiReader(bytes.NewReader(head), f), t.Path, rng)
		if err != nil {
			return nil, err
		}
		res = &ViewResult{Text: text}
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

// numberLines streams r and formats the requested lines like `cat -n`.
// Only the shown lines are held; the rest is counted.
func numberLines(r io.Reader, path string, rng *Range) (string, error) {
	start, end := 1, MaxViewLines
	if rng != nil {
		start, end = rng.Start, rng.End
	}
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(r)
	defer func() { br.Reset(nil); readerPool.Put(br) }()
	var out []byte
	line := 0
	var cur []byte     // the shown part of the current line
	var curChars int   // characters of the current line
	var atStart = true // at the beginning of a line
	flush := func() {
		line++
		if line >= start && (end == -1 || line <= end) {
			out = appendLineNo(out, line)
			out = append(out, bytes.TrimSuffix(cur, []byte("\r"))...)
			if curChars > MaxLineChars {
				out = fmt.Appendf(out, "… [line truncated: %d characters]", curChars)
			}
			out = append(out, '\n')
		}
		cur, curChars, atStart = cur[:0], 0, true
	}
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			atStart = false
			body := bytes.TrimSuffix(chunk, []byte("\n"))
			inRange := line+1 >= start && (end == -1 || line+1 <= end)
			if inRange && curChars < MaxLineChars {
				cur = appendChars(cur, body, MaxLineChars-curChars)
			}
			curChars += utf8.RuneCount(body)
			if chunk[len(chunk)-1] == '\n' {
				flush()
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", codes.Errorf(codes.IOError, "read %s: %v", path, unwrapPathError(err))
		}
	}
	if !atStart {
		flush() // a last line without a newline
	}
	total := line
	if rng != nil {
		if start > total {
			return "", codes.Errorf(codes.InvalidInput, "view_range start %d is past the end of %s, which has %d lines", start, path, total)
		}
		return string(out), nil
	}
	if total > MaxViewLines {
		out = fmt.Appendf(out, "\n[Showing lines 1-%d of %d. Use view_range to see more, e.g. [%d, %d].]\n", MaxViewLines, total, MaxViewLines+1, min(total, 2*MaxViewLines))
	}
	return string(out), nil
}

// appendLineNo appends a line number right-aligned in six columns and a
// tab, like cat -n.
func appendLineNo(b []byte, n int) []byte {
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], int64(n), 10)
	for i := len(d); i < 6; i++ {
		b = append(b, ' ')
	}
	return append(append(b, d...), '\t')
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

// listDir lists a directory two levels deep, relative to the open handle
// dir, so nothing is listed from anywhere else whatever changes meanwhile.
func (s *Service) listDir(dir *os.File, shown, real string) string {
	var lines []string
	truncated := false
	var walk func(d *os.File, realDir, prefix string, depth int)
	walk = func(d *os.File, realDir, prefix string, depth int) {
		entries, err := d.ReadDir(-1)
		if err != nil {
			return
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, e := range entries {
			name := e.Name()
			if name == ".git" || name == "node_modules" {
				continue
			}
			child := filepath.Join(realDir, name)
			if s.opts.Policy.HasDenyRules() && s.opts.Policy.DeniedBy(child) != "" {
				continue
			}
			if len(lines) >= MaxListEntries {
				truncated = true
				return
			}
			rel := prefix + name
			switch {
			case e.Type()&os.ModeSymlink != 0:
				target, err := readlinkAt(d, name)
				if err != nil {
					target = "?"
				}
				lines = append(lines, rel+" -> "+target)
			case e.IsDir():
				lines = append(lines, rel+"/")
				if depth < 2 {
					if sub, err := openDirAt(d, name); err == nil {
						walk(sub, child, rel+"/", depth+1)
						sub.Close()
					}
				}
			default:
				lines = append(lines, rel)
			}
		}
	}
	walk(dir, real, "", 1)
	var b strings.Builder
	fmt.Fprintf(&b, "Directory %s (2 levels deep; .git and node_modules not listed):\n", shown)
	if len(lines) == 0 {
		b.WriteString("(empty directory)\n")
	}
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if truncated {
		fmt.Fprintf(&b, "[Listing capped at %d entries; view a subdirectory or use find for more.]\n", MaxListEntries)
	}
	return b.String()
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
