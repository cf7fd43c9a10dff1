// Package dfa answers "does this text match" for an RE2 pattern with a lazy
// deterministic automaton, the design of RE2's and Rust regex's DFAs: a
// state is a set of positions in the pattern's compiled program (from
// regexp/syntax) plus what the previous character was, and a state's
// transitions are computed the first time they are taken and cached in a
// table indexed by byte class. Scanning is then one table lookup per byte,
// whatever the pattern, however often its literals occur.
//
// It reports where a match is known to end (the earliest such position),
// not where it starts and not submatches: callers that need spans run Go's
// regexp on what the DFA found. Semantics are RE2's: "\b" and "\w" are
// ASCII, text that is not valid UTF-8 is read one byte at a time as
// U+FFFD, "(?i)" folds with Unicode simple folding.
//
// The cache of states has a fixed budget. When it fills it is flushed and
// rebuilt; when a search creates states so fast that it gains little from
// caching them (a pattern such as (a|b)*a(a|b){20} on random text), the
// search stops with ErrGaveUp and the caller uses regexp instead.
package dfa

import (
	"bytes"
	"encoding/binary"
	"errors"
	"regexp/syntax"
	"slices"
	"unicode"
	"unicode/utf8"
)

// ErrGaveUp reports a search abandoned because the state cache thrashed.
var ErrGaveUp = errors.New("dfa: state cache thrashing")

// Mode selects how line breaks are treated.
type Mode int

const (
	// Lines matches every line on its own, without its line terminator:
	// a match never spans a '\n', and "^", "$", "\A" and "\z" match at
	// the line's ends.
	Lines Mode = iota
	// Text matches the buffer as one text: '\n' is an ordinary character
	// to the pattern, "\A" and "\z" match at the buffer's ends only.
	Text
)

// Prog is a pattern compiled for the DFA. It is immutable and safe for
// concurrent use; each goroutine scans with its own Cache.
type Prog struct {
	prog *syntax.Prog
	mode Mode
	// classes maps a byte to its class: bytes of one class are treated
	// alike by every instruction and every assertion. Bytes from 0x80 up
	// share slowClass, whose transitions decode a rune first.
	classes   [256]uint8
	nclass    int    // number of classes, the row length of the table
	rep       []rune // a byte of each class (slowClass: none)
	slowClass uint8
	// anchored: a match can only start where the pattern's leading "^"
	// or "\A" holds, so the start positions are not re-added as the scan
	// moves on, and a state that empties is dead.
	anchored bool
	never    bool // no match is possible
	// needWord and needLine say which facts about the previous character
	// the assertions of the pattern need; states do not record the others,
	// so that fewer states are built.
	needWord, needLine bool
	start              []uint32 // start closure, assertions left pending
	// accel, when not empty, is every byte that can begin a match: in a
	// start state the scan skips to the next of them (bytes.IndexByte
	// or IndexAny) instead of stepping through the table.
	accel string
}

// Compile prepares re (parsed by regexp/syntax, as Go's regexp would
// compile it) for the DFA.
func Compile(re *syntax.Regexp, mode Mode) (*Prog, error) {
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, err
	}
	p := &Prog{prog: prog, mode: mode}
	cond := prog.StartCond()
	switch {
	case cond == ^syntax.EmptyOp(0):
		p.never = true
	case cond&syntax.EmptyBeginText != 0:
		p.anchored = true
	case mode == Lines && cond&syntax.EmptyBeginLine != 0:
		p.anchored = true
	}
	for _, in := range prog.Inst {
		if in.Op != syntax.InstEmptyWidth {
			continue
		}
		op := syntax.EmptyOp(in.Arg)
		if op&(syntax.EmptyWordBoundary|syntax.EmptyNoWordBoundary) != 0 {
			p.needWord = true
		}
		if op&(syntax.EmptyBeginLine|syntax.EmptyBeginText|syntax.EmptyEndLine|syntax.EmptyEndText) != 0 {
			p.needLine = true
		}
	}
	p.buildClasses()
	var w closureWork
	w.init(len(prog.Inst))
	w.add(prog, uint32(prog.Start), nil)
	p.start = w.appendState(nil, prog)
	p.buildAccel()
	return p, nil
}

// maxAccel is the most bytes an accelerator looks for.
const maxAccel = 3

// buildAccel sets p.accel when few ASCII bytes, and no other, can begin
// a match, and the pattern cannot match the empty string (a start state
// then only ever moves to another start state on the other bytes).
func (p *Prog) buildAccel() {
	if p.anchored || p.never {
		return
	}
	var w closureWork
	w.init(len(p.prog.Inst))
	any := ^syntax.EmptyOp(0)
	w.add(p.prog, uint32(p.prog.Start), &any)
	var esc []byte
	for _, pc := range w.dense {
		in := &p.prog.Inst[pc]
		switch in.Op {
		case syntax.InstMatch, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			return
		case syntax.InstRune, syntax.InstRune1:
			if !asciiOnly(in) {
				return
			}
			for b := range byte(utf8.RuneSelf) {
				if matchRune(in, rune(b)) && bytes.IndexByte(esc, b) < 0 {
					if esc = append(esc, b); len(esc) > maxAccel {
						return
					}
				}
			}
		}
	}
	p.accel = string(esc)
}

