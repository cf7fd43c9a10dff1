package corpus

import (
	"strings"
	"testing"

	"github.com/boris-mcp/boris/internal/patch"
)

// applyText applies a one-file patch text to before with the patch
// package.
func applyText(t *testing.T, text string, before []byte) string {
	t.Helper()
	p, err := patch.Parse(text)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, text)
	}
	got, err := patch.Apply(string(before), p.Sections[0].Hunks)
	if err != nil {
		t.Fatalf("Apply: %v\n%s", err, text)
	}
	return got
}

func lines(n int, f func(i int) string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(f(i))
	}
	return b.String()
}

// TestSections: every update written, in both styles, applies to give the
// new content exactly; the headers, repetitions, widened contexts and
// dropped headers are where they should be.
func TestSections(t *testing.T) {
	body := func(name string, n int) string {
		return "func " + name + "() {\n" + lines(n, func(i int) string { return "\tx" + string(rune('a'+i)) + " := 1\n" }) + "}\n\n"
	}
	f1 := "package a\n\n" + body("f", 20) + body("g", 3)
	blockA := "\ta\n\tb\n\tc\n\td\n\te\n\tf\n\tg\n"
	filler := lines(9, func(i int) string { return "\th" + string(rune('1'+i)) + "\n" })
	f2 := "func b() {\n" + blockA + filler + blockA + "}\n"
	f3 := body("f", 12) + body("f", 1)
	f4 := body("f", 16) + body("f", 16)
	tests := []struct {
		name          string
		path          string
		before, after string
		want          Stats // of the Headers style
		has           []string
	}{
		{"two hunks in one function repeat its line", "a.go", f1,
			strings.Replace(strings.Replace(f1, "\txf := 1", "\txf := 2", 1), "\txs := 1", "\txs := 2", 1),
			Stats{Sections: 1, Hunks: 2, Headers: 2, Repeated: 1}, []string{"@@ func f() {\n \txc := 1\n \txd := 1\n \txe := 1\n-\txf := 1\n", "@@ func f() {\n \txp := 1\n"}},
		{"a repeated block gets more context", "a.txt", "1\n2\n3\n4\n5\n6\n7\n1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\n5\n6\n7\n1\n2\n3\nfour\n5\n6\n7\n8\n9\n",
			Stats{Sections: 1, Hunks: 1, Widened: 1}, []string{"@@\n 1\n 2\n 3\n 4\n 5\n 6\n 7\n 1\n 2\n 3\n-4\n+four\n 5\n"}},
		{"a header already passed whose hunk also occurs before the previous hunk is left out", "a.go", f2,
			strings.Replace(strings.Replace(f2, "\th4", "\tH4", 1), "\td\n\te\n\tf\n\tg\n}", "\tD\n\te\n\tf\n\tg\n}", 1),
			Stats{Sections: 1, Hunks: 2, Headers: 1, Dropped: 1}, []string{"@@ func b() {\n \th1\n", "@@\n \ta\n \tb\n \tc\n-\td\n+\tD\n"}},
		{"a header already passed that recurs in the hunk's own lines is kept", "a.go", f3,
			strings.Replace(strings.Replace(f3, "\txd := 1", "\txd := 2", 1), "\txl := 1", "\txl := 2", 1),
			Stats{Sections: 1, Hunks: 2, Headers: 2, Repeated: 1}, []string{"@@ func f() {\n \txa := 1\n", "@@ func f() {\n \txi := 1\n"}},
		{"a header already passed whose hunk recurs after a later copy of it is left out", "a.go", f4,
			strings.Replace(strings.Replace(f4, "\txd := 1", "\txd := 2", 1), "\txm := 1", "\txm := 2", 1),
			Stats{Sections: 1, Hunks: 2, Headers: 1, Dropped: 1}, []string{"@@ func f() {\n \txa := 1\n", "@@\n \txj := 1\n"}},
		{"no final newline, edited elsewhere", "a.txt", "a\nb\nc\nd\ne\nf", "A\nb\nc\nd\ne\nf",
			Stats{Sections: 1, Hunks: 1, Headers: 0}, []string{"@@\n-a\n+A\n b\n c\n d\n"}},
		{"no final newline, under the context of the hunk", "a.txt", "a\nb\nc", "a\nB\nc",
			Stats{Sections: 1, Hunks: 1, EndOfFile: 1}, []string{"@@\n a\n-b\n+B\n c\n*** End of File\n"}},
		{"a final newline added", "a.txt", "a\nb", "a\nb\n",
			Stats{Sections: 1, Hunks: 1, EndOfFile: 1}, []string{"@@\n a\n-b\n+b\n*** End of File\n"}},
		{"a CRLF file", "a.txt", "a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\nd\r\n",
			Stats{Sections: 1, Hunks: 1, EndOfFile: 1}, nil},
		{"an emptied file", "a.txt", "a\nb\n", "",
			Stats{Sections: 1, Hunks: 1, Headers: 0, EndOfFile: 1}, []string{"@@\n-a\n-b\n*** End of File\n"}},
		{"an empty file filled", "a.txt", "", "a\n",
			Stats{Sections: 1, Hunks: 1}, []string{"@@\n+a\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := File{From: tt.path, To: tt.path, Before: []byte(tt.before), After: []byte(tt.after)}
			if r, ok := expressible(f); !ok {
				t.Fatalf("not expressible: %s", r)
			}
			c := &Commit{Files: []File{f}}
			for _, style := range []Style{Headers, Bare} {
				secs, st := c.Sections(style, "")
				text := Text(secs)
				if got := applyText(t, text, f.Before); got != tt.after {
					t.Fatalf("%s: applied\n%s\ngives %q; want %q", style, text, got, tt.after)
				}
				if style == Bare {
					continue
				}
				if st != tt.want {
					t.Errorf("stats %+v; want %+v\n%s", st, tt.want, text)
				}
				for _, h := range tt.has {
					if !strings.Contains(text, h) {
						t.Errorf("the patch lacks %q:\n%s", h, text)
					}
				}
			}
		})
	}
}

