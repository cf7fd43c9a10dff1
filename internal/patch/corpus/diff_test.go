package corpus

import (
	"math/rand/v2"
	"testing"
)

// lcs is the length of the longest common subsequence of a and b.
func lcs(a, b []string) int {
	t := make([][]int, len(a)+1)
	for i := range t {
		t[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	return t[0][0]
}

// TestDiffLines: the script turns a into b, in order, and is shortest.
func TestDiffLines(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	words := []string{"a\n", "b\n", "c\n", "}\n", "\n", "x"}
	gen := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = words[r.IntN(len(words))]
		}
		return out
	}
	for range 2000 {
		a, b := gen(r.IntN(30)), gen(r.IntN(30))
		ops := diffLines(a, b)
		var gotA, gotB []string
		keep := 0
		for _, o := range ops {
			switch o.kind {
			case ' ':
				if a[o.a] != b[o.b] {
					t.Fatalf("kept %q as %q", a[o.a], b[o.b])
				}
				gotA, gotB = append(gotA, a[o.a]), append(gotB, b[o.b])
				keep++
			case '-':
				gotA = append(gotA, a[o.a])
			case '+':
				gotB = append(gotB, b[o.b])
			}
		}
		if len(gotA) != len(a) || len(gotB) != len(b) {
			t.Fatalf("script covers %d/%d and %d/%d lines", len(gotA), len(a), len(gotB), len(b))
		}
		for i := range a {
			if gotA[i] != a[i] {
				t.Fatalf("old lines out of order")
			}
		}
		for i := range b {
			if gotB[i] != b[i] {
				t.Fatalf("new lines out of order")
			}
		}
		if want := lcs(a, b); keep != want {
			t.Fatalf("kept %d lines, the longest common subsequence has %d\na=%q\nb=%q", keep, want, a, b)
		}
	}
}
