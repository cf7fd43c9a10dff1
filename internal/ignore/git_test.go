package ignore

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/boris-mcp/boris/internal/gittest"
)

// referenceWalk is a plain sequential walk applying a Stack, written to be
// obviously right rather than fast.
func referenceWalk(t testing.TB, root string) []string {
	var files []string
	var walk func(dir, rel string, st *Stack)
	walk = func(dir, rel string, st *Stack) {
		if data, err := os.ReadFile(filepath.Join(dir, ".gitignore")); err == nil {
			st = st.Push(Parse(data), rel)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			name := e.Name()
			if name == ".git" {
				continue
			}
			r := name
			if rel != "" {
				r = rel + "/" + name
			}
			if st.Ignored(r, name, e.IsDir()) {
				continue
			}
			if e.IsDir() {
				walk(filepath.Join(dir, name), r, st)
			} else {
				files = append(files, r)
			}
		}
	}
	walk(root, "", nil)
	slices.Sort(files)
	return files
}

// TestAgainstGit generates random trees and .gitignore files and checks
// that the files left after applying our rules are exactly the untracked,
// not ignored files git reports.
func TestAgainstGit(t *testing.T) {
	gittest.Require(t)
	r := rand.New(rand.NewSource(20240601))
	iterations := 150
	if testing.Short() {
		iterations = 20
	}
	for i := 0; i < iterations; i++ {
		root := t.TempDir()
		gittest.Run(t, root, nil, "init", "-q")
		gittest.RandomTree(t, r, root)
		want := gittest.Untracked(t, root)
		got := referenceWalk(t, root)
		if !slices.Equal(got, want) {
			t.Fatalf("iteration %d: walk disagrees with git\n%s\nonly ours: %q\nonly git: %q", i, gittest.Dump(root), gittest.Minus(got, want), gittest.Minus(want, got))
		}
	}
}

// FuzzAgainstGit checks single patterns against git check-ignore. The path
// is created in the work tree (as a directory when isDir is set) so git
// sees its type; every parent directory is judged first, as git does.
func FuzzAgainstGit(f *testing.F) {
	gittest.Require(f)
	seeds := []struct {
		pattern, path string
		isDir         bool
	}{
		{"*.go", "a/b.go", false},
		{"/a", "a/b", false},
		{"a/**/b", "a/x/y/b", true},
		{"!x", "x", false},
		{"a**", "ab/c", false},
		{"**/b/", "a/b", true},
		{"[!a-c]?", "dx", false},
		{"foo\\ ", "foo ", false},
		{"a/*", "a/b/c", false},
		{"[[:alpha:]]*/", "q/r", true},
	}
	for _, s := range seeds {
		f.Add(s.pattern, s.path, s.isDir)
	}
	f.Fuzz(func(t *testing.T, pattern, path string, isDir bool) {
		if strings.ContainsAny(pattern, "\n\r\x00") || len(pattern) > 64 {
			return
		}
		if !validRelPath(path) {
			return
		}
		root := t.TempDir()
		gittest.Run(t, root, nil, "init", "-q")
		full := filepath.Join(root, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return
		}
		if isDir {
			if err := os.Mkdir(full, 0o755); err != nil {
				return
			}
		} else if err := os.WriteFile(full, nil, 0o644); err != nil {
			return
		}
		if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte(pattern+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out := gittest.Run(t, root, []byte(path+"\x00"), "check-ignore", "--no-index", "-v", "-n", "-z", "--stdin")
		// -z -v output: source NUL linenum NUL pattern NUL path NUL.
		fields := bytes.Split(out, []byte{0})
		if len(fields) < 4 {
			t.Fatalf("unexpected check-ignore output %q", out)
		}
		matched := string(fields[2])
		gitIgnored := matched != "" && !strings.HasPrefix(matched, "!")

		st := (*Stack)(nil).Push(Parse([]byte(pattern+"\n")), "")
		ours := false
		parts := strings.Split(path, "/")
		for i := range parts {
			rel := strings.Join(parts[:i+1], "/")
			dir := i < len(parts)-1 || isDir
			if st.Ignored(rel, parts[i], dir) {
				ours = true
				break
			}
		}
		if ours != gitIgnored {
			t.Fatalf("pattern %q path %q dir=%v: ours ignored=%v, git=%v (git rule %q)", pattern, path, isDir, ours, gitIgnored, matched)
		}
	})
}

func validRelPath(p string) bool {
	if p == "" || len(p) > 100 || strings.ContainsAny(p, "\x00\\\n\r") {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." || part == ".git" || strings.EqualFold(part, ".gitignore") {
			return false
		}
	}
	return true
}
