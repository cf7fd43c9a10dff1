package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boris-mcp/boris/internal/scope"
)

// tree creates files (a trailing slash makes a directory) under a fresh,
// symlink-free temporary directory and returns it. Each file's mtime is
// set from its position in the list, later files newer, so that
// newest-first ordering is predictable.
func tree(t *testing.T, files ...string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-time.Hour)
	for i := 0; i+1 < len(files); i += 2 {
		p := filepath.Join(root, files[i])
		if strings.HasSuffix(files[i], "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(files[i+1]), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := base.Add(time.Duration(i) * time.Second)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func grep(t *testing.T, policy *scope.Policy, req GrepRequest) string {
	t.Helper()
	out, err := Grep(context.Background(), policy, req)
	if err != nil {
		t.Fatalf("Grep(%+v): %v", req, err)
	}
	return out
}

// req fills in the tool defaults.
func req(root, pattern string) GrepRequest {
	return GrepRequest{Pattern: pattern, Root: root, LineNumbers: true, Before: -1, After: -1}
}

func TestGrepModes(t *testing.T) {
	root := tree(t,
		"a.go", "package a\nfunc main() {}\n// main again\n",
		"b/b.go", "package b\n\nfunc helper() {}\n",
		"c.txt", "nothing here\n",
		"d.go", "one\ntwo\nmain\nthree\nfour\nfive\nsix\nmain\nseven\n",
	)
	with := func(f func(*GrepRequest)) GrepRequest {
		r := req(root, "main")
		f(&r)
		return r
	}
	tests := []struct {
		name string
		req  GrepRequest
		want string
	}{
		{"files newest first", req(root, "main"), "d.go\na.go"},
		{"files default mode is explicit too", with(func(r *GrepRequest) { r.OutputMode = "files_with_matches" }), "d.go\na.go"},
		{"count", with(func(r *GrepRequest) { r.OutputMode = "count" }), "a.go:2\nd.go:2"},
		{"content", with(func(r *GrepRequest) { r.OutputMode = "content" }),
			"a.go:2:func main() {}\na.go:3:// main again\nd.go:3:main\nd.go:8:main"},
		{"content without line numbers", with(func(r *GrepRequest) { r.OutputMode = "content"; r.LineNumbers = false }),
			"a.go:func main() {}\na.go:// main again\nd.go:main\nd.go:main"},
		{"context merged, separators", with(func(r *GrepRequest) { r.OutputMode = "content"; r.Context = 1 }),
			"a.go-1-package a\na.go:2:func main() {}\na.go:3:// main again\n--\nd.go-2-two\nd.go:3:main\nd.go-4-three\n--\nd.go-7-six\nd.go:8:main\nd.go-9-seven"},
		{"before overrides context", with(func(r *GrepRequest) { r.OutputMode = "content"; r.Context = 2; r.Before = 0; r.Pattern = "^main" }),
			"d.go:3:main\nd.go-4-three\nd.go-5-four\n--\nd.go:8:main\nd.go-9-seven"},
		{"after overrides context", with(func(r *GrepRequest) { r.OutputMode = "content"; r.Context = 1; r.After = 0; r.Pattern = "^main" }),
			"d.go-2-two\nd.go:3:main\n--\nd.go-7-six\nd.go:8:main"},
		{"context without line numbers", with(func(r *GrepRequest) {
			r.OutputMode = "content"
			r.After = 1
			r.LineNumbers = false
			r.Pattern = "^main"
		}), "d.go:main\nd.go-three\n--\nd.go:main\nd.go-seven"},
		{"head_limit content counts separators", with(func(r *GrepRequest) { r.OutputMode = "content"; r.Context = 1; r.HeadLimit = 4 }),
			"a.go-1-package a\na.go:2:func main() {}\na.go:3:// main again\n--"},
		{"offset content", with(func(r *GrepRequest) { r.OutputMode = "content"; r.Context = 1; r.Offset = 4; r.HeadLimit = 2 }),
			"d.go-2-two\nd.go:3:main"},
		{"head_limit files", with(func(r *GrepRequest) { r.HeadLimit = 1 }), "d.go"},
		{"offset files after sorting", with(func(r *GrepRequest) { r.Offset = 1 }), "a.go"},
		{"offset count", with(func(r *GrepRequest) { r.OutputMode = "count"; r.Offset = 1; r.HeadLimit = 5 }), "d.go:2"},
		{"case insensitive", with(func(r *GrepRequest) { r.Pattern = "PACKAGE"; r.CaseInsensitive = true; r.OutputMode = "count" }), "a.go:1\nb/b.go:1"},
		{"case sensitive by default", with(func(r *GrepRequest) { r.Pattern = "PACKAGE" }), "No files found"},
		{"no match content", with(func(r *GrepRequest) { r.Pattern = "zzz"; r.OutputMode = "content" }), "No matches found"},
		{"offset past the end", with(func(r *GrepRequest) { r.Offset = 7 }), "No results at offset 7: the result has 2 entries; use a smaller offset."},
		{"multiline", with(func(r *GrepRequest) { r.Pattern = `main\(\) \{\}\n//`; r.Multiline = true; r.OutputMode = "content" }),
			"a.go:2:func main() {}\na.go:3:// main again"},
		{"multiline dot", with(func(r *GrepRequest) { r.Pattern = `two.*three`; r.Multiline = true; r.OutputMode = "count" }), "d.go:3"},
		{"regex", with(func(r *GrepRequest) { r.Pattern = `func [a-z]+\(`; r.OutputMode = "content" }),
			"a.go:2:func main() {}\nb/b.go:3:func helper() {}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := grep(t, nil, tt.req); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestGrepSkips(t *testing.T) {
	root := tree(t,
		"visible.txt", "needle\n",
		".hidden/h.txt", "needle\n",
		".env", "needle\n",
		".git/config", "needle\n",
		"node_modules/x/y.js", "needle\n",
		"sub/node_modules/z.js", "needle\n",
		"bin.dat", "needle\x00binary\n",
		"ignored.log", "needle\n",
		"keep/.gitignore", "*.tmp\n",
		"keep/a.tmp", "needle\n",
		".gitignore", "*.log\n",
	)
	got := grep(t, nil, GrepRequest{Pattern: "needle", Root: root, OutputMode: "count"})
	want := ".env:1\n.hidden/h.txt:1\nvisible.txt:1"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestGrepSingleFile(t *testing.T) {
	root := tree(t, "dir/f.txt", "alpha\nbeta\n", "bin", "\x00\x01")
	for _, mode := range []string{"", "count", "content"} {
		got := grep(t, nil, GrepRequest{Pattern: "beta", Root: filepath.Join(root, "dir/f.txt"), DisplayRoot: "./dir/f.txt", OutputMode: mode, LineNumbers: true, Before: -1, After: -1})
		want := map[string]string{"": "./dir/f.txt", "count": "./dir/f.txt:1", "content": "./dir/f.txt:2:beta"}[mode]
		if got != want {
			t.Errorf("mode %q: got %q, want %q", mode, got, want)
		}
	}
	// Filters do not apply to a file named explicitly.
	got := grep(t, nil, GrepRequest{Pattern: "beta", Root: filepath.Join(root, "dir/f.txt"), Include: "*.go"})
	if got != filepath.Join(root, "dir/f.txt") {
		t.Errorf("include applied to an explicit file: %q", got)
	}
	got = grep(t, nil, GrepRequest{Pattern: "x", Root: filepath.Join(root, "bin"), DisplayRoot: "bin"})
	if !strings.Contains(got, "binary") {
		t.Errorf("binary single file: %q", got)
	}
}

func TestGrepFilters(t *testing.T) {
	root := tree(t,
		"main.go", "x\n", "main_test.go", "x\n", "src/app.ts", "x\n", "src/app.tsx", "x\n",
		"src/deep/util.py", "x\n", "lib/util.py", "x\n", "README.md", "x\n", "Makefile", "x\n",
	)
	tests := []struct {
		include, typ string
		want         string
	}{
		{"*.go", "", "main.go\nmain_test.go"},
		{"*.{ts,tsx}", "", "src/app.ts\nsrc/app.tsx"},
		{"src/**/*.py", "", "src/deep/util.py"},
		{"**/*.py", "", "lib/util.py\nsrc/deep/util.py"},
		{"src/*.ts", "", "src/app.ts"},
		{"", "py", "lib/util.py\nsrc/deep/util.py"},
		{"", "python", "lib/util.py\nsrc/deep/util.py"},
		{"", "md", "README.md"},
		{"", "make", "Makefile"},
		{"*_test.go", "go", "main_test.go"},
		{"*.py", "go", "No matches found"},
		{"!*_test.go", "go", "main.go"},
		{"[Mm]ain.go", "", "main.go"},
	}
	for _, tt := range tests {
		got := grep(t, nil, GrepRequest{Pattern: "x", Root: root, Include: tt.include, Type: tt.typ, OutputMode: "count"})
		got = strings.ReplaceAll(got, ":1", "")
		if got != tt.want {
			t.Errorf("include %q type %q: got %q, want %q", tt.include, tt.typ, got, tt.want)
		}
	}
}

func TestGrepErrors(t *testing.T) {
	root := tree(t, "a", "x\n")
	tests := []struct {
		req  GrepRequest
		kind Kind
		msg  string
	}{
		{GrepRequest{Pattern: "", Root: root}, KindInvalidPattern, "empty"},
		{GrepRequest{Pattern: "a(", Root: root}, KindInvalidPattern, "missing closing )"},
		{GrepRequest{Pattern: `a\nb`, Root: root}, KindInvalidPattern, "multiline"},
		{GrepRequest{Pattern: "a", Root: root, OutputMode: "lines"}, KindInvalidOutputMode, "use files_with_matches (the default), content or count"},
		{GrepRequest{Pattern: "a", Root: root, Type: "klingon"}, KindInvalidType, "go, gomod"},
		{GrepRequest{Pattern: "a", Root: root, Include: "[a"}, KindInvalidInput, "glob"},
		{GrepRequest{Pattern: "a", Root: root, HeadLimit: -1}, KindInvalidInput, "head_limit"},
		{GrepRequest{Pattern: "a", Root: root, Offset: -2}, KindInvalidInput, "offset"},
		{GrepRequest{Pattern: "a", Root: root, Context: -1}, KindInvalidInput, "context"},
		{GrepRequest{Pattern: "a", Root: filepath.Join(root, "missing"), DisplayRoot: "missing"}, KindPathNotFound, "missing does not exist"},
		{GrepRequest{Pattern: "a", Root: "relative"}, KindInvalidInput, "absolute"},
	}
	for _, tt := range tests {
		_, err := Grep(context.Background(), nil, tt.req)
		var e *Error
		if !errors.As(err, &e) || e.Kind != tt.kind || !strings.Contains(e.Msg, tt.msg) {
			t.Errorf("%+v: err = %v, want kind %v mentioning %q", tt.req, err, tt.kind, tt.msg)
		}
	}
	if KindInvalidType.String() != "GREP_INVALID_TYPE" || KindPathNotFound.String() != "PATH_NOT_FOUND" {
		t.Error("kind codes")
	}
}

func TestGrepCap(t *testing.T) {
	var files []string
	for i := range 3000 {
		files = append(files, fmt.Sprintf("dir/some/longer/path/file%04d.txt", i), "needle\n")
	}
	root := tree(t, files...)
	for _, mode := range []string{"", "count", "content"} {
		got := grep(t, nil, GrepRequest{Pattern: "needle", Root: root, OutputMode: mode, LineNumbers: true, Before: -1, After: -1})
		body, note, ok := strings.Cut(got, "\n[Output truncated at 30000 characters")
		if !ok || len(body) > 30000 || !strings.Contains(note, "offset=") {
			t.Errorf("mode %q: %d characters, note %q", mode, len(got), note)
		}
	}
	// head_limit keeps the result under the cap: no note.
	got := grep(t, nil, GrepRequest{Pattern: "needle", Root: root, HeadLimit: 10})
	if strings.Count(got, "\n") != 9 || strings.Contains(got, "truncated") {
		t.Errorf("head_limit 10: %q", got)
	}
}

func TestGrepHugeResultBounded(t *testing.T) {
	// One file with a million matching lines: content mode keeps a page,
	// not the whole result.
	root := tree(t, "big.txt", strings.Repeat("match me\n", 1_000_000))
	got := grep(t, nil, GrepRequest{Pattern: "match", Root: root, OutputMode: "content", LineNumbers: true, Before: -1, After: -1, Offset: 20, HeadLimit: 3})
	if got != "big.txt:21:match me\nbig.txt:22:match me\nbig.txt:23:match me" {
		t.Errorf("got %q", got)
	}
	got = grep(t, nil, GrepRequest{Pattern: "match", Root: root, OutputMode: "count"})
	if got != "big.txt:1000000" {
		t.Errorf("count: %q", got)
	}
}

func TestGrepCancel(t *testing.T) {
	root := tree(t, "a", "x\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Grep(ctx, nil, GrepRequest{Pattern: "x", Root: root}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}
