package search

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func find(t *testing.T, req FindRequest) string {
	t.Helper()
	out, err := Find(context.Background(), nil, req)
	if err != nil {
		t.Fatalf("Find(%+v): %v", req, err)
	}
	return out
}

func TestFind(t *testing.T) {
	root := tree(t,
		"old.go", "",
		"src/a.go", "",
		"src/deep/b.go", "",
		"src/deep/c.ts", "",
		".hidden.go", "",
		"node_modules/m.go", "",
		".git/x.go", "",
		"ignored/x.go", "",
		".gitignore", "ignored/\n",
		"new.go", "",
		"emptydir/", "",
	)
	if err := os.Symlink("src/a.go", filepath.Join(root, "link.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("src", filepath.Join(root, "srclink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("missing.go", filepath.Join(root, "broken.go")); err != nil {
		t.Fatal(err)
	}
	// The symlink's mtime is its target's.
	tests := []struct {
		pattern, typ string
		want         string
	}{
		{"*.go", "", "new.go\n.hidden.go\nsrc/deep/b.go\nlink.go\nsrc/a.go\nold.go"},
		{"src/**/*.go", "", "src/deep/b.go\nsrc/a.go"},
		{"src/*.go", "", "src/a.go"},
		{"./src/*.go", "", "src/a.go"},
		{filepath.Join(root, "src/*.go"), "", "src/a.go"},
		{"*.{ts,py}", "file", "src/deep/c.ts"},
		{"deep", "directory", "src/deep"},
		{"*", "directory", "emptydir\nsrc\nsrclink\nsrc/deep"},
		{"*.rs", "", "No files found"},
	}
	for _, tt := range tests {
		got := find(t, FindRequest{Pattern: tt.pattern, Root: root, Type: tt.typ})
		if tt.pattern == "*" {
			// Directory mtimes change as the tree is built; compare as sets.
			got = sortLines(got)
			tt.want = sortLines(tt.want)
		}
		if got != tt.want {
			t.Errorf("pattern %q type %q:\n got %q\nwant %q", tt.pattern, tt.typ, got, tt.want)
		}
	}
	if got := find(t, FindRequest{Pattern: "*.go", Root: filepath.Join(root, "nope")}); got != "No files found" {
		t.Errorf("missing root: %q", got)
	}
	if got := find(t, FindRequest{Pattern: "*.go", Root: filepath.Join(root, "old.go"), DisplayRoot: "old.go"}); got != "old.go" {
		t.Errorf("file root: %q", got)
	}
}

func sortLines(s string) string {
	lines := strings.Split(s, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func TestFindErrors(t *testing.T) {
	root := tree(t, "a", "")
	tests := []struct {
		req  FindRequest
		kind Kind
	}{
		{FindRequest{Pattern: "", Root: root}, KindInvalidFindPattern},
		{FindRequest{Pattern: "[a", Root: root}, KindInvalidFindPattern},
		{FindRequest{Pattern: "{a", Root: root}, KindInvalidFindPattern},
		{FindRequest{Pattern: "/elsewhere/*.go", Root: root}, KindInvalidFindPattern},
		{FindRequest{Pattern: "*", Root: root, Type: "symlink"}, KindInvalidFindType},
	}
	for _, tt := range tests {
		_, err := Find(context.Background(), nil, tt.req)
		var e *Error
		if !errors.As(err, &e) || e.Kind != tt.kind {
			t.Errorf("%+v: err = %v, want kind %v", tt.req, err, tt.kind)
		}
	}
}
