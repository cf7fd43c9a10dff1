package patch

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// hunks parses the hunks of one file, failing the test on an error.
func hunks(t testing.TB, diff string) []Hunk {
	t.Helper()
	h, err := ParseHunks(diff)
	if err != nil {
		t.Fatalf("ParseHunks(%q): %v", diff, err)
	}
	return h
}

func TestApply(t *testing.T) {
	tests := []struct {
		name, content, diff, want string
	}{
		{"exact", "a\nb\nc\n", "@@\n a\n-b\n+B\n", "a\nB\nc\n"},
		{"first hunk without @@", "a\nb\nc\n", " b\n-c\n+C\n+D\n", "a\nb\nC\nD\n"},
		{"deletion only", "a\nb\nc\n", "@@\n-b\n", "a\nc\n"},
		// Context lines stay as the file has them (the reference would write
		// them as the patch spells them).
		{"trailing whitespace in the file", "foo   \nbar\t\t\nbaz\n", "@@\n foo\n-bar\n+BAR\n", "foo   \nBAR\nbaz\n"},
		{"trailing whitespace in the patch", "foo\nbar\n", "@@\n foo  \n-bar\t\n+BAR\n", "foo\nBAR\n"},
		{"indentation differs", "    foo\n\tbar\n", "@@\n foo\n-bar\n+BAR\n", "    foo\nBAR\n"},
		{"unicode punctuation in the file", "import asyncio  # local import \u2013 avoids top\u2011level dep\n",
			"@@\n-import asyncio  # local import - avoids top-level dep\n+import asyncio  # HELLO\n", "import asyncio  # HELLO\n"},
		{"unicode quotes and spaces", "say \u201chi\u201d\u00a0it\u2019s \u2014 fine\n", "@@\n-say \"hi\" it's - fine\n+ok\n", "ok\n"},
		{"an exact match later beats a loose one earlier", "x \nx\n", "@@\n-x\n+y\n", "x \ny\n"},
		{"unicode simple", "line1\nnaïve café\nline3\n", "@@\n line1\n-naïve café\n+naïve café ✅\n", "line1\nnaïve café ✅\nline3\n"},

		{"one header picks the second of a repeated block",
			"def f():\n    return 1\ndef g():\n    return 1\n",
			"@@ def g():\n-    return 1\n+    return 2\n",
			"def f():\n    return 1\ndef g():\n    return 2\n"},
		{"two headers pick the block",
			"class A:\n    def m():\n        x\nclass B:\n    def n():\n        x\n    def m():\n        x\n",
			"@@ class B:\n@@     def m():\n-        x\n+        y\n",
			"class A:\n    def m():\n        x\nclass B:\n    def n():\n        x\n    def m():\n        y\n"},
		{"headers may be padded unlike the file", "  class A:\n\tdef m():\n\t\tpass\n", "@@ class A:\n@@  def m():  \n-pass\n+return\n", "  class A:\n\tdef m():\nreturn\n"},
		{"unified diff header is ignored", "a\nb\n", "@@ -1,2 +1,2 @@\n a\n-b\n+c\n", "a\nc\n"},

		{"pure addition without header appends", "line1\nline2\n", "@@\n+added line 1\n+added line 2\n", "line1\nline2\nadded line 1\nadded line 2\n"},
		{"pure addition goes before a last empty line", "a\n\n", "@@\n+b\n", "a\nb\n\n"},
		{"pure addition to an empty file", "", "@@\n+a\n+b\n", "a\nb\n"},
		{"pure addition with a header goes after it", "def f():\n    pass\ndef g():\n    pass\n", "@@ def f():\n+    x = 1\n", "def f():\n    x = 1\n    pass\ndef g():\n    pass\n"},
		{"pure addition with two headers", "A\nB\nA\nB\nC\n", "@@ A\n@@ A\n@@ B\n+x\n", "A\nB\nA\nB\nx\nC\n"},
		{"pure addition at end of file ignores the header", "A\nB\nC\n", "@@ A\n+x\n*** End of File\n", "A\nB\nC\nx\n"},

		{"retry without a trailing empty line", "a\nb\n", "@@\n a\n-b\n+B\n \n", "a\nB\n"},
		{"retry keeps the added lines after the empty one", "a\nb\n", "@@\n a\n-b\n \n+B\n", "a\n\nB\n"},
		{"retry keeps new lines when the last is not empty", "a\nb\n", "@@\n a\n-b\n-\n+B\n", "a\nB\n"},
		{"retry with an empty line in the middle", "a\n\nb\n", "@@\n a\n\n-b\n+c\n\n", "a\n\nc\n"},
		{"a matching trailing empty line is kept", "a\nb\n\nc\n", "@@\n-b\n+B\n\n", "a\nB\n\nc\n"},

		{"end of file anchors at the end", "x\ny\nz\nx\ny\n", "@@\n-x\n-y\n+X\n+Y\n*** End of File\n", "x\ny\nz\nX\nY\n"},
		{"end of file after a trailing empty line", "first\nsecond\n", "@@\n first\n-second\n+second updated\n*** End of File\n", "first\nsecond updated\n"},

		{"CRLF file stays CRLF", "a\r\nb\r\nc\r\n", "@@\n a\n-b\n+B\n+B2\n", "a\r\nB\r\nB2\r\nc\r\n"},
		{"CRLF file without final newline edited elsewhere keeps none", "a\r\nb", "@@\n-a\n+A\n", "A\r\nb"},
		{"CRLF file without final newline edited at its end gains CRLF", "a\r\nb", "@@\n a\n-b\n+B\n", "a\r\nB\r\n"},
		{"mixed endings of untouched lines are kept", "a\r\nb\nc\r\nd\n", "@@\n b\n-c\n+C\n", "a\r\nb\nC\r\nd\n"},
		{"the first ending is the preferred one", "a\nb\r\nc\r\n", "@@\n-c\n+C\n", "a\nb\r\nC\n"},
		// The end of the file is left as it was unless a hunk reaches it.
		{"no final newline, edited in the middle", "a\nb\nc", "@@\n a\n-b\n+B\n", "a\nB\nc"},
		{"no final newline, edited at the start", "a\nb", "@@\n-a\n+A\n", "A\nb"},
		{"no final newline, lines inserted before the last", "a\nb", "@@\n a\n+x\n", "a\nx\nb"},
		{"no final newline, last line deleted", "a\nb\nc", "@@\n b\n-c\n", "a\nb\n"},
		{"no final newline, last line replaced", "a\nb", "@@\n a\n-b\n+B\n", "a\nB\n"},
		{"no final newline, last line as context", "a\nb", "@@\n-a\n+A\n b\n", "A\nb"},
		{"no final newline, last line as context at the end of file", "a\nb", "@@\n-a\n+A\n b\n*** End of File\n", "A\nb"},
		{"no final newline, lines added after it as context", "a\nb", "@@\n b\n+c\n", "a\nb\nc\n"},
		{"no final newline, last line rewritten as it was", "a\nb", "@@\n-b\n+b\n", "a\nb\n"},
		{"no final newline, end of file", "a\nb", "@@\n-b\n+B\n*** End of File\n", "a\nB\n"},
		{"no final newline, appended lines", "a\nb", "@@\n+c\n", "a\nb\nc\n"},
		{"no final newline, one line edited elsewhere twice", "x\ny\nx\nz", "@@\n-x\n+1\n@@\n-x\n+2\n", "1\ny\n2\nz"},
		{"no final newline, edited elsewhere in a CRLF file with a pure addition", "a\r\nb\r\nc", "@@ a\n+x\n", "a\r\nx\r\nb\r\nc"},
		{"final newline kept when edited elsewhere", "a\nb\n", "@@\n-a\n+A\n", "A\nb\n"},
		{"a lone CR stays in the text", "a\rb\nc\n", "@@\n-c\n+C\n", "a\rb\nC\n"},

		{"multiple hunks in order",
			"a\nb\nc\nd\ne\nf\n",
			"@@\n a\n-b\n+B\n@@\n c\n d\n-e\n+E\n@@\n f\n+g\n*** End of File\n",
			"a\nB\nc\nd\nE\nf\ng\n"},
		{"later hunks search after earlier ones", "x\ny\nx\ny\n", "@@\n-x\n+1\n@@\n-x\n+2\n", "1\ny\n2\ny\n"},
		{"a pure addition at the end and an edit before it", "a\nb\n", "@@\n+z\n@@\n-a\n+A\n", "A\nb\nz\n"},
		{"an insertion before a last empty line that a later hunk replaced", "a\n\n", "@@\n+x\n@@\n a\n-\n+y\n", "a\ny\nx\n"},
		{"deleting everything", "a\nb\n", "@@\n-a\n-b\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Apply(tt.content, hunks(t, tt.diff))
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if got != tt.want {
				t.Errorf("Apply = %q; want %q", got, tt.want)
			}
		})
	}
}