func TestExpressible(t *testing.T) {
	tests := []struct {
		name          string
		from, to      string
		before, after string
		want          Reason
	}{
		{"added, CRLF", "", "a", "", "x\r\n", LineEnding},
		{"added, no final newline", "", "a", "", "x\ny", NoFinalNewline},
		{"added, empty", "", "a", "", "", ""},
		{"changed last line, no final newline", "a", "a", "x\ny", "x\nz", NoFinalNewline},
		{"final newline removed", "a", "a", "x\ny\n", "x\ny", NoFinalNewline},
		{"LF line added to a CRLF file", "a", "a", "x\r\n", "x\r\ny\n", LineEnding},
		{"CRLF line added to an LF file", "a", "a", "x\n", "x\ny\r\n", LineEnding},
		{"CRLF made LF", "a", "a", "x\r\ny\r\n", "x\ny\n", LineEnding},
		{"a stray CR", "a", "a", "x\n", "x\ny\r\r\n", StrayCR},
		{"binary", "a", "a", "x\n", "x\x00\n", Binary},
		{"not UTF-8", "", "a", "", "\xff\n", Binary},
		{"deleted binary", "a", "", "\x00", "", ""},
		{"edited elsewhere, no final newline", "a", "a", "x\ny", "X\ny", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := File{From: tt.from, To: tt.to}
			if tt.from != "" {
				f.Before = []byte(tt.before)
			}
			if tt.to != "" {
				f.After = []byte(tt.after)
			}
			r, ok := expressible(f)
			if r != tt.want || ok != (tt.want == "") {
				t.Errorf("expressible = %q, %v; want %q", r, ok, tt.want)
			}
		})
	}
}
