package glob

import (
	"path"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern string
		rel     string
		want    bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "a/b/main.go", true},
		{"*.go", "main.go.txt", false},
		{"*.{ts,tsx}", "web/app.tsx", true},
		{"*.{ts,tsx}", "web/app.ts", true},
		{"*.{ts,tsx}", "web/app.js", false},
		{"src/**/*.py", "src/a/b/c.py", true},
		{"src/**/*.py", "src/c.py", true},
		{"src/**/*.py", "lib/src/c.py", false},
		{"src/**/*.py", "c.py", false},
		{"src/*.py", "src/c.py", true},
		{"src/*.py", "src/a/c.py", false},
		{"**/*.py", "c.py", true},
		{"**/*.py", "a/c.py", true},
		{"Makefile", "a/Makefile", true},
		{"Makefile", "a/Makefile.am", false},
		{"a/Makefile", "a/Makefile", true},
		{"a/Makefile", "b/a/Makefile", false},
		{"[abc].txt", "x/b.txt", true},
		{"[abc].txt", "x/d.txt", false},
		{"[a-c].txt", "c.txt", true},
		{"[!abc].txt", "d.txt", true},
		{"[!abc].txt", "a.txt", false},
		{"?.c", "dir/x.c", true},
		{"?.c", "dir/xy.c", false},
		{"*_test.go", "pkg/a_test.go", true},
		{"test_*", "tests/test_a.py", true},
		{"{src,lib}/**/*.{c,h}", "lib/x/y.h", true},
		{"{src,lib}/**/*.{c,h}", "bin/x/y.h", false},
		{"*.{c,[ch]pp}", "a.hpp", true},
		{"\\*.go", "*.go", true},
		{"\\*.go", "a.go", false},
	}
	for _, tt := range tests {
		m, err := Compile(tt.pattern)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tt.pattern, err)
		}
		if got := m.Match(tt.rel, path.Base(tt.rel)); got != tt.want {
			t.Errorf("%q vs %q = %v, want %v", tt.pattern, tt.rel, got, tt.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	for _, p := range []string{"", "[abc", "{a,b", "a\\"} {
		if _, err := Compile(p); err == nil {
			t.Errorf("Compile(%q) succeeded, want an error", p)
		}
	}
}

func TestType(t *testing.T) {
	tests := []struct {
		typ  string
		rel  string
		want bool
	}{
		{"go", "a/b.go", true},
		{"golang", "a/b.go", true},
		{"GO", "a/b.go", true},
		{"go", "a/b.gox", false},
		{"python", "x.py", true},
		{"py", "x.pyi", true},
		{"typescript", "x.tsx", true},
		{"ts", "x.js", false},
		{"md", "README.md", true},
		{"markdown", "README.markdown", true},
		{"make", "sub/Makefile", true},
		{"make", "rules.mk", true},
		{"docker", "Dockerfile.dev", true},
		{"c", "x.c", true},
		{"c", "x.h", true},
		{"c", "x.cc", false},
		{"cpp", "x.cc", true},
		{"rs", "lib.rs", true},
		{"terraform", "main.tf.json", true},
		{"kotlin", "build.gradle.kts", true},
	}
	for _, tt := range tests {
		m, err := Type(tt.typ)
		if err != nil {
			t.Fatalf("Type(%q): %v", tt.typ, err)
		}
		if got := m.Match(tt.rel, path.Base(tt.rel)); got != tt.want {
			t.Errorf("type %q vs %q = %v, want %v", tt.typ, tt.rel, got, tt.want)
		}
	}
	_, err := Type("klingon")
	if err == nil || !strings.Contains(err.Error(), "go, gomod") || !strings.Contains(err.Error(), `"klingon"`) {
		t.Errorf("Type(klingon) error = %v, want one listing the valid names", err)
	}
}

// The fast paths must agree with doublestar on every input.
// TestExpandBraces covers the expansion itself.
func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{
		{"*.go", "a/b.go"}, {"*.{ts,tsx}", "x.tsx"}, {"src/**/*.py", "src/a/b.py"},
		{"Makefile", "Makefile"}, {"[a-c]*", "b/c"}, {"{a,{b,c}}x", "cx"}, {"*.", "a."},
		{"**", "a/b"}, {"a/**", "a"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, rel string) {
		// doublestar compares decoded runes, so distinct invalid bytes
		// look equal to it; the fast paths compare bytes.
		if !utf8.ValidString(pattern) || !utf8.ValidString(rel) {
			return
		}
		// Paths handed to Match are relative: no empty elements.
		if rel == "" || slices.Contains(strings.Split(rel, "/"), "") {
			return
		}
		m, err := Compile(pattern)
		if err != nil {
			return
		}
		base := path.Base(rel)
		// Braces are expanded here before matching; doublestar's own
		// brace handling disagrees with its matching of the expanded
		// alternatives in corner cases ("a*{*}" against "a"), so the
		// reference is doublestar on each alternative.
		alts, ok := expandBraces(pattern)
		if !ok {
			alts = []string{pattern}
		}
		want := false
		for _, a := range alts {
			want = want || doublestar.MatchUnvalidated(a, rel) || doublestar.MatchUnvalidated(a, base)
		}
		if got := m.Match(rel, base); got != want {
			t.Fatalf("Compile(%q).Match(%q) = %v, doublestar says %v", pattern, rel, got, want)
		}
	})
}

func TestExpandBraces(t *testing.T) {
	tests := []struct {
		in   string
		want []string // nil: not expanded (left to doublestar whole)
	}{
		{"*.go", []string{"*.go"}},
		{"*.{ts,tsx}", []string{"*.ts", "*.tsx"}},
		{"{a,{b,c}}x", []string{"ax", "bx", "cx"}},
		{"x{a,b}{c,d}", []string{"xac", "xad", "xbc", "xbd"}},
		{"a{,b}", []string{"a", "ab"}},
		{"a*{*}", []string{"a**"}},
		{"{a,b", nil},
		{`\{a,b}`, nil},
		{"[{]{a,b}", nil},
		{strings.Repeat("{a,b}", 7), nil}, // 128 alternatives: too many
	}
	for _, tt := range tests {
		got, ok := expandBraces(tt.in)
		if !ok {
			got = nil
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("expandBraces(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// A brace bomb (4^40 alternatives) is refused as soon as the count
	// passes the bound, not expanded: this returns at once.
	if _, ok := expandBraces(strings.Repeat("{a,b,c,d}", 40)); ok {
		t.Fatal("a 4^40 expansion was accepted")
	}
}
