package match

import (
	"bytes"
	"math"
)

// byFrequency lists bytes from the most to the least frequent in typical
// source code. The search for a literal scans for its rarest byte with
// bytes.IndexByte (vectorised) and verifies the rest around each hit, so a
// rare byte means few hits to verify.
const byFrequency = " \t\netaoinsrlcdupmhf_.(),;=gbyvxwk01\"*/-:>{}<[]'2TESRACNILPODFM#&+!3456789BGHUWVKYXJQZjqz|%\\?@$^~`"

var rarityTable = func() (t [256]uint8) {
	for i := range t {
		t[i] = 200 // non-ASCII and control bytes: uncommon in code
	}
	for i := 0; i < len(byFrequency); i++ {
		t[byFrequency[i]] = uint8(i * 2)
	}
	return t
}()

// rarity rates l.s[i] as a byte to scan for: higher is rarer. A
// case-folded letter needs two scans, one per case, and counts as common.
func rarity(l lit, i int) int {
	b := l.s[i]
	if l.mask != nil && l.mask[i] != 0 {
		return min(int(rarityTable[b]), int(rarityTable[b&^0x20])) / 2
	}
	return int(rarityTable[b])
}

func bestRare(l lit) int {
	best, bestR := 0, -1
	for i := range l.s {
		if r := rarity(l, i); r > bestR {
			best, bestR = i, r
		}
	}
	return best
}

// none marks a position not found in the current buffer.
const none = math.MaxInt

// litFinder finds one literal. It is immutable; per-buffer progress lives
// in a litCursor.
type litFinder struct {
	lit
	rare    int  // index in s of the byte scanned for
	second  int  // index of the next rarest byte, checked first on a hit
	b1, b2  byte // the rare byte, in both cases when folded (else b1 == b2)
	twoCase bool
}

func newLitFinder(l lit) litFinder {
	f := litFinder{lit: l, rare: bestRare(l)}
	f.second = f.rare
	best := -1
	for i := range l.s {
		if r := rarity(l, i); i != f.rare && r > best {
			f.second, best = i, r
		}
	}
	f.b1 = l.s[f.rare]
	f.b2 = f.b1
	if l.mask != nil && l.mask[f.rare] != 0 {
		f.b2 = f.b1 &^ 0x20
		f.twoCase = true
	}
	return f
}

// litCursor caches, for one buffer, where the next occurrence of the
// literal (and, for a folded rare byte, of the byte in each case) is.
// Searches move forward only, so every byte of the buffer is scanned at
// most once per case.
type litCursor struct {
	p1, p2 int // next rare byte positions, valid when >= the search start
	next   int // next literal start found, valid when >= from
}

func (c *litCursor) reset() { *c = litCursor{p1: -1, p2: -1, next: -1} }

// find returns the start of the first occurrence of the literal at or after
// from that ends by end, or none.
func (f *litFinder) find(buf []byte, from, end int, c *litCursor) int {
	if c.next >= from {
		return c.next
	}
	if f.twoCase && !(hasPairSIMD && len(f.s) >= 2) {
		c.next = f.findTwoCase(buf, from, end, c)
		return c.next
	}
	n := len(f.s)
	c.next = none
	if hasPairSIMD && n >= 2 {
		for p := from; p+n <= end; p++ {
			i := indexPair(buf[p:end], end-p-n+1, f.rare, f.s[f.rare], f.maskAt(f.rare), f.second, f.s[f.second], f.maskAt(f.second))
			if i < 0 {
				break
			}
			p += i
			if f.check(buf, p) {
				c.next = p
				break
			}
		}
		return c.next
	}
	limit := end - (n - f.rare) + 1 // the rare byte must be before limit
	if i := from + f.rare; i < limit {
		hay := buf[:limit]
		for {
			j := bytes.IndexByte(hay[i:], f.b1)
			if j < 0 {
				break
			}
			i += j
			p := i - f.rare
			if f.check(buf, p) {
				c.next = p
				break
			}
			i++
		}
	}
	return c.next
}

// findTwoCase is find for a case-folded rare byte: the next position of
// each case is kept, so neither is scanned twice.
func (f *litFinder) findTwoCase(buf []byte, from, end int, c *litCursor) int {
	limit := end - (len(f.s) - f.rare) + 1
	for {
		start := from + f.rare
		if start >= limit {
			return none
		}
		if c.p1 < start {
			c.p1 = indexFrom(buf[:limit], start, f.b1)
		}
		if c.p2 < start {
			c.p2 = indexFrom(buf[:limit], start, f.b2)
		}
		i := min(c.p1, c.p2)
		if i == none {
			return none
		}
		p := i - f.rare
		if f.check(buf, p) {
			return p
		}
		from = p + 1
	}
}

func (f *litFinder) maskAt(i int) byte {
	if f.mask == nil {
		return 0
	}
	return f.mask[i]
}

// check verifies the literal at buf[p:], the second rarest byte first.
func (f *litFinder) check(buf []byte, p int) bool {
	t := buf[p : p+len(f.s)]
	if f.mask == nil {
		return t[f.second] == f.s[f.second] && bytes.Equal(t, f.s)
	}
	if t[f.second]|f.mask[f.second] != f.s[f.second] {
		return false
	}
	for i, c := range t {
		if c|f.mask[i] != f.s[i] {
			return false
		}
	}
	return true
}

func indexFrom(buf []byte, from int, b byte) int {
	if i := bytes.IndexByte(buf[from:], b); i >= 0 {
		return from + i
	}
	return none
}

// prefilter finds occurrences of any of a set of literals.
type prefilter struct {
	finders []litFinder
	// hazards are byte sequences whose presence in a buffer makes the
	// case-folded literals unreliable there (see extractor).
	hazards [][]byte
}

// prefilterState is the per-buffer state of a prefilter search.
type prefilterState struct {
	cursors []litCursor
}

func (p *prefilter) newState() *prefilterState {
	return &prefilterState{cursors: make([]litCursor, len(p.finders))}
}

func (s *prefilterState) reset() {
	for i := range s.cursors {
		s.cursors[i].reset()
	}
}

// next returns the start of the first literal occurrence at or after from
// within buf[:end], or none.
func (p *prefilter) next(buf []byte, from, end int, st *prefilterState) int {
	best := none
	for i := range p.finders {
		if q := p.finders[i].find(buf, from, end, &st.cursors[i]); q < best {
			best = q
		}
	}
	return best
}

// hazardIn reports whether buf holds a byte sequence that defeats the
// case-folded literals.
func (p *prefilter) hazardIn(buf []byte) bool {
	for _, h := range p.hazards {
		if bytes.Contains(buf, h) {
			return true
		}
	}
	return false
}