func TestApplyNotFound(t *testing.T) {
	numbered := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "line %d\n", i)
		}
		return b.String()
	}
	tests := []struct {
		name, content, diff string
		want                ContextError
	}{
		{
			name:    "old lines of the second hunk",
			content: numbered(30),
			diff:    "@@\n-line 3\n+three\n@@\n line 14\n-line 15 changed\n line 16\n",
			want: ContextError{Hunk: 2, Line: 4, Sought: []string{"line 14", "line 15 changed", "line 16"},
				Closest: Region{Start: 12, Lines: []string{"line 12", "line 13", "line 14", "line 15", "line 16", "line 17", "line 18"}}},
		},
		{
			name:    "header",
			content: "package x\n\nfunc a() {\n}\n\nfunc foo(a int) {\n\treturn\n}\n",
			diff:    "@@ func foo(a string) {\n-\treturn\n+\treturn 1\n",
			want: ContextError{Hunk: 1, Line: 1, Header: true, Sought: []string{"func foo(a string) {"},
				Closest: Region{Start: 4, Lines: []string{"}", "", "func foo(a int) {", "\treturn", "}"}}},
		},
		{
			name:    "second header of a hunk",
			content: "class A:\n    def m():\n        x\n",
			diff:    "@@ class A:\n@@ def n():\n-x\n",
			want: ContextError{Hunk: 1, Line: 1, Header: true, Sought: []string{"def n():"},
				Closest: Region{Start: 1, Lines: []string{"class A:", "    def m():", "        x"}}},
		},
		{
			name:    "end of file when the lines exist only earlier",
			content: "x\ny\nz\n",
			diff:    "@@\n-x\n-y\n+X\n*** End of File\n",
			want: ContextError{Hunk: 1, Line: 1, Sought: []string{"x", "y"},
				Closest: Region{Start: 1, Lines: []string{"x", "y", "z"}}},
		},
		{
			name:    "hunks out of order",
			content: "a\nb\nc\n",
			diff:    "@@\n-c\n+C\n@@\n-a\n+A\n",
			want: ContextError{Hunk: 2, Line: 4, Sought: []string{"a"},
				Closest: Region{Start: 1, Lines: []string{"a", "b", "c"}}},
		},
		{
			name:    "empty file",
			content: "",
			diff:    "@@\n-a\n",
			want:    ContextError{Hunk: 1, Line: 1, Sought: []string{"a"}},
		},
		{
			name:    "pattern longer than the file",
			content: "a\nb\n",
			diff:    "@@\n a\n b\n-c\n",
			want: ContextError{Hunk: 1, Line: 1, Sought: []string{"a", "b", "c"},
				Closest: Region{Start: 1, Lines: []string{"a", "b"}}},
		},
		{
			name:    "closest by characters when no line is equal",
			content: "alpha\nbeta\ngamma\ndelta\nepsilon\nzeta\neta\ntheta\n",
			diff:    "@@\n-epsilom\n+e\n",
			want: ContextError{Hunk: 1, Line: 1, Sought: []string{"epsilom"},
				Closest: Region{Start: 3, Lines: []string{"gamma", "delta", "epsilon", "zeta", "eta"}}},
		},
		{
			name:    "long hunks show at most twelve lines",
			content: numbered(40),
			diff:    "@@\n" + strings.ReplaceAll(strings.TrimSuffix(numbered(20), "\n"), "line", " line") + "\n-nope\n",
			want: ContextError{Hunk: 1, Line: 1, Sought: append(strings.Split(strings.TrimSuffix(numbered(20), "\n"), "\n"), "nope"),
				Closest: Region{Start: 1, Lines: strings.Split(strings.TrimSuffix(numbered(12), "\n"), "\n")}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Apply(tt.content, hunks(t, tt.diff))
			var ce *ContextError
			if !errors.As(err, &ce) {
				t.Fatalf("Apply = %q, %v; want a *ContextError", got, err)
			}
			if !reflect.DeepEqual(*ce, tt.want) {
				t.Errorf("Apply error:\n got %#v\nwant %#v", *ce, tt.want)
			}
		})
	}
}

