package match

import (
	"bytes"
	"errors"
	"io"

	"github.com/boris-mcp/boris/internal/search/match/dfa"
)

// Sink receives the lines a search reports, in file order. Line numbers
// are 1-based and only computed when SearchOptions.LineNumbers is set
// (otherwise they are 0). Returning false stops the search.
type Sink interface {
	Match(lineNo int, line []byte) bool
	Context(lineNo int, line []byte) bool
}

// SearchOptions control what a Searcher reports besides matching lines.
type SearchOptions struct {
	// Before and After are the numbers of context lines to report around
	// each match; overlapping context is reported once.
	Before, After int
	// LineNumbers makes the searcher count lines.
	LineNumbers bool
}

var (
	// ErrBinary reports a file with a NUL byte in its first 8 KiB. Nothing
	// was sent to the sink.
	ErrBinary = errors.New("binary file")
	// ErrTooLarge reports a line (or, in multiline mode, a file) larger than
	// the search buffer may grow.
	ErrTooLarge = errors.New("line or file too large to search")
)

const (
	// BinaryCheckLen is how much of a file is checked for a NUL byte.
	BinaryCheckLen = 8 << 10
	// initialBufSize is the read buffer's size; most source files fit.
	initialBufSize = 256 << 10
	// maxBufSize bounds the buffer: the longest line outside multiline
	// mode, the largest file in it.
	maxBufSize = 256 << 20
	// keepBufSize is the largest buffer kept for the next file.
	keepBufSize = 4 << 20
)

// Searcher searches one stream at a time with a reusable buffer. It is not
// safe for concurrent use: give each goroutine its own.
type Searcher struct {
	m    *Matcher
	opts SearchOptions
	buf  []byte
	pst  *prefilterState
	// dc is the DFA's state cache, made on first use; nil, with gaveUp
	// set, once the DFA has given up on this pattern for this searcher.
	dc     *dfa.Cache
	gaveUp int

	// State of the current search.
	sink      Sink
	lineNo    int // line number of the line starting at linePos
	linePos   int
	lastEnd   int // end (past the newline) of the last line reported
	afterLeft int // after-context lines still to report
	usePre    bool
	// cands and candFrom measure the prefilter's hits in the current
	// region: when they are dense, verifying each costs more than
	// running the DFA over everything.
	cands, candFrom int
	dropped         int // regions where the prefilter was dropped, for tests
}

// maxGiveUps is how many times the DFA may give up (its state cache
// thrashing) before a searcher stops trying it.
const maxGiveUps = 2

// Density at which the prefilter stops paying: at least denseMin
// candidates, on average fewer than denseGap bytes apart.
const (
	denseMin = 16
	denseGap = 64
)

// NewSearcher returns a Searcher for m.
func (m *Matcher) NewSearcher(opts SearchOptions) *Searcher {
	opts.Before, opts.After = max(opts.Before, 0), max(opts.After, 0)
	s := &Searcher{m: m, opts: opts}
	if m.pre != nil {
		s.pst = m.pre.newState()
	}
	return s
}

// Search reads r to the end (or until the sink stops it) and reports
// matching lines and their context to sink. A binary file returns
// ErrBinary before anything is reported.
func (s *Searcher) Search(r io.Reader, sink Sink) error {
	if s.buf == nil {
		s.buf = make([]byte, initialBufSize)
	}
	s.sink = sink
	s.lineNo, s.linePos, s.lastEnd, s.afterLeft = 1, 0, 0, 0
	var err error
	if s.m.multiline {
		err = s.searchWhole(r)
	} else {
		err = s.searchLines(r)
	}
	s.sink = nil
	if len(s.buf) > keepBufSize {
		s.buf = nil
	}
	return err
}

// SearchBytes is Search over a byte slice.
func (s *Searcher) SearchBytes(data []byte, sink Sink) error {
	return s.Search(bytes.NewReader(data), sink)
}

// searchLines streams the input through the buffer: complete lines are
// searched as soon as they are in, the incomplete last line (and the
// lines that may become before-context) are moved to the front and the
// rest of the buffer is refilled.
func (s *Searcher) searchLines(r io.Reader) error {
	filled, pos := 0, 0
	checked := false
	for {
		if filled == len(s.buf) && !s.makeRoom(&pos, &filled) {
			return ErrTooLarge
		}
		n, err := r.Read(s.buf[filled:])
		filled += n
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			return err
		}
		if !checked {
			if filled < BinaryCheckLen && !eof {
				continue
			}
			if bytes.IndexByte(s.buf[:min(filled, BinaryCheckLen)], 0) >= 0 {
				return ErrBinary
			}
			checked = true
		}
		end := filled
		if !eof {
			i := bytes.LastIndexByte(s.buf[pos:filled], '\n')
			if i < 0 {
				continue
			}
			end = pos + i + 1
		}
		if s.searchRegion(pos, end) || eof {
			return nil
		}
		pos = end
		s.roll(&pos, &filled)
	}
}

