package search

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/boris-mcp/boris/internal/search/internal/testtree"
)

// rgFlags make rg do what grep does: hidden files, .gitignore files
// honoured outside a git repository too, no .ignore/.rgignore files, no
// global or .git/info excludes, .gitignore files above the root not read
// (Go's tree is not in a repository, so boris reads none either), .git and
// node_modules skipped, symlinks followed.
var rgFlags = []string{"--hidden", "--no-require-git", "--no-ignore-dot", "--no-ignore-global", "--no-ignore-exclude",
	"--no-ignore-parent", "-L", "-g", "!.git", "-g", "!node_modules", "--no-messages"}

// TestEquivalentToRipgrep compares file lists and per-file counts with
// rg's on Go's source tree. Documented differences are taken out of the
// comparison: rg gives up on a file at the first NUL byte anywhere and
// transcodes UTF-16 files, while boris skips a file only for a NUL in its
// first 8 KiB and reads bytes as they are.
func TestEquivalentToRipgrep(t *testing.T) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("rg (ripgrep) is required in CI")
		}
		t.Skip("rg not installed")
	}
	if testing.Short() {
		t.Skip("searches the whole Go tree")
	}
	root := testtree.GoSrc(t)
	cases := []struct {
		name    string
		req     GrepRequest
		rgExtra []string
	}{
		{"literal", GrepRequest{Pattern: "func main"}, nil},
		{"regex", GrepRequest{Pattern: `func [A-Z][a-z]+\(`}, nil},
		{"case insensitive", GrepRequest{Pattern: "package MAIN", CaseInsensitive: true}, []string{"-i"}},
		{"alternation", GrepRequest{Pattern: `errors\.New|fmt\.Errorf`}, nil},
		{"anchored", GrepRequest{Pattern: `^import \($`}, nil},
		{"include glob", GrepRequest{Pattern: `t\.Fatal`, Include: "*_test.go"}, []string{"-g", "*_test.go"}},
		{"include path glob", GrepRequest{Pattern: "Unlock", Include: "sync/**/*.go"}, []string{"-g", "/sync/**/*.go"}},
		{"type", GrepRequest{Pattern: "TODO", Type: "go"}, []string{"-t", "go"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			req.Root = root
			req.OutputMode = "count"
			ours := parseCounts(t, allPages(t, req))
			args := append(append(append([]string{}, rgFlags...), tc.rgExtra...), "-c", "-e", tc.req.Pattern, ".")
			theirs := parseCounts(t, runRg(t, rg, root, args))
			for p := range theirs {
				if !plainText(filepath.Join(root, p)) {
					delete(theirs, p)
				}
			}
			for p := range ours {
				if !plainText(filepath.Join(root, p)) {
					delete(ours, p)
				}
			}
			if len(theirs) == 0 {
				t.Fatal("rg found nothing: the comparison would be empty")
			}
			var diffs []string
			for p, n := range theirs {
				if ours[p] != n {
					diffs = append(diffs, p+": rg "+strconv.Itoa(n)+", boris "+strconv.Itoa(ours[p]))
				}
			}
			for p, n := range ours {
				if _, ok := theirs[p]; !ok {
					diffs = append(diffs, p+": rg 0, boris "+strconv.Itoa(n))
				}
			}
			slices.Sort(diffs)
			if len(diffs) > 0 {
				t.Errorf("%d files differ (of %d):\n%s", len(diffs), len(theirs), strings.Join(diffs[:min(len(diffs), 20)], "\n"))
			}

			// files_with_matches lists the same files.
			req.OutputMode = ""
			files := strings.Split(allPages(t, req), "\n")
			var listed []string
			for _, f := range files {
				if _, ok := ours[f]; ok {
					listed = append(listed, f)
				}
			}
			if len(listed) != len(ours) {
				t.Errorf("files_with_matches lists %d of the %d files count mode found", len(listed), len(ours))
			}
		})
	}
}

// allPages collects a result that does not fit the output cap, page by
// page.
func allPages(t *testing.T, req GrepRequest) string {
	t.Helper()
	const page = 400
	var out []string
	for offset := 0; ; offset += page {
		req.Offset, req.HeadLimit = offset, page
		got, err := Grep(context.Background(), nil, req)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(got, "No ") {
			break
		}
		lines := strings.Split(got, "\n")
		out = append(out, lines...)
		if len(lines) < page {
			break
		}
	}
	return strings.Join(out, "\n")
}

// runRg runs rg in dir, so that its globs and output paths are relative
// to it.
func runRg(t *testing.T, rg, dir string, args []string) string {
	t.Helper()
	cmd := exec.Command(rg, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		t.Fatalf("rg %v: %v\n%s", args, err, stderr.String())
	}
	return string(out)
}

// parseCounts reads "path:N" lines (rg's start with "./").
func parseCounts(t *testing.T, s string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		if line == "" || strings.HasPrefix(line, "No ") {
			continue
		}
		i := strings.LastIndexByte(line, ':')
		n, err := strconv.Atoi(line[i+1:])
		if i < 0 || err != nil {
			t.Fatalf("bad count line %q", line)
		}
		p := strings.TrimPrefix(line[:i], "./")
		counts[p] = n
	}
	return counts
}

// plainText reports whether both tools read the file the same way: no NUL
// byte anywhere and no UTF-16 byte order mark.
func plainText(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	return bytes.IndexByte(data, 0) < 0 && !bytes.HasPrefix(data, []byte{0xff, 0xfe}) && !bytes.HasPrefix(data, []byte{0xfe, 0xff})
}
