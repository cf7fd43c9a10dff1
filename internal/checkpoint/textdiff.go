package checkpoint

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// isText says whether content reads as text: no NUL byte and valid UTF-8
// in its first 8 KB (as git and grep decide, roughly).
func isText(b []byte) bool {
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

// splitLines cuts text into lines, each with its "\n" (the last may have
// none).
func splitLines(b []byte) []string {
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

// edit is one step of an edit script.
type edit struct {
	op   byte // ' ', '-', '+'
	line string
}

// maxEditDistance bounds the Myers search (its memory grows with the
// square of it); beyond it the differing middle is shown as one block.
const maxEditDistance = 2000

// diffLines returns an edit script turning a into b.
func diffLines(a, b []string) []edit {
	// Common prefix and suffix first: most edits touch a small region.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []edit
	for _, l := range a[:pre] {
		out = append(out, edit{' ', l})
	}
	out = append(out, myers(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		out = append(out, edit{' ', l})
	}
	return out
}

// myers is Myers' O(ND) shortest edit script.
func myers(a, b []string) []edit {
	ids := map[string]int32{}
	id := func(s string) int32 {
		if v, ok := ids[s]; ok {
			return v
		}
		v := int32(len(ids))
		ids[s] = v
		return v
	}
	ai := make([]int32, len(a))
	for i, l := range a {
		ai[i] = id(l)
	}
	bi := make([]int32, len(b))
	for i, l := range b {
		bi[i] = id(l)
	}
	n, m := len(a), len(b)
	block := func() []edit {
		out := make([]edit, 0, n+m)
		for _, l := range a {
			out = append(out, edit{'-', l})
		}
		for _, l := range b {
			out = append(out, edit{'+', l})
		}
		return out
	}
	if n == 0 || m == 0 {
		return block()
	}
	maxD := min(n+m, maxEditDistance)
	off := maxD + 1
	v := make([]int32, 2*maxD+3)
	var trace [][]int32
	for d := 0; d <= maxD; d++ {
		snap := make([]int32, 2*d+1)
		copy(snap, v[off-d:off+d+1])
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var x int32
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - int32(k)
			for int(x) < n && int(y) < m && ai[x] == bi[y] {
				x++
				y++
			}
			v[off+k] = x
			if int(x) >= n && int(y) >= m {
				return backtrack(a, b, trace)
			}
		}
	}
	return block()
}

// backtrack walks the saved frontiers back from the end to the start.
// trace[d] is the frontier as step d began, indexed by diagonal k + d.
func backtrack(a, b []string, trace [][]int32) []edit {
	x, y := len(a), len(b)
	var rev []edit
	for d := len(trace) - 1; d > 0; d-- {
		v := trace[d]
		k := x - y
		var pk int
		if k == -d || (k != d && v[k-1+d] < v[k+1+d]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := int(v[pk+d])
		py := px - pk
		for x > px && y > py {
			rev = append(rev, edit{' ', a[x-1]})
			x--
			y--
		}
		if x == px {
			rev = append(rev, edit{'+', b[y-1]})
			y--
		} else {
			rev = append(rev, edit{'-', a[x-1]})
			x--
		}
	}
	for x > 0 && y > 0 {
		rev = append(rev, edit{' ', a[x-1]})
		x--
		y--
	}
	out := make([]edit, len(rev))
	for i := range rev {
		out[i] = rev[len(rev)-1-i]
	}
	return out
}

// unified renders a unified diff with ctx lines of context ("" when a and
// b are equal).
func unified(oldName, newName string, a, b []byte, ctx int) string {
	es := diffLines(splitLines(a), splitLines(b))
	changed := false
	for _, e := range es {
		if e.op != ' ' {
			changed = true
			break
		}
	}
	if !changed {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", oldName, newName)
	// Line numbers of each edit in a and b.
	type pos struct{ a, b int }
	ps := make([]pos, len(es))
	ia, ib := 1, 1
	for i, e := range es {
		ps[i] = pos{ia, ib}
		switch e.op {
		case ' ':
			ia++
			ib++
		case '-':
			ia++
		case '+':
			ib++
		}
	}
	i := 0
	for i < len(es) {
		for i < len(es) && es[i].op == ' ' {
			i++
		}
		if i >= len(es) {
			break
		}
		start := max(i-ctx, 0)
		end := i
		// Extend the hunk while changes are closer than 2*ctx apart.
		for {
			for end < len(es) && es[end].op != ' ' {
				end++
			}
			next := end
			for next < len(es) && es[next].op == ' ' {
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
			if e.op != '+' {
				na++
			}
			if e.op != '-' {
				nb++
			}
		}
		sa, sbn := ps[start].a, ps[start].b
		if na == 0 {
			sa--
		}
		if nb == 0 {
			sbn--
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(sa, na), hunkRange(sbn, nb))
		for _, e := range es[start:end] {
			sb.WriteByte(e.op)
			sb.WriteString(e.line)
			if !strings.HasSuffix(e.line, "\n") {
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