// makeRoom frees space at the end of a full buffer, growing it when the
// unsearched part fills all of it. It fails when the buffer may not grow.
func (s *Searcher) makeRoom(pos, filled *int) bool {
	s.roll(pos, filled)
	if *filled < len(s.buf) {
		return true
	}
	if len(s.buf) >= maxBufSize {
		return false
	}
	bigger := make([]byte, min(2*len(s.buf), maxBufSize))
	copy(bigger, s.buf[:*filled])
	s.buf = bigger
	return true
}

// roll moves what is still needed (from pos, or from the before-context
// lines preceding it) to the front of the buffer.
func (s *Searcher) roll(pos, filled *int) {
	keep := s.contextStart(*pos)
	if keep == 0 {
		return
	}
	if s.opts.LineNumbers {
		s.lineAt(keep)
		s.linePos -= keep
	}
	copy(s.buf, s.buf[keep:*filled])
	*filled -= keep
	*pos -= keep
	s.lastEnd = max(s.lastEnd-keep, 0)
}

// contextStart returns the start of the before-context of a line starting
// at p: up to Before lines back, but not into lines already reported.
func (s *Searcher) contextStart(p int) int {
	start := p
	for k := 0; k < s.opts.Before && start > s.lastEnd; k++ {
		if i := bytes.LastIndexByte(s.buf[s.lastEnd:start-1], '\n'); i >= 0 {
			start = s.lastEnd + i + 1
		} else {
			start = s.lastEnd
		}
	}
	return start
}

// searchRegion searches the complete lines in buf[pos:end]. It reports
// whether the sink stopped the search.
func (s *Searcher) searchRegion(pos, end int) bool {
	s.usePre = s.m.pre != nil && !s.m.pre.hazardIn(s.buf[pos:end])
	if s.usePre {
		s.pst.reset()
		s.cands, s.candFrom = 0, pos
	}
	for from := pos; from < end; {
		ls, le := s.nextLine(from, end)
		if ls < 0 {
			break
		}
		if s.report(ls, le) {
			return true
		}
		from = le + 1
	}
	return s.emitAfter(end)
}

// nextLine returns the bounds of the first matching line starting at or
// after from (a line start); le is the index of its newline, or end.
func (s *Searcher) nextLine(from, end int) (ls, le int) {
	buf := s.buf
	if s.usePre {
		if s.m.exact || s.cache() == nil || s.cands < denseMin || (from-s.candFrom)/s.cands >= denseGap {
			return s.nextCandidate(from, end)
		}
		s.usePre = false // dense: the DFA alone is cheaper
		s.dropped++
	}
	if c := s.cache(); c != nil {
		p, err := c.NextLine(buf, from, end)
		if err == nil {
			if p < 0 {
				return -1, -1
			}
			return from + bytes.LastIndexByte(buf[from:p], '\n') + 1, lineEnd(buf, p, end)
		}
		s.giveUp()
	}
	for from < end {
		le := lineEnd(buf, from, end)
		if s.matchLine(buf[from:le]) {
			return from, le
		}
		from = le + 1
	}
	return -1, -1
}

// nextCandidate is nextLine through the prefilter: the lines holding one
// of its literals are candidates, verified unless the literals decide.
func (s *Searcher) nextCandidate(from, end int) (ls, le int) {
	buf := s.buf
	for from < end {
		p := s.m.pre.next(buf, from, end, s.pst)
		if p == none {
			return -1, -1
		}
		ls := from + bytes.LastIndexByte(buf[from:p], '\n') + 1
		le := lineEnd(buf, p, end)
		if s.m.exact {
			return ls, le
		}
		s.cands++
		if s.matchLine(buf[ls:le]) {
			return ls, le
		}
		from = le + 1
	}
	return -1, -1
}

// cache returns the DFA's state cache, or nil when the DFA is not used.
func (s *Searcher) cache() *dfa.Cache {
	if s.dc == nil && s.m.dfa != nil && s.gaveUp < maxGiveUps {
		s.dc = s.m.dfa.NewCache(dfa.DefaultBudget)
	}
	return s.dc
}

// giveUp drops the DFA's cache after it gave up; regexp takes over.
func (s *Searcher) giveUp() {
	s.dc = nil
	s.gaveUp++
}

// matchLine decides one line: with the DFA, or with the guard and then
// the regexp.
func (s *Searcher) matchLine(line []byte) bool {
	if c := s.cache(); c != nil {
		ok, err := c.MatchLine(line)
		if err == nil {
			return ok
		}
		s.giveUp()
	}
	if g := s.m.guard; g != nil && !g.allows(line) {
		return false
	}
	return s.m.re.Match(line)
}

// lineEnd returns the index of the first newline at or after p, or end.
func lineEnd(buf []byte, p, end int) int {
	if i := bytes.IndexByte(buf[p:end], '\n'); i >= 0 {
		return p + i
	}
	return end
}