func TestContextErrorMessage(t *testing.T) {
	content := "func a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 1\n}\n"
	_, err := Apply(content, hunks(t, "@@\n func a() {\n-\treturn 1\n+\treturn 2\n@@\n func b() {\n-\treturn 3\n+\treturn 4\n }\n"))
	if err == nil {
		t.Fatal("Apply succeeded; want an error")
	}
	msg := err.Error()
	for _, want := range []string{
		"hunk 2 (patch line 5)",
		"were not found in the file",
		"  | func b() {\n  | \treturn 3\n  | }\n",
		"(lines 3-7)",
		"  5 | func b() {\n  6 | \treturn 1\n  7 | }\n",
		"Fix the patch's context lines to match the file",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "do occur") {
		t.Errorf("message claims the lines occur:\n%s", msg)
	}

	_, err = Apply(content, hunks(t, "@@ func c() {\n-\treturn 1\n"))
	msg = err.Error()
	for _, want := range []string{"hunk 1 (patch line 1)", "'@@ func c() {' was not found", "make the '@@' header line match a line of the file"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}

	// Lines that exist, but not where the hunk may match, are pointed out.
	_, err = Apply("x\ny\nz\n", hunks(t, "@@\n-x\n-y\n*** End of File\n"))
	if msg = err.Error(); !strings.Contains(msg, "The sought lines do occur at line 1") {
		t.Errorf("message does not say where the lines are:\n%s", msg)
	}

	_, err = Apply("y\n", hunks(t, "@@\n-x\n"))
	if msg = err.Error(); !strings.Contains(msg, "(line 1):\n  1 | y\n") {
		t.Errorf("message does not show the one-line file:\n%s", msg)
	}

	_, err = Apply("", hunks(t, "@@\n-x\n"))
	if msg = err.Error(); !strings.Contains(msg, "The file is empty.") {
		t.Errorf("message does not say the file is empty:\n%s", msg)
	}

	long := strings.Repeat("x\n", 30)
	_, err = Apply("y\n", hunks(t, "@@\n"+strings.ReplaceAll(long, "x", "-x")))
	if msg = err.Error(); !strings.Contains(msg, "… (18 more)") || strings.Count(msg, "\n") > 20 {
		t.Errorf("message does not shorten a long hunk:\n%s", msg)
	}
}

