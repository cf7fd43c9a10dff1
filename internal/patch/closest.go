package patch

import (
	"slices"
)

const (
	// shownMax caps the lines of a Region, so that an error about a long
	// hunk stays short.
	shownMax = 12
	// shownPad is how many lines around a short match a Region shows, so
	// the model sees where it is.
	shownPad = 2
	// voteBudget caps the work of counting equal lines: a pattern of
	// lines that are all "}" in a file of "}" would otherwise cost the
	// product of their lengths.
	voteBudget = 1 << 22
	// simBudget caps the line comparisons of the character-level tie
	// break.
	simBudget = 1 << 15
	// simPrefix is how much of a line the tie break looks at.
	simPrefix = 256
)

// closest returns the region of the file (texts) that best resembles
// sought: the window of len(sought) lines with the most lines equal to
// their counterparts once whitespace and punctuation are normalised, ties
// broken by character similarity and then by position. Its Lines are that
// window, plus a few lines around it when it is short, at most shownMax.
func closest(texts, sought []string) Region {
	n := len(texts)
	if n == 0 {
		return Region{}
	}
	m := len(sought)
	w := max(1, min(m, n))
	last := n - w // the last start of a window

	sk := make([]string, m)
	want := make(map[string][]int, m)
	for j, l := range sought {
		sk[j] = looseKey(l)
		want[sk[j]] = append(want[sk[j]], j)
	}
	fk := make([]string, n)
	where := make(map[string][]int, len(want))
	for i, l := range texts {
		fk[i] = looseKey(l)
		if _, ok := want[fk[i]]; ok {
			where[fk[i]] = append(where[fk[i]], i)
		}
	}

	// Every line of the file equal to line j of sought votes for the
	// window that would align them. Rare lines go first: they say the
	// most, and the budget may run out before the common ones.
	votes := make([]int32, last+1)
	keys := make([]string, 0, len(where))
	for k := range where {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if d := len(where[a]) - len(where[b]); d != 0 {
			return d
		}
		if a < b {
			return -1
		}
		if a > b {
			return 1
		}
		return 0
	})
	budget := voteBudget
votes:
	for _, k := range keys {
		for _, j := range want[k] {
			for _, i := range where[k] {
				if s := i - j; s >= 0 && s <= last {
					votes[s]++
				}
				budget--
				if budget <= 0 {
					break votes
				}
			}
		}
	}
	best := slices.Max(votes)
	var cands []int
	for s, v := range votes {
		if v == best {
			cands = append(cands, s)
		}
	}

	start := cands[0]
	if len(cands) > 1 {
		start = tieBreak(fk, sk, w, cands)
	}

	return around(texts, start, w)
}

// around returns the region of the w lines of texts from start, plus a few
// lines around them when they are few, at most shownMax.
func around(texts []string, start, w int) Region {
	pad := 0
	if w < shownMax {
		pad = min(shownPad, (shownMax-w)/2)
	}
	lo := max(0, start-pad)
	hi := min(len(texts), start+w+pad, lo+shownMax)
	return Region{Start: lo + 1, Lines: slices.Clone(texts[lo:hi])}
}

// tieBreak picks among candidate windows (in ascending order) the one
// whose lines are most similar character by character to sought's, the
// first of equals. Past the budget it looks at an even sample of them.
func tieBreak(fk, sk []string, w int, cands []int) int {
	limit := max(1, simBudget/w)
	if len(cands) > limit {
		sample := make([]int, limit)
		for k := range sample {
			sample[k] = cands[k*len(cands)/limit]
		}
		cands = sample
	}
	sb := make([][]uint16, len(sk))
	for j := range sk {
		sb[j] = bigrams(sk[j])
	}
	fb := make(map[int][]uint16)
	best, bestScore := cands[0], -1.0
	for _, s := range cands {
		score := 0.0
		for j := 0; j < w && j < len(sk); j++ {
			i := s + j
			if fk[i] == sk[j] {
				score++
				continue
			}
			b, ok := fb[i]
			if !ok {
				b = bigrams(fk[i])
				fb[i] = b
			}
			score += dice(b, sb[j])
		}
		if score > bestScore {
			best, bestScore = s, score
		}
	}
	return best
}

// bigrams returns the sorted byte pairs of the start of s.
func bigrams(s string) []uint16 {
	if len(s) > simPrefix {
		s = s[:simPrefix]
	}
	if len(s) < 2 {
		return nil
	}
	b := make([]uint16, len(s)-1)
	for i := range b {
		b[i] = uint16(s[i])<<8 | uint16(s[i+1])
	}
	slices.Sort(b)
	return b
}

// dice is the Sørensen–Dice coefficient of two sorted bigram multisets:
// 1 for the same pairs, 0 for none in common.
func dice(a, b []uint16) float64 {
	if len(a)+len(b) == 0 {
		return 0
	}
	common, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			common++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return 2 * float64(common) / float64(len(a)+len(b))
}
