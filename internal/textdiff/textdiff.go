// Package textdiff compares texts line by line: Myers' O(ND) shortest edit
// script, with the common start and end set aside first (most edits touch
// a small region), bounded so that very different texts cost a block of
// removed and added lines instead of quadratic memory; and the unified
// form of the result. Checkpoints show their diffs with it and the patch
// corpus writes git's history as patches with it.
package textdiff

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Op is one step of an edit script: ' ' keeps line A of the old text
// (equal to line B of the new), '-' removes line A, '+' adds line B.
type Op struct {
	Kind byte
	A, B int
}

// DefaultMaxEdit is the edit distance Lines searches up to by default.
const DefaultMaxEdit = 2000

// Lines returns a shortest edit script turning a into b, as long as it has
// at most maxEdit changes (0: DefaultMaxEdit); past that the changed middle
// is one block of removed lines then added ones, longer but as exact.
// Lines compare whole, endings included.
func Lines(a, b []string, maxEdit int) []Op {
	if maxEdit <= 0 {
		maxEdit = DefaultMaxEdit
	}
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
	ops := make([]Op, 0, len(a)+len(b)-pre-suf)
	for i := range pre {
		ops = append(ops, Op{' ', i, i})
	}
	mx, my := x[pre:len(x)-suf], y[pre:len(y)-suf]
	mid, ok := myers(mx, my, maxEdit)
	if !ok {
		mid = mid[:0]
		for i := range mx {
			mid = append(mid, Op{'-', i, 0})
		}
		for j := range my {
			mid = append(mid, Op{'+', len(mx), j})
		}
	}
	for _, o := range mid {
		ops = append(ops, Op{o.Kind, o.A + pre, o.B + pre})
	}
	for i := range suf {
		ops = append(ops, Op{' ', len(x) - suf + i, len(y) - suf + i})
	}
	return ops
}

// myers returns a shortest edit script from x to y, or false when it is
// longer than limit.
func myers(x, y []int32, limit int) ([]Op, bool) {
	n, m := len(x), len(y)
	limit = min(n+m, limit)
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
func backtrack(trace [][]int, n, m int) []Op {
	var rev []Op
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
			rev = append(rev, Op{' ', i, j})
		}
		if d > 0 {
			if i == pi {
				rev = append(rev, Op{'+', i, pj})
			} else {
				rev = append(rev, Op{'-', pi, j})
			}
		}
		i, j = pi, pj
	}
	for l, r := 0, len(rev)-1; l < r; l, r = l+1, r-1 {
		rev[l], rev[r] = rev[r], rev[l]
	}
	return rev
}

// IsText says whether content reads as text: no NUL byte and valid UTF-8
// in its first 8 KB (as git and grep decide, roughly).
func IsText(b []byte) bool {
	head := b
	if len(head) > 8000 {
		head = head[:8000]
		// Do not cut a UTF-8 sequence in two.
		for i := 0; i < 3 && len(head) > 0 && !utf8.Valid(head); i++ {
			head = head[:len(head)-1]
		}
	}
	return bytes.IndexByte(head, 0) < 0 && utf8.Valid(head)
}

// SplitLines cuts text into lines, each with its "\n" (the last may have
// none).
func SplitLines(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i+1]))
		b = b[i+1:]
	}
	return out
}

// Unified renders the differences of a and b as a unified diff with ctx
// lines of context ("" when they are equal).
func Unified(oldName, newName string, a, b []byte, ctx int) string {
	al, bl := SplitLines(a), SplitLines(b)
	es := Lines(al, bl, 0)
	changed := false
	for _, e := range es {
		if e.Kind != ' ' {
			changed = true
			break
		}
	}
	if !changed {
		return ""
	}
	line := func(e Op) string {
		if e.Kind == '+' {
			return bl[e.B]
		}
		return al[e.A]
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", oldName, newName)
	i := 0
	for i < len(es) {
		for i < len(es) && es[i].Kind == ' ' {
			i++
		}
		if i >= len(es) {
			break
		}
		start := max(i-ctx, 0)
		end := i
		// Extend the hunk while changes are closer than 2*ctx apart.
		for {
			for end < len(es) && es[end].Kind != ' ' {
				end++
			}
			next := end
			for next < len(es) && es[next].Kind == ' ' {
				next++
			}
			if next < len(es) && next-end <= 2*ctx {
				end = next
				continue
			}
			end = min(end+ctx, len(es))
			break
		}
		na, nb := 0, 0
		for _, e := range es[start:end] {
			if e.Kind != '+' {
				na++
			}
			if e.Kind != '-' {
				nb++
			}
		}
		// A hunk starts at the first line of a it holds (of b); one that
		// holds no line of a side starts after the line before it.
		sa, sbn := es[start].A+1, es[start].B+1
		if na == 0 {
			sa--
		}
		if nb == 0 {
			sbn--
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(sa, na), hunkRange(sbn, nb))
		for _, e := range es[start:end] {
			l := line(e)
			sb.WriteByte(e.Kind)
			sb.WriteString(l)
			if !strings.HasSuffix(l, "\n") {
				sb.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return sb.String()
}

func hunkRange(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}
