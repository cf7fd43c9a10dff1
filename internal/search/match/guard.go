package match

import (
	"bytes"
	"regexp"
	"regexp/syntax"
)

// suffixGuard is a necessary condition for a line to match a pattern of
// the form P L S, with L a case-sensitive literal: some occurrence of L in
// the line is directly followed by a match of S. Testing it costs a
// literal search plus an anchored match of S, which usually fails within a
// few bytes, where the full pattern (\w+\s*:=\s*\d{3,} for instance)
// would be tried at every position of the line. The regexp still decides
// the lines that pass.
type suffixGuard struct {
	lit    []byte
	suffix *regexp.Regexp // S anchored at its start
}

// newSuffixGuard returns the guard of a (simplified) pattern tree, or nil
// when the pattern is not a concatenation with a literal followed by more.
func newSuffixGuard(re *syntax.Regexp) *suffixGuard {
	if re.Op != syntax.OpConcat {
		return nil
	}
	for i, sub := range re.Sub[:len(re.Sub)-1] {
		if sub.Op != syntax.OpLiteral || sub.Flags&syntax.FoldCase != 0 {
			continue
		}
		rest := &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags, Sub: re.Sub[i+1:]}
		if len(rest.Sub) == 1 {
			rest = rest.Sub[0]
		}
		if looksBack(rest) {
			continue // cut off from what precedes it, it would misjudge
		}
		suffix, err := regexp.Compile(`^(?:` + rest.String() + `)`)
		if err != nil {
			return nil
		}
		return &suffixGuard{lit: []byte(string(sub.Rune)), suffix: suffix}
	}
	return nil
}

// looksBack reports whether re contains an assertion that depends on the
// text before its position: a word boundary or a start anchor.
func looksBack(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpBeginLine, syntax.OpBeginText:
		return true
	}
	for _, sub := range re.Sub {
		if looksBack(sub) {
			return true
		}
	}
	return false
}

// allows reports whether line may match: an occurrence of the literal is
// followed by a match of the suffix.
func (g *suffixGuard) allows(line []byte) bool {
	for p := 0; ; {
		i := bytes.Index(line[p:], g.lit)
		if i < 0 {
			return false
		}
		p += i + len(g.lit)
		if g.suffix.Match(line[p:]) {
			return true
		}
		p -= len(g.lit) - 1 // occurrences may overlap
	}
}
