package dfa

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
)

// compilePair compiles pattern for the DFA and, as the reference, for Go's
// regexp with the same flags.
func compilePair(pattern string, mode Mode, fold bool) (*Prog, *regexp.Regexp, error) {
	flags := syntax.Perl
	prefix := ""
	if fold {
		flags |= syntax.FoldCase
		prefix += "i"
	}
	if mode == Text {
		flags |= syntax.DotNL
		flags &^= syntax.OneLine
		prefix += "ms"
	}
	re, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil, nil, err
	}
	full := pattern
	if prefix != "" {
		full = "(?" + prefix + ")" + pattern
	}
	ref, err := regexp.Compile(full)
	if err != nil {
		return nil, nil, err
	}
	p, err := Compile(re, mode)
	return p, ref, err
}

// matchingLines lists the indexes of the lines of text that match,
// according to the DFA and according to regexp.
func matchingLines(c *Cache, ref *regexp.Regexp, text []byte) (got, want []int, err error) {
	var lines [][]byte
	if len(text) > 0 {
		lines = bytes.Split(text, []byte("\n"))
	}
	if len(text) > 0 && text[len(text)-1] == '\n' {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		if ref.Match(l) {
			want = append(want, i)
		}
	}
	for from := 0; from < len(text); {
		p, err := c.NextLine(text, from, len(text))
		if err != nil {
			return nil, nil, err
		}
		if p < 0 {
			break
		}
		got = append(got, bytes.Count(text[:p], []byte("\n")))
		e := bytes.IndexByte(text[p:], '\n')
		if e < 0 {
			break
		}
		from = p + e + 1
	}
	return got, want, nil
}

