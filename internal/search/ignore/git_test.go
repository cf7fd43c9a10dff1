package ignore

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// requireGit skips the test when git is missing, except in CI where a
// missing git is a failure.
func requireGit(t testing.TB) string {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is required in CI")
		}
		t.Skip("git not installed")
	}
	return git
}

// gitCmd runs git in dir isolated from the user's and the system's
// configuration, so no global excludes file takes part.
func gitCmd(t testing.TB, dir string, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		// check-ignore exits 1 when nothing is ignored.
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || args[0] != "check-ignore" {
			t.Fatalf("git %v: %v\n%s", args, err, stderr.String())
		}
	}
	return out
}

// gitUntracked lists the files git sees as untracked and not ignored: the
// set a walker honouring .gitignore must produce.
func gitUntracked(t testing.TB, dir string) []string {
	out := gitCmd(t, dir, nil, "ls-files", "--others", "--exclude-standard", "-z")
	var files []string
	for _, f := range bytes.Split(out, []byte{0}) {
		if len(f) > 0 {
			files = append(files, string(f))
		}
	}
	slices.Sort(files)
	return files
}

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

var (
	dirNames  = []string{"a", "b", "ab", "d.d", "x"}
	fileNames = []string{"x.go", "y.txt", "ab", "a", ".h", "#x", "s ", "!x", "a.b.c", "x", "B", "[a]"}
	pieces    = []string{"a", "b", "ab", "x", "d.d", "x.go", "y.txt", "*", "?", "*.go", "a*", "*b", "[ab]", "[!a]", "[a-c]*", "**", ".*", "\\#x", "\\!x", "s\\ ", "\\[a]", "B", "[[:upper:]]", "*.*", "?.?"}
)

// randomPattern draws a .gitignore line from a small grammar: negation,
// leading, middle and trailing slashes, "**" in every position.
func randomPattern(r *rand.Rand) string {
	var b strings.Builder
	if r.Intn(4) == 0 {
		b.WriteByte('!')
	}
	if r.Intn(4) == 0 {
		b.WriteByte('/')
	}
	n := 1 + r.Intn(3)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(pieces[r.Intn(len(pieces))])
	}
	if r.Intn(4) == 0 {
		b.WriteByte('/')
	}
	if r.Intn(10) == 0 {
		b.WriteString("  ")
	}
	return b.String()
}

func randomTree(t testing.TB, r *rand.Rand, root string) {
	var mk func(dir string, depth int)
	mk = func(dir string, depth int) {
		for _, f := range fileNames {
			if r.Intn(3) == 0 {
				if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		if r.Intn(2) == 0 {
			var lines []string
			for i := 0; i < 1+r.Intn(5); i++ {
				lines = append(lines, randomPattern(r))
			}
			if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if depth >= 3 {
			return
		}
		for _, d := range dirNames {
			if r.Intn(3) == 0 {
				sub := filepath.Join(dir, d)
				if _, err := os.Lstat(sub); err == nil {
					continue // a file of that name exists
				}
				if err := os.Mkdir(sub, 0o755); err != nil {
					t.Fatal(err)
				}
				mk(sub, depth+1)
			}
		}
	}
	mk(root, 0)
}

// TestAgainstGit generates random trees and .gitignore files and checks
// that the files left after applying our rules are exactly the untracked,
// not ignored files git reports.
func TestAgainstGit(t *testing.T) {
	requireGit(t)
	r := rand.New(rand.NewSource(20240601))
	iterations := 150
	if testing.Short() {
		iterations = 20
	}
	for i := 0; i < iterations; i++ {
		root := t.TempDir()
		gitCmd(t, root, nil, "init", "-q")
		randomTree(t, r, root)
		want := gitUntracked(t, root)
		got := referenceWalk(t, root)
		if !slices.Equal(got, want) {
			t.Fatalf("iteration %d: walk disagrees with git\n%s\nonly ours: %q\nonly git: %q", i, dumpIgnores(root), minus(got, want), minus(want, got))
		}
	}
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func dumpIgnores(root string) string {
	var b strings.Builder
	_ = filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Name() == ".gitignore" {
			data, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(root, p)
			fmt.Fprintf(&b, "== %s\n%s", rel, data)
		}
		return nil
	})
	return b.String()
}

// FuzzAgainstGit checks single patterns against git check-ignore. The path
// is created in the work tree (as a directory when isDir is set) so git
// sees its type; every parent directory is judged first, as git does.
func FuzzAgainstGit(f *testing.F) {
	requireGit(f)
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
		gitCmd(t, root, nil, "init", "-q")
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
		out := gitCmd(t, root, []byte(path+"\x00"), "check-ignore", "--no-index", "-v", "-n", "-z", "--stdin")
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