func TestApplyDoesNotModifyHunks(t *testing.T) {
	h := hunks(t, "@@\n a\n-b\n \n+B\n")
	before := fmt.Sprintf("%#v", h)
	if _, err := Apply("a\nb\n", h); err != nil {
		t.Fatal(err)
	}
	if after := fmt.Sprintf("%#v", h); after != before {
		t.Errorf("Apply changed its hunks:\n%s\n%s", before, after)
	}
}

func TestLargeInputsAreCheap(t *testing.T) {
	// A file of identical lines and a long pattern of the same line but
	// the last: a naive search compares lines as many times as the product
	// of their lengths, in each of the four passes, and every window of
	// the closest-region search ties.
	const n, m = 200_000, 2_000
	file := strings.Repeat("}\n", n)
	old := make([]string, m)
	for i := range old {
		old[i] = "}"
	}
	old[m-1] = "nope"
	start := time.Now()
	_, err := Apply(file, []Hunk{{Old: old, Line: 1}})
	var ce *ContextError
	if !errors.As(err, &ce) || ce.Closest.Start != 1 || len(ce.Closest.Lines) != shownMax {
		t.Fatalf("Apply error = %#v; want a *ContextError with a region at line 1 of %d lines", err, shownMax)
	}
	// The same pattern, present at the end.
	old[m-1] = "end"
	got, err := Apply(file+"end\n", []Hunk{{Old: old, New: []string{"x"}, Line: 1}})
	if err != nil || got != strings.Repeat("}\n", n-m+1)+"x\n" {
		t.Fatalf("Apply = %d bytes, %v", len(got), err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Apply took %v on large inputs", d)
	}
}

func TestScanAnchoredAgreesWithNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		v := make([]string, 10000+r.IntN(5000))
		for i := range v {
			v[i] = string(rune('a' + r.IntN(2+r.IntN(3))))
		}
		key := make([]string, 20+r.IntN(60))
		if at := r.IntN(len(v) - len(key)); r.IntN(2) == 0 {
			copy(key, v[at:])
		} else {
			for j := range key {
				key[j] = string(rune('a' + r.IntN(3)))
			}
		}
		from := r.IntN(len(v) / 2)
		to := len(v) - len(key)
		if (to-from+1)*len(key) <= directScanMax {
			t.Fatalf("the case is too small to take the anchored path")
		}
		if got, want := scan(v, key, from, to), firstExact(v, key, from); got != want {
			t.Fatalf("scan = %d; want %d", got, want)
		}
	}
}

