package textdiff

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// applyEdits replays an edit script; it must turn a into b, in order.
func applyEdits(t *testing.T, es []Op, a, b []string) (ga, gb []string) {
	t.Helper()
	wa, wb := 0, 0
	for _, e := range es {
		switch e.Kind {
		case ' ':
			if e.A != wa || e.B != wb || a[e.A] != b[e.B] {
				t.Fatalf("keep %v out of order or unequal (at %d, %d)", e, wa, wb)
			}
			ga, gb = append(ga, a[e.A]), append(gb, b[e.B])
			wa, wb = wa+1, wb+1
		case '-':
			if e.A != wa {
				t.Fatalf("remove %v out of order (at %d)", e, wa)
			}
			ga = append(ga, a[e.A])
			wa++
		case '+':
			if e.B != wb {
				t.Fatalf("add %v out of order (at %d)", e, wb)
			}
			gb = append(gb, b[e.B])
			wb++
		}
	}
	return ga, gb
}

func TestDiffLinesRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"a\n", "b\n", "c\n", "d\n", "e"}
	for i := 0; i < 2000; i++ {
		a := make([]string, r.IntN(20))
		for j := range a {
			a[j] = words[r.IntN(4)]
		}
		b := make([]string, r.IntN(20))
		for j := range b {
			b[j] = words[r.IntN(4)]
		}
		es := Lines(a, b, 0)
		ga, gb := applyEdits(t, es, a, b)
		if strings.Join(ga, "") != strings.Join(a, "") || strings.Join(gb, "") != strings.Join(b, "") {
			t.Fatalf("script does not replay: a=%q b=%q es=%v", a, b, es)
		}
		// Myers finds a shortest script: never worse than the
		// longest-common-subsequence bound computed the slow way.
		changes := 0
		for _, e := range es {
			if e.Kind != ' ' {
				changes++
			}
		}
		if want := len(a) + len(b) - 2*lcs(a, b); changes != want {
			t.Fatalf("script has %d changes, shortest has %d: a=%q b=%q", changes, want, a, b)
		}
	}
}

func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

func TestUnified(t *testing.T) {
	a := "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n"
	b := "one\ntwo\nTHREE\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven"
	got := Unified("a/x", "b/x", []byte(a), []byte(b), 3)
	want := `--- a/x
+++ b/x
@@ -1,6 +1,6 @@
 one
 two
-three
+THREE
 four
 five
 six
@@ -8,3 +8,4 @@
 eight
 nine
 ten
+eleven
\ No newline at end of file
`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if Unified("a", "b", []byte(a), []byte(a), 3) != "" {
		t.Fatal("equal contents diff to something")
	}
	if got := Unified("a", "b", nil, []byte("x\n"), 3); got != "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n" {
		t.Fatalf("new file: %q", got)
	}
}

// Past the edit bound the middle is one block, still exact.
func TestLinesPastTheBound(t *testing.T) {
	var a, b []string
	for i := range 50 {
		a = append(a, fmt.Sprintf("a%d\n", i))
		b = append(b, fmt.Sprintf("b%d\n", i))
	}
	a, b = append([]string{"same\n"}, a...), append([]string{"same\n"}, b...)
	es := Lines(a, b, 10)
	ga, gb := applyEdits(t, es, a, b)
	if strings.Join(ga, "") != strings.Join(a, "") || strings.Join(gb, "") != strings.Join(b, "") {
		t.Fatal("block script does not replay")
	}
	if es[0] != (Op{' ', 0, 0}) || es[1].Kind != '-' || es[len(es)-1].Kind != '+' {
		t.Fatalf("script %v", es[:3])
	}
}
