package checkpoint

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// apply replays an edit script; it must turn a into b.
func applyEdits(es []edit) (a, b []string) {
	for _, e := range es {
		if e.op != '+' {
			a = append(a, e.line)
		}
		if e.op != '-' {
			b = append(b, e.line)
		}
	}
	return a, b
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
		es := diffLines(a, b)
		ga, gb := applyEdits(es)
		if strings.Join(ga, "") != strings.Join(a, "") || strings.Join(gb, "") != strings.Join(b, "") {
			t.Fatalf("script does not replay: a=%q b=%q es=%v", a, b, es)
		}
		// Myers finds a shortest script: never worse than the
		// longest-common-subsequence bound computed the slow way.
		changes := 0
		for _, e := range es {
			if e.op != ' ' {
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
	got := unified("a/x", "b/x", []byte(a), []byte(b), 3)
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
	if unified("a", "b", []byte(a), []byte(a), 3) != "" {
		t.Fatal("equal contents diff to something")
	}
	if got := unified("a", "b", nil, []byte("x\n"), 3); got != "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n" {
		t.Fatalf("new file: %q", got)
	}
}
