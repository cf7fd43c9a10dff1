// Package printer turns search results into the text grep returns: the
// three output modes, ordering, offset and head_limit, and the cap on the
// result's size. It knows nothing about files: it is given paths, line
// numbers and lines.
//
// Results arrive from concurrent searches in no particular order and are
// put in a stable order before paging: content and count results by path,
// file lists newest modification first (then by path). Because any file
// still to be searched may sort first, nothing can be printed before the
// search ends; instead only what can still appear on the requested page is
// kept (offset plus one page of lines or entries), so memory does not grow
// with the size of the result.
package printer

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// MaxChars caps the text of a result.
const MaxChars = 30000

// MaxLineLen is the longest line text printed in full; longer lines are
// cut with a note giving their length.
const MaxLineLen = 2000

// maxWindow bounds the entries or lines of one page: every printed line
// takes at least two characters with its newline.
const maxWindow = MaxChars/2 + 1

// Mode is an output mode.
type Mode int

const (
	// FilesWithMatches lists matching files, newest first.
	FilesWithMatches Mode = iota
	// Content prints matching lines (and context) as path:line:text.
	Content
	// Count prints path:N, the number of matching lines per file.
	Count
)

// Modes are the valid output_mode values, in the order they are listed
// to a caller.
var Modes = []string{"files_with_matches", "content", "count"}

// ParseMode maps an output_mode value ("" is files_with_matches).
func ParseMode(s string) (Mode, bool) {
	switch s {
	case "", "files_with_matches":
		return FilesWithMatches, true
	case "content":
		return Content, true
	case "count":
		return Count, true
	}
	return 0, false
}

// Options describe the result wanted.
type Options struct {
	Mode Mode
	// LineNumbers prints line numbers in content mode.
	LineNumbers bool
	// Separators prints "--" between non-contiguous groups of lines and
	// between files (content mode with context lines).
	Separators bool
	// Offset skips that many output lines (content) or entries (other
	// modes) after sorting; Limit keeps at most that many (0: all).
	Offset, Limit int
}

// need is how many leading lines or entries of the sorted result must be
// kept to print the page.
func (o Options) need() int {
	w := maxWindow
	if o.Limit > 0 && o.Limit < w {
		w = o.Limit
	}
	return o.Offset + w
}

// Block is the printed content of one file.
type Block struct {
	Path  string
	text  []byte // lines, each ending with '\n'
	lines int
}

type entry struct {
	path  string
	mtime int64
	count int
}

// Collector gathers results from concurrent searches and renders them.
type Collector struct {
	opts Options
	need int

	mu sync.Mutex
	// FilesWithMatches and Count: the best `need` entries so far, worst at
	// the top of the heap.
	entries heap[entry]
	// Content: blocks that may still be printed, the greatest path at the
	// top, their total cost in lines, and the path from which on blocks
	// can no longer be printed.
	blocks      heap[*Block]
	blockLines  int
	boundary    string
	hasBoundary bool
	// total counts all entries or output lines; exact is false once a
	// file's lines were cut at the page bound.
	total int
	exact bool
}

// NewCollector returns a Collector for opts.
func NewCollector(opts Options) *Collector {
	c := &Collector{opts: opts, need: opts.need(), exact: true}
	switch opts.Mode {
	case FilesWithMatches:
		// Worse: older, then greater path.
		c.entries.worse = func(a, b entry) bool {
			if a.mtime != b.mtime {
				return a.mtime < b.mtime
			}
			return a.path > b.path
		}
	case Count:
		c.entries.worse = func(a, b entry) bool { return a.path > b.path }
	case Content:
		c.blocks.worse = func(a, b *Block) bool { return a.Path > b.Path }
	}
	return c
}

// MaxFileLines is the number of lines worth printing for one file; a
// FileWriter stops the search there.
func (c *Collector) MaxFileLines() int { return c.need }

// AddFile records a matching file and its modification time (any
// monotonic unit, such as Unix nanoseconds).
func (c *Collector) AddFile(path string, mtime int64) {
	c.addEntry(entry{path: path, mtime: mtime})
}

// AddCount records a file's number of matching lines (n > 0).
func (c *Collector) AddCount(path string, n int) {
	c.addEntry(entry{path: path, count: n})
}