func BenchmarkApply20Hunks(b *testing.B) {
	const n = 5000
	var file strings.Builder
	for i := range n {
		fmt.Fprintf(&file, "\tline %d of the file: x := compute(%d)\n", i, i*7)
	}
	content := file.String()
	var p strings.Builder
	p.WriteString("*** Begin Patch\n*** Update File: big.go\n")
	for k := range 20 {
		at := 100 + k*240
		fmt.Fprintf(&p, "@@\n \tline %d of the file: x := compute(%d)\n \tline %d of the file: x := compute(%d)\n", at, at*7, at+1, (at+1)*7)
		fmt.Fprintf(&p, "-\tline %d of the file: x := compute(%d)\n+\tchanged %d\n", at+2, (at+2)*7, k)
		fmt.Fprintf(&p, " \tline %d of the file: x := compute(%d)\n", at+3, (at+3)*7)
	}
	p.WriteString("*** End Patch\n")
	text := p.String()
	b.SetBytes(int64(len(content)))
	b.ResetTimer()
	for b.Loop() {
		pt, err := Parse(text)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Apply(content, pt.Sections[0].Hunks); err != nil {
			b.Fatal(err)
		}
	}
}

// TestApplyKeepsContextLines: a hunk located by a tolerant pass leaves its
// context lines as the file has them — whitespace, punctuation and line
// ending — and changes only the lines it removes and adds.
func TestApplyKeepsContextLines(t *testing.T) {
	tests := []struct {
		name, file, diff, want string
	}{
		{"trailing whitespace", "def f():   \n    x = 1\n", "@@\n def f():\n-    x = 1\n+    x = 2\n", "def f():   \n    x = 2\n"},
		{"indentation", "\tif a {\n\t\tb()\n\t}\n", "@@\n if a {\n-b()\n+c()\n }\n", "\tif a {\nc()\n\t}\n"},
		{"typographic punctuation", "say(\u201chi\u201d) \u2013 ok\nx = 1\n", "@@\n say(\"hi\") - ok\n-x = 1\n+x = 2\n", "say(\u201chi\u201d) \u2013 ok\nx = 2\n"},
		{"mixed endings", "a\r\nb\nc\n", "@@\n b\n-c\n+C\n", "a\r\nb\nC\r\n"},
		{"hunk without Body is the reference's", "a  \nb\n", "", "a\nB\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hs []Hunk
			if tt.diff == "" {
				hs = []Hunk{{Old: []string{"a", "b"}, New: []string{"a", "B"}}}
			} else {
				hs = hunks(t, tt.diff)
			}
			got, err := Apply(tt.file, hs)
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// requestPy is a file with two classes that share method names, for the
// tests of headers repeated across hunks.
const requestPy = `import json


class Request(object):
    def __init__(self, url):
        self.url = url
        self.headers = {}

    def prepare(self):
        self.body = None
        return self

    def send(self):
        return json.dumps(self.body)


class Response(object):
    def __init__(self, status):
        self.status = status
        self.headers = {}

    def json(self):
        return json.loads(self.text)
`

// TestApplyRepeatedHeaders: a header already passed — the hunk is in the
// same class or function as the previous one, and the model repeated its
// header — leaves the position where it is, and the hunk's own lines
// decide, as OpenAI's Python reference does; a header found after the
// position still moves it, and stacked headers still narrow.
func TestApplyRepeatedHeaders(t *testing.T) {
	tests := []struct {
		name, content, diff, want string
	}{
		{"two hunks under the same class header", requestPy,
			"@@ class Request(object):\n     def __init__(self, url):\n         self.url = url\n-        self.headers = {}\n+        self.headers = {'User-Agent': 'x'}\n \n     def prepare(self):\n" +
				"@@ class Request(object):\n     def send(self):\n-        return json.dumps(self.body)\n+        return json.dumps(self.body or {})\n",
			strings.Replace(strings.Replace(requestPy, "self.headers = {}", "self.headers = {'User-Agent': 'x'}", 1), "json.dumps(self.body)", "json.dumps(self.body or {})", 1)},
		{"three hunks under the same header, the last after a blank line", requestPy,
			"@@ class Request(object):\n-        self.url = url\n+        self.url = url.strip()\n" +
				"@@ class Request(object):\n-        self.body = None\n+        self.body = b''\n" +
				"@@ class Request(object):\n         return json.dumps(self.body)\n+\n+    def close(self):\n+        pass\n",
			strings.Replace(strings.Replace(strings.Replace(requestPy, "self.url = url\n", "self.url = url.strip()\n", 1), "self.body = None", "self.body = b''", 1),
				"json.dumps(self.body)\n", "json.dumps(self.body)\n\n    def close(self):\n        pass\n", 1)},
		{"a header found after the position still moves it", requestPy,
			"@@ class Request(object):\n@@     def __init__(self, url):\n-        self.headers = {}\n+        self.headers = None\n" +
				"@@     def __init__(self, status):\n-        self.headers = {}\n+        self.headers = []\n",
			strings.Replace(strings.Replace(requestPy, "self.headers = {}", "self.headers = None", 1), "self.headers = {}", "self.headers = []", 1)},
		{"the reference's fallback never jumps back: a header found ahead wins", "def f():\n    x = 1\ndef f():\n    x = 1\n",
			"@@ def f():\n-    x = 1\n+    x = 2\n@@ def f():\n-    x = 1\n+    x = 3\n", "def f():\n    x = 2\ndef f():\n    x = 3\n"},
		{"a header found again later, whose hunk is not after that copy, keeps the position",
			"class A:\n    def __init__(self):\n        self.a = 1\n        self.b = 2\n\nclass B:\n    def __init__(self):\n        self.c = 3\n",
			"@@     def __init__(self):\n-        self.a = 1\n+        self.a = 10\n@@     def __init__(self):\n-        self.b = 2\n+        self.b = 20\n",
			"class A:\n    def __init__(self):\n        self.a = 10\n        self.b = 20\n\nclass B:\n    def __init__(self):\n        self.c = 3\n"},
		{"a header found again later, whose hunk is also after that copy, goes there", "def f():\n    a = 1\n    b = 1\ndef f():\n    b = 1\n",
			"@@ def f():\n-    a = 1\n+    a = 2\n@@ def f():\n-    b = 1\n+    b = 2\n", "def f():\n    a = 2\n    b = 1\ndef f():\n    b = 2\n"},
		{"stacked headers, both repeated", "class A:\n    def f():\n        a = 1\n        b = 2\n        c = 3\n    def g():\n        a = 1\n",
			"@@ class A:\n@@     def f():\n-        a = 1\n+        a = 10\n@@ class A:\n@@     def f():\n-        c = 3\n+        c = 30\n@@ class A:\n@@     def g():\n-        a = 1\n+        a = 100\n",
			"class A:\n    def f():\n        a = 10\n        b = 2\n        c = 30\n    def g():\n        a = 100\n"},
		{"a repeated outer header, then an inner one ahead", requestPy,
			"@@ class Request(object):\n-        self.url = url\n+        self.url = None\n@@ class Request(object):\n@@     def send(self):\n-        return json.dumps(self.body)\n+        return ''\n",
			strings.Replace(strings.Replace(requestPy, "self.url = url\n", "self.url = None\n", 1), "return json.dumps(self.body)", "return ''", 1)},
		{"a repeated header matched loosely", "func f() {  \n\tx := 1\n\ty := 2\n}\n",
			"@@ func f() {\n-\tx := 1\n+\tx := 10\n@@ func f() {\n-\ty := 2\n+\ty := 20\n", "func f() {  \n\tx := 10\n\ty := 20\n}\n"},
		{"a repeated header on the line the previous hunk changed", "func f() {\n\tx := 1\n\ty := 2\n}\n",
			"@@\n-func f() {\n+func f() error {\n@@ func f() {\n-\ty := 2\n+\ty := 20\n", "func f() error {\n\tx := 1\n\ty := 20\n}\n"},
		{"lines also in the previous hunk's own lines are no ambiguity", "func f() {\n\tx := 1\n\tx := 1\n}\n",
			"@@ func f() {\n-\tx := 1\n+\tx := 2\n@@ func f() {\n-\tx := 1\n+\tx := 3\n", "func f() {\n\tx := 2\n\tx := 3\n}\n"},
		{"a repeated header with a pure addition at the end of the file", "func f() {\n}\n",
			"@@ func f() {\n-}\n+\treturn\n+}\n@@ func f() {\n+// end\n*** End of File\n", "func f() {\n\treturn\n}\n// end\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Apply(tt.content, hunks(t, tt.diff))
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if got != tt.want {
				t.Errorf("Apply =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestApplyRepeatedHeadersRefused: what a header found only before the
// position cannot settle stays an error, with the place shown.
func TestApplyRepeatedHeadersRefused(t *testing.T) {
	tests := []struct {
		name, content, diff string
		want                ContextError
	}{
		{
			name:    "added lines only, under a header already passed",
			content: requestPy,
			diff:    "@@ class Request(object):\n-        self.body = None\n+        self.body = b''\n@@ class Request(object):\n+    x = 1\n",
			want: ContextError{Hunk: 2, Line: 4, Header: true, Ambiguous: true, Sought: []string{"class Request(object):"}, HeaderAt: 4,
				Closest: Region{Start: 2, Lines: []string{"", "", "class Request(object):", "    def __init__(self, url):", "        self.url = url"}}},
		},
		{
			name:    "hunks out of order, the second's lines occurring in both places",
			content: "func a() {\n\tif err != nil {\n\t\treturn err\n\t}\n}\n\nfunc b() {\n\tx := 1\n}\n\nfunc c() {\n\tif err != nil {\n\t\treturn err\n\t}\n}\n",
			diff:    "@@ func b() {\n-\tx := 1\n+\tx := 2\n@@ func a() {\n \tif err != nil {\n-\t\treturn err\n+\t\treturn nil\n \t}\n",
			want: ContextError{Hunk: 2, Line: 4, Ambiguous: true, Sought: []string{"\tif err != nil {", "\t\treturn err", "\t}"}, HeaderAt: 1, Later: 12,
				Closest: Region{Start: 1, Lines: []string{"func a() {", "\tif err != nil {", "\t\treturn err", "\t}", "}", ""}}},
		},
		{
			name:    "an inner header that is not under the outer one",
			content: requestPy,
			diff:    "@@ class Response(object):\n@@     def send(self):\n-        return json.dumps(self.body)\n+        return ''\n",
			want: ContextError{Hunk: 1, Line: 1, Header: true, Sought: []string{"    def send(self):"},
				Closest: Region{Start: 11, Lines: []string{"        return self", "", "    def send(self):", "        return json.dumps(self.body)", ""}}},
		},
		{
			name:    "a header that is nowhere",
			content: requestPy,
			diff:    "@@ class Request(object):\n-        self.url = url\n+        self.url = None\n@@ class Session(object):\n-        self.body = None\n",
			want: ContextError{Hunk: 2, Line: 4, Header: true, Sought: []string{"class Session(object):"},
				Closest: Region{Start: 15, Lines: []string{"", "", "class Response(object):", "    def __init__(self, status):", "        self.status = status"}}},
		},
		{
			name:    "a repeated header whose lines are only before the previous hunk",
			content: requestPy,
			diff:    "@@ class Request(object):\n-        return json.dumps(self.body)\n+        return ''\n@@ class Request(object):\n-        self.url = url\n+        self.url = None\n",
			want: ContextError{Hunk: 2, Line: 4, Sought: []string{"        self.url = url"},
				Closest: Region{Start: 4, Lines: []string{"class Request(object):", "    def __init__(self, url):", "        self.url = url", "        self.headers = {}", ""}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Apply(tt.content, hunks(t, tt.diff))
			var ce *ContextError
			if !errors.As(err, &ce) {
				t.Fatalf("Apply = %q, %v; want a *ContextError", got, err)
			}
			if !reflect.DeepEqual(*ce, tt.want) {
				t.Errorf("Apply error:\n got %#v\nwant %#v", *ce, tt.want)
			}
		})
	}
}

func TestAmbiguityMessage(t *testing.T) {
	content := "func a() {\n\tif err != nil {\n\t\treturn err\n\t}\n}\n\nfunc b() {\n\tx := 1\n}\n\nfunc c() {\n\tif err != nil {\n\t\treturn err\n\t}\n}\n"
	_, err := Apply(content, hunks(t, "@@ func b() {\n-\tx := 1\n+\tx := 2\n@@ func a() {\n \tif err != nil {\n-\t\treturn err\n+\t\treturn nil\n \t}\n"))
	if err == nil {
		t.Fatal("Apply succeeded; want an error")
	}
	msg := err.Error()
	for _, want := range []string{
		"hunk 2 (patch line 4) is ambiguous: its last '@@' header line matches line 1, before where the previous hunk ended",
		"occur both between that line and the previous hunk, at line 2, and after the previous hunk, at line 12",
		"  | \tif err != nil {\n",
		"This is the file around line 1 (lines 1-6):\n  1 | func a() {\n",
		"write hunks in file order",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}

	_, err = Apply(requestPy, hunks(t, "@@ class Request(object):\n-        self.body = None\n+        self.body = b''\n@@ class Request(object):\n+    x = 1\n"))
	msg = err.Error()
	for _, want := range []string{
		"hunk 2 (patch line 4) is ambiguous: its header line '@@ class Request(object):' matches line 4",
		"only added lines",
		"  4 | class Request(object):\n",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}
