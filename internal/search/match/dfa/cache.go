package dfa

import (
	"encoding/binary"
	"regexp/syntax"
	"slices"
)

// DefaultBudget is the state cache budget of a Cache: enough for the few
// hundred states common patterns reach many times over.
const DefaultBudget = 2 << 20

// Transition table entries are the next state's offset in the table
// (its index times the row length), or one of these.
const (
	unknown int32 = -1 // not computed yet
	matched int32 = -2 // a match ends before the byte
	slow    int32 = -3 // a byte >= 0x80: decode the rune, use the rune map
	dead    int32 = -4 // no match can follow (an anchored pattern failed)
	// accelBit marks an entry leading to a start state of a Prog with an
	// accelerator: the scan skips ahead to the next byte that can begin
	// a match. Scan loops leave the table on any entry >= accelBit as an
	// unsigned number, which covers the negative values above too.
	accelBit = 1 << 30
)

// What a state remembers of the character before its position.
const (
	prevOther uint8 = iota
	prevWord
	prevNewline
	prevStart // nothing: the start of the text (or, in Lines mode, of a line)
)

// eot stands for the end of the text in place of a rune.
const eot rune = -1

// giveUpRatio: a flush after fewer than this many bytes scanned per state
// built means caching is not paying for itself.
const giveUpRatio = 10

type state struct {
	insts []uint32
	prev  uint8
	accel bool // a start state, and the Prog has an accelerator
}

// Cache holds the states and transitions built so far for one Prog. It
// is not safe for concurrent use: give each goroutine its own.
type Cache struct {
	p      *Prog
	budget int
	trans  []int32
	states []state
	index  map[string]int32 // state key -> offset
	runes  map[uint64]int32 // offset<<32 | rune -> next, for runes >= 0x80 and end of text
	mem    int
	start  int32 // offset of the start state
	// starts holds the offsets of the start states after each kind of
	// character (-1 when not built yet), for the scan after a skip.
	starts [prevStart + 1]int32
	// flushes counts flushes since the cache was made; scanned and built
	// count bytes scanned and states built since the last one.
	flushes, scanned, built int

	resolve, step closureWork
	key           []byte
	insts         []uint32
}

// NewCache returns a cache for p limited to about budget bytes of states
// and transitions (DefaultBudget when budget <= 0).
func (p *Prog) NewCache(budget int) *Cache {
	if budget <= 0 {
		budget = DefaultBudget
	}
	c := &Cache{p: p, budget: budget}
	c.resolve.init(len(p.prog.Inst))
	c.step.init(len(p.prog.Inst))
	c.flush()
	return c
}

// Flushes reports how many times the cache has been emptied.
func (c *Cache) Flushes() int { return c.flushes }

// flush empties the cache, keeping only the start state.
func (c *Cache) flush() {
	c.trans = c.trans[:0]
	c.states = c.states[:0]
	c.index = make(map[string]int32)
	c.runes = make(map[uint64]int32)
	c.mem, c.scanned, c.built = 0, 0, 0
	c.starts = [prevStart + 1]int32{-1, -1, -1, -1}
	prev := prevOther
	if c.p.needLine {
		prev = prevStart
	}
	c.setKey(c.p.start, prev)
	c.start = c.add(c.p.start, prev)
}

// add stores a new state (copying insts) and returns its offset.
func (c *Cache) add(insts []uint32, prev uint8) int32 {
	off := int32(len(c.trans))
	accel := c.p.accel != "" && slices.Equal(insts, c.p.start)
	c.states = append(c.states, state{insts: append([]uint32(nil), insts...), prev: prev, accel: accel})
	for k := 0; k < c.p.nclass; k++ {
		c.trans = append(c.trans, unknown)
	}
	c.trans[int(off)+int(c.p.slowClass)] = slow
	c.index[string(c.key)] = off
	c.mem += stateCost(c.p.nclass, len(insts))
	c.built++
	return off
}

// stateCost estimates the bytes a state takes: its row, its instruction
// list, its key in the index and the bookkeeping around them.
func stateCost(nclass, ninsts int) int {
	return 4*nclass + 8*ninsts + 96
}

// setKey encodes a state's identity into c.key.
func (c *Cache) setKey(insts []uint32, prev uint8) {
	c.key = append(c.key[:0], prev)
	for _, pc := range insts {
		c.key = binary.LittleEndian.AppendUint32(c.key, pc)
	}
}

