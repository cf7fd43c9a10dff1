package match

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

func TestLiterals(t *testing.T) {
	tests := []struct {
		pattern string
		ci      bool
		want    []string
		exact   bool
	}{
		{"func main", false, []string{"func main"}, true},
		{`func [A-Z][a-z]+\(`, false, []string{"func "}, false},
		{"foo|bar", false, []string{"foo", "bar"}, true},
		{"(foo|bar)baz", false, []string{"foobaz", "barbaz"}, true},
		{"^foo$", false, []string{"foo"}, false},
		{`\bfoo\b`, false, []string{"foo"}, false},
		{"a+bcd", false, []string{"abcd"}, true},
		{`\w+Error`, false, []string{"Error"}, false},
		{".*TODO.*", false, []string{"TODO"}, true},
		{"[Ff]unc", false, []string{"(?i)func"}, true},
		{"func main", true, []string{"(?i)func main"}, true},
		{"Struct", true, []string{"(?i)struct"}, true},
		{"x_y", true, []string{"(?i)x_y"}, true},
		{".*", false, nil, false},
		{"a*", false, nil, false},
		{`\w+`, false, nil, false},
		{"colou?r", false, []string{"color", "colour"}, true},
		{"foo|foobar", false, []string{"foo"}, true},
		{"(?i)a|b", false, []string{"(?i)a", "(?i)b"}, true},
		{"é", true, []string{"é", "É"}, true},
		{"x.*yz", false, []string{"yz"}, false},
		{"(ab)+", false, []string{"ab"}, true},
		{"ab{2,3}", false, []string{"abb"}, true},
		{"[a-c]x", false, []string{"ax", "bx", "cx"}, true},
	}
	for _, tt := range tests {
		m, err := Compile(tt.pattern, Options{CaseInsensitive: tt.ci})
		if err != nil {
			t.Fatalf("Compile(%q): %v", tt.pattern, err)
		}
		got, exact := m.Literals()
		slices.Sort(got)
		want := slices.Clone(tt.want)
		slices.Sort(want)
		if !slices.Equal(got, want) || exact != tt.exact {
			t.Errorf("Compile(%q, ci=%v) literals = %q exact=%v, want %q exact=%v", tt.pattern, tt.ci, got, exact, want, tt.exact)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	if _, err := Compile("a(b", Options{}); err == nil || !strings.Contains(err.Error(), "missing closing )") {
		t.Errorf("Compile(a(b) = %v, want a missing ) error", err)
	}
	if _, err := Compile(`a\nb`, Options{}); !errors.Is(err, ErrNewline) {
		t.Errorf(`Compile(a\nb) = %v, want ErrNewline`, err)
	}
	if _, err := Compile(`a\nb`, Options{Multiline: true}); err != nil {
		t.Errorf(`Compile(a\nb, multiline) = %v`, err)
	}
}

// recorder is a Sink that renders lines like grep -n ("N:text" for
// matches, "N-text" for context).
type recorder struct {
	lines []string
	limit int
}

func (r *recorder) Match(n int, line []byte) bool {
	r.lines = append(r.lines, fmt.Sprintf("%d:%s", n, line))
	return r.limit == 0 || len(r.lines) < r.limit
}

func (r *recorder) Context(n int, line []byte) bool {
	r.lines = append(r.lines, fmt.Sprintf("%d-%s", n, line))
	return r.limit == 0 || len(r.lines) < r.limit
}

func search(t *testing.T, pattern string, opts Options, sopts SearchOptions, text string, r io.Reader) []string {
	t.Helper()
	m, err := Compile(pattern, opts)
	if err != nil {
		t.Fatal(err)
	}
	if r == nil {
		r = strings.NewReader(text)
	}
	var rec recorder
	if err := m.NewSearcher(sopts).Search(r, &rec); err != nil {
		t.Fatal(err)
	}
	return rec.lines
}

func TestSearch(t *testing.T) {
	text := "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\n"
	tests := []struct {
		name    string
		pattern string
		opts    Options
		sopts   SearchOptions
		text    string
		want    []string
	}{
		{"plain", "eta", Options{}, SearchOptions{LineNumbers: true}, text, []string{"2:beta", "6:zeta", "7:eta", "8:theta"}},
		{"anchored", "^eta$", Options{}, SearchOptions{LineNumbers: true}, text, []string{"7:eta"}},
		{"context merged", "gamma|epsilon", Options{}, SearchOptions{Before: 1, After: 1, LineNumbers: true}, text,
			[]string{"2-beta", "3:gamma", "4-delta", "5:epsilon", "6-zeta"}},
		{"before only", "delta", Options{}, SearchOptions{Before: 2, LineNumbers: true}, text, []string{"2-beta", "3-gamma", "4:delta"}},
		{"after at end", "theta", Options{}, SearchOptions{After: 3, LineNumbers: true}, text, []string{"8:theta"}},
		{"before at start", "alpha", Options{}, SearchOptions{Before: 3, LineNumbers: true}, text, []string{"1:alpha"}},
		{"no trailing newline", "c$", Options{}, SearchOptions{LineNumbers: true}, "a\nb\nc", []string{"3:c"}},
		{"case insensitive", "ALPHA|Zeta", Options{CaseInsensitive: true}, SearchOptions{LineNumbers: true}, text, []string{"1:alpha", "6:zeta"}},
		{"crlf kept", "b", Options{}, SearchOptions{LineNumbers: true}, "a\r\nb\r\n", []string{"2:b\r"}},
		{"empty matches every line", "x*", Options{}, SearchOptions{LineNumbers: true}, "a\n\nb\n", []string{"1:a", "2:", "3:b"}},
		{"empty file", "x*", Options{}, SearchOptions{LineNumbers: true}, "", nil},
		{"multiline span", `gamma\ndelta`, Options{Multiline: true}, SearchOptions{LineNumbers: true}, text, []string{"3:gamma", "4:delta"}},
		{"multiline dot", `beta.*delta`, Options{Multiline: true}, SearchOptions{LineNumbers: true}, text, []string{"2:beta", "3:gamma", "4:delta"}},
		{"multiline anchors", `^eta$`, Options{Multiline: true}, SearchOptions{LineNumbers: true}, text, []string{"7:eta"}},
		{"multiline context", `gamma\ndelta`, Options{Multiline: true}, SearchOptions{Before: 1, After: 1, LineNumbers: true}, text,
			[]string{"2-beta", "3:gamma", "4:delta", "5-epsilon"}},
		{"multiline two on a line", `a`, Options{Multiline: true}, SearchOptions{LineNumbers: true}, "banana\nx\n", []string{"1:banana"}},
		{"multiline trailing newline", `a\n`, Options{Multiline: true}, SearchOptions{LineNumbers: true}, "a\nb\n", []string{"1:a"}},
		{"multiline empty at end", `$`, Options{Multiline: true}, SearchOptions{LineNumbers: true}, "a\nb\n", []string{"1:a", "2:b"}},
		{"kelvin", "k", Options{CaseInsensitive: true}, SearchOptions{LineNumbers: true}, "a\n\u212a\nK\n", []string{"2:\u212a", "3:K"}},
		{"long s", "s", Options{CaseInsensitive: true}, SearchOptions{LineNumbers: true}, "\u017f\nx\n", []string{"1:\u017f"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := search(t, tt.pattern, tt.opts, tt.sopts, tt.text, nil)
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			// The same through a reader that returns one byte at a time.
			got = search(t, tt.pattern, tt.opts, tt.sopts, "", iotest.OneByteReader(strings.NewReader(tt.text)))
			if !slices.Equal(got, tt.want) {
				t.Errorf("one byte reads: got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestBinary(t *testing.T) {
	m, _ := Compile("x", Options{})
	var rec recorder
	if err := m.NewSearcher(SearchOptions{}).SearchBytes([]byte("x\x00x\n"), &rec); err != ErrBinary || len(rec.lines) > 0 {
		t.Errorf("NUL at start: err=%v lines=%q, want ErrBinary and nothing", err, rec.lines)
	}
	// A NUL after the first 8 KiB does not make the file binary.
	data := append(bytes.Repeat([]byte("y\n"), BinaryCheckLen), []byte("x\x00\n")...)
	if err := m.NewSearcher(SearchOptions{}).SearchBytes(data, &rec); err != nil || len(rec.lines) != 1 {
		t.Errorf("late NUL: err=%v lines=%d, want one match", err, len(rec.lines))
	}
}

func TestStop(t *testing.T) {
	m, _ := Compile("a", Options{})
	rec := recorder{limit: 1}
	if err := m.NewSearcher(SearchOptions{}).SearchBytes([]byte("a\na\na\n"), &rec); err != nil || len(rec.lines) != 1 {
		t.Errorf("stop after first: err=%v lines=%q", err, rec.lines)
	}
}

func TestLongLinesAndChunks(t *testing.T) {
	// Lines longer than the initial buffer, matches across buffer
	// boundaries, context across refills.
	var b strings.Builder
	var want []string
	for i := 1; i <= 3000; i++ {
		line := strings.Repeat("x", i%7*100)
		if i%500 == 0 {
			line = strings.Repeat("y", initialBufSize+i) + "needle"
			want = append(want, fmt.Sprintf("%d-%s", i-1, strings.Repeat("x", (i-1)%7*100)))
			want = append(want, fmt.Sprintf("%d:%s", i, line))
		}
		b.WriteString(line + "\n")
	}
	got := search(t, "needle", Options{}, SearchOptions{Before: 1, LineNumbers: true}, b.String(), nil)
	if !slices.Equal(got, want) {
		t.Errorf("got %d lines, want %d", len(got), len(want))
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("line %d: got %.40q, want %.40q", i, got[i], want[i])
			}
		}
	}
}

// naive computes what a search must report, the slow obvious way.
func naive(re *regexp.Regexp, text string, multiline bool, before, after int) []string {
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	match := make([]bool, len(lines))
	if multiline {
		starts := make([]int, len(lines))
		off := 0
		for i, l := range lines {
			starts[i] = off
			off += len(l)
		}
		lineOf := func(p int) int {
			i, _ := slices.BinarySearch(starts, p+1)
			return i - 1
		}
		for _, loc := range re.FindAllStringIndex(text, -1) {
			if loc[0] == len(text) && (len(text) == 0 || text[len(text)-1] == '\n') {
				continue
			}
			last := loc[0]
			if loc[1] > loc[0] {
				last = loc[1] - 1
			}
			for i := lineOf(loc[0]); i <= lineOf(last); i++ {
				match[i] = true
			}
		}
	} else {
		for i, l := range lines {
			match[i] = re.MatchString(strings.TrimSuffix(l, "\n"))
		}
	}
	show := make([]bool, len(lines))
	for i, m := range match {
		if m {
			for j := max(0, i-before); j <= min(len(lines)-1, i+after); j++ {
				show[j] = true
			}
		}
	}
	var out []string
	for i, l := range lines {
		if !show[i] {
			continue
		}
		sep := "-"
		if match[i] {
			sep = ":"
		}
		out = append(out, fmt.Sprintf("%d%s%s", i+1, sep, strings.TrimSuffix(l, "\n")))
	}
	return out
}

var (
	words    = []string{"foo", "Foo", "FOO", "bar", "baz", "k", "K", "\u212a", "s", "\u017f", "x", " ", "\t", "(", ")", "é", "É", "_", "\n", "\n", "\n", "\r\n"}
	patterns = []string{"foo", "FOO", "bar|baz", "ba[rz]", "^foo", "foo$", `\bbar\b`, "k", "s", "é", "f.o", "(foo|bar)\\s*\\(", "x*", "^$", "[Ff]oo", "o+", "\\(", "fo{2}", "(?i)bar", "a|b|c|d|e|f|g|h|i|j|k|l|m|n|o|p|q|r", "foo\\nbar", "o\\s+b", "\\n", "(?s)o.b",
		`.*foo.*`, `\w+bar`, `o+\s*\(`, `(fo+|ba+)+`, `^\s*$`, `x?foo*`, `[a-z]{2,}\s`, `\bK+`}
)

// TestAgainstNaive compares searches of random texts with the obvious
// line-by-line evaluation, across reader chunkings and options.
func TestAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for i := 0; i < 3000; i++ {
		var b strings.Builder
		for range r.Intn(60) {
			b.WriteString(words[r.Intn(len(words))])
		}
		text := b.String()
		pattern := patterns[r.Intn(len(patterns))]
		opts := Options{CaseInsensitive: r.Intn(2) == 0, Multiline: r.Intn(3) == 0}
		before, after := r.Intn(3), r.Intn(3)
		checkNaive(t, pattern, opts, before, after, text, r.Intn(2) == 0)
	}
}

func checkNaive(t *testing.T, pattern string, opts Options, before, after int, text string, oneByte bool) {
	t.Helper()
	m, err := Compile(pattern, opts)
	if err != nil {
		if errors.Is(err, ErrNewline) {
			return
		}
		t.Fatalf("Compile(%q): %v", pattern, err)
	}
	// The reference is the pattern as written, not the matcher's own
	// (possibly simplified) regexp.
	flags := ""
	if opts.CaseInsensitive {
		flags += "i"
	}
	if opts.Multiline {
		flags += "ms"
	}
	ref := pattern
	if flags != "" {
		ref = "(?" + flags + ")" + pattern
	}
	want := naive(regexp.MustCompile(ref), text, opts.Multiline, before, after)
	var r io.Reader = strings.NewReader(text)
	if oneByte {
		r = iotest.OneByteReader(r)
	}
	var rec recorder
	err = m.NewSearcher(SearchOptions{Before: before, After: after, LineNumbers: true}).Search(r, &rec)
	if err == ErrBinary {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rec.lines, want) {
		t.Fatalf("pattern %q %+v B=%d A=%d text %q:\n got %q\nwant %q", pattern, opts, before, after, text, rec.lines, want)
	}
}

func FuzzSearch(f *testing.F) {
	f.Add("foo", "a foo\nbar\n", false, false, uint8(1), uint8(1))
	f.Add("(?i)k", "\u212a\nk\n", true, false, uint8(0), uint8(0))
	f.Add(`a\nb`, "a\nb\nc", false, true, uint8(2), uint8(0))
	f.Add("^$", "\n\n", false, false, uint8(0), uint8(3))
	f.Fuzz(func(t *testing.T, pattern, text string, ci, multiline bool, before, after uint8) {
		if len(pattern) > 100 || len(text) > 4000 {
			return
		}
		if _, err := regexp.Compile(pattern); err != nil {
			if _, err := Compile(pattern, Options{}); err == nil {
				t.Fatalf("Compile(%q) accepted a pattern regexp rejects", pattern)
			}
			return
		}
		checkNaive(t, pattern, Options{CaseInsensitive: ci, Multiline: multiline}, int(before%4), int(after%4), text, len(text)%2 == 0)
	})
}

func TestIndexPair(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for range 20000 {
		hay := make([]byte, r.Intn(200))
		for i := range hay {
			hay[i] = "abAB \n"[r.Intn(6)]
		}
		o1, o2 := r.Intn(4), r.Intn(4)
		var m1, m2 byte
		if r.Intn(2) == 0 {
			m1 = 0x20
		}
		if r.Intn(2) == 0 {
			m2 = 0x20
		}
		b1, b2 := "ab"[r.Intn(2)], "ab \n"[r.Intn(4)]
		if m2 != 0 && (b2 == ' ' || b2 == '\n') {
			m2 = 0
		}
		n := len(hay) - max(o1, o2)
		want := -1
		for i := 0; i < n; i++ {
			if hay[i+o1]|m1 == b1 && hay[i+o2]|m2 == b2 {
				want = i
				break
			}
		}
		if got := indexPair(hay, n, o1, b1, m1, o2, b2, m2); got != want {
			t.Fatalf("indexPair(%q, %d, %d %q %#x, %d %q %#x) = %d, want %d", hay, n, o1, b1, m1, o2, b2, m2, got, want)
		}
	}
}

func TestTrimEnds(t *testing.T) {
	tests := []struct{ in, want string }{
		{`\w+Error`, `\wError`},
		{`.*foo.*`, `foo`},
		{`^\w+`, `^\w`},
		{`foo\s*$`, `foo\s*$`},
		{`\d{3,}x\d{2,5}`, `\d{3}x\d{2}`},
		{`(a+)b(c*)`, `ab`},
		{`a*`, `(?:)`},
		{`x|y+`, `x|y+`},
		{`\bfoo+`, `\bfoo`},
		{`a.*b`, `a.*b`},
	}
	norm := func(s string, trim bool) string {
		re, err := syntax.Parse(s, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if trim {
			re = trimEnds(re)
		}
		return re.Simplify().String()
	}
	for _, tt := range tests {
		if got, want := norm(tt.in, true), norm(tt.want, false); got != want {
			t.Errorf("trimEnds(%q) = %q, want %q", tt.in, got, want)
		}
	}
}

func TestSuffixGuard(t *testing.T) {
	tests := []struct {
		pattern string
		guarded bool
		lines   map[string]bool // line → matches
	}{
		{`\w+\s*:=\s*\d{3,}`, true, map[string]bool{"x := 1234": true, "x := y": false, "a := b; c := 100": true, ":= 123": false, "x:=12": false}},
		{`foo\d`, true, map[string]bool{"foofoo1": true, "foo x": false, "fo1": false}},
		{`aab`, false, nil}, // a literal alone: the prefilter decides
		{`aa\d`, true, map[string]bool{"aaa1": true, "aa": false}},
		{`bar\b`, false, map[string]bool{"bar x": true, "barx": false}},
		{`(?i)foo\d`, false, nil},
		{`x(?i:Y)z`, true, map[string]bool{"xyz": true, "xYz": true, "xyZ": false}},
	}
	for _, tt := range tests {
		m, err := Compile(tt.pattern, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if (m.guard != nil) != tt.guarded {
			t.Errorf("%q: guarded %v, want %v", tt.pattern, m.guard != nil, tt.guarded)
		}
		for line, want := range tt.lines {
			re := regexp.MustCompile(tt.pattern)
			if re.MatchString(line) != want {
				t.Fatalf("bad test: %q on %q", tt.pattern, line)
			}
			if got := m.NewSearcher(SearchOptions{}).matchLine([]byte(line)); got != want {
				t.Errorf("%q on %q: %v, want %v", tt.pattern, line, got, want)
			}
		}
	}
}

// TestDenseCandidates: a literal on most lines makes the searcher drop the
// prefilter for the DFA over the whole region; the lines reported, with
// context, stay those of the line-by-line reference.
func TestDenseCandidates(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	var b strings.Builder
	for range 2000 {
		b.WriteString("#define ")
		b.WriteString([]string{"FOO_H", "BAR_H 1", "X", "lock_H(x)", "Y_HH"}[r.Intn(5)])
		b.WriteString("\n")
		if r.Intn(4) == 0 {
			b.WriteString("int x;\n")
		}
	}
	const pattern = `#define\s+\w+_H\b`
	checkNaive(t, pattern, Options{}, 1, 2, b.String(), false)
	m, err := Compile(pattern, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.pre == nil {
		t.Fatal("no prefilter; the test needs one to drop")
	}
	s := m.NewSearcher(SearchOptions{})
	var rec recorder
	if err := s.Search(strings.NewReader(b.String()), &rec); err != nil {
		t.Fatal(err)
	}
	if s.dropped == 0 {
		t.Fatal("the searcher kept the prefilter on a literal found on every line")
	}
}

// TestGiveUpFallsBack: a pattern whose DFA thrashes its cache is finished
// by regexp with the same result, and the searcher stops trying the DFA.
func TestGiveUpFallsBack(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	var b strings.Builder
	for b.Len() < 4<<20 {
		for range 20 {
			b.WriteByte("ab"[r.Intn(2)])
		}
		b.WriteByte('\n')
	}
	b.WriteString("b" + strings.Repeat("a", 21) + "\n")
	text := b.String()
	m, err := Compile(`(a|b)*a(a|b){20}`, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := m.NewSearcher(SearchOptions{LineNumbers: true})
	for range maxGiveUps {
		var rec recorder
		if err := s.Search(strings.NewReader(text), &rec); err != nil {
			t.Fatal(err)
		}
		if len(rec.lines) != 1 || !strings.HasPrefix(rec.lines[0], fmt.Sprint(strings.Count(text, "\n"), ":")) {
			t.Fatalf("got %q, want only the last line", rec.lines)
		}
	}
	if s.gaveUp != maxGiveUps || s.cache() != nil {
		t.Fatalf("gave up %d times, cache %v: the DFA should be off", s.gaveUp, s.cache())
	}
}
