package match

import "regexp/syntax"

// trimEnds rewrites a pattern into one that matches the same lines when
// only whether a line matches counts, not where or how much: at the
// unanchored ends of an unanchored search, "x*" and "x?" can be dropped,
// "x+" becomes "x" and "x{n,m}" becomes "x{n}" (a match can always start
// at the last repetition, or end at the first). ".*foo.*" becomes "foo",
// "\w+Error" becomes "\wError": less backtracking, and often a pattern
// the literal prefilter decides alone. The tree is not modified.
func trimEnds(re *syntax.Regexp) *syntax.Regexp {
	return trimSide(trimSide(re, true), false)
}

// trimSide trims the left (or right) end of re.
func trimSide(re *syntax.Regexp, left bool) *syntax.Regexp {
	switch re.Op {
	case syntax.OpStar, syntax.OpQuest:
		return &syntax.Regexp{Op: syntax.OpEmptyMatch, Flags: re.Flags}
	case syntax.OpPlus:
		return trimSide(re.Sub[0], left)
	case syntax.OpRepeat:
		if re.Min == 0 {
			return &syntax.Regexp{Op: syntax.OpEmptyMatch, Flags: re.Flags}
		}
		if re.Min == 1 {
			return trimSide(re.Sub[0], left)
		}
		c := *re
		c.Max = c.Min
		return &c
	case syntax.OpCapture:
		return trimSide(re.Sub[0], left)
	case syntax.OpConcat:
		subs := re.Sub
		for len(subs) > 0 {
			i := 0
			if !left {
				i = len(subs) - 1
			}
			t := trimSide(subs[i], left)
			if t.Op != syntax.OpEmptyMatch {
				c := *re
				c.Sub = append([]*syntax.Regexp(nil), subs...)
				c.Sub[i] = t
				if len(c.Sub) == 1 {
					return c.Sub[0]
				}
				return &c
			}
			if left {
				subs = subs[1:]
			} else {
				subs = subs[:len(subs)-1]
			}
		}
		return &syntax.Regexp{Op: syntax.OpEmptyMatch, Flags: re.Flags}
	}
	return re
}
