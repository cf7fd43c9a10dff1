package dfa

import (
	"bytes"
	"unicode/utf8"
)

// minSplit is the smallest range NextLine scans as two interleaved halves.
const minSplit = 4 << 10

// NextLine scans buf[from:end] in Lines mode; from must be the start of a
// line. It returns a position p in [from, end] such that the line holding
// p has a match (a '\n' at p belongs to the line it ends; p == end to the
// last line), the first such line, or -1 when no line matches. A last line
// without a terminator is matched too.
func (c *Cache) NextLine(buf []byte, from, end int) (int, error) {
	if c.p.never {
		return -1, nil
	}
	buf = buf[:end]
	var p int
	var s int32
	var err error
	if mid := splitAt(buf, from); mid > 0 {
		p, s, err = c.scan2(buf, from, mid)
	} else {
		p, s, err = c.scanFrom(buf, c.settle(buf, from, c.tagged(c.start)))
	}
	if err != nil || p >= 0 || s == dead {
		return p, err
	}
	if end == from || buf[end-1] != '\n' {
		// The last line has no terminator: decide it at the end of the
		// text, which in Lines mode is what a '\n' does.
		next, err := c.byteNext(s, c.p.classes['\n'])
		if next == matched {
			return end, err
		}
		return -1, err
	}
	return -1, nil
}

// splitAt returns the start of a line near the middle of buf[from:], or
// 0 when the range is too small to split.
func splitAt(buf []byte, from int) int {
	if len(buf)-from < minSplit {
		return 0
	}
	mid := from + (len(buf)-from)/2
	i := bytes.IndexByte(buf[mid:], '\n')
	if i < 0 || mid+i+1 == len(buf) {
		return 0
	}
	return mid + i + 1
}

// MatchLine reports whether line (without its terminator) matches, in
// Lines mode.
func (c *Cache) MatchLine(line []byte) (bool, error) {
	p, err := c.NextLine(line, 0, len(line))
	return p >= 0, err
}

// Match reports whether buf matches as one text, in Text mode.
func (c *Cache) Match(buf []byte) (bool, error) {
	if c.p.never {
		return false, nil
	}
	p, s, err := c.scanFrom(buf, c.settle(buf, 0, c.tagged(c.start)))
	if err != nil || p >= 0 || s == dead {
		return p >= 0, err
	}
	next, err := c.runeNext(s, eot)
	return next == matched, err
}

// A scan's position: the next byte to read, the state before it (never
// tagged with accelBit), and an error from building states.
type cursor struct {
	i   int
	s   int32
	err error
}

// scanFrom runs the automaton over buf from cur. It returns the position
// at which a match is known to end, or -1 and the state at the end of
// buf (dead when no match can follow).
func (c *Cache) scanFrom(buf []byte, cur cursor) (pos int, s int32, err error) {
	classes := &c.p.classes
	i, s := cur.i, cur.s
	if cur.err != nil {
		return -1, 0, cur.err
	}
	mark := i
	defer func() { c.scanned += i - mark }()
	for {
		// Bytes scanned count before states are built (see lookup).
		c.scanned += i - mark
		mark = i
		trans := c.trans
		for i+4 <= len(buf) {
			n0 := trans[int(s)+int(classes[buf[i]])]
			if uint32(n0) >= accelBit {
				break
			}
			n1 := trans[int(n0)+int(classes[buf[i+1]])]
			if uint32(n1) >= accelBit {
				s, i = n0, i+1
				break
			}
			n2 := trans[int(n1)+int(classes[buf[i+2]])]
			if uint32(n2) >= accelBit {
				s, i = n1, i+2
				break
			}
			n3 := trans[int(n2)+int(classes[buf[i+3]])]
			if uint32(n3) >= accelBit {
				s, i = n2, i+3
				break
			}
			s, i = n3, i+4
		}
		for i < len(buf) {
			next := trans[int(s)+int(classes[buf[i]])]
			if uint32(next) >= accelBit {
				break
			}
			s = next
			i++
		}
		if i >= len(buf) || s == dead {
			return -1, s, nil
		}
		var p int
		if p, cur = c.advance(buf, i, s); p >= 0 || cur.err != nil {
			return p, s, cur.err
		}
		i, s = cur.i, cur.s
	}
}