// asciiOnly reports whether a rune instruction accepts only ASCII.
func asciiOnly(in *syntax.Inst) bool {
	fold := syntax.Flags(in.Arg)&syntax.FoldCase != 0 && len(in.Rune) == 1
	for _, r := range in.Rune {
		if r >= utf8.RuneSelf {
			return false
		}
		for f := unicode.SimpleFold(r); fold && f != r; f = unicode.SimpleFold(f) {
			if f >= utf8.RuneSelf {
				return false
			}
		}
	}
	return len(in.Rune) > 0
}

// skip returns the index of the first byte at or after i that can begin a
// match (len(buf) if none).
func (p *Prog) skip(buf []byte, i int) int {
	var j int
	if len(p.accel) == 1 {
		j = bytes.IndexByte(buf[i:], p.accel[0])
	} else {
		j = bytes.IndexAny(buf[i:], p.accel)
	}
	if j < 0 {
		return len(buf)
	}
	return i + j
}

// buildClasses groups the ASCII bytes by how every rune instruction and
// every assertion treats them. Instructions that accept the same runes
// (a repeated class compiles to many) are looked at once.
func (p *Prog) buildClasses() {
	var runeInsts []*syntax.Inst
	seen := map[string]bool{}
	var key []byte
	for i := range p.prog.Inst {
		in := &p.prog.Inst[i]
		switch in.Op {
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
		default:
			continue
		}
		key = append(key[:0], byte(in.Op), byte(syntax.Flags(in.Arg)&syntax.FoldCase))
		for _, r := range in.Rune {
			key = binary.LittleEndian.AppendUint32(key, uint32(r))
		}
		if !seen[string(key)] {
			seen[string(key)] = true
			runeInsts = append(runeInsts, in)
		}
	}
	bySig := map[string]uint8{}
	sig := make([]byte, 0, 2+len(runeInsts)/8+1)
	for b := range 128 {
		r := rune(b)
		sig = sig[:0]
		var extra byte
		if isWord(r) {
			extra |= 1
		}
		if r == '\n' {
			extra |= 2
		}
		sig = append(sig, extra)
		var acc byte
		for i, in := range runeInsts {
			if matchRune(in, r) {
				acc |= 1 << (i % 8)
			}
			if i%8 == 7 {
				sig, acc = append(sig, acc), 0
			}
		}
		sig = append(sig, acc)
		c, ok := bySig[string(sig)]
		if !ok {
			c = uint8(len(p.rep))
			bySig[string(sig)] = c
			p.rep = append(p.rep, r)
		}
		p.classes[b] = c
	}
	p.slowClass = uint8(len(p.rep))
	for b := 128; b < 256; b++ {
		p.classes[b] = p.slowClass
	}
	p.nclass = len(p.rep) + 1
}

// matchRune reports whether a rune instruction accepts r.
func matchRune(in *syntax.Inst, r rune) bool {
	switch in.Op {
	case syntax.InstRuneAny:
		return true
	case syntax.InstRuneAnyNotNL:
		return r != '\n'
	case syntax.InstRune1:
		return r == in.Rune[0]
	}
	return in.MatchRune(r)
}

// isWord is RE2's (ASCII) word character test.
func isWord(r rune) bool {
	return r < utf8.RuneSelf && syntax.IsWordChar(r)
}

// closureWork collects the instructions reachable from some start
// without consuming input: rune and match instructions, and assertions
// that are either pending (ctx nil) or already checked.
type closureWork struct {
	dense  []uint32
	sparse []uint32
	stack  []uint32
}

func (w *closureWork) init(n int) {
	w.sparse = make([]uint32, n)
	w.dense = make([]uint32, 0, n)
}

func (w *closureWork) reset() { w.dense = w.dense[:0] }

func (w *closureWork) has(pc uint32) bool {
	i := w.sparse[pc]
	return int(i) < len(w.dense) && w.dense[i] == pc
}

func (w *closureWork) insert(pc uint32) bool {
	if w.has(pc) {
		return false
	}
	w.sparse[pc] = uint32(len(w.dense))
	w.dense = append(w.dense, pc)
	return true
}

// add follows pc's empty transitions. With ctx nil an assertion is kept
// in the set, to be decided when the next character is known; otherwise
// it is followed when *ctx satisfies it and dropped when not.
func (w *closureWork) add(prog *syntax.Prog, pc uint32, ctx *syntax.EmptyOp) {
	w.stack = append(w.stack[:0], pc)
	for len(w.stack) > 0 {
		pc := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		in := &prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			if w.insert(pc) {
				w.stack = append(w.stack, in.Arg, in.Out)
			}
		case syntax.InstNop, syntax.InstCapture:
			if w.insert(pc) {
				w.stack = append(w.stack, in.Out)
			}
		case syntax.InstEmptyWidth:
			if !w.insert(pc) {
				continue
			}
			if ctx != nil && syntax.EmptyOp(in.Arg)&^*ctx == 0 {
				w.stack = append(w.stack, in.Out)
			}
		case syntax.InstFail:
		default: // rune and match instructions
			w.insert(pc)
		}
	}
}

// appendState appends, in order, the members a state keeps: rune and
// match instructions, and assertions (pending ones, when the closure was
// built without a context). Alternations and no-ops are only the way there.
func (w *closureWork) appendState(out []uint32, prog *syntax.Prog) []uint32 {
	n := len(out)
	for _, pc := range w.dense {
		switch prog.Inst[pc].Op {
		case syntax.InstAlt, syntax.InstAltMatch, syntax.InstNop, syntax.InstCapture:
		default:
			out = append(out, pc)
		}
	}
	slices.Sort(out[n:])
	return out
}
