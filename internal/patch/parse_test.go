package patch

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// text joins lines with "\n" and ends with one, like a patch a model sends.
func text(lines ...string) string {
	return strings.Join(lines, "\n") + "\n"
}

func TestParse(t *testing.T) {
	upd := func(line int, hunks ...Hunk) Section {
		return Section{Kind: Update, Path: "f.txt", Line: line, Hunks: hunks}
	}
	tests := []struct {
		name string
		in   string
		want []Section
	}{
		{
			name: "all kinds of sections",
			in: text(
				"*** Begin Patch",
				"*** Add File: path/add.py",
				"+abc",
				"+def",
				"*** Delete File: path/delete.py",
				"*** Update File: path/update.py",
				"*** Move to: path/update2.py",
				"@@ def f():",
				"-    pass",
				"+    return 123",
				"*** End Patch",
			),
			want: []Section{
				{Kind: Add, Path: "path/add.py", Contents: "abc\ndef\n", Line: 2},
				{Kind: Delete, Path: "path/delete.py", Line: 5},
				{Kind: Update, Path: "path/update.py", MoveTo: "path/update2.py", Line: 6, Hunks: []Hunk{
					{Contexts: []string{"def f():"}, Old: []string{"    pass"}, New: []string{"    return 123"}, Line: 8},
				}},
			},
		},
		{
			name: "markers padded with whitespace and leading blank lines",
			in:   "\n  \n  *** Begin Patch  \n  *** Add File:   foo bar.txt  \n+hi\n\t*** End Patch \n\n",
			want: []Section{{Kind: Add, Path: "foo bar.txt", Contents: "hi\n", Line: 4}},
		},
		{
			name: "no final newline",
			in:   "*** Begin Patch\n*** Delete File: x\n*** End Patch",
			want: []Section{{Kind: Delete, Path: "x", Line: 2}},
		},
		{
			name: "CRLF patch text",
			in:   "*** Begin Patch\r\n*** Add File: a\r\n+x\r\n*** Update File: f.txt\r\n@@ h\r\n-a\r\n+b\r\n*** End Patch\r\n",
			want: []Section{
				{Kind: Add, Path: "a", Contents: "x\n", Line: 2},
				upd(4, Hunk{Contexts: []string{"h"}, Old: []string{"a"}, New: []string{"b"}, Line: 5}),
			},
		},
		{
			name: "add file with zero lines",
			in:   text("*** Begin Patch", "*** Add File: empty.txt", "*** Delete File: d", "*** End Patch"),
			want: []Section{{Kind: Add, Path: "empty.txt", Line: 2}, {Kind: Delete, Path: "d", Line: 3}},
		},
		{
			name: "add file keeps content verbatim",
			in:   text("*** Begin Patch", "*** Add File: a", "+", "+  indented  ", "++plus", "+*** End Patch", "*** End Patch"),
			want: []Section{{Kind: Add, Path: "a", Contents: "\n  indented  \n+plus\n*** End Patch\n", Line: 2}},
		},
		{
			name: "move to padded",
			in:   text("*** Begin Patch", "*** Update File: f.txt", "  *** Move to:  g.txt ", "-a", "*** End Patch"),
			want: []Section{{Kind: Update, Path: "f.txt", MoveTo: "g.txt", Line: 2, Hunks: []Hunk{{Old: []string{"a"}, Line: 4}}}},
		},
		{
			name: "first hunk without @@",
			in:   text("*** Begin Patch", "*** Update File: f.txt", " import foo", "+bar", "*** End Patch"),
			want: []Section{upd(2, Hunk{Old: []string{"import foo"}, New: []string{"import foo", "bar"}, Line: 3})},
		},
		{
			name: "bare @@, @@ header, @@ with trailing spaces",
			in: text("*** Begin Patch", "*** Update File: f.txt",
				"@@", "-a", "+b",
				"@@ class Foo  ", "-c",
				"@@   ", "+d",
				"@@ \t def m():", " e",
				"*** End Patch"),
			want: []Section{upd(2,
				Hunk{Old: []string{"a"}, New: []string{"b"}, Line: 3},
				Hunk{Contexts: []string{"class Foo"}, Old: []string{"c"}, Line: 6},
				Hunk{New: []string{"d"}, Line: 8},
				Hunk{Contexts: []string{"\t def m():"}, Old: []string{"e"}, New: []string{"e"}, Line: 10},
			)},
		},
		{
			name: "several @@ headers",
			in:   text("*** Begin Patch", "*** Update File: f.txt", "@@ class A", "@@", "@@ def m():", "-x", "+y", "*** End Patch"),
			want: []Section{upd(2, Hunk{Contexts: []string{"class A", "def m():"}, Old: []string{"x"}, New: []string{"y"}, Line: 3})},
		},
		{
			name: "unified diff style headers",
			in: text("*** Begin Patch", "*** Update File: f.txt",
				"@@ -12,5 +12,6 @@", "-a",
				"@@ -12,5 +12,6 @@ func foo() {", "-b",
				"@@ -1 +1 @@", "-c",
				"@@ -1,2 +1", "-d",
				"*** End Patch"),
			want: []Section{upd(2,
				Hunk{Old: []string{"a"}, Line: 3},
				Hunk{Contexts: []string{"func foo() {"}, Old: []string{"b"}, Line: 5},
				Hunk{Old: []string{"c"}, Line: 7},
				Hunk{Contexts: []string{"-1,2 +1"}, Old: []string{"d"}, Line: 9},
			)},
		},
		{
			name: "blank lines between hunks and before the first",
			in:   text("*** Begin Patch", "*** Update File: f.txt", "", "\t", "@@", "-a", "\t", "", "  ", "@@", "-b", "*** End of File", "", "\t", "@@", "-c", "*** End Patch"),
			want: []Section{upd(2, Hunk{Old: []string{"a"}, Line: 5}, Hunk{Old: []string{"b"}, EOF: true, Line: 10}, Hunk{Old: []string{"c"}, Line: 15})},
		},
		{
			// As in the reference: inside a hunk an empty line is an empty
			// context line and one of spaces a context line of spaces, even
			// right before the next "@@"; Apply's retry without a last ""
			// absorbs the former.
			name: "empty and space lines at the end of a hunk are context",
			in:   text("*** Begin Patch", "*** Update File: f.txt", "@@", "-a", "", "  ", "@@", "-b", "", "*** End Patch"),
			want: []Section{upd(2, Hunk{Old: []string{"a", "", " "}, New: []string{"", " "}, Line: 3}, Hunk{Old: []string{"b", ""}, New: []string{""}, Line: 7})},
		},
		{
			name: "empty line is a context line",
			in:   text("*** Begin Patch", "*** Update File: f.txt", "@@ ctx", "", " context", "-remove", "+add", "", " context2", "*** End Patch"),
			want: []Section{upd(2, Hunk{
				Contexts: []string{"ctx"},
				Old:      []string{"", "context", "remove", "", "context2"},
				New:      []string{"", "context", "add", "", "context2"},
				Line:     3,
			})},
		},
		{
			name: "end of file",
			in:   text("*** Begin Patch", "*** Update File: f.txt", "@@", "+line", "*** End of File  ", "@@", " x", "*** End of File", "*** End Patch"),
			want: []Section{upd(2,
				Hunk{New: []string{"line"}, EOF: true, Line: 3},
				Hunk{Old: []string{"x"}, New: []string{"x"}, EOF: true, Line: 6},
			)},
		},
		{
			name: "context line that reads like a marker",
			in:   text("*** Begin Patch", "*** Update File: f.txt", "@@", " *** End of File", " *** End Patch", "-@@ x", "*** End Patch"),
			want: []Section{upd(2, Hunk{
				Old:  []string{"*** End of File", "*** End Patch", "@@ x"},
				New:  []string{"*** End of File", "*** End Patch"},
				Line: 3,
			})},
		},
		{
			name: "hunk ended by the next section",
			in:   text("*** Begin Patch", "*** Update File: f.txt", "@@", "+line", "*** Add File: other.py", "+content", "*** End Patch"),
			want: []Section{
				upd(2, Hunk{New: []string{"line"}, Line: 3}),
				{Kind: Add, Path: "other.py", Contents: "content\n", Line: 5},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(checkBodies(t, p.Sections), tt.want) {
				t.Errorf("Parse:\n got %#v\nwant %#v", p.Sections, tt.want)
			}
		})
	}
}