// lookup returns the offset of the state (insts, prev), building it if
// needed. Building it may flush the cache, or give up.
func (c *Cache) lookup(insts []uint32, prev uint8) (int32, error) {
	c.setKey(insts, prev)
	if off, ok := c.index[string(c.key)]; ok {
		return off, nil
	}
	if c.mem+stateCost(c.p.nclass, len(insts)) > c.budget {
		gaveUp := c.flushes > 0 && c.scanned < giveUpRatio*c.built
		c.flushes++
		c.flush()
		if gaveUp {
			return 0, ErrGaveUp
		}
		c.setKey(insts, prev)
	}
	return c.add(insts, prev), nil
}

// byteNext returns the transition of the state at off on the bytes of
// class cls, computing and recording it if needed.
func (c *Cache) byteNext(off int32, cls uint8) (int32, error) {
	if next := c.trans[int(off)+int(cls)]; next != unknown {
		return next, nil
	}
	flushes := c.flushes
	next, err := c.compute(off, c.p.rep[cls])
	next = c.tagged(next)
	if err == nil && c.flushes == flushes {
		c.trans[int(off)+int(cls)] = next
	}
	return next, err
}

// runeNext is byteNext for a rune outside ASCII, or eot.
func (c *Cache) runeNext(off int32, r rune) (int32, error) {
	k := uint64(uint32(off))<<32 | uint64(uint32(r))
	if next, ok := c.runes[k]; ok {
		return next, nil
	}
	flushes := c.flushes
	next, err := c.compute(off, r)
	next = c.tagged(next)
	if err == nil && c.flushes == flushes {
		c.runes[k] = next
		c.mem += 48
	}
	return next, err
}

// tagged adds accelBit to the offset of a state that accelerates.
func (c *Cache) tagged(off int32) int32 {
	if off >= 0 && c.states[int(off)/c.p.nclass].accel {
		return off | accelBit
	}
	return off
}

// startAfter returns the start state after the byte b was skipped.
func (c *Cache) startAfter(b byte) (int32, error) {
	if b == '\n' && c.p.mode == Lines {
		return c.start, nil
	}
	prev := c.p.kind(rune(b))
	if off := c.starts[prev]; off >= 0 {
		return off, nil
	}
	off, err := c.lookup(c.p.start, prev)
	if err == nil {
		c.starts[prev] = off
	}
	return off, err
}

// compute builds the transition of the state at off on r: first the
// assertions pending at the state's position are decided, now that the
// character after it is known; a match instruction reached then means a
// match ends here. Otherwise the rune instructions that accept r lead to
// the next state, to which the start is added again (a match may begin at
// any position) unless the pattern is anchored.
func (c *Cache) compute(off int32, r rune) (int32, error) {
	p := c.p
	prog := p.prog
	st := &c.states[int(off)/p.nclass]
	ctx := p.context(st.prev, r)
	c.resolve.reset()
	for _, pc := range st.insts {
		c.resolve.add(prog, pc, &ctx)
	}
	for _, pc := range c.resolve.dense {
		if prog.Inst[pc].Op == syntax.InstMatch {
			return matched, nil
		}
	}
	switch {
	case r == eot:
		return dead, nil
	case r == '\n' && p.mode == Lines:
		return c.start, nil
	}
	c.step.reset()
	for _, pc := range c.resolve.dense {
		in := &prog.Inst[pc]
		switch in.Op {
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			if matchRune(in, r) {
				c.step.add(prog, in.Out, nil)
			}
		}
	}
	if !p.anchored {
		for _, pc := range p.start {
			c.step.add(prog, pc, nil)
		}
	}
	if len(c.step.dense) == 0 {
		return dead, nil
	}
	c.insts = c.step.appendState(c.insts[:0], prog)
	return c.lookup(c.insts, p.kind(r))
}

// context returns the assertions that hold between a character of kind
// prev and r.
func (p *Prog) context(prev uint8, r rune) syntax.EmptyOp {
	var ctx syntax.EmptyOp
	switch prev {
	case prevStart:
		ctx |= syntax.EmptyBeginText | syntax.EmptyBeginLine
	case prevNewline:
		ctx |= syntax.EmptyBeginLine
	}
	switch {
	case r == eot || (r == '\n' && p.mode == Lines):
		ctx |= syntax.EmptyEndText | syntax.EmptyEndLine
	case r == '\n':
		ctx |= syntax.EmptyEndLine
	}
	if (prev == prevWord) != (r != eot && isWord(r)) {
		ctx |= syntax.EmptyWordBoundary
	} else {
		ctx |= syntax.EmptyNoWordBoundary
	}
	return ctx
}

// kind is what a state after r remembers of it.
func (p *Prog) kind(r rune) uint8 {
	switch {
	case p.needLine && r == '\n':
		return prevNewline
	case p.needWord && isWord(r):
		return prevWord
	}
	return prevOther
}
