package scope

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// tree makes a temp dir (symlink-free path) with the given layout:
// "d/" is a directory, "f" a file, "l -> target" a symlink.
func tree(t testing.TB, entries ...string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch {
		case strings.Contains(e, " -> "):
			name, target, _ := strings.Cut(e, " -> ")
			if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
				t.Fatal(err)
			}
		case strings.HasSuffix(e, "/"):
			if err := os.MkdirAll(filepath.Join(root, e), 0o755); err != nil {
				t.Fatal(err)
			}
		default:
			if err := os.WriteFile(filepath.Join(root, e), []byte("content of "+e), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

func TestResolve(t *testing.T) {
	root := tree(t, "a/", "a/b/", "a/f", "abs -> /tmp", "rel -> a/b", "up -> ..", "loop1 -> loop2", "loop2 -> loop1", "dangling -> nowhere/x")
	tests := []struct {
		path       string
		want       string
		wantExists bool
		wantErr    error
	}{
		{"a/f", "a/f", true, nil},
		{"a/b/../f", "a/f", true, nil},
		{"rel", "a/b", true, nil},
		{"rel/../f", "a/f", true, nil}, // .. applies after the link, as the kernel does
		{"rel/new/file", "a/b/new/file", false, nil},
		{"missing/x/../y", "missing/y", false, nil},
		{"a/f/under-a-file", "a/f/under-a-file", false, nil},
		{"loop1", "", false, ErrSymlinkLoop},
		{"dangling", "nowhere/x", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, exists, err := Resolve(root + "/" + tt.path) // raw, not cleaned
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if want := filepath.Join(root, tt.want); got != want || exists != tt.wantExists {
				t.Fatalf("got %q exists=%v, want %q exists=%v", got, exists, want, tt.wantExists)
			}
		})
	}
	if got, _, _ := Resolve(filepath.Join(root, "abs")); got != mustEval(t, "/tmp") {
		t.Fatalf("absolute link resolved to %q", got)
	}
	if got, _, _ := Resolve(filepath.Join(root, "up")); got != filepath.Dir(root) {
		t.Fatalf("link to .. resolved to %q", got)
	}
}

func mustEval(t testing.TB, p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// FuzzResolve checks Resolve against filepath.EvalSymlinks on a tree with
// links, for every path that exists.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"a/f", "rel/../f", "up/x", "../..", "a//b/./../b", "rel/../../up"} {
		f.Add(s)
	}
	root := tree(f, "a/", "a/b/", "a/f", "rel -> a/b", "up -> ..", "deep -> a/b/../../rel", "self -> .")
	f.Fuzz(func(t *testing.T, p string) {
		if strings.IndexByte(p, 0) >= 0 || len(p) > 300 {
			return
		}
		full := filepath.Join(root, p)
		got, exists, err := Resolve(full)
		want, werr := filepath.EvalSymlinks(full)
		if werr == nil {
			if err != nil || !exists || got != want {
				t.Fatalf("Resolve(%q) = %q, %v, %v; EvalSymlinks = %q", full, got, exists, err, want)
			}
		} else if err == nil && exists {
			t.Fatalf("Resolve(%q) says %q exists; EvalSymlinks: %v", full, got, werr)
		}
	})
}

func TestPolicy(t *testing.T) {
	root := tree(t, "allowed/", "allowed/src/", "allowed/src/main.go", "allowed/.env", "allowed/secrets/", "allowed/secrets/key",
		"allowed/keys/", "allowed/keys/id.pem", "outside/", "outside/secret",
		"allowed/escape -> ../outside/secret", "allowed/dotenv-link -> .env", "allowed/env-alias -> src/main.go", "allowed/.env.local -> src/main.go")
	allowed := filepath.Join(root, "allowed")
	p, err := New([]string{allowed}, []string{"**/.env*", "secrets/", "*.pem"}, allowed)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path   string
		denied bool
	}{
		{"src/main.go", false},
		{"src/new-file.go", false},
		{".env", true},
		{"secrets/key", true},
		{"secrets", true},
		{"keys/id.pem", true},
		{"escape", true},            // resolves outside
		{"dotenv-link", true},       // resolves to a denied file
		{".env.local", true},        // denied name, although it points at an allowed file
		{"env-alias", false},        // allowed name to an allowed file
		{"../outside/secret", true}, // .. out of the allowed dir
		{"src/../../outside/secret", true},
		{"/etc/passwd", true},
		{".ENV", true},        // case variants: one file on case-insensitive file systems
		{"SECRETS/key", true}, // a trailing slash in the rule changes nothing
		{"keys/ID.PEM", true},
		{"secrets-not", false}, // a sibling with the same prefix is not under the rule
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			_, err := p.Locate(allowed, tt.path)
			if got := IsDenied(err); got != tt.denied {
				t.Fatalf("denied=%v (err %v), want %v", got, err, tt.denied)
			}
		})
	}
	// No allow dirs: everything but the deny rules.
	open, _ := New(nil, []string{"/etc/shadow"}, "/")
	if _, err := open.Locate("/", "/etc/hostname"); IsDenied(err) {
		t.Fatal("unrestricted policy denied /etc/hostname")
	}
	if _, err := open.Locate("/", "/etc/shadow"); !IsDenied(err) {
		t.Fatal("deny rule ignored")
	}
}

