package corpus

// op is one step of a line diff: ' ' keeps line a of the old file (equal
// to line b of the new), '-' removes line a, '+' adds line b.
type op struct {
	kind byte
	a, b int
}

// maxEdit bounds the edit distance the diff searches for (its memory grows
// with the square); past it the changed middle of the file is one block of
// removed lines then added ones, a longer diff but as exact.
const maxEdit = 1500

// diffLines diffs two files' lines (with their endings, so that a line
// whose ending changed is changed) with Myers's algorithm, after the common
// start and end are set aside.
func diffLines(a, b []string) []op {
	ids := map[string]int32{}
	intern := func(ls []string) []int32 {
		out := make([]int32, len(ls))
		for i, l := range ls {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	x, y := intern(a), intern(b)
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	var ops []op
	for i := range pre {
		ops = append(ops, op{' ', i, i})
	}
	mx, my := x[pre:len(x)-suf], y[pre:len(y)-suf]
	mid, ok := myers(mx, my)
	if !ok {
		mid = mid[:0]
		for i := range mx {
			mid = append(mid, op{'-', i, 0})
		}
		for j := range my {
			mid = append(mid, op{'+', len(mx), j})
		}
	}
	for _, o := range mid {
		ops = append(ops, op{o.kind, o.a + pre, o.b + pre})
	}
	for i := range suf {
		ops = append(ops, op{' ', len(x) - suf + i, len(y) - suf + i})
	}
	return ops
}

// myers returns a shortest edit script from x to y, or false when it is
// longer than maxEdit.
func myers(x, y []int32) ([]op, bool) {
	n, m := len(x), len(y)
	limit := min(n+m, maxEdit)
	off := limit + 1
	v := make([]int, 2*limit+3)
	// trace[d] is v as it was before step d, over k in [-d-1, d+1].
	var trace [][]int
	for d := 0; d <= limit; d++ {
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var i int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				i = v[off+k+1]
			} else {
				i = v[off+k-1] + 1
			}
			j := i - k
			for i < n && j < m && x[i] == y[j] {
				i++
				j++
			}
			v[off+k] = i
			if i >= n && j >= m {
				return backtrack(trace, n, m), true
			}
		}
	}
	return nil, false
}

// backtrack walks the trace back from the end and returns the script in
// order.
func backtrack(trace [][]int, n, m int) []op {
	var rev []op
	i, j := n, m
	for d := len(trace) - 1; d >= 0; d-- {
		w := trace[d]
		at := func(k int) int { return w[k+d+1] }
		k := i - j
		pk := k - 1
		if k == -d || k != d && at(k-1) < at(k+1) {
			pk = k + 1
		}
		pi := at(pk)
		pj := pi - pk
		for i > pi && j > pj {
			i--
			j--
			rev = append(rev, op{' ', i, j})
		}
		if d > 0 {
			if i == pi {
				rev = append(rev, op{'+', i, pj})
			} else {
				rev = append(rev, op{'-', pi, j})
			}
		}
		i, j = pi, pj
	}
	for l, r := 0, len(rev)-1; l < r; l, r = l+1, r-1 {
		rev[l], rev[r] = rev[r], rev[l]
	}
	return rev
}