func TestParseHeredoc(t *testing.T) {
	body := text("*** Begin Patch", "*** Update File: file2.py", " import foo", "+bar", "*** End Patch")
	// The leading empty line of the input counts: lines are numbered in
	// the text as given.
	want := []Section{{Kind: Update, Path: "file2.py", Line: 4, Hunks: []Hunk{
		{Old: []string{"import foo"}, New: []string{"import foo", "bar"}, Line: 5},
	}}}
	for _, tt := range []struct{ open, close string }{
		{"<<EOF", "EOF"},
		{"<<'EOF'", "EOF"},
		{`<<"EOF"`, "EOF"},
		{"apply_patch <<'EOF'", "EOF"},
		{"apply_patch <<EOF", "EOF"},
		{`apply_patch <<"EOF"`, "EOF"},
		{"applypatch <<'EOF'", "EOF"},
		{"apply_patch <<'PATCH'", "PATCH"},
		{"apply_patch << PATCH", "  PATCH  "},
	} {
		t.Run(tt.open, func(t *testing.T) {
			in := "\n" + tt.open + "\n" + body + tt.close + "\n"
			p, err := Parse(in)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(checkBodies(t, p.Sections), want) {
				t.Errorf("Parse:\n got %#v\nwant %#v", p.Sections, want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		line int
		msg  string // a part of the message
	}{
		{"empty", "", 1, "the patch is empty"},
		{"blank", " \n\t\n", 1, "the patch is empty"},
		{"bad first line", "bad", 1, "the first line of the patch must be '*** Begin Patch', got 'bad'"},
		{"bad first line after blank lines", "\n\n  bad\n*** End Patch\n", 3, "got 'bad'"},
		{"bad last line", "*** Begin Patch\nbad", 2, "the last line of the patch must be '*** End Patch', got 'bad'"},
		{"begin only", "*** Begin Patch\n", 1, "the last line of the patch must be '*** End Patch', got '*** Begin Patch'"},
		{"no sections", "*** Begin Patch\n*** End Patch\n", 2, "the patch has no file sections"},
		{"mismatched heredoc quotes", text(`<<"EOF'`, "*** Begin Patch", "*** Delete File: a", "*** End Patch", "EOF"), 1, "the first line of the patch must be '*** Begin Patch'"},
		{"heredoc with another word", text("<<'PATCH'", "*** Begin Patch", "*** Delete File: a", "*** End Patch", "PATCH"), 1, "the first line"},
		{"heredoc delimiter mismatch", text("apply_patch <<'PATCH'", "*** Begin Patch", "*** Delete File: a", "*** End Patch", "EOF"), 1, "the first line"},
		{"heredoc without end marker", text("<<EOF", "*** Begin Patch", "*** Update File: file2.py", "EOF"), 3, "the last line of the patch must be '*** End Patch', got '*** Update File: file2.py'"},
		{"invalid file header", text("*** Begin Patch", "*** Delete File: a", "*** Frobnicate File: b", "*** End Patch"), 3,
			"'*** Frobnicate File: b' is not a valid file header; expected '*** Add File: <path>', '*** Delete File: <path>' or '*** Update File: <path>'"},
		{"header without space", text("*** Begin Patch", "*** Add File:x", "*** End Patch"), 2, "'*** Add File:x' is not a valid file header"},
		{"add without path", text("*** Begin Patch", "*** Add File:  ", "*** End Patch"), 2, "'*** Add File:' has no path"},
		{"delete without path", text("*** Begin Patch", "*** Delete File:", "*** End Patch"), 2, "'*** Delete File:' has no path"},
		{"update without path", text("*** Begin Patch", "*** Update File: ", "*** End Patch"), 2, "'*** Update File:' has no path"},
		{"move to without path", text("*** Begin Patch", "*** Update File: a", "*** Move to:", "@@", "-x", "*** End Patch"), 3, "'*** Move to:' has no path"},
		{"move to out of place", text("*** Begin Patch", "*** Update File: a", "@@", "-x", "*** Move to: b", "*** End Patch"), 5, "must come right after the '*** Update File: <path>' line"},
		{"add line without plus", text("*** Begin Patch", "*** Add File: a", "+x", "y", "*** End Patch"), 4, "'y' is not a valid file header"},
		{"empty line in add", text("*** Begin Patch", "*** Add File: a", "+x", "", "+y", "*** End Patch"), 4, "an empty line of the new file is a lone '+'"},
		{"blank line between sections", text("*** Begin Patch", "*** Delete File: a", "", "*** Delete File: b", "*** End Patch"), 3, "no blank lines go between file sections"},
		{"empty update section", text("*** Begin Patch", "*** Update File: test.py", "*** End Patch"), 2, "update file section for 'test.py' is empty: add at least one hunk"},
		{"empty update section before another", text("*** Begin Patch", "*** Update File: a", "", "*** Delete File: b", "*** End Patch"), 2, "update file section for 'a' is empty"},
		{"@@ without lines at end", text("*** Begin Patch", "*** Update File: a", "@@", "*** End Patch"), 3, "update hunk has no lines"},
		{"@@ without lines before a section", text("*** Begin Patch", "*** Update File: a", "@@ -x", "+y", "@@ foo", "*** Delete File: b", "*** End Patch"), 5, "update hunk has no lines"},
		{"@@ then end of file", text("*** Begin Patch", "*** Update File: a", "@@", "*** End of File", "*** End Patch"), 3, "update hunk has no lines"},
		{"unexpected line after @@", text("*** Begin Patch", "*** Update File: a", "@@", "bad", "*** End Patch"), 4,
			"unexpected line 'bad' in update hunk; every line must start with ' ' (context), '+' (added) or '-' (removed)"},
		{"unexpected first line without @@", text("*** Begin Patch", "*** Update File: a", "bad", "*** End Patch"), 3, "unexpected line 'bad' in update hunk"},
		{"malformed @@", text("*** Begin Patch", "*** Update File: a", "@@foo", "-x", "*** End Patch"), 3, "a hunk header is '@@' alone"},
		{"second hunk without @@", text("*** Begin Patch", "*** Update File: a", "@@", "-x", "+y", "z", "*** End Patch"), 6,
			"expected the hunk to start with a '@@' line, got 'z'"},
		{"second hunk without @@ after blank", text("*** Begin Patch", "*** Update File: a", "-x", "", "\t", " z", "*** End Patch"), 6,
			"expected the hunk to start with a '@@' line, got ' z'"},
		{"error in a later section", text("*** Begin Patch", "*** Add File: a", "+x", "*** Update File: b", "@@", "-x", "@@", "oops", "*** End Patch"), 8, "unexpected line 'oops'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse(tt.in)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse = %+v, %v; want a *ParseError", p, err)
			}
			if pe.Line != tt.line || !strings.Contains(pe.Msg, tt.msg) {
				t.Errorf("Parse error = %q (line %d); want line %d containing %q", pe.Msg, pe.Line, tt.line, tt.msg)
			}
			if want := "line " + itoa(tt.line) + ": "; !strings.HasPrefix(pe.Error(), want) {
				t.Errorf("Error() = %q; want prefix %q", pe.Error(), want)
			}
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func TestParseErrorQuotesLongLinesShort(t *testing.T) {
	long := strings.Repeat("é", 500)
	_, err := Parse(long)
	if err == nil || len(err.Error()) > 400 || !strings.Contains(err.Error(), "…") {
		t.Errorf("Parse error = %v; want one shortened with …", err)
	}
}

func TestParseHunks(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Hunk
	}{
		{"one hunk", "@@\n-a\n+b\n", []Hunk{{Old: []string{"a"}, New: []string{"b"}, Line: 1}}},
		{"no @@ and no final newline", " a\n+b", []Hunk{{Old: []string{"a"}, New: []string{"a", "b"}, Line: 1}}},
		{"trailing blank lines", "@@ h\n-a\n\n \n", []Hunk{{Contexts: []string{"h"}, Old: []string{"a"}, Line: 1}}},
		{"leading blank lines and two hunks", "\n\n@@ h\n-a\n@@\n+b\n*** End of File\n", []Hunk{
			{Contexts: []string{"h"}, Old: []string{"a"}, Line: 3},
			{New: []string{"b"}, EOF: true, Line: 5},
		}},
		{"CRLF", "@@\r\n-a\r\n+b\r\n", []Hunk{{Old: []string{"a"}, New: []string{"b"}, Line: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHunks(tt.in)
			if err != nil {
				t.Fatalf("ParseHunks: %v", err)
			}
			if !reflect.DeepEqual(checkBodies(t, []Section{{Hunks: got}})[0].Hunks, tt.want) {
				t.Errorf("ParseHunks:\n got %#v\nwant %#v", got, tt.want)
			}
		})
	}

	errTests := []struct {
		name string
		in   string
		line int
		msg  string
	}{
		{"empty", "", 1, "the diff has no hunks"},
		{"blank", "\n \n", 1, "the diff has no hunks"},
		{"envelope", "*** Begin Patch\n*** Update File: a\n@@\n-x\n*** End Patch\n", 1, "no '*** ' patch headers"},
		{"end patch after hunk", "@@\n-x\n*** End Patch\n", 3, "unexpected line '*** End Patch'"},
		{"bad line", "@@\n-x\n@@\nfoo\n", 4, "unexpected line 'foo' in update hunk"},
		{"second hunk without @@", "-x\nfoo\n", 2, "expected the hunk to start with a '@@' line"},
		{"empty hunk", "@@\n-x\n@@ h\n", 3, "update hunk has no lines"},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHunks(tt.in)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("ParseHunks = %+v, %v; want a *ParseError", got, err)
			}
			if pe.Line != tt.line || !strings.Contains(pe.Msg, tt.msg) {
				t.Errorf("ParseHunks error = %q (line %d); want line %d containing %q", pe.Msg, pe.Line, tt.line, tt.msg)
			}
		})
	}
}

func TestParseAddBody(t *testing.T) {
	tests := []struct {
		in, want string
		line     int // of the error; 0 when none
	}{
		{"", "", 0},
		{"+a\n+b\n", "a\nb\n", 0},
		{"+a\n+b", "a\nb\n", 0},
		{"+\n", "\n", 0},
		{"+\n+\n", "\n\n", 0},
		{"+a\r\n+ b \r\n", "a\n b \n", 0},
		{"++x\n", "+x\n", 0},
		{"a\n", "", 1},
		{"+a\n\n", "", 2},
		{"+a\n\n+b\n", "", 2},
		{"+a\n-b\n", "", 2},
		{"+a\n +b\n", "", 2},
	}
	for _, tt := range tests {
		got, err := ParseAddBody(tt.in)
		if tt.line == 0 {
			if err != nil || got != tt.want {
				t.Errorf("ParseAddBody(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
			continue
		}
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != tt.line || !strings.Contains(pe.Msg, "expected a line starting with '+'") {
			t.Errorf("ParseAddBody(%q) = %q, %v; want a *ParseError on line %d", tt.in, got, err, tt.line)
		}
	}
}

// checkBodies checks that every hunk's Body describes its Old and New
// lines, and clears it, so the tables above need not spell it out.
func checkBodies(t *testing.T, secs []Section) []Section {
	t.Helper()
	for i := range secs {
		for j := range secs[i].Hunks {
			h := &secs[i].Hunks[j]
			if !bodyFits(h.Body, len(h.Old), len(h.New)) {
				t.Fatalf("hunk %d: Body %q does not describe %d old and %d new lines", j+1, h.Body, len(h.Old), len(h.New))
			}
			h.Body = ""
		}
	}
	return secs
}

func TestParseBody(t *testing.T) {
	hunks, err := ParseHunks("@@\n a\n-b\n+c\n\n+d\n e\n")
	if err != nil {
		t.Fatal(err)
	}
	if hunks[0].Body != " -+ + " {
		t.Fatalf("Body %q", hunks[0].Body)
	}
}