func TestOpenAndWriteAtomic(t *testing.T) {
	root := tree(t, "w/", "w/file", "w/sub/", "out/", "out/secret")
	w := filepath.Join(root, "w")
	p, _ := New([]string{w}, nil, w)

	tgt, err := p.Locate(w, "file")
	if err != nil {
		t.Fatal(err)
	}
	f, real, err := p.Open(tgt)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "content of w/file" || real != filepath.Join(w, "file") {
		t.Fatalf("read %q from %q", b, real)
	}

	if err := os.Chmod(filepath.Join(w, "file"), 0o751); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteAtomic(tgt, []byte("new"), WriteOptions{NewFileMode: 0o644}); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(filepath.Join(w, "file"))
	if got, _ := os.ReadFile(filepath.Join(w, "file")); string(got) != "new" || fi.Mode().Perm() != 0o751 {
		t.Fatalf("content %q mode %v", got, fi.Mode().Perm())
	}

	nt, _ := p.Locate(w, "a/b/c.txt")
	if err := p.WriteAtomic(nt, []byte("x"), WriteOptions{NewFileMode: 0o644, MkdirParents: true}); err != nil {
		t.Fatal(err)
	}
	fi, err = os.Stat(filepath.Join(w, "a/b/c.txt"))
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("new file: %v %v", fi, err)
	}
	entries, _ := os.ReadDir(w)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".boris-") {
			t.Fatalf("temp file left behind: %s", e.Name())
		}
	}

	// A directory target is refused and left alone.
	dt, _ := p.Locate(w, "sub")
	if err := p.WriteAtomic(dt, []byte("x"), WriteOptions{}); err == nil {
		t.Fatal("wrote over a directory")
	}
	if _, _, err := p.Open(Target{Path: "/nope", Resolved: filepath.Join(w, "nope")}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

// The decision and the use are one operation: a directory swapped for a
// symlink to the outside exactly between them leads nowhere.
func TestSwapBetweenCheckAndUse(t *testing.T) {
	root := tree(t, "w/", "w/d/", "w/d/f", "out/", "out/f")
	w := filepath.Join(root, "w")
	if err := os.WriteFile(filepath.Join(root, "out/f"), []byte("OUTSIDE"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, _ := New([]string{w}, nil, w)
	swap := func(string) {
		if err := os.Rename(filepath.Join(w, "d"), filepath.Join(w, "parked")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(root, "out"), filepath.Join(w, "d")); err != nil {
			t.Fatal(err)
		}
	}
	unswap := func() {
		os.Remove(filepath.Join(w, "d"))
		if err := os.Rename(filepath.Join(w, "parked"), filepath.Join(w, "d")); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { testHookResolved = nil })

	tgt, err := p.Locate(w, "d/f")
	if err != nil {
		t.Fatal(err)
	}
	testHookResolved = swap
	f, _, err := p.Open(tgt)
	testHookResolved = nil
	unswap()
	if err == nil {
		b, _ := io.ReadAll(f)
		f.Close()
		t.Fatalf("open through a swapped-in symlink succeeded and read %q", b)
	}

	testHookResolved = swap
	err = p.WriteAtomic(tgt, []byte("written"), WriteOptions{NewFileMode: 0o644})
	testHookResolved = nil
	unswap()
	if got, _ := os.ReadFile(filepath.Join(root, "out/f")); string(got) != "OUTSIDE" || err == nil {
		t.Fatalf("write through a swapped-in symlink: err %v, outside file now %q", err, got)
	}
	entries, _ := os.ReadDir(filepath.Join(root, "out"))
	if len(entries) != 1 {
		t.Fatalf("files appeared outside: %v", entries)
	}

	testHookResolved = swap
	err = p.Remove(tgt)
	testHookResolved = nil
	unswap()
	if _, serr := os.Stat(filepath.Join(root, "out/f")); serr != nil || err == nil {
		t.Fatalf("remove through a swapped-in symlink: err %v, outside file: %v", err, serr)
	}
}

// TestRemove: a file or a symlink is removed (the link, not its target); a
// directory, a denied path and a missing one are refused.
func TestRemove(t *testing.T) {
	root := tree(t, "w/", "w/file", "w/sub/", "w/.env", "out/")
	w := filepath.Join(root, "w")
	if err := os.Symlink("file", filepath.Join(w, "link")); err != nil {
		t.Fatal(err)
	}
	p, _ := New([]string{w}, []string{"**/.env"}, w)
	at := func(name string) Target {
		return Target{Path: filepath.Join(w, name), Resolved: filepath.Join(w, name), Exists: true}
	}
	if err := p.Remove(at("link")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(w, "link")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("link still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(w, "file")); err != nil {
		t.Fatalf("the link's target went too: %v", err)
	}
	if err := p.Remove(at("file")); err != nil {
		t.Fatal(err)
	}
	if err := p.Remove(at("sub")); !errors.Is(err, syscall.EISDIR) {
		t.Fatalf("directory: %v", err)
	}
	if err := p.Remove(at(".env")); !IsDenied(err) {
		t.Fatalf("denied: %v", err)
	}
	if err := p.Remove(at("gone")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
	if err := p.Remove(Target{Path: filepath.Join(root, "out/x"), Resolved: filepath.Join(root, "out/x")}); !IsDenied(err) {
		t.Fatalf("outside: %v", err)
	}
}

func TestMayWrite(t *testing.T) {
	user := identity{uid: 1000, gid: 1000, groups: []int{27}}
	tests := []struct {
		mode     fs.FileMode
		uid, gid int
		id       identity
		want     bool
	}{
		{0o644, 1000, 1000, user, true},
		{0o444, 1000, 1000, user, false},
		{0o464, 0, 27, user, true},                  // group write through a supplementary group
		{0o446, 0, 0, user, true},                   // others may write
		{0o644, 0, 0, user, false},                  // someone else's file
		{0o444, 1000, 1000, identity{uid: 0}, true}, // root
	}
	for _, tt := range tests {
		if got := mayWrite(tt.mode, tt.uid, tt.gid, tt.id); got != tt.want {
			t.Errorf("mayWrite(%v, %d, %d, %+v) = %v", tt.mode, tt.uid, tt.gid, tt.id, got)
		}
	}
}

// A write that fails half-way (a full disk) leaves the original intact and
// no temporary file behind.
func TestWriteFailureLeavesOriginal(t *testing.T) {
	root := tree(t, "w/", "w/file")
	w := filepath.Join(root, "w")
	p, _ := New([]string{w}, nil, w)
	tgt, _ := p.Locate(w, "file")
	testHookWrite = func(f *os.File, data []byte) (int, error) {
		n, _ := f.Write(data[:len(data)/2])
		return n, syscall.ENOSPC
	}
	defer func() { testHookWrite = nil }()
	err := p.WriteAtomic(tgt, []byte(strings.Repeat("new content ", 1000)), WriteOptions{NewFileMode: 0o644})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(w, "file")); string(got) != "content of w/file" {
		t.Fatalf("original changed: %q", got)
	}
	entries, _ := os.ReadDir(w)
	if len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
}

func TestDenyPaths(t *testing.T) {
	root := tree(t, "a/b/", "c/d/", "a/.env", "a/b/.env", "a/b/keep", "c/x.pem", "c/d/y.pem", "e/", "link -> a", "secret/")
	p, err := New(nil, []string{root + "/secret", root + "/missing", root + "/**/.env", root + "/c/*.pem", root + "/link"}, root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.DenyPaths(DefaultDenyWalkLimit)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{root + "/a", root + "/a/.env", root + "/a/b/.env", root + "/c/x.pem", root + "/link", root + "/missing", root + "/secret"}
	if !slices.Equal(got, want) {
		t.Fatalf("DenyPaths:\n got %q\nwant %q", got, want)
	}
	if _, err := p.DenyPaths(3); err == nil || !strings.Contains(err.Error(), "anchor the pattern") {
		t.Fatalf("walk limit: %v", err)
	}
}
