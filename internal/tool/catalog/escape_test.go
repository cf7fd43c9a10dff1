package catalog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/boris-mcp/boris/internal/files"
	"github.com/boris-mcp/boris/internal/session"
)

// Every file tool, called thousands of times while a directory inside the
// allowed one flips to a symlink pointing outside (and back), with fixed
// ".." chains and symlinked parents mixed in: nothing from outside is ever
// shown and nothing outside is ever written.
func TestScopeEscapeAttempts(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	allowed, outside := filepath.Join(base, "allowed"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(allowed, "d"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const marker = "OUTSIDE-MARKER"
	os.WriteFile(filepath.Join(allowed, "d", "secret.txt"), []byte("inside\n"), 0o644)
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte(marker+"\n"), 0o644)
	os.WriteFile(filepath.Join(outside, "only-outside-"+marker+".txt"), []byte(marker+"\n"), 0o644)
	os.Symlink(outside, filepath.Join(allowed, "d.swap"))
	os.Symlink(outside, filepath.Join(allowed, "parent-link"))

	sess := session.New("s", session.Options{Workdir: allowed})
	cs := connect(t, setup{workdir: allowed, allow: []string{allowed}, timeout: time.Second}, sess)

	var stop atomic.Bool
	var flips atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		d, swap := filepath.Join(allowed, "d"), filepath.Join(allowed, "d.swap")
		for !stop.Load() {
			if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, swap, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("exchange: %v", err)
				return
			}
			flips.Add(1)
			for end := time.Now().Add(10 * time.Microsecond); time.Now().Before(end); {
			}
		}
	})

	calls := []struct {
		tool string
		args func(i int) map[string]any
	}{
		{"view", func(int) map[string]any { return map[string]any{"path": "d/secret.txt"} }},
		{"view", func(int) map[string]any { return map[string]any{"path": "d"} }},
		{"grep", func(int) map[string]any {
			return map[string]any{"pattern": "MARKER", "path": "d", "output_mode": "content"}
		}},
		{"grep", func(int) map[string]any { return map[string]any{"pattern": "MARKER"} }},
		{"find", func(int) map[string]any { return map[string]any{"pattern": "*", "path": "d"} }},
		{"str_replace", func(int) map[string]any {
			return map[string]any{"path": "d/secret.txt", "old_str": "inside", "new_str": "inside"}
		}},
		{"create_file", func(i int) map[string]any {
			return map[string]any{"path": fmt.Sprintf("d/new-%d.txt", i), "content": "x"}
		}},
		{"create_file", func(int) map[string]any { return map[string]any{"path": "d/secret.txt", "content": "inside\n"} }},
		{"view", func(int) map[string]any { return map[string]any{"path": "../outside/secret.txt"} }},
		{"view", func(int) map[string]any {
			return map[string]any{"path": "d/../../../" + filepath.Base(base) + "/outside/secret.txt"}
		}},
		{"view", func(int) map[string]any { return map[string]any{"path": "parent-link/secret.txt"} }},
		{"grep", func(int) map[string]any { return map[string]any{"pattern": "MARKER", "path": "parent-link"} }},
		{"find", func(int) map[string]any { return map[string]any{"pattern": "*", "path": "parent-link"} }},
		{"create_file", func(int) map[string]any { return map[string]any{"path": "parent-link/planted.txt", "content": "x"} }},
	}
	secret := filepath.Join(allowed, "d", "secret.txt")
	fi, err := os.Stat(secret)
	if err != nil {
		t.Fatal(err)
	}
	sess.MarkViewed(secret, files.StampOf(fi))
	leaks := 0
	const rounds = 300
	for i := range rounds {
		for _, c := range calls {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args(i)})
			if err != nil {
				t.Fatalf("%s: %v", c.tool, err)
			}
			if text := resultText(res); strings.Contains(text, marker) {
				leaks++
				t.Errorf("%s %v leaked: %.200q", c.tool, c.args(i), text)
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d calls during %d swaps", rounds*len(calls), flips.Load())
	if flips.Load() < 1000 {
		t.Fatalf("only %d swaps: the race was not exercised", flips.Load())
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 2 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("files were written outside: %v", names)
	}
	if got, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(got) != marker+"\n" {
		t.Fatalf("outside file changed: %q", got)
	}
	if leaks > 0 {
		t.Fatalf("%d leaks", leaks)
	}
}
