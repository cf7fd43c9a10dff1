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

// MaxChars caps the text of a result by default (Options.MaxChars).
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
	// MaxChars caps the text of a page (0: MaxChars); past it the page
	// ends with a note giving the offset of the next.
	MaxChars int
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
	meta  []lineMeta // one per line
}

// lineMeta says what a printed line of a block is: a separator, or a
// match or context line with its number and where its text starts.
type lineMeta struct {
	n       int // 0 for a separator
	context bool
	textAt  int // offset of the line's text within the printed line
}

// Page is a rendered result: its text, and the same page as data.
type Page struct {
	// Text is the result text (what Render returns).
	Text string
	Mode Mode
	// Entries are the page's files (FilesWithMatches) or files with
	// their counts (Count); Lines its match and context lines (Content),
	// separators left out.
	Entries []Entry
	Lines   []Line
	// Offset is the number of entries or output lines skipped; Total the
	// number in the whole result (output lines, separators included, in
	// Content mode), a lower bound unless Exact.
	Offset, Total int
	Exact         bool
	// Truncated is true when the result goes on past this page (by
	// head_limit or the size cap); NextOffset is then the offset of the
	// next page.
	Truncated  bool
	NextOffset int
}

// Entry is a file of a FilesWithMatches or Count page.
type Entry struct {
	Path  string
	Count int // matching lines (Count mode)
}

// Line is a line of a Content page.
type Line struct {
	Path string
	N    int
	// Text is the line as printed: without its carriage return, cut at
	// MaxLineLen with a note.
	Text    string
	Context bool
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
func (c *Collector) Render() string { return c.Page().Text }

// Page returns the page selected by offset and limit: its text, as Render
// returns it, and the entries or lines the text shows.
func (c *Collector) Page() Page {
	c.mu.Lock()
	defer c.mu.Unlock()
	pg := Page{Mode: c.opts.Mode, Offset: c.opts.Offset, Exact: c.exact}
	unit := "entries"
	var lines []string
	var meta []Line // Content: a line's data, Path "" for a separator
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
		pg.Entries = make([]Entry, len(es))
		for i, e := range es {
			if c.opts.Mode == Count {
				lines[i] = e.path + ":" + strconv.Itoa(e.count)
			} else {
				lines[i] = e.path
			}
			pg.Entries[i] = Entry{Path: e.path, Count: e.count}
		}
	case Content:
		unit = "lines"
		lines, meta = c.contentPage()
	}
	pg.Total = c.total
	if c.opts.Mode == Content && c.total > 0 {
		pg.Total -= c.sepCost() // the first file has no separator
	}
	switch {
	case c.total == 0:
		pg.Text = "No matches found"
		if c.opts.Mode == FilesWithMatches {
			pg.Text = "No files found"
		}
		return pg
	case len(lines) == 0:
		pg.Text = fmt.Sprintf("No results at offset %d: the result has %d %s; use a smaller offset.", c.opts.Offset, pg.Total, unit)
		return pg
	}
	var shown int
	maxChars := c.opts.MaxChars
	if maxChars <= 0 {
		maxChars = MaxChars
	}
	pg.Text, shown = capText(lines, c.opts.Offset, pg.Total, c.exact, unit, maxChars)
	if shown < len(pg.Entries) {
		pg.Entries = pg.Entries[:shown]
	}
	for _, m := range meta[:min(shown, len(meta))] {
		if m.Path != "" {
			pg.Lines = append(pg.Lines, m)
		}
	}
	if next := c.opts.Offset + shown; next < pg.Total || !c.exact {
		pg.Truncated, pg.NextOffset = true, next
	}
	return pg
}

// contentPage returns the output lines of the page, reading the kept
// blocks in path order with "--" between files, and each line's data.
func (c *Collector) contentPage() ([]string, []Line) {
	blocks := slices.Clone(c.blocks.items)
	slices.SortFunc(blocks, func(a, b *Block) int { return cmp.Compare(a.Path, b.Path) })
	skip, limit := c.opts.Offset, c.opts.Limit
	if limit <= 0 || limit > maxWindow {
		limit = maxWindow
	}
	var out []string
	var data []Line
	emit := func(l string, d Line) bool {
		if skip > 0 {
			skip--
			return true
		}
		out = append(out, l)
		data = append(data, d)
		return len(out) < limit
	}
	for i, b := range blocks {
		if i > 0 && c.opts.Separators && !emit("--", Line{}) {
			return out, data
		}
		text := string(b.text)
		for k := 0; text != ""; k++ {
			j := strings.IndexByte(text, '\n')
			var d Line
			if m := b.meta[k]; m.n > 0 {
				d = Line{Path: b.Path, N: m.n, Text: text[m.textAt:j], Context: m.context}
			}
			if !emit(text[:j], d) {
				return out, data
			}
			text = text[j+1:]
		}
	}
	return out, data
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

// capText joins lines, stopping before maxChars with a note; it returns
// the text and how many of the lines it holds.
func capText(lines []string, offset, total int, exact bool, unit string, maxChars int) (string, int) {
	var b strings.Builder
	for i, l := range lines {
		if b.Len()+len(l)+1 > maxChars && i > 0 {
			of := strconv.Itoa(total)
			if !exact {
				of = "more than " + of
			}
			fmt.Fprintf(&b, "\n[Output truncated at %d characters: showing %s %d-%d of %s. Pass offset=%d to continue, or narrow the search with path, include, type or a more specific pattern.]",
				maxChars, unit, offset+1, offset+i, of, offset+i)
			return b.String(), i
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l)
	}
	return b.String(), len(lines)
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
	meta     []lineMeta
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
	w.src, w.path, w.buf, w.meta, w.lines, w.last, w.cut = src, "", w.buf[:0], w.meta[:0], 0, 0, false
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
		w.meta = append(w.meta, lineMeta{})
		w.lines++
	}
	if !w.room() {
		return false
	}
	w.last = n
	if w.lines == 0 {
		w.path = w.src.Path()
	}
	start := len(w.buf)
	w.buf = append(append(w.buf, w.path...), sep)
	if w.opts.LineNumbers {
		w.buf = append(strconv.AppendInt(w.buf, int64(n), 10), sep)
	}
	w.meta = append(w.meta, lineMeta{n: n, context: sep == '-', textAt: len(w.buf) - start})
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
	return &Block{Path: w.path, text: slices.Clone(w.buf), lines: w.lines, meta: slices.Clone(w.meta)}, w.cut
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