func (c *Collector) addEntry(e entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total++
	c.entries.push(e)
	if c.entries.len() > c.need {
		c.entries.pop()
	}
}

// sepCost is the separator line printed before a file's block.
func (c *Collector) sepCost() int {
	if c.opts.Separators {
		return 1
	}
	return 0
}

// AddBlock records a file's printed lines.
func (c *Collector) AddBlock(b *Block, truncated bool) {
	if b == nil || b.lines == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cost := b.lines + c.sepCost()
	c.total += cost
	if truncated {
		c.exact = false
	}
	if c.hasBoundary && b.Path >= c.boundary {
		return
	}
	c.blocks.push(b)
	c.blockLines += cost
	// Blocks that start at or past the last needed line can go: later
	// blocks only push them further down.
	for c.blocks.len() > 0 {
		top := c.blocks.items[0]
		topCost := top.lines + c.sepCost()
		// The first block's separator is never printed: start positions
		// are one less than the costs before them add up to.
		if c.blockLines-topCost-c.sepCost() < c.need {
			break
		}
		c.blocks.pop()
		c.blockLines -= topCost
		c.boundary, c.hasBoundary = top.Path, true
	}
}

// Empty reports whether nothing was recorded.
func (c *Collector) Empty() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total == 0
}

// Render returns the result text: the page selected by offset and limit,
// cut at MaxChars with a note saying how to see the rest. With no results
// it returns a sentence saying so.
func (c *Collector) Render() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	unit := "entries"
	var lines []string
	switch c.opts.Mode {
	case FilesWithMatches, Count:
		es := slices.Clone(c.entries.items)
		slices.SortFunc(es, func(a, b entry) int {
			if c.entries.worse(a, b) {
				return 1
			}
			if c.entries.worse(b, a) {
				return -1
			}
			return 0
		})
		es = page(es, c.opts.Offset, c.opts.Limit)
		lines = make([]string, len(es))
		for i, e := range es {
			if c.opts.Mode == Count {
				lines[i] = e.path + ":" + strconv.Itoa(e.count)
			} else {
				lines[i] = e.path
			}
		}
	case Content:
		unit = "lines"
		lines = c.contentPage()
	}
	if c.total == 0 {
		if c.opts.Mode == FilesWithMatches {
			return "No files found"
		}
		return "No matches found"
	}
	total := c.total
	if c.opts.Mode == Content {
		total -= c.sepCost() // the first file has no separator
	}
	if len(lines) == 0 {
		return fmt.Sprintf("No results at offset %d: the result has %d %s; use a smaller offset.", c.opts.Offset, total, unit)
	}
	return capText(lines, c.opts.Offset, total, c.exact, unit)
}

// contentPage returns the output lines of the page, reading the kept
// blocks in path order with "--" between files.
func (c *Collector) contentPage() []string {
	blocks := slices.Clone(c.blocks.items)
	slices.SortFunc(blocks, func(a, b *Block) int { return cmp.Compare(a.Path, b.Path) })
	skip, limit := c.opts.Offset, c.opts.Limit
	if limit <= 0 || limit > maxWindow {
		limit = maxWindow
	}
	var out []string
	emit := func(l string) bool {
		if skip > 0 {
			skip--
			return true
		}
		out = append(out, l)
		return len(out) < limit
	}
	for i, b := range blocks {
		if i > 0 && c.opts.Separators && !emit("--") {
			return out
		}
		text := string(b.text)
		for text != "" {
			j := strings.IndexByte(text, '\n')
			if !emit(text[:j]) {
				return out
			}
			text = text[j+1:]
		}
	}
	return out
}

func page[T any](s []T, offset, limit int) []T {
	if offset >= len(s) {
		return nil
	}
	s = s[offset:]
	if limit > 0 && limit < len(s) {
		s = s[:limit]
	}
	return s
}

