package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/boris-mcp/boris/internal/scope"
)

func TestScopeDenied(t *testing.T) {
	base := tree(t,
		"work/ok.go", "secret-word\n",
		"work/.env", "secret-word\n",
		"work/keys/id.pem", "secret-word\n",
		"work/sub/config.pem", "secret-word\n",
		"outside/leak.go", "secret-word\n",
	)
	work := filepath.Join(base, "work")
	if err := os.Symlink(filepath.Join(base, "outside"), filepath.Join(work, "outdir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "outside/leak.go"), filepath.Join(work, "leak.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".env", filepath.Join(work, "env-alias")); err != nil {
		t.Fatal(err)
	}
	policy, err := scope.New([]string{work}, []string{"**/.env", "keys", "*.pem"}, work)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"", "count", "content"} {
		got, err := Grep(context.Background(), policy, GrepRequest{Pattern: "secret", Root: work, OutputMode: mode, LineNumbers: true, Before: -1, After: -1})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Count(got, "ok.go") != 1 || strings.Contains(got, "env") || strings.Contains(got, "pem") || strings.Contains(got, "leak") || strings.Contains(got, "outdir") {
			t.Errorf("mode %q: %q", mode, got)
		}
	}
	got, err := Find(context.Background(), policy, FindRequest{Pattern: "*", Root: work})
	if err != nil || got != "ok.go" {
		t.Errorf("find: %q %v", got, err)
	}
	got, err = Find(context.Background(), policy, FindRequest{Pattern: "*", Root: work, Type: "directory"})
	if err != nil || got != "sub" {
		t.Errorf("find dirs: %q %v", got, err)
	}
	// A denied root is refused outright.
	if _, err := Grep(context.Background(), policy, GrepRequest{Pattern: "x", Root: filepath.Join(base, "outside")}); err == nil {
		t.Error("grep outside the allowed directory succeeded")
	}
}

func TestSymlinkCycles(t *testing.T) {
	root := tree(t, "a/b/file.txt", "needle\n")
	for _, l := range [][2]string{{"../..", "a/b/up"}, {"..", "a/self"}, {".", "a/b/here"}} {
		if err := os.Symlink(l[0], filepath.Join(root, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	got := grep(t, nil, GrepRequest{Pattern: "needle", Root: root, OutputMode: "count"})
	if got != "a/b/file.txt:1" {
		t.Errorf("got %q", got)
	}
}

// TestSwapRace replaces a directory with a symlink to a secret outside the
// allowed directory, back and forth, while grep runs. Whatever the timing,
// the secret must never appear.
func TestSwapRace(t *testing.T) {
	const dirs = 4
	files := []string{"allowed/other.txt", "public needle\n", "secret/f.txt", "SECRET needle\n"}
	for i := range dirs {
		files = append(files, fmt.Sprintf("allowed/d%d/f.txt", i), "public needle\n")
	}
	base := tree(t, files...)
	allowed := filepath.Join(base, "allowed")
	policy, err := scope.New([]string{allowed}, nil, allowed)
	if err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for n := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := filepath.Join(allowed, fmt.Sprintf("d%d", n))
			aside := filepath.Join(base, fmt.Sprintf("d%d.aside", n))
			tmpLink := filepath.Join(base, fmt.Sprintf("link%d", n))
			for i := 0; !stop.Load(); i++ {
				// d is a directory, then (briefly) a symlink to the
				// secret, then the directory again.
				_ = os.Symlink(filepath.Join(base, "secret"), tmpLink)
				_ = os.Rename(d, aside)
				_ = os.Rename(tmpLink, d)
				spin(i % 7)
				_ = os.Remove(d)
				_ = os.Rename(aside, d)
				spin(i % 5)
			}
		}()
	}
	defer func() {
		stop.Store(true)
		wg.Wait()
	}()
	iterations := 400
	if testing.Short() {
		iterations = 50
	}
	for range iterations {
		for _, mode := range []string{"", "content"} {
			got, err := Grep(context.Background(), policy, GrepRequest{Pattern: "needle", Root: allowed, OutputMode: mode, LineNumbers: true, Before: -1, After: -1})
			if err == nil && strings.Contains(got, "SECRET") {
				t.Fatalf("secret leaked: %q", got)
			}
		}
	}
}

// spin burns a little time without sleeping, to vary the race window.
func spin(n int) {
	for range n * 1000 {
		_ = os.Getpid()
	}
}
