package match

import (
	"bytes"
	"math/bits"
	"regexp/syntax"
	"slices"
	"unicode"
	"unicode/utf8"
)

// A lit is a byte string to look for. Where mask[i] is 0x20, s[i] is a
// lower-case ASCII letter that matches either case: text byte t matches
// when t|mask[i] == s[i]. A nil mask means an exact comparison.
type lit struct {
	s    []byte
	mask []byte
}

func (l lit) key() string { return string(l.s) + "\x00" + string(l.mask) }

// concat returns l followed by m.
func (l lit) concat(m lit) lit {
	s := make([]byte, 0, len(l.s)+len(m.s))
	s = append(append(s, l.s...), m.s...)
	var mask []byte
	if l.mask != nil || m.mask != nil {
		mask = make([]byte, len(s))
		copy(mask, l.mask)
		copy(mask[len(l.s):], m.mask)
	}
	return lit{s: s, mask: mask}
}

// litSet is a set of alternatives. In an info's exact field a nil litSet
// means "unknown"; an empty lit in it stands for the empty string.
type litSet []lit

const (
	// maxSet bounds the number of alternatives kept in a set.
	maxSet = 16
	// maxLitLen bounds the length of a literal built by concatenation.
	maxLitLen = 64
	// maxClass bounds the size of a character class expanded into a set.
	maxClass = 4
)

// info summarises what a syntax node can match.
type info struct {
	// exact, when non-nil, is every string the node can match.
	exact litSet
	// req, when non-nil, is a set of which every match contains one.
	req litSet
}

// extractor computes literal information for a regexp. hazards collects
// the UTF-8 forms of non-ASCII characters that case folding would let match
// where an ASCII-folded literal expects "k" or "s" (the Kelvin sign and the
// long s): a buffer containing one of them must not be prefiltered.
type extractor struct {
	hazards map[string]bool
}

func (x *extractor) info(re *syntax.Regexp) info {
	switch re.Op {
	case syntax.OpLiteral:
		parts := make([]info, len(re.Rune))
		for i, r := range re.Rune {
			e := x.runeSet(r, re.Flags&syntax.FoldCase != 0)
			parts[i] = exactInfo(e)
		}
		return concatInfo(parts)
	case syntax.OpCharClass:
		return exactInfo(classSet(re.Rune))
	case syntax.OpCapture:
		return x.info(re.Sub[0])
	case syntax.OpConcat:
		parts := make([]info, len(re.Sub))
		for i, s := range re.Sub {
			parts[i] = x.info(s)
		}
		return concatInfo(parts)
	case syntax.OpAlternate:
		var exact, req litSet
		exactOK, reqOK := true, true
		for _, s := range re.Sub {
			in := x.info(s)
			if in.exact == nil {
				exactOK = false
			} else if exactOK {
				exact = union(exact, in.exact)
				exactOK = len(exact) <= maxSet
			}
			if in.req == nil {
				reqOK = false
			} else if reqOK {
				req = union(req, in.req)
				reqOK = len(req) <= maxSet
			}
		}
		var out info
		if exactOK {
			out = exactInfo(exact)
		}
		if reqOK && (out.req == nil || score(req) > score(out.req)) {
			out.req = req
		}
		return out
	case syntax.OpQuest:
		in := x.info(re.Sub[0])
		if in.exact != nil && len(in.exact) < maxSet {
			return info{exact: union(in.exact, litSet{{}})}
		}
		return info{}
	case syntax.OpPlus:
		return info{req: x.info(re.Sub[0]).req}
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return info{req: x.info(re.Sub[0]).req}
		}
		return info{}
	case syntax.OpEmptyMatch:
		return info{exact: litSet{{}}}
	}
	// Anchors, word boundaries, stars, any-char: nothing is known. Anchors
	// must not count as the empty string, or a pattern like "^foo" would
	// be judged by the literal alone.
	return info{}
}

// exactInfo makes the info of a node whose strings are exactly e.
func exactInfo(e litSet) info {
	if e == nil {
		return info{}
	}
	in := info{exact: e}
	if !hasEmpty(e) {
		in.req = e
	}
	return in
}

