package dfa

import (
	"bytes"
	"unicode/utf8"
)

// NextLine scans buf[from:end] in Lines mode; from must be the start of a
// line. It returns a position p in [from, end] such that the line holding
// p has a match (a '\n' at p belongs to the line it ends; p == end to the
// last line), the first such line, or -1 when no line matches. A last line
// without a terminator is matched too.
func (c *Cache) NextLine(buf []byte, from, end int) (int, error) {
	if c.p.never {
		return -1, nil
	}
	p, s, err := c.scan(buf[:end], from)
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
	p, s, err := c.scan(buf, 0)
	if err != nil || p >= 0 || s == dead {
		return p >= 0, err
	}
	next, err := c.runeNext(s, eot)
	return next == matched, err
}

// scan runs the automaton over buf from i, starting in the start state.
// It returns the position at which a match is known to end, or -1 and
// the state at the end of buf (dead when no match can follow). In Lines
// mode a dead state only ends its line; the scan goes on at the next.
func (c *Cache) scan(buf []byte, i int) (pos int, s int32, err error) {
	p := c.p
	classes := &p.classes
	trans := c.trans
	mark := i
	defer func() { c.scanned += i - mark }()
	s = c.tagged(c.start)
	for {
		if s&accelBit != 0 {
			// A start state: skip what cannot begin a match.
			s &^= accelBit
			if j := p.skip(buf, i); j > i {
				i = j
				if s, err = c.startAfter(buf[j-1]); err != nil {
					return -1, 0, err
				}
				trans = c.trans
			}
		}
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
		if i >= len(buf) {
			return -1, s, nil
		}
		cls := classes[buf[i]]
		next := trans[int(s)+int(cls)]
		size := 1
		switch next {
		case unknown:
			next, err = c.byteNext(s, cls)
		case slow:
			var r rune
			r, size = utf8.DecodeRune(buf[i:])
			next, err = c.runeNext(s, r)
		}
		if err != nil {
			return -1, 0, err
		}
		trans = c.trans
		switch next {
		case matched:
			return i, s, nil
		case dead:
			if p.mode == Text {
				return -1, dead, nil
			}
			j := bytes.IndexByte(buf[i:], '\n')
			if j < 0 {
				i = len(buf)
				return -1, dead, nil
			}
			i += j + 1
			s = c.tagged(c.start)
			continue
		}
		s = next
		i += size
	}
}
