package search

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzGrep drives Grep and Find with arbitrary arguments over a small
// tree: they must never panic, and every failure must be an *Error.
func FuzzGrep(f *testing.F) {
	root, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	files := map[string]string{
		"a.go":              "package a\nfunc main() {}\n",
		"sub/b.py":          "def f():\n    return 1\n",
		"sub/.gitignore":    "*.log\n!keep.log\n",
		"sub/x.log":         "log line\n",
		"sub/keep.log":      "kept\n",
		"crlf.txt":          "one\r\ntwo\r\n",
		"bin.dat":           "\x00\x01\x02",
		"unicode.txt":       "Straße ſ K\n",
		"deep/er/c.ts":      "export const x = 1\n",
		"no-newline.txt":    "last line",
		"empty.txt":         "",
		"long/line.txt":     strings.Repeat("abc ", 3000) + "\n",
		".hidden/h.md":      "# title\n",
		"node_modules/m.js": "nope\n",
	}
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	f.Add("main", "", "", "", false, true, -1, -1, 0, false, 0, 0, "*.go", "file")
	f.Add("(?i)STRASSE|ß", "*.txt", "", "content", true, false, 2, -1, 1, false, 1, 3, "**", "")
	f.Add(`line\nx`, "", "py", "count", false, true, 0, 0, 0, true, 0, 0, "[", "directory")
	f.Add("a(", "{", "klingon", "lines", false, false, -5, 3, -1, false, -1, -1, "", "x")
	f.Fuzz(func(t *testing.T, pattern, include, typ, mode string, ci, numbers bool, before, after, ctxLines int, multiline bool, limit, offset int, findPattern, findType string) {
		clamp := func(n int) int { return max(-2, min(n, 50)) }
		req := GrepRequest{
			Pattern: pattern, Root: root, Include: include, Type: typ, OutputMode: mode,
			CaseInsensitive: ci, LineNumbers: numbers, Before: clamp(before), After: clamp(after), Context: clamp(ctxLines),
			Multiline: multiline, HeadLimit: clamp(limit), Offset: clamp(offset),
		}
		out, err := Grep(context.Background(), nil, req)
		var e *Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("Grep(%+v) returned a plain error: %v", req, err)
		}
		if err == nil && len(out) > 40000 {
			t.Fatalf("Grep(%+v) returned %d characters", req, len(out))
		}
		if strings.Contains(out, "node_modules") || strings.Contains(out, "x.log") {
			t.Fatalf("Grep(%+v) searched a skipped file: %q", req, out)
		}
		_, err = Find(context.Background(), nil, FindRequest{Pattern: findPattern, Root: root, Type: findType})
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("Find(%q, %q) returned a plain error: %v", findPattern, findType, err)
		}
	})
}