// scan2 is scanFrom over buf[from:] in Lines mode, run as two halves split
// at mid (a line start) whose table lookups are interleaved: each half's
// lookups depend on each other, the two halves' do not, so the processor
// overlaps them. A match in the second half counts only once the first
// half has none.
func (c *Cache) scan2(buf []byte, from, mid int) (pos int, s int32, err error) {
	classes := &c.p.classes
	a := buf[:mid]
	ca := c.settle(a, from, c.tagged(c.start))
	cb := c.settle(buf, mid, c.tagged(c.start))
	for ca.err == nil && cb.err == nil {
		ia, sa, ib, sb := ca.i, ca.s, cb.i, cb.s
		markA, markB := ia, ib
		if ia >= len(a) || sb == dead || ib >= len(buf) {
			break
		}
		trans := c.trans
		for ia < len(a) && ib < len(buf) {
			na := trans[int(sa)+int(classes[a[ia]])]
			nb := trans[int(sb)+int(classes[buf[ib]])]
			if uint32(na) >= accelBit || uint32(nb) >= accelBit {
				break
			}
			sa, sb = na, nb
			ia++
			ib++
		}
		ca.i, ca.s, cb.i, cb.s = ia, sa, ib, sb
		c.scanned += ia - markA + ib - markB
		var p int
		switch {
		case ia < len(a) && uint32(trans[int(sa)+int(classes[a[ia]])]) >= accelBit:
			other, flushes := c.states[int(sb)/c.p.nclass], c.flushes
			if p, ca = c.advance(a, ia, sa); p >= 0 {
				return p, sa, ca.err
			}
			if c.flushes != flushes && ca.err == nil {
				cb.s, cb.err = c.lookup(other.insts, other.prev)
			}
		case ib < len(buf) && uint32(trans[int(sb)+int(classes[buf[ib]])]) >= accelBit:
			other, flushes := c.states[int(sa)/c.p.nclass], c.flushes
			if p, cb = c.advance(buf, ib, sb); p >= 0 {
				// The first half decides first.
				if q, _, err := c.scanFrom(a, ca); q >= 0 || err != nil {
					return q, 0, err
				}
				return p, sb, nil
			}
			if c.flushes != flushes && cb.err == nil && sa != dead {
				ca.s, ca.err = c.lookup(other.insts, other.prev)
			}
		}
	}
	if ca.err != nil {
		return -1, 0, ca.err
	}
	if cb.err != nil {
		return -1, 0, cb.err
	}
	if q, _, err := c.scanFrom(a, ca); q >= 0 || err != nil {
		return q, 0, err
	}
	return c.scanFrom(buf, cb)
}

// advance takes the transition at buf[i] that the table does not hold as a
// plain state: it computes it, decodes a rune, reports a match (its
// position, else -1), moves past a line with no match left, or skips
// ahead from a start state.
func (c *Cache) advance(buf []byte, i int, s int32) (int, cursor) {
	cls := c.p.classes[buf[i]]
	next := c.trans[int(s)+int(cls)]
	size := 1
	var err error
	switch next {
	case unknown:
		next, err = c.byteNext(s, cls)
	case slow:
		var r rune
		r, size = utf8.DecodeRune(buf[i:])
		next, err = c.runeNext(s, r)
	}
	switch {
	case err != nil:
		return -1, cursor{err: err}
	case next == matched:
		return i, cursor{i: i, s: s}
	case next == dead && c.p.mode == Text:
		return -1, cursor{i: len(buf), s: dead}
	case next == dead:
		j := bytes.IndexByte(buf[i:], '\n')
		if j < 0 {
			return -1, cursor{i: len(buf), s: dead}
		}
		return -1, c.settle(buf, i+j+1, c.tagged(c.start))
	}
	return -1, c.settle(buf, i+size, next)
}

// settle returns the cursor at i in state s; if s is a start state that
// accelerates, it first skips to the next byte that can begin a match.
func (c *Cache) settle(buf []byte, i int, s int32) cursor {
	if s&accelBit == 0 {
		return cursor{i: i, s: s}
	}
	s &^= accelBit
	j := c.p.skip(buf, i)
	if j == i {
		return cursor{i: i, s: s}
	}
	s, err := c.startAfter(buf[j-1])
	return cursor{i: j, s: s, err: err}
}
