package shell

import (
	"bytes"
	"fmt"
	"sync"
	"unicode/utf8"
)

// MaxOutputChars is how many characters of each stream a result keeps
// from the start by default (Options.MaxOutput); when asked to, it keeps
// half as many from the end too.
const MaxOutputChars = 30000

// maxPwdBytes bounds the directory recorded between the two sentinels.
const maxPwdBytes = 4096

// Output is one stream of a finished or running command, as the caller
// should see it: sentinel removed, cut at the character limit.
type Output struct {
	// Text is at most the limit's worth of characters, cut on a UTF-8
	// boundary.
	Text string
	// Chars is the total number of characters the command wrote (after
	// removing the sentinel).
	Chars int64
	// Truncated is true when Text holds less than everything.
	Truncated bool
	// Tail, when the command asked for it and Text is truncated, is the
	// end of the stream: at most half the limit's characters, never
	// overlapping Text.
	Tail string
	// Limit is the most characters Text may hold (the runner's
	// MaxOutput).
	Limit int
	// Lines is the number of lines the stream has (a last line without a
	// newline counts).
	Lines int64
}

// capture is an io.Writer that keeps a bounded view of a stream: its head,
// its length in bytes and characters, and — for stdout — where the cwd
// sentinel pair sits, however the stream is split into writes. Memory is
// fixed by the limit, never by how much is written.
type capture struct {
	mu sync.Mutex

	limit   int // characters kept
	headCap int // bytes kept
	head    []byte
	bytes   int64
	chars   int64
	lines   int64 // newlines seen
	last    byte  // the last byte seen

	// tailCap > 0 keeps the last tailCap bytes in tail (a sliding window
	// that holds up to twice that before it is shifted).
	tailCap int
	tail    []byte

	// Sentinel tracking (empty sentinel: no tracking).
	sentinel  []byte
	carry     []byte  // last len(sentinel)-1 bytes seen, for matches across writes
	occ       []int64 // offsets of the last two sentinel occurrences
	rec       []byte  // bytes after the latest occurrence (bounded)
	recOver   bool    // rec overflowed maxPwdBytes
	between   []byte  // bytes between the last two occurrences
	betweenOK bool

	// Progress: the most recent unsent bytes, [pendStart, pendStart+len(pend)),
	// at most window of them once trimmed.
	progress  bool
	window    int
	pend      []byte
	pendStart int64
	sent      int64
	firstOcc  int64 // first sentinel offset, -1 if none yet
}

func newCapture(limit int, sentinel string) *capture {
	c := &capture{limit: limit, sentinel: []byte(sentinel), firstOcc: -1}
	// Enough bytes for `limit` characters of any width, plus a sentinel pair
	// and a directory that may sit inside them.
	c.headCap = limit*utf8.UTFMax + 2*len(sentinel) + maxPwdBytes + 16
	return c
}

// keepTail makes the capture keep the end of the stream too.
func (c *capture) keepTail() {
	c.tailCap = c.limit/2*utf8.UTFMax + 2*len(c.sentinel) + maxPwdBytes + 16
}

// Write never fails and never blocks on the consumer.
func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.headCap - len(c.head); room > 0 {
		n := min(room, len(p))
		c.head = append(c.head, p[:n]...)
	}
	if len(c.sentinel) > 0 {
		c.scan(p)
	}
	if c.tailCap > 0 {
		if len(p) >= c.tailCap {
			c.tail = append(c.tail[:0], p[len(p)-c.tailCap:]...)
		} else {
			if len(c.tail)+len(p) > 2*c.tailCap {
				c.tail = append(c.tail[:0], c.tail[len(c.tail)-(c.tailCap-len(p)):]...)
			}
			c.tail = append(c.tail, p...)
		}
	}
	c.bytes += int64(len(p))
	c.chars += countChars(p)
	c.lines += int64(bytes.Count(p, []byte{'\n'}))
	if len(p) > 0 {
		c.last = p[len(p)-1]
	}
	if c.progress {
		c.pend = append(c.pend, p...)
		// Trimmed back to the window only when twice over it, so a steady
		// stream copies each byte a bounded number of times.
		if len(c.pend) > 2*c.window {
			over := len(c.pend) - c.window
			c.pend = append(c.pend[:0], c.pend[over:]...)
			c.pendStart += int64(over)
		}
	}
	return len(p), nil
}

// countChars counts UTF-8 sequence starts: exact for valid UTF-8 however the
// stream is split, and one per byte for invalid bytes.
func countChars(p []byte) int64 {
	var n int64
	for _, b := range p {
		if b&0xC0 != 0x80 {
			n++
		}
	}
	return n
}

