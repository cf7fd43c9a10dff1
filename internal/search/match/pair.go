package match

// indexPair returns the smallest i in [0, n) such that hay[i+o1]|m1 == b1
// and hay[i+o2]|m2 == b2, or -1; i+o1 and i+o2 must be inside hay for
// every such i. Checking two bytes of a literal at their
// offsets at once (ripgrep's "packed pair") leaves few false candidates
// even when neither byte is rare. m1 and m2 are 0 for an exact byte and
// 0x20 for a case-folded ASCII letter (b then being lower case).
func indexPair(hay []byte, n int, o1 int, b1, m1 byte, o2 int, b2, m2 byte) int {
	if n <= 0 {
		return -1
	}
	_ = hay[n-1+max(o1, o2)] // bounds check once
	i := 0
	if hasPairSIMD && n >= pairBlock {
		if r := indexPairSIMD(&hay[o1], &hay[o2], n, b1, m1, b2, m2); r >= 0 {
			return r
		}
		i = n - n%pairBlock
	}
	for ; i < n; i++ {
		if hay[i+o1]|m1 == b1 && hay[i+o2]|m2 == b2 {
			return i
		}
	}
	return -1
}
