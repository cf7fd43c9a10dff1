package catalog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/boris-mcp/boris/internal/session"
)

// callWithin calls a tool that must answer within limit; a protocol error
// fails the test (every bad outcome is meant to be an IsError result).
func callWithin(t *testing.T, cs *mcp.ClientSession, limit time.Duration, name string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// A directory chain 10,000 levels deep (paths far past PATH_MAX) and
// symlink loops: every tool answers promptly, with results or a clear
// error, and the server keeps serving.
func TestDeepTreesAndSymlinkLoops(t *testing.T) {
	root := t.TempDir()
	st := setup{workdir: root}

	// 10,000 nested "d" directories, built relative to an open handle as
	// no absolute path could name the bottom. A file at the bottom.
	fd, err := unix.Open(root, unix.O_DIRECTORY|unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for range 10000 {
		if err := unix.Mkdirat(fd, "d", 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, "d", unix.O_DIRECTORY|unix.O_RDONLY, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	bottom, err := unix.Openat(fd, "bottom.txt", unix.O_CREAT|unix.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	unix.Write(bottom, []byte("needle at the bottom\n"))
	unix.Close(bottom)
	unix.Close(fd)

	// Loops: a directory symlink to its parent, two symlinks to each
	// other, a symlink to itself.
	os.Mkdir(filepath.Join(root, "ring"), 0o755)
	os.WriteFile(filepath.Join(root, "ring", "needle.txt"), []byte("needle in the ring\n"), 0o644)
	os.Symlink("..", filepath.Join(root, "ring", "up"))
	os.Symlink("b", filepath.Join(root, "a"))
	os.Symlink("a", filepath.Join(root, "b"))
	os.Symlink("self", filepath.Join(root, "self"))

	cs := connect(t, st, session.New("s", session.Options{Workdir: root}))
	const limit = 60 * time.Second

	// grep reaches the ring once (the cycle is cut) and answers about the
	// deep chain without hanging; the bottom is past what paths can name.
	out, isErr := callWithin(t, cs, limit, "grep", map[string]any{"pattern": "needle", "output_mode": "content"})
	if isErr || !strings.Contains(out, "ring/needle.txt:1:needle in the ring") || strings.Count(out, "needle in the ring") != 1 {
		t.Fatalf("grep: IsError=%v %.500q", isErr, out)
	}
	out, isErr = callWithin(t, cs, limit, "find", map[string]any{"pattern": "**/*.txt"})
	if isErr || !strings.Contains(out, "ring/needle.txt") {
		t.Fatalf("find: IsError=%v %.500q", isErr, out)
	}
	// A path longer than the system allows, and the loops: clear errors.
	deep := strings.Repeat("d/", 3000) + "bottom.txt"
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"view", map[string]any{"path": deep}},
		{"create_file", map[string]any{"path": deep, "content": "x"}},
		{"view", map[string]any{"path": "a"}},
		{"view", map[string]any{"path": "self"}},
		{"create_file", map[string]any{"path": "a/x.txt", "content": "x"}},
		{"grep", map[string]any{"pattern": "x", "path": "self"}},
		{"find", map[string]any{"pattern": "*", "path": "a"}},
	} {
		out, isErr := callWithin(t, cs, limit, c.tool, c.args)
		if !isErr || !strings.HasPrefix(out, "[") {
			t.Fatalf("%s %.40v: IsError=%v %.300q", c.tool, c.args, isErr, out)
		}
		t.Logf("%s: %.200s", c.tool, out)
	}
	// The ring's parent link leads back inside: viewing through it works.
	if out, isErr := callWithin(t, cs, limit, "view", map[string]any{"path": "ring/up/ring/needle.txt"}); isErr || !strings.Contains(out, "needle in the ring") {
		t.Fatalf("view through ring/up: %q", out)
	}
}

// The working directory (and the workdir) deleted under a session: the
// reading, editing and search tools give clear errors for relative paths,
// absolute paths elsewhere still work, and create_file makes the missing
// directories again as it does for any missing parent.
func TestWorkdirDeleted(t *testing.T) {
	parent := t.TempDir()
	work := filepath.Join(parent, "work")
	os.Mkdir(work, 0o755)
	os.WriteFile(filepath.Join(work, "a.txt"), []byte("alpha\n"), 0o644)
	os.WriteFile(filepath.Join(parent, "other.txt"), []byte("other\n"), 0o644)
	cs := connect(t, setup{workdir: work}, session.New("s", session.Options{Workdir: work}))
	if _, isErr := callWithin(t, cs, 10*time.Second, "view", map[string]any{"path": "a.txt"}); isErr {
		t.Fatal("view before deletion failed")
	}
	if err := os.RemoveAll(work); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"view", map[string]any{"path": "a.txt"}},
		{"view", map[string]any{"path": "."}},
		{"str_replace", map[string]any{"path": "a.txt", "old_str": "alpha", "new_str": "beta"}},
		{"grep", map[string]any{"pattern": "alpha"}},
	} {
		out, isErr := callWithin(t, cs, 10*time.Second, c.tool, c.args)
		if !isErr || !strings.HasPrefix(out, "[") {
			t.Fatalf("%s with the workdir gone: IsError=%v %q", c.tool, isErr, out)
		}
		t.Logf("%s: %s", c.tool, out)
	}
	// find answers a missing search path with no files.
	if out, isErr := callWithin(t, cs, 10*time.Second, "find", map[string]any{"pattern": "*"}); isErr || out != "No files found" {
		t.Fatalf("find with the workdir gone: %q", out)
	}
	if _, err := os.Stat(work); !os.IsNotExist(err) {
		t.Fatal("a tool recreated the deleted workdir")
	}
	if out, isErr := callWithin(t, cs, 10*time.Second, "view", map[string]any{"path": filepath.Join(parent, "other.txt")}); isErr || !strings.Contains(out, "other") {
		t.Fatalf("absolute path elsewhere: %q", out)
	}
	if out, isErr := callWithin(t, cs, 10*time.Second, "create_file", map[string]any{"path": "new.txt", "content": "x"}); isErr {
		t.Fatalf("create_file with the workdir gone: %q", out)
	}
	if out, isErr := callWithin(t, cs, 10*time.Second, "find", map[string]any{"pattern": "*"}); isErr || out != "new.txt" {
		t.Fatalf("find after create_file: %q", out)
	}
}