// concatInfo combines the infos of consecutive nodes: adjacent exact sets
// are multiplied out into longer literals while the product stays small,
// and the best requirement of any run or part is kept.
func concatInfo(parts []info) info {
	run := litSet{{}}
	allExact := true
	var best litSet
	consider := func(s litSet) {
		if s != nil && !hasEmpty(s) && (best == nil || score(s) > score(best)) {
			best = s
		}
	}
	for _, p := range parts {
		if p.exact != nil {
			if prod, ok := cross(run, p.exact); ok {
				run = prod
				continue
			}
			allExact = false
			consider(run)
			run = p.exact
			continue
		}
		allExact = false
		consider(run)
		consider(p.req)
		run = litSet{{}}
	}
	consider(run)
	out := info{req: best}
	if allExact {
		out.exact = run
	}
	return out
}

// cross multiplies two sets; ok is false when the result would be too big.
func cross(a, b litSet) (litSet, bool) {
	if len(a)*len(b) > maxSet {
		return nil, false
	}
	out := make(litSet, 0, len(a)*len(b))
	seen := make(map[string]bool, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			if len(x.s)+len(y.s) > maxLitLen {
				return nil, false
			}
			l := x.concat(y)
			if k := l.key(); !seen[k] {
				seen[k] = true
				out = append(out, l)
			}
		}
	}
	return out, true
}

func union(a, b litSet) litSet {
	out := slices.Clone(a)
	for _, l := range b {
		if !slices.ContainsFunc(out, func(m lit) bool { return m.key() == l.key() }) {
			out = append(out, l)
		}
	}
	return out
}

func hasEmpty(s litSet) bool {
	return slices.ContainsFunc(s, func(l lit) bool { return len(l.s) == 0 })
}

// runeSet returns the strings a literal rune matches.
func (x *extractor) runeSet(r rune, fold bool) litSet {
	if !fold {
		return litSet{{s: utf8.AppendRune(nil, r)}}
	}
	orbit := foldOrbit(r)
	if r < utf8.RuneSelf {
		lower := unicode.ToLower(r)
		if lower >= 'a' && lower <= 'z' {
			for _, o := range orbit {
				if o >= utf8.RuneSelf {
					// Kelvin sign for k, long s for s.
					x.hazards[string(o)] = true
				}
			}
			return litSet{{s: []byte{byte(lower)}, mask: []byte{0x20}}}
		}
	}
	if len(orbit) > maxClass {
		return nil
	}
	out := make(litSet, len(orbit))
	for i, o := range orbit {
		out[i] = lit{s: utf8.AppendRune(nil, o)}
	}
	return out
}

// foldOrbit returns r and every rune simple case folding makes equal to it.
func foldOrbit(r rune) []rune {
	orbit := []rune{r}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		orbit = append(orbit, f)
	}
	return orbit
}

// classSet expands a small character class into its strings. An ASCII
// letter present in both cases becomes one case-folded byte.
func classSet(ranges []rune) litSet {
	n := 0
	for i := 0; i+1 < len(ranges); i += 2 {
		n += int(ranges[i+1]-ranges[i]) + 1
		if n > 2*maxClass {
			return nil
		}
	}
	if n == 0 {
		return nil
	}
	var runes []rune
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1]; r++ {
			runes = append(runes, r)
		}
	}
	var out litSet
	for _, r := range runes {
		switch {
		case r >= 'a' && r <= 'z' && slices.Contains(runes, r-0x20):
			out = append(out, lit{s: []byte{byte(r)}, mask: []byte{0x20}})
		case r >= 'A' && r <= 'Z' && slices.Contains(runes, r+0x20):
			// Covered by the lower-case letter.
		default:
			out = append(out, lit{s: utf8.AppendRune(nil, r)})
		}
	}
	if len(out) > maxClass {
		return nil
	}
	return out
}

// score rates a set as a prefilter: long literals made of rare bytes are
// good, many alternatives are bad. Higher is better.
func score(s litSet) int {
	if len(s) == 0 {
		return -1 << 30
	}
	worst := 1 << 30
	for _, l := range s {
		if v := litScore(l); v < worst {
			worst = v
		}
	}
	return worst - 4*bits.Len(uint(len(s)-1))
}

func litScore(l lit) int {
	n := min(len(l.s), 12)
	return 4*n + rarity(l, bestRare(l))/16
}

// simplify drops literals that contain another exact literal of the set:
// a line holding the longer one holds the shorter one too.
func simplify(s litSet) litSet {
	var out litSet
	for i, l := range s {
		redundant := false
		for j, m := range s {
			if i != j && m.mask == nil && len(m.s) < len(l.s) && l.mask == nil && bytes.Contains(l.s, m.s) {
				redundant = true
				break
			}
		}
		if !redundant {
			out = append(out, l)
		}
	}
	return out
}
