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
	p := c.p
	if p.never {
		return -1, nil
	}
	nl := p.classes['\n']
	classes := &p.classes
	buf = buf[:end]
	s := c.start
	trans := c.trans
	i, mark := from, from
	defer func() { c.scanned += i - mark }()
	for {
		for i+4 <= len(buf) {
			n0 := trans[int(s)+int(classes[buf[i]])]
			if n0 < 0 {
				break
			}
			n1 := trans[int(n0)+int(classes[buf[i+1]])]
			if n1 < 0 {
				s, i = n0, i+1
				break
			}
			n2 := trans[int(n1)+int(classes[buf[i+2]])]
			if n2 < 0 {
				s, i = n1, i+2
				break
			}
			n3 := trans[int(n2)+int(classes[buf[i+3]])]
			if n3 < 0 {
				s, i = n2, i+3
				break
			}
			s, i = n3, i+4
		}
		for i < len(buf) {
			next := trans[int(s)+int(classes[buf[i]])]
			if next < 0 {
				break
			}
			s = next
			i++
		}
		if i >= end {
			break
		}
		cls := p.classes[buf[i]]
		next := trans[int(s)+int(cls)]
		size := 1
		var err error
		switch next {
		case unknown:
			next, err = c.byteNext(s, cls)
		case slow:
			var r rune
			r, size = utf8.DecodeRune(buf[i:end])
			next, err = c.runeNext(s, r)
		}
		if err != nil {
			return -1, err
		}
		trans = c.trans
		switch next {
		case matched:
			return i, nil
		case dead:
			j := bytes.IndexByte(buf[i:end], '\n')
			if j < 0 {
				return -1, nil
			}
			i += j + 1
			s = c.start
			continue
		}
		s = next
		i += size
	}
	if end == from || buf[end-1] != '\n' {
		// The last line has no terminator: decide it at the end of the
		// text, which in Lines mode is what a '\n' does.
		next := trans[int(s)+int(nl)]
		if next == unknown {
			var err error
			if next, err = c.byteNext(s, nl); err != nil {
				return -1, err
			}
		}
		if next == matched {
			return end, nil
		}
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
	p := c.p
	if p.never {
		return false, nil
	}
	s := c.start
	trans := c.trans
	i, end := 0, len(buf)
	defer func() { c.scanned += i }()
	for {
		for i < end {
			next := trans[int(s)+int(p.classes[buf[i]])]
			if next < 0 {
				break
			}
			s = next
			i++
		}
		if i >= end {
			break
		}
		cls := p.classes[buf[i]]
		next := trans[int(s)+int(cls)]
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
		if err != nil {
			return false, err
		}
		trans = c.trans
		switch next {
		case matched:
			return true, nil
		case dead:
			return false, nil
		}
		s = next
		i += size
	}
	next, err := c.runeNext(s, eot)
	return next == matched, err
}