// scan finds sentinel occurrences in p, including ones that begin in the
// carried tail of earlier writes, and records the bytes that follow each.
func (c *capture) scan(p []byte) {
	s := c.sentinel
	base := c.bytes // stream offset of p[0]
	pos := 0        // bytes of p already given to rec

	// Occurrences that start in the carry and end in p.
	if len(c.carry) > 0 {
		k := min(len(s)-1, len(p))
		window := make([]byte, 0, len(c.carry)+k)
		window = append(window, c.carry...)
		window = append(window, p[:k]...)
		from := 0
		for {
			i := bytes.Index(window[from:], s)
			if i < 0 {
				break
			}
			i += from
			if i >= len(c.carry) {
				break // starts inside p: found by the main loop
			}
			start := base - int64(len(c.carry)) + int64(i)
			// rec got the carried bytes of the sentinel's head; drop them.
			c.trimRec(len(c.carry) - i)
			end := i + len(s) - len(c.carry) // offset in p where it ends
			c.found(start)
			pos = end
			from = i + len(s)
		}
	}

	for from := pos; ; {
		i := bytes.Index(p[from:], s)
		if i < 0 {
			break
		}
		i += from
		c.record(p[pos:i])
		c.found(base + int64(i))
		pos = i + len(s)
		from = pos
	}
	c.record(p[pos:])

	// Carry the last len(s)-1 bytes of the stream.
	keep := len(s) - 1
	if len(p) >= keep {
		c.carry = append(c.carry[:0], p[len(p)-keep:]...)
	} else {
		c.carry = append(c.carry, p...)
		if len(c.carry) > keep {
			c.carry = append(c.carry[:0], c.carry[len(c.carry)-keep:]...)
		}
	}
}

func (c *capture) record(b []byte) {
	if len(c.occ) == 0 || c.recOver {
		return
	}
	if len(c.rec)+len(b) > maxPwdBytes {
		c.recOver = true
		c.rec = c.rec[:0]
		return
	}
	c.rec = append(c.rec, b...)
}

func (c *capture) trimRec(n int) {
	if c.recOver || len(c.occ) == 0 {
		return
	}
	if n > len(c.rec) {
		n = len(c.rec)
	}
	c.rec = c.rec[:len(c.rec)-n]
}

// found registers an occurrence starting at stream offset off.
func (c *capture) found(off int64) {
	if len(c.occ) > 0 {
		c.between = append(c.between[:0], c.rec...)
		c.betweenOK = !c.recOver
	}
	if c.firstOcc < 0 {
		c.firstOcc = off
	}
	c.occ = append(c.occ, off)
	if len(c.occ) > 2 {
		c.occ = c.occ[1:]
	}
	c.rec = c.rec[:0]
	c.recOver = false
}

// result returns the stream with the sentinel pair (if complete and valid)
// removed, and the directory it carried ("" when missing).
func (c *capture) result() (Output, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	start, end := int64(-1), int64(-1)
	dir := ""
	if len(c.occ) == 2 && c.betweenOK {
		d := string(bytes.TrimSuffix(c.between, []byte("\n")))
		if len(d) > 0 && d[0] == '/' {
			start, end = c.occ[0], c.occ[1]+int64(len(c.sentinel))
			dir = d
		}
	}
	head := c.head
	chars, nbytes, lines := c.chars, c.bytes, c.lines
	tail, tailFrom := c.tail, c.bytes-int64(len(c.tail))
	if start >= 0 {
		head = cutOut(head, 0, start, end)
		tail = cutOut(tail, tailFrom, start, end)
		chars -= int64(2*len(c.sentinel)) + countChars(c.between)
		lines -= int64(bytes.Count(c.between, []byte{'\n'}))
		nbytes -= end - start
	}
	if nbytes > 0 && c.lastVisible(start, end, tailFrom) != '\n' {
		lines++ // a last line without a newline
	}
	out := cutChars(head, c.limit, chars, nbytes > int64(len(head)))
	out.Lines = lines
	if out.Truncated && c.tailCap > 0 {
		out.Tail = lastChars(tail, c.limit/2, chars-int64(utf8.RuneCountInString(out.Text)))
	}
	return out, dir
}

// cutOut removes the stream region [start, end) from b, a window of the
// stream that begins at offset from.
func cutOut(b []byte, from, start, end int64) []byte {
	s, e := min(max(start-from, 0), int64(len(b))), min(max(end-from, 0), int64(len(b)))
	if s >= e {
		return b
	}
	cut := make([]byte, 0, len(b)-int(e-s))
	cut = append(cut, b[:s]...)
	return append(cut, b[e:]...)
}