// report sends a matching line, preceded by the context it needs.
func (s *Searcher) report(ls, le int) bool {
	if s.emitAfter(ls) || s.emitBefore(ls) {
		return true
	}
	n := 0
	if s.opts.LineNumbers {
		n = s.lineAt(ls)
	}
	if !s.sink.Match(n, s.buf[ls:le]) {
		return true
	}
	s.lastEnd = le + 1
	s.afterLeft = s.opts.After
	return false
}

// emitAfter reports pending after-context lines that start before upTo.
func (s *Searcher) emitAfter(upTo int) bool {
	for s.afterLeft > 0 && s.lastEnd < upTo {
		ls := s.lastEnd
		le := lineEnd(s.buf, ls, upTo)
		if !s.sink.Context(s.lineAt(ls), s.buf[ls:le]) {
			return true
		}
		s.lastEnd = le + 1
		s.afterLeft--
	}
	return false
}

// emitBefore reports the before-context of a line starting at ls.
func (s *Searcher) emitBefore(ls int) bool {
	for p := s.contextStart(ls); p < ls; {
		le := lineEnd(s.buf, p, ls)
		if !s.sink.Context(s.lineAt(p), s.buf[p:le]) {
			return true
		}
		p = le + 1
	}
	return false
}

// lineAt returns the number of the line starting at p (p >= linePos).
func (s *Searcher) lineAt(p int) int {
	if !s.opts.LineNumbers {
		return 0
	}
	s.lineNo += bytes.Count(s.buf[s.linePos:p], []byte{'\n'})
	s.linePos = p
	return s.lineNo
}

// searchWhole reads the whole input and matches the pattern across lines.
func (s *Searcher) searchWhole(r io.Reader) error {
	filled := 0
	for {
		if filled == len(s.buf) {
			if len(s.buf) >= maxBufSize {
				return ErrTooLarge
			}
			bigger := make([]byte, min(2*len(s.buf), maxBufSize))
			copy(bigger, s.buf[:filled])
			s.buf = bigger
		}
		n, err := r.Read(s.buf[filled:])
		filled += n
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
	}
	data := s.buf[:filled]
	if bytes.IndexByte(data[:min(filled, BinaryCheckLen)], 0) >= 0 {
		return ErrBinary
	}
	if s.m.pre != nil && !s.m.pre.hazardIn(data) {
		s.pst.reset()
		if s.m.pre.next(data, 0, len(data), s.pst) == none {
			return nil
		}
	}
	if c := s.cache(); c != nil {
		ok, err := c.Match(data)
		if err != nil {
			s.giveUp()
		} else if !ok {
			return nil
		}
	}
	// Most callers stop at the first match (a file list), so find it on
	// its own before enumerating all of them.
	first := s.m.re.FindIndex(data)
	if first == nil {
		return nil
	}
	if s.reportSpan(data, first[0], first[1]) {
		return nil
	}
	stopped := false
	ok := s.eachMatch(data, func(ms, me int) {
		if !stopped && (ms != first[0] || me != first[1]) {
			stopped = s.reportSpan(data, ms, me)
		}
	})
	if !ok {
		// The fast enumeration was not possible; this one allocates a slot
		// per match.
		stopped = false
		for _, loc := range s.m.re.FindAllIndex(data, -1) {
			if stopped {
				break
			}
			if loc[0] != first[0] || loc[1] != first[1] {
				stopped = s.reportSpan(data, loc[0], loc[1])
			}
		}
	}
	if !stopped {
		s.emitAfter(len(data))
	}
	return nil
}

// eachMatch calls fn with the bounds of every successive non-overlapping
// match, without collecting them: ReplaceAllFunc hands its callback the
// matched bytes as a slice of data, so their offset is recovered from the
// capacity. If that ever stops holding (checked on every non-empty match)
// it returns false and the caller enumerates another way.
func (s *Searcher) eachMatch(data []byte, fn func(ms, me int)) bool {
	ok := true
	s.m.re.ReplaceAllFunc(data, func(m []byte) []byte {
		if !ok {
			return nil
		}
		ms := cap(data) - cap(m)
		if ms < 0 || ms+len(m) > len(data) || (len(m) > 0 && &data[ms] != &m[0]) {
			ok = false
			return nil
		}
		fn(ms, ms+len(m))
		return nil
	})
	return ok
}

// reportSpan reports every line a match over data[ms:me] touches.
func (s *Searcher) reportSpan(data []byte, ms, me int) bool {
	if ms == len(data) && (ms == 0 || data[ms-1] == '\n') {
		return false // an empty match after the last line
	}
	q := ms
	if me > ms {
		q = me - 1
	}
	last := lineEnd(data, q, len(data))
	p := bytes.LastIndexByte(data[:ms], '\n') + 1
	for p <= last && p < len(data) {
		le := lineEnd(data, p, len(data))
		if p >= s.lastEnd && s.report(p, le) {
			return true
		}
		p = le + 1
	}
	return false
}