func checkPattern(t *testing.T, pattern string, fold bool, text []byte) {
	t.Helper()
	for _, mode := range []Mode{Lines, Text} {
		p, ref, err := compilePair(pattern, mode, fold)
		if err != nil {
			return // not a pattern regexp accepts in this mode
		}
		c := p.NewCache(0)
		if mode == Lines {
			if bytes.Contains([]byte(pattern), []byte("\n")) {
				continue
			}
			got, want, err := matchingLines(c, ref, text)
			if err != nil {
				t.Fatalf("%q fold=%v on %q: %v", pattern, fold, text, err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%q fold=%v lines of %q: dfa %v, regexp %v", pattern, fold, text, got, want)
			}
			continue
		}
		got, err := c.Match(text)
		if err != nil {
			t.Fatalf("%q fold=%v (text) on %q: %v", pattern, fold, text, err)
		}
		if want := ref.Match(text); got != want {
			t.Fatalf("%q fold=%v as text on %q: dfa %v, regexp %v", pattern, fold, text, got, want)
		}
	}
}

func TestTable(t *testing.T) {
	texts := []string{
		"", "\n", "a", "foo\nbar\n", "foo bar", "foo_bar baz\n\nqux", "x\nfoo", "  #define FOO_H 1\n#define BAR_H\n",
		"struct file_operations fops = {\n", "ÉCOLE école\nKELVIN \u212a\n", "bad \xff\xfe utf8\n\xc3", "\u017ftraße",
		"AAAAAAAAAAAAAAAAAAAAAAAAA_B\n", "return nil, fooError\n", "abc123 def_456(x)\n", "a\r\nb\r\n",
	}
	patterns := []string{
		``, `a`, `^`, `$`, `^$`, `^foo`, `bar$`, `(?m)^bar$`, `\bfoo\b`, `\Bar\B`, `o\b`, `\b`, `\B`,
		`foo|bar|qux`, `[A-Z_]{24,}`, `#define\s+\w+_H\b`, `struct.*ops`, `\w+\(`, `(?i)école`, `(?i)k`, `(?i)s`,
		`\A\z`, `\Afoo`, `bar\z`, `.`, `[^a]`, `\x{fffd}`, `\xff`, `\pL+`, `[\p{Greek}a]`, `\s$`, `^\s*$`,
		`(a|b)*a(a|b){3}`, `x*`, `[^\x00-\x{10FFFF}]`, `a[^\x00-\x{10FFFF}]`, `(?s).`, `(?U)a+?`, `return\s+nil,\s+\w+Error\b`, `\r$`, `^.*$`, `\n`, `a\nb`, `o\nb`,
	}
	for _, pat := range patterns {
		for _, text := range texts {
			for _, fold := range []bool{false, true} {
				checkPattern(t, pat, fold, []byte(text))
			}
		}
	}
}

// genPattern writes a random pattern from a small grammar over the
// alphabet of genText, with the constructs whose meaning the DFA must
// reproduce: classes, repetition, alternation, anchors, word boundaries.
func genPattern(r *rand.Rand, depth int) string {
	atoms := []string{`a`, `b`, `_`, ` `, `é`, `.`, `\w`, `\W`, `\s`, `\d`, `[a-c]`, `[^a]`, `\pL`, `\x{fffd}`, `A`, `(?i:a)`, `(?i:é)`, `k`, `\n`}
	if depth <= 0 || r.IntN(3) == 0 {
		return atoms[r.IntN(len(atoms))]
	}
	switch r.IntN(9) {
	case 0:
		return genPattern(r, depth-1) + genPattern(r, depth-1)
	case 1:
		return "(?:" + genPattern(r, depth-1) + "|" + genPattern(r, depth-1) + ")"
	case 2:
		return "(?:" + genPattern(r, depth-1) + ")*"
	case 3:
		return "(?:" + genPattern(r, depth-1) + ")+"
	case 4:
		return "(?:" + genPattern(r, depth-1) + ")?"
	case 5:
		return "(?:" + genPattern(r, depth-1) + fmt.Sprintf("){%d,%d}", r.IntN(3), 2+r.IntN(3))
	case 6:
		return []string{`^`, `$`, `\b`, `\B`, `\A`, `\z`, `(?m:^)`, `(?m:$)`}[r.IntN(8)] + genPattern(r, depth-1)
	case 7:
		return genPattern(r, depth-1) + []string{`^`, `$`, `\b`, `\B`, `\z`, `(?m:$)`}[r.IntN(6)]
	default:
		return "(" + genPattern(r, depth-1) + ")"
	}
}

func genText(r *rand.Rand) []byte {
	alphabet := []string{"a", "b", "c", "_", " ", "\n", "é", "É", "A", "0", "\xff", "k", "\u212a", "\xc3", "-"}
	var b strings.Builder
	for range r.IntN(24) {
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	return []byte(b.String())
}

// TestRandomAgainstRegexp compares the DFA with Go's regexp on random
// patterns and texts, in both modes, with and without case folding.
func TestRandomAgainstRegexp(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for range n {
		pat := genPattern(r, 4)
		fold := r.IntN(4) == 0
		for range 4 {
			checkPattern(t, pat, fold, genText(r))
		}
		if r.IntN(20) == 0 {
			// Long enough for NextLine to scan two halves at once.
			var long []byte
			for len(long) < 2*minSplit {
				long = append(append(long, genText(r)...), '\n')
			}
			checkPattern(t, pat, fold, long)
		}
	}
}

func FuzzDFA(f *testing.F) {
	f.Add(`\bfoo\w*`, []byte("foo bar\nfoobar"), false)
	f.Add(`(?m)^a|b$`, []byte("xa\nb\n"), true)
	f.Add(`[^\x00-\x7f]+\b`, []byte("é\xffa"), false)
	f.Fuzz(func(t *testing.T, pattern string, text []byte, fold bool) {
		if len(pattern) > 64 || len(text) > 4096 {
			return
		}
		checkPattern(t, pattern, fold, text)
	})
}

// TestPathologicalGivesUp: a pattern whose DFA is exponential in size
// thrashes the cache; the search stops with ErrGaveUp instead of growing
// memory, and a fresh search afterwards still works.
func TestPathologicalGivesUp(t *testing.T) {
	p, _, err := compilePair(`(a|b)*a(a|b){20}`, Lines, false)
	if err != nil {
		t.Fatal(err)
	}
	// Lines one shorter than a match: every line walks new states.
	text := randomLines(rand.New(rand.NewPCG(3, 4)), "ab", 20, 1<<20)
	c := p.NewCache(256 << 10)
	_, err = c.NextLine(text, 0, len(text))
	if !errors.Is(err, ErrGaveUp) {
		t.Fatalf("err = %v, want ErrGaveUp", err)
	}
	if c.mem > c.budget {
		t.Fatalf("cache holds %d bytes, budget %d", c.mem, c.budget)
	}
	ok, err := c.MatchLine([]byte("b" + strings.Repeat("a", 21)))
	if err != nil || !ok {
		t.Fatalf("after giving up: match = %v, %v", ok, err)
	}
}

func randomLines(r *rand.Rand, alphabet string, width, size int) []byte {
	var b bytes.Buffer
	for b.Len() < size {
		for range width {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// TestFlushKeepsResults: a text in phases that need different states,
// with a cache that holds the states of one phase but not of both: it is
// flushed between them, answers stay right, and the search does not give
// up (it gains plenty from each generation of the cache). The phases are
// laid out so that both halves of a split scan are in the same phase at
// the same time.
func TestFlushKeepsResults(t *testing.T) {
	// No line matches but the last, so that one scan covers the text.
	const pattern = `(a|b)*a(a|b){4}z|(c|d)*c(c|d){4}z`
	p, ref, err := compilePair(pattern, Lines, false)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	var ab, cd [2][]byte
	for k := range 2 {
		ab[k] = randomLines(r, "abx", 31, 128<<10)
		cd[k] = randomLines(r, "cdy", 31, 128<<10)
	}
	need := 0
	for _, phase := range [][]byte{slices.Concat(ab[0], ab[1]), slices.Concat(cd[0], cd[1])} {
		c := p.NewCache(64 << 20)
		if _, _, err := matchingLines(c, ref, phase); err != nil {
			t.Fatal(err)
		}
		need = max(need, c.mem)
	}
	c := p.NewCache(need + need/4)
	got, want, err := matchingLines(c, ref, slices.Concat(ab[0], cd[0], ab[1], cd[1], []byte("ccccccz\n")))
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 1 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%d lines matched, want %d", len(got), len(want))
	}
	if c.Flushes() == 0 {
		t.Fatalf("no flush with a cache of %d bytes; the test does not exercise flushing", need+need/4)
	}
}

// TestAccel: the bytes a start state skips to, and the scan with them
// over a long text agreeing with regexp.
func TestAccel(t *testing.T) {
	for _, tt := range []struct{ pattern, accel string }{
		{`#define\s+\w+_H\b`, "#"},
		{`(?i)unlock_[a-z]+`, "Uu"},
		{`\bfoo|bar`, "bf"},
		{`[xyz]+1`, "xyz"},
		{`[w-z]1`, ""}, // four bytes
		{`\w+`, ""},    // too many
		{`x*`, ""},     // matches the empty string
		{`(?i)k`, ""},  // the Kelvin sign begins a match too
		{`é`, ""},      // not ASCII
		{`^foo`, ""},   // anchored: no start state to come back to
		{`\bfoo\b`, "f"},
	} {
		p, ref, err := compilePair(tt.pattern, Lines, false)
		if err != nil {
			t.Fatal(err)
		}
		got := []byte(p.accel)
		slices.Sort(got)
		if string(got) != tt.accel {
			t.Errorf("%q: accel %q, want %q", tt.pattern, got, tt.accel)
		}
		text := randomLines(rand.New(rand.NewPCG(7, 8)), "#define foo_H\tbar unlock_ UNLOCK x1é\u212a", 50, 64<<10)
		gotLines, wantLines, err := matchingLines(p.NewCache(0), ref, text)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(gotLines) != fmt.Sprint(wantLines) {
			t.Errorf("%q: lines %v, want %v", tt.pattern, gotLines, wantLines)
		}
	}
}
