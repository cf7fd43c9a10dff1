// Package testtree locates real source trees for tests and benchmarks.
package testtree

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GoSrc returns Go's own source tree ($(go env GOROOT)/src), resolved, or
// skips the test when there is none.
func GoSrc(tb testing.TB) string {
	tb.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		tb.Skip("go env GOROOT:", err)
	}
	root, err := filepath.EvalSymlinks(filepath.Join(strings.TrimSpace(string(out)), "src"))
	if err != nil {
		tb.Skip("no Go source tree:", err)
	}
	return root
}

// Tree returns $BORIS_BENCH_TREE when set, else Go's source tree.
func Tree(tb testing.TB) string {
	tb.Helper()
	if root := os.Getenv("BORIS_BENCH_TREE"); root != "" {
		r, err := filepath.EvalSymlinks(root)
		if err != nil {
			tb.Skip("BORIS_BENCH_TREE:", err)
		}
		return r
	}
	return GoSrc(tb)
}