// lastVisible returns the last byte of the stream once the region
// [start, end) is cut out (start < 0: nothing is), as far as the head or the
// tail still hold it; a newline when neither does.
func (c *capture) lastVisible(start, end, tailFrom int64) byte {
	if start < 0 || end < c.bytes {
		return c.last
	}
	at := start - 1
	switch {
	case at < 0:
		return '\n' // nothing before the region: no line to count
	case at < int64(len(c.head)):
		return c.head[at]
	case at >= tailFrom && at-tailFrom < int64(len(c.tail)):
		return c.tail[at-tailFrom]
	}
	return '\n'
}

// lastChars returns the last n characters of b, but no more than avail
// (the characters not already shown from the head), starting on a
// character boundary.
func lastChars(b []byte, n int, avail int64) string {
	n = int(min(int64(n), max(avail, 0)))
	i := len(b)
	for k := 0; k < n && i > 0; k++ {
		_, size := utf8.DecodeLastRune(b[:i])
		i -= size
	}
	return string(b[i:])
}

// cutChars keeps the first limit characters of head.
func cutChars(head []byte, limit int, total int64, more bool) Output {
	n, i := 0, 0
	for i < len(head) && n < limit {
		_, size := utf8.DecodeRune(head[i:])
		i += size
		n++
	}
	return Output{Text: string(head[:i]), Chars: total, Truncated: i < len(head) || more, Limit: limit}
}

// enableProgress keeps up to window bytes not yet handed out, for
// takeProgress.
func (c *capture) enableProgress(window int) {
	c.mu.Lock()
	c.progress, c.window = true, window
	c.mu.Unlock()
}

// sentinelPrefixAt is the length of the longest suffix of tail that is a
// proper prefix of sentinel: the bytes that may yet turn out to be its start.
func sentinelPrefixAt(tail, sentinel []byte) int {
	for n := min(len(tail), len(sentinel)-1); n > 0; n-- {
		if bytes.Equal(tail[len(tail)-n:], sentinel[:n]) {
			return n
		}
	}
	return 0
}

// pending reports whether output is waiting for takeProgress (a sentinel
// on its way is not).
func (c *capture) pending() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.progress && c.availLocked() > c.sent
}

// availLocked is the stream offset up to which output may be handed out:
// everything from the first sentinel on is held back, and so is a tail
// that may be the start of one.
func (c *capture) availLocked() int64 {
	if len(c.sentinel) == 0 {
		return c.bytes
	}
	if c.firstOcc >= 0 {
		return c.firstOcc
	}
	return c.bytes - int64(sentinelPrefixAt(c.carry, c.sentinel))
}

// takeProgress returns the output not yet handed out, never any part of the
// sentinel: everything from the first sentinel on is held back, and so is the
// tail that is the start of one (only as much as matches: a short line with
// nothing sentinel-like after it goes out at once). Output that was overwritten before it
// could be sent is replaced by a note.
func (c *capture) takeProgress() []byte {
	out, _ := c.takeProgressCounted()
	return out
}

// takeProgressCounted is takeProgress that also says how many bytes were
// dropped (the note's number; 0 when none were).
func (c *capture) takeProgressCounted() (out []byte, dropped int64) {
	return c.takeProgressAtMost(0)
}

// takeProgressAtMost is takeProgressCounted that hands out at most max
// bytes of output (0: all), cut at a character boundary; the rest stays
// pending for the next take.
func (c *capture) takeProgressAtMost(max int) (out []byte, dropped int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	avail := c.availLocked()
	if avail <= c.sent {
		return nil, 0
	}
	from := c.sent
	if from < c.pendStart {
		dropped = c.pendStart - from
		out = fmt.Appendf(out, "[... %d bytes of output dropped: more than %d were waiting to be read ...]\n", dropped, c.window)
		from = c.pendStart
	}
	if max > 0 && avail-from > int64(max) {
		end := from + int64(max)
		// Back to the start of a character (at most 3 bytes back).
		for i := 0; i < 3 && end > from && !utf8.RuneStart(c.pend[end-c.pendStart]); i++ {
			end--
		}
		avail = end
	}
	if avail > from {
		out = append(out, c.pend[from-c.pendStart:avail-c.pendStart]...)
	}
	// Drop what was handed out.
	if drop := avail - c.pendStart; drop > 0 {
		c.pend = append(c.pend[:0], c.pend[drop:]...)
		c.pendStart = avail
	}
	c.sent = avail
	return out, dropped
}
