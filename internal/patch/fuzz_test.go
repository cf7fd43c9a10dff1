package patch

import (
	"errors"
	"strings"
	"testing"
)

// FuzzPatch checks that no patch text and file content make the package
// panic, return an error of another type, or produce a file whose last
// line lacks a line ending, unless it is the file's own unterminated last
// line, kept.
func FuzzPatch(f *testing.F) {
	seeds := []struct{ patch, file string }{
		{text("*** Begin Patch", "*** Update File: f", "@@", " a", "-b", "+B", "*** End Patch"), "a\nb\nc\n"},
		{text("*** Begin Patch", "*** Update File: f", "@@ class A", "@@ def m():", "-x", "+y", "*** End of File", "*** End Patch"), "class A:\n  def m():\n    x\n"},
		{text("*** Begin Patch", "*** Update File: f", "*** Move to: g", " a", "+z", "@@", "+tail", "*** End Patch"), "a\r\nb\r\n"},
		{text("*** Begin Patch", "*** Add File: a", "+x", "+", "*** Delete File: b", "*** End Patch"), ""},
		{text("apply_patch <<'EOF'", "*** Begin Patch", "*** Update File: f", "@@ -1,2 +1,2 @@ fn", "-x\u2013y", "+z", "", "EOF"), "x-y\n\n"},
		{text("<<EOF", "*** Begin Patch", "*** Update File: f", "@@", "-", "EOF"), "\n\n"},
		{text("*** Begin Patch", "*** Update File: f", "@@", "*** End Patch"), "a"},
		{text("*** Begin Patch", "*** Update File: f", "bad", "*** End Patch"), "a"},
		{"*** Begin Patch\n*** End Patch", ""},
		{"@@\n-a\n+b\n", "a\n"},
		{"+a\n+b\n", ""},
		{"", ""},
	}
	for _, s := range seeds {
		f.Add(s.patch, s.file)
	}
	f.Fuzz(func(t *testing.T, patchText, file string) {
		check := func(what string, out string, err error) {
			var ce *ContextError
			switch {
			case errors.As(err, &ce):
				if ce.Error() == "" {
					t.Errorf("%s: empty ContextError message", what)
				}
			case err != nil:
				t.Fatalf("%s: error of type %T: %v", what, err, err)
			case out != "" && !strings.HasSuffix(out, "\n"):
				last := file[strings.LastIndexByte(file, '\n')+1:]
				if last == "" || !strings.HasSuffix(out, last) {
					t.Fatalf("%s = %q: the last line lacks a line ending and is not the file's own (%q)", what, out, last)
				}
			}
		}
		parseErr := func(what string, err error) {
			var pe *ParseError
			if err != nil && !errors.As(err, &pe) {
				t.Fatalf("%s: error of type %T: %v", what, err, err)
			}
			if pe != nil && pe.Line < 1 {
				t.Fatalf("%s: error on line %d: %v", what, pe.Line, err)
			}
		}

		p, err := Parse(patchText)
		parseErr("Parse", err)
		if err == nil {
			for _, s := range p.Sections {
				if s.Kind == Update {
					out, err := Apply(file, s.Hunks)
					check("Apply", out, err)
				}
			}
		}

		h, err := ParseHunks(patchText)
		parseErr("ParseHunks", err)
		if err == nil {
			out, err := Apply(file, h)
			check("Apply of ParseHunks", out, err)
		}

		body, err := ParseAddBody(patchText)
		parseErr("ParseAddBody", err)
		if err == nil && body != "" && !strings.HasSuffix(body, "\n") {
			t.Fatalf("ParseAddBody = %q: the last line lacks a line ending", body)
		}
	})
}
