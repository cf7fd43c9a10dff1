// Package gittest runs real git for differential tests of .gitignore
// handling, and builds random trees for them.
package gittest

import (
	"bytes"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Require skips the test when git is missing, except in CI (the CI
// environment variable set) where a missing git is a failure.
func Require(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is required in CI")
		}
		t.Skip("git not installed")
	}
}

// Run runs git in dir, isolated from the user's and the system's
// configuration so that no global excludes file takes part.
func Run(t testing.TB, dir string, stdin []byte, args ...string) []byte {
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

// Untracked lists, sorted, the files git sees in dir as untracked and not
// ignored: what a walk honouring .gitignore must produce.
func Untracked(t testing.TB, dir string) []string {
	out := Run(t, dir, nil, "ls-files", "--others", "--exclude-standard", "-z")
	var files []string
	for _, f := range bytes.Split(out, []byte{0}) {
		if len(f) > 0 {
			files = append(files, string(f))
		}
	}
	slices.Sort(files)
	return files
}

var (
	dirNames  = []string{"a", "b", "ab", "d.d", "x"}
	fileNames = []string{"x.go", "y.txt", "ab", "a", ".h", "#x", "s ", "!x", "a.b.c", "x", "B", "[a]"}
	pieces    = []string{"a", "b", "ab", "x", "d.d", "x.go", "y.txt", "*", "?", "*.go", "a*", "*b", "[ab]", "[!a]", "[a-c]*", "**", ".*", "\\#x", "\\!x", "s\\ ", "\\[a]", "B", "[[:upper:]]", "*.*", "?.?"}
)

// Pattern draws a .gitignore line from a small grammar: negation,
// leading, middle and trailing slashes, "**" in every position, escapes.
func Pattern(r *rand.Rand) string {
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

// RandomTree fills root with random directories, files and .gitignore
// files. Files hold their own path, so searches have something to find.
func RandomTree(t testing.TB, r *rand.Rand, root string) {
	var mk func(dir string, depth int)
	mk = func(dir string, depth int) {
		for _, f := range fileNames {
			if r.Intn(3) == 0 {
				rel, _ := filepath.Rel(root, filepath.Join(dir, f))
				if err := os.WriteFile(filepath.Join(dir, f), []byte("content of "+rel+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		if r.Intn(2) == 0 {
			var lines []string
			for i := 0; i < 1+r.Intn(5); i++ {
				lines = append(lines, Pattern(r))
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

// Dump returns the .gitignore files under root, for failure messages.
func Dump(root string) string {
	var b strings.Builder
	_ = filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Name() == ".gitignore" {
			data, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(root, p)
			b.WriteString("== " + rel + "\n" + string(data))
		}
		return nil
	})
	return b.String()
}

// Minus returns the elements of a not in b.
func Minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