// capText joins lines, stopping before MaxChars with a note.
func capText(lines []string, offset, total int, exact bool, unit string) string {
	var b strings.Builder
	for i, l := range lines {
		if b.Len()+len(l)+1 > MaxChars && i > 0 {
			of := strconv.Itoa(total)
			if !exact {
				of = "more than " + of
			}
			fmt.Fprintf(&b, "\n[Output truncated at %d characters: showing %s %d-%d of %s. Pass offset=%d to continue, or narrow the search with path, include, type or a more specific pattern.]",
				MaxChars, unit, offset+1, offset+i, of, offset+i)
			return b.String()
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l)
	}
	return b.String()
}

// PathSource supplies a file's path when its first line is written, so
// that files without matches cost no path.
type PathSource interface{ Path() string }

// StaticPath is a PathSource for a path known in advance.
type StaticPath string

// Path returns p.
func (p StaticPath) Path() string { return string(p) }

// FileWriter renders one file's lines in content mode. It implements the
// searcher's Sink. Reuse it for every file a goroutine searches.
type FileWriter struct {
	opts     Options
	maxLines int
	src      PathSource
	path     string
	buf      []byte
	lines    int
	last     int // line number of the last line written
	cut      bool
}

// NewFileWriter returns a writer that keeps at most maxLines lines per
// file (see Collector.MaxFileLines).
func NewFileWriter(opts Options, maxLines int) *FileWriter {
	return &FileWriter{opts: opts, maxLines: maxLines}
}

// Reset starts a new file.
func (w *FileWriter) Reset(src PathSource) {
	w.src, w.path, w.buf, w.lines, w.last, w.cut = src, "", w.buf[:0], 0, 0, false
}

// Match writes a matching line.
func (w *FileWriter) Match(n int, line []byte) bool { return w.write(n, line, ':') }

// Context writes a context line.
func (w *FileWriter) Context(n int, line []byte) bool { return w.write(n, line, '-') }

func (w *FileWriter) write(n int, line []byte, sep byte) bool {
	if w.opts.Separators && w.lines > 0 && n != w.last+1 {
		if !w.room() {
			return false
		}
		w.buf = append(w.buf, "--\n"...)
		w.lines++
	}
	if !w.room() {
		return false
	}
	w.last = n
	if w.lines == 0 {
		w.path = w.src.Path()
	}
	w.buf = append(append(w.buf, w.path...), sep)
	if w.opts.LineNumbers {
		w.buf = append(strconv.AppendInt(w.buf, int64(n), 10), sep)
	}
	w.buf = append(AppendLine(w.buf, line), '\n')
	w.lines++
	return true
}

// room reports whether another line may be written, and notes the cut
// when not.
func (w *FileWriter) room() bool {
	if w.lines >= w.maxLines {
		w.cut = true
		return false
	}
	return true
}

// Block returns a copy of the file's lines (nil when none) and whether
// they were cut at the page bound.
func (w *FileWriter) Block() (*Block, bool) {
	if w.lines == 0 {
		return nil, false
	}
	return &Block{Path: w.path, text: slices.Clone(w.buf), lines: w.lines}, w.cut
}

// AppendLine appends line's text, cut at MaxLineLen on a UTF-8 boundary
// with a note when longer. Line breaks cannot occur in a line; a lone
// carriage return (from CRLF files) is kept out of the output.
func AppendLine(dst, line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) <= MaxLineLen {
		return append(dst, line...)
	}
	cut := MaxLineLen
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	dst = append(dst, line[:cut]...)
	return fmt.Appendf(dst, " [… line truncated, %d characters in total]", len(line))
}

// heap is a binary heap with the worst element at the top.
type heap[T any] struct {
	items []T
	worse func(a, b T) bool
}

func (h *heap[T]) len() int { return len(h.items) }

func (h *heap[T]) push(x T) {
	h.items = append(h.items, x)
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.worse(h.items[i], h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *heap[T]) pop() T {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	var zero T
	h.items[last] = zero
	h.items = h.items[:last]
	i := 0
	for {
		l, r, w := 2*i+1, 2*i+2, i
		if l < len(h.items) && h.worse(h.items[l], h.items[w]) {
			w = l
		}
		if r < len(h.items) && h.worse(h.items[r], h.items[w]) {
			w = r
		}
		if w == i {
			return top
		}
		h.items[i], h.items[w] = h.items[w], h.items[i]
		i = w
	}
}
