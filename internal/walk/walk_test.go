package walk

import (
	"context"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/boris-mcp/boris/internal/gittest"
	"github.com/boris-mcp/boris/internal/scope"
)

// collect walks root and returns the relative paths seen, sorted;
// directories get a trailing slash, symlinks a trailing "@".
func collect(t *testing.T, opts Options) []string {
	t.Helper()
	var mu sync.Mutex
	var out []string
	err := Walk(context.Background(), opts, func() func(*Entry) {
		return func(e *Entry) {
			p := e.Rel()
			if e.Kind == KindDir {
				p += "/"
			}
			if e.Symlink {
				p += "@"
			}
			mu.Lock()
			out = append(out, p)
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, p)
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// realTemp returns a symlink-free temporary directory.
func realTemp(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestSkips(t *testing.T) {
	root := realTemp(t)
	write(t, root, map[string]string{
		"a.go":                   "",
		".hidden":                "",
		".config/x":              "",
		".git/HEAD":              "",
		"sub/.git":               "gitdir: elsewhere",
		"node_modules/m/i.js":    "",
		"sub/node_modules/i.js":  "",
		"sub/b.go":               "",
		"empty/":                 "",
		"deep/er/still/file.txt": "",
	})
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := collect(t, Options{Root: root, Dirs: true})
	want := []string{".config/", ".config/x", ".hidden", "a.go", "deep/", "deep/er/", "deep/er/still/", "deep/er/still/file.txt", "empty/", "sub/", "sub/b.go"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestAgainstGit(t *testing.T) {
	gittest.Require(t)
	r := rand.New(rand.NewSource(99))
	n := 60
	if testing.Short() {
		n = 10
	}
	for i := range n {
		root := realTemp(t)
		gittest.Run(t, root, nil, "init", "-q")
		gittest.RandomTree(t, r, root)
		want := gittest.Untracked(t, root)
		got := collect(t, Options{Root: root, Workers: 1 + i%4, InlineFiles: i%2 == 0})
		if !slices.Equal(got, want) {
			t.Fatalf("iteration %d: walk disagrees with git\n%s\nonly ours: %q\nonly git: %q", i, gittest.Dump(root), gittest.Minus(got, want), gittest.Minus(want, got))
		}
	}
}

func TestAncestorIgnores(t *testing.T) {
	repo := realTemp(t)
	write(t, repo, map[string]string{
		".git/HEAD":            "",
		".gitignore":           "*.log\n/proj/gen/\nproj/sub/anchored\n",
		"proj/.gitignore":      "!keep.log\n",
		"proj/a.log":           "",
		"proj/keep.log":        "",
		"proj/gen/x.go":        "",
		"proj/sub/anchored":    "",
		"proj/sub/other":       "",
		"proj/nested/.git":     "gitdir: x",
		"proj/nested/b.log":    "",
		"proj/nested/c.go":     "",
		"proj/src/main.go":     "",
		"proj/src/.gitignore":  "*.go\n",
		"proj/src/README":      "",
		"proj/src/deep/x.go":   "",
		"proj/src/deep/y.text": "",
	})
	got := collect(t, Options{Root: filepath.Join(repo, "proj")})
	want := []string{".gitignore", "keep.log", "nested/b.log", "nested/c.go", "src/.gitignore", "src/README", "src/deep/y.text", "sub/other"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	// The same tree outside a repository: the .gitignore above the root
	// is not a rule for it.
	if err := os.RemoveAll(filepath.Join(repo, ".git")); err != nil {
		t.Fatal(err)
	}
	got = collect(t, Options{Root: filepath.Join(repo, "proj")})
	if !slices.Contains(got, "a.log") || !slices.Contains(got, "gen/x.go") {
		t.Errorf("outside a repository the parent .gitignore applied: %q", got)
	}
}

func TestSymlinks(t *testing.T) {
	root := realTemp(t)
	write(t, root, map[string]string{"d/f.txt": "", "file.txt": ""})
	symlink(t, "d", filepath.Join(root, "dirlink"))
	symlink(t, "file.txt", filepath.Join(root, "filelink"))
	symlink(t, "missing", filepath.Join(root, "broken"))
	symlink(t, "..", filepath.Join(root, "d", "up")) // a cycle
	symlink(t, "loop", filepath.Join(root, "loop"))

	// grep: symlinked directories are followed, cycles cut.
	got := collect(t, Options{Root: root, FollowSymlinks: true})
	want := []string{"d/f.txt", "dirlink/f.txt", "file.txt", "filelink@"}
	if !slices.Equal(got, want) {
		t.Errorf("follow: got %q\nwant %q", got, want)
	}
	// find: listed, not descended.
	got = collect(t, Options{Root: root, Dirs: true})
	want = []string{"d/", "d/f.txt", "d/up/@", "dirlink/@", "file.txt", "filelink@"}
	if !slices.Equal(got, want) {
		t.Errorf("no follow: got %q\nwant %q", got, want)
	}
}

func TestScope(t *testing.T) {
	base := realTemp(t)
	allowed := filepath.Join(base, "allowed")
	outside := filepath.Join(base, "outside")
	write(t, base, map[string]string{
		"allowed/ok.txt":          "",
		"allowed/x.secret":        "",
		"allowed/private/p.txt":   "",
		"allowed/sub/inner/k.txt": "",
		"outside/leak.txt":        "",
		"outside/dir/leak2.txt":   "",
	})
	symlink(t, outside, filepath.Join(allowed, "outlink"))
	symlink(t, filepath.Join(outside, "leak.txt"), filepath.Join(allowed, "leaklink"))
	symlink(t, "sub", filepath.Join(allowed, "sublink"))
	symlink(t, "private", filepath.Join(allowed, "privlink"))
	policy, err := scope.New([]string{allowed}, []string{"**/*.secret", filepath.Join(allowed, "private")}, allowed)
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, Options{Root: allowed, Policy: policy, FollowSymlinks: true})
	want := []string{"ok.txt", "sub/inner/k.txt", "sublink/inner/k.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	got = collect(t, Options{Root: allowed, Policy: policy, Dirs: true})
	want = []string{"ok.txt", "sub/", "sub/inner/", "sub/inner/k.txt", "sublink/@"}
	if !slices.Equal(got, want) {
		t.Errorf("find: got %q\nwant %q", got, want)
	}
}

func TestOpenAndModTime(t *testing.T) {
	root := realTemp(t)
	write(t, root, map[string]string{"a.txt": "hello"})
	symlink(t, "a.txt", filepath.Join(root, "l.txt"))
	policy, _ := scope.New([]string{root}, nil, root)
	for _, p := range []*scope.Policy{nil, policy} {
		var mu sync.Mutex
		got := map[string]string{}
		err := Walk(context.Background(), Options{Root: root, Policy: p}, func() func(*Entry) {
			return func(e *Entry) {
				f, err := e.Open()
				if err != nil {
					t.Error(err)
					return
				}
				defer f.Close()
				data, _ := io.ReadAll(&f)
				m1, err1 := e.ModTime()
				m2, err2 := f.ModTime()
				if err1 != nil || err2 != nil || m1 != m2 || m1 == 0 {
					t.Errorf("%s: mtimes %d %d (%v %v)", e.Name, m1, m2, err1, err2)
				}
				mu.Lock()
				got[e.Rel()] = string(data)
				mu.Unlock()
			}
		})
		if err != nil || got["a.txt"] != "hello" || got["l.txt"] != "hello" || len(got) != 2 {
			t.Errorf("policy %v: err=%v got %q", p != nil, err, got)
		}
	}
}

func TestCancel(t *testing.T) {
	root := realTemp(t)
	for i := range 50 {
		write(t, root, map[string]string{filepath.Join("d", string(rune('a'+i%26)), strings.Repeat("x", 1+i)): ""})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n := 0
	err := Walk(ctx, Options{Root: root}, func() func(*Entry) { return func(*Entry) { n++ } })
	if err != context.Canceled {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if n > 0 {
		t.Errorf("visited %d entries after cancellation", n)
	}
}

func TestRootErrors(t *testing.T) {
	root := realTemp(t)
	if err := Walk(context.Background(), Options{Root: filepath.Join(root, "missing")}, nil); err == nil {
		t.Error("missing root: no error")
	}
	write(t, root, map[string]string{"f": ""})
	if err := Walk(context.Background(), Options{Root: filepath.Join(root, "f")}, nil); err == nil {
		t.Error("file root: no error")
	}
}

func TestCancelStopsReads(t *testing.T) {
	root := realTemp(t)
	write(t, root, map[string]string{"big": strings.Repeat("x", 1<<20)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var readErr error
	err := Walk(ctx, Options{Root: root, Workers: 1}, func() func(*Entry) {
		return func(e *Entry) {
			f, err := e.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			buf := make([]byte, 1024)
			if _, err := f.Read(buf); err != nil {
				t.Fatal(err)
			}
			cancel()
			for !e.Canceled() {
				runtime.Gosched() // the flag is set by context.AfterFunc's goroutine
			}
			_, readErr = f.Read(buf)
		}
	})
	if err != context.Canceled || readErr != ErrCanceled {
		t.Errorf("walk err = %v, read err = %v", err, readErr)
	}
}

func TestCycleThroughSeveralLinks(t *testing.T) {
	root := realTemp(t)
	write(t, root, map[string]string{"a/x.txt": "", "b/y.txt": ""})
	symlink(t, "../b", filepath.Join(root, "a", "tob"))
	symlink(t, "../a", filepath.Join(root, "b", "toa"))
	got := collect(t, Options{Root: root, FollowSymlinks: true})
	// a/tob is b; its link back to a (an ancestor) is not followed.
	want := []string{"a/tob/y.txt", "a/x.txt", "b/toa/x.txt", "b/y.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
