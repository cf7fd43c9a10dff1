package ignore

import "testing"

// Cases from git's t/t3070-wildmatch.sh ("wildmatch" is WM_PATHNAME mode,
// "pathmatch" is without it).
func TestWildmatch(t *testing.T) {
	tests := []struct {
		pattern, text string
		pathname      bool
		want          bool
	}{
		{"foo", "foo", true, true},
		{"bar", "foo", true, false},
		{"", "", true, true},
		{"???", "foo", true, true},
		{"??", "foo", true, false},
		{"*", "foo", true, true},
		{"f*", "foo", true, true},
		{"*f", "foo", true, false},
		{"*foo*", "foo", true, true},
		{"*ob*a*r*", "foobar", true, true},
		{"*ab", "aaaaaaabababab", true, true},
		{`foo\*`, "foo*", true, true},
		{`foo\*bar`, "foobar", true, false},
		{`f\\oo`, `f\oo`, true, true},
		{"*[al]?", "ball", true, true},
		{"[ten]", "ten", true, false},
		{"**[!te]", "ten", true, true},
		{"**[!ten]", "ten", true, false},
		{"t[a-g]n", "ten", true, true},
		{"t[!a-g]n", "ten", true, false},
		{"t[!a-g]n", "ton", true, true},
		{"t[^a-g]n", "ton", true, true},
		{"a[]]b", "a]b", true, true},
		{"a[]-]b", "a-b", true, true},
		{"a[]-]b", "a]b", true, true},
		{"a[]-]b", "aab", true, false},
		{"a[]a-]b", "aab", true, true},
		{"]", "]", true, true},
		{"foo*bar", "foo/baz/bar", true, false},
		{"foo**bar", "foo/baz/bar", true, false},
		{"foo**bar", "foobazbar", true, true},
		{"foo/**/bar", "foo/baz/bar", true, true},
		{"foo/**/**/bar", "foo/baz/bar", true, true},
		{"foo/**/bar", "foo/b/a/z/bar", true, true},
		{"foo/**/**/bar", "foo/b/a/z/bar", true, true},
		{"foo/**/bar", "foo/bar", true, true},
		{"foo/**/**/bar", "foo/bar", true, true},
		{"foo?bar", "foo/bar", true, false},
		{"foo[/]bar", "foo/bar", true, false},
		{"foo[^a-z]bar", "foo/bar", true, false},
		{"f[^eiu][^eiu][^eiu][^eiu][^eiu]r", "foo-bar", true, true},
		{"**/foo", "foo", true, true},
		{"**/foo", "XXX/foo", true, true},
		{"**/foo", "bar/baz/foo", true, true},
		{"*/foo", "bar/baz/foo", true, false},
		{"**/bar*", "foo/bar/baz", true, false},
		{"**/bar/*", "deep/foo/bar/baz", true, true},
		{"**/bar/*", "deep/foo/bar/baz/", true, false},
		{"**/bar/**", "deep/foo/bar/baz/", true, true},
		{"**/bar/*", "deep/foo/bar", true, false},
		{"**/bar/**", "deep/foo/bar/", true, true},
		{"**/bar**", "foo/bar/baz", true, false},
		{"*/bar/**", "foo/bar/baz/x", true, true},
		{"*/bar/**", "deep/foo/bar/baz/x", true, false},
		{"**/bar/*/*", "deep/foo/bar/baz/x", true, true},
		{"[[:alpha:]][[:digit:]][[:upper:]]", "a1B", true, true},
		{"[[:digit:][:upper:][:space:]]", "a", true, false},
		{"[[:digit:][:upper:][:space:]]", "A", true, true},
		{"[[:digit:][:upper:][:space:]]", "1", true, true},
		{"[[:digit:][:upper:][:spaci:]]", "1", true, false},
		{"[a-c]b*", "abc", true, true},
		{"[a-y]*[^c]", "abd", true, true},
		{"-*-*-*-*-*-*-12-*-*-*-m-*-*-*", "-adobe-courier-bold-o-normal--12-120-75-75-m-70-iso8859-1", true, true},
		{"XXX/*/*/*/*/*/*/12/*/*/*/m/*/*/*", "XXX/adobe/courier/bold/o/normal//12/120/75/75/m/70/iso8859/1", true, true},
		{"XXX/*/*/*/*/*/*/12/*/*/*/m/*/*/*", "XXX/adobe/courier/bold/o/normal//12/120/75/75/X/70/iso8859/1", true, false},
		{"**/*a*b*g*n*t", "abcd/abcdefg/abcdefghijk/abcdefghijklmnop.txt", true, true},
		{"**/*a*b*g*n*t", "abcd/abcdefg/abcdefghijk/abcdefghijklmnop.txtz", true, false},
		{"*/*/*", "foo/bb/aa/rr", true, false},
		{"**/**/**", "foo/bb/aa/rr", true, true},
		{"*X*i", "abcXdefXghi", true, true},
		{"*/*X*/*/*i", "ab/cXd/efXg/hi", true, true},
		{"**/*X*/**/*i", "ab/cXd/efXg/hi", true, true},
		// Without WM_PATHNAME a star crosses slashes.
		{"foo*bar", "foo/baz/bar", false, true},
		{"foo?bar", "foo/bar", false, true},
		{"*/foo", "bar/baz/foo", false, true},
		// Malformed patterns never match.
		{"[", "[", true, false},
		{"a[", "a[", true, false},
		{`a\`, `a\`, true, false},
	}
	for _, tt := range tests {
		if got := wildmatch(tt.pattern, tt.text, tt.pathname); got != tt.want {
			t.Errorf("wildmatch(%q, %q, pathname=%v) = %v, want %v", tt.pattern, tt.text, tt.pathname, got, tt.want)
		}
	}
}

func TestParse(t *testing.T) {
	f := Parse([]byte("\xef\xbb\xbf# comment\n\n*.o\r\n!keep.o\nbuild/\n/root.txt\n\\#hash\n\\!bang\ntrail   \nesc\\ \nsub/dir/\n"))
	tests := []struct {
		path    string
		isDir   bool
		ignored bool
		decided bool
	}{
		{"x.o", false, true, true},
		{"keep.o", false, false, true},
		{"build", true, true, true},
		{"build", false, false, false},
		{"root.txt", false, true, true},
		{"a/root.txt", false, false, false},
		{"#hash", false, true, true},
		{"!bang", false, true, true},
		{"trail", false, true, true},
		{"trail   ", false, false, false},
		{"esc ", false, true, true},
		{"esc", false, false, false},
		{"sub/dir", true, true, true},
		{"x/sub/dir", true, false, false},
		{"# comment", false, false, false},
	}
	for _, tt := range tests {
		base := tt.path
		if i := lastSlash(tt.path); i >= 0 {
			base = tt.path[i+1:]
		}
		ign, dec := f.Match(tt.path, base, tt.isDir)
		if ign != tt.ignored || dec != tt.decided {
			t.Errorf("Match(%q, dir=%v) = (%v, %v), want (%v, %v)", tt.path, tt.isDir, ign, dec, tt.ignored, tt.decided)
		}
	}
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

func TestStack(t *testing.T) {
	root := Parse([]byte("*.log\n/only-root\nsub/anchored\n"))
	sub := Parse([]byte("!keep.log\nanchored\n"))
	above := Parse([]byte("proj/gen/\n*.tmp\n"))
	var s *Stack
	s = s.PushAbove(above, "proj")
	s = s.Push(root, "")
	inner := s.Push(sub, "sub")
	tests := []struct {
		st    *Stack
		rel   string
		isDir bool
		want  bool
	}{
		{s, "a.log", false, true},
		{s, "only-root", false, true},
		{s, "x/only-root", false, false},
		{s, "sub/anchored", false, true},
		{s, "gen", true, true},
		{s, "gen", false, false},
		{s, "x/gen", true, false},
		{s, "a.tmp", false, true},
		{inner, "sub/keep.log", false, false},
		{inner, "sub/other.log", false, true},
		{inner, "sub/deeper/anchored", false, true},
		{s, "sub/deeper/anchored", false, false},
	}
	for _, tt := range tests {
		base := tt.rel[lastSlash(tt.rel)+1:]
		if got := tt.st.Ignored(tt.rel, base, tt.isDir); got != tt.want {
			t.Errorf("Ignored(%q, dir=%v) = %v, want %v", tt.rel, tt.isDir, got, tt.want)
		}
	}
	var empty *Stack
	if empty.Ignored("a", "a", false) {
		t.Error("nil stack ignored a path")
	}
}

// The rule index must not change which rule is the last to match.
func TestRuleOrder(t *testing.T) {
	f := Parse([]byte("*.o\n!keep.o\nx.o\n/dir/file\n!/dir/file\n!*.c\nmain.c\n/top.c\n!/top.c\n"))
	tests := []struct {
		path string
		want bool
	}{
		{"a.o", true},
		{"keep.o", false},
		{"x.o", true},
		{"sub/x.o", true},
		{"dir/file", false},
		{"main.c", true},
		{"other.c", false},
		{"top.c", false},
		{"sub/top.c", false},
	}
	for _, tt := range tests {
		base := tt.path[lastSlash(tt.path)+1:]
		if got, _ := f.Match(tt.path, base, false); got != tt.want {
			t.Errorf("Match(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}
