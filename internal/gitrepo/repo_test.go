package gitrepo

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed for these tests (scripts/deps.sh installs it)")
	}
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func lstat(t *testing.T, p string) *unix.Stat_t {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return &st
}

// makeRepo makes a repository with text files that share most of their
// lines (so gc stores deltas), committed, some versions only in history.
func makeRepo(t *testing.T) (string, map[string][]byte) {
	needGit(t)
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	r := rand.New(rand.NewPCG(1, 2))
	var lines []string
	for i := 0; i < 400; i++ {
		lines = append(lines, fmt.Sprintf("line %d %d", i, r.IntN(1000)))
	}
	files := map[string][]byte{}
	for round := 0; round < 3; round++ {
		for i := 0; i < 20; i++ {
			lines[r.IntN(len(lines))] = fmt.Sprintf("changed %d %d", round, i)
			p := fmt.Sprintf("d%d/f%d.txt", i%3, i)
			b := []byte(strings.Join(lines, "\n") + "\n")
			writeFile(t, filepath.Join(dir, p), b)
			files[p] = b
		}
		big := make([]byte, 300<<10)
		for i := range big {
			big[i] = byte(r.IntN(256))
		}
		writeFile(t, filepath.Join(dir, "big.bin"), big)
		files["big.bin"] = big
		git(t, dir, "add", "-A")
		git(t, dir, "commit", "-qm", fmt.Sprint(round))
	}
	return dir, files
}

// TestCleanAndBlobs: every committed file is clean by the index, its blob
// reads back byte for byte from loose objects and, after gc, from a pack
// with deltas; changed, touched and racy files are not clean.
func TestCleanAndBlobs(t *testing.T) {
	dir, files := makeRepo(t)
	// Let the index be written after the files' times, so no entry is
	// racy, as a later status would.
	time.Sleep(20 * time.Millisecond)
	git(t, dir, "update-index", "--refresh", "--really-refresh")
	check := func(stage string) {
		r, err := Open(dir, "")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		idx, err := r.Index()
		if err != nil {
			t.Fatal(err)
		}
		if idx.Len() != len(files) {
			t.Fatalf("%s: %d entries, want %d", stage, idx.Len(), len(files))
		}
		for p, want := range files {
			id, ok := idx.Clean(p, lstat(t, filepath.Join(dir, p)))
			if !ok {
				t.Fatalf("%s: %s is not clean", stage, p)
			}
			if id != BlobID(want) {
				t.Fatalf("%s: %s has id %s, want %s", stage, p, id, BlobID(want))
			}
			got, err := r.Blob(id)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s: blob of %s: %v", stage, p, err)
			}
		}
		// Old versions are there too (deltas of the current ones after gc).
		for _, l := range strings.Fields(git(t, dir, "rev-list", "--objects", "--all")) {
			var id ID
			if n, _ := fmt.Sscanf(l, "%x", &id); n != 1 || len(l) != 40 {
				continue
			}
			if !r.Has(id) {
				t.Fatalf("%s: object %s not found", stage, l)
			}
			typ := strings.TrimSpace(git(t, dir, "cat-file", "-t", l))
			if typ != "blob" {
				continue
			}
			want := git(t, dir, "cat-file", "blob", l)
			got, err := r.Blob(id)
			if err != nil || string(got) != want {
				t.Fatalf("%s: blob %s: %v", stage, l, err)
			}
		}
	}
	check("loose")
	git(t, dir, "gc", "-q", "--aggressive", "--prune=now")
	if m, _ := filepath.Glob(filepath.Join(dir, ".git/objects/pack/*.pack")); len(m) == 0 {
		t.Fatal("gc made no pack")
	}
	check("packed")
	git(t, dir, "update-index", "--index-version", "4")
	check("index v4")

	r, err := Open(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// A changed file, a touched one (same content, new times: git would
	// read it, and so must the caller) and a file written as the index is.
	writeFile(t, filepath.Join(dir, "d0/f0.txt"), []byte("changed\n"))
	now := time.Now().Add(time.Second)
	os.Chtimes(filepath.Join(dir, "d1/f1.txt"), now, now)
	idx, err := r.Index()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"d0/f0.txt", "d1/f1.txt", "nope"} {
		if _, ok := idx.Clean(p, lstat(t, filepath.Join(dir, "d2/f2.txt"))); ok && p == "nope" {
			t.Fatalf("an untracked path is clean")
		}
		if p == "nope" {
			continue
		}
		if _, ok := idx.Clean(p, lstat(t, filepath.Join(dir, p))); ok {
			t.Fatalf("%s is clean after a change", p)
		}
	}
	// git add records the new stat: read again, the index says clean once
	// it was written after the file (racy otherwise).
	time.Sleep(20 * time.Millisecond)
	git(t, dir, "add", "d0/f0.txt")
	idx, _ = r.Index()
	if id, ok := idx.Clean("d0/f0.txt", lstat(t, filepath.Join(dir, "d0/f0.txt"))); !ok || id != BlobID([]byte("changed\n")) {
		t.Fatalf("after add: %v %v", id, ok)
	}
	// Racy: a file modified in the same instant the index was written is
	// not trusted.
	writeFile(t, filepath.Join(dir, "racy.txt"), []byte("r\n"))
	git(t, dir, "add", "racy.txt")
	idx, _ = r.Index()
	st := lstat(t, filepath.Join(dir, "racy.txt"))
	e := idx.Lookup("racy.txt")
	if e == nil {
		t.Fatal("racy.txt not in the index")
	}
	if e.MtimeS > idx.mtimeS || (e.MtimeS == idx.mtimeS && e.MtimeNs >= idx.mtimeN) {
		if _, ok := idx.Clean("racy.txt", st); ok {
			t.Fatal("a racily clean entry was trusted")
		}
	}
	// Intent to add: never clean.
	writeFile(t, filepath.Join(dir, "ita.txt"), []byte(""))
	git(t, dir, "add", "-N", "ita.txt")
	idx, _ = r.Index()
	if _, ok := idx.Clean("ita.txt", lstat(t, filepath.Join(dir, "ita.txt"))); ok {
		t.Fatal("an intent-to-add entry is clean")
	}
}

// TestRefusesConversions: a repository whose working files may differ
// from their blobs is refused, and so is a split index.
func TestRefusesConversions(t *testing.T) {
	dir, _ := makeRepo(t)
	if _, err := Open(dir, ""); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "config", "core.autocrlf", "input")
	if _, err := Open(dir, ""); err == nil || !strings.Contains(err.Error(), "autocrlf") {
		t.Fatalf("autocrlf: %v", err)
	}
	git(t, dir, "config", "core.autocrlf", "false")
	if _, err := Open(dir, ""); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, ".git/info/attributes"), []byte("*.txt text eol=crlf\n"))
	if _, err := Open(dir, ""); err == nil {
		t.Fatal("eol attributes accepted")
	}
	os.Remove(filepath.Join(dir, ".git/info/attributes"))
	// Home configuration, through an include.
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".gitconfig"), []byte("[include]\n\tpath = ~/more.conf\n"))
	writeFile(t, filepath.Join(home, "more.conf"), []byte("[core]\n  autocrlf = true\n"))
	if _, err := Open(dir, home); err == nil {
		t.Fatal("autocrlf in an included file accepted")
	}
	for _, c := range []struct {
		attrs string
		conv  bool
	}{
		{"*.c diff=cpp\n", false},
		{"*.bin binary\n", false},
		{"*.txt -text\n", false},
		{"* text=auto\n", true},
		{"*.lfs filter=lfs diff=lfs merge=lfs -text\n", true},
		{"# *.x text\n", false},
		{"*.y ident\n", true},
	} {
		if got := AttributesConvert([]byte(c.attrs)); got != c.conv {
			t.Errorf("%q: converts %v, want %v", c.attrs, got, c.conv)
		}
	}
	git(t, dir, "update-index", "--split-index")
	r, err := Open(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Index(); err == nil {
		t.Fatal("a split index was read")
	}
}

// TestWorktree: a linked worktree's index is its own, its objects the
// main repository's.
func TestWorktree(t *testing.T) {
	dir, files := makeRepo(t)
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, dir, "worktree", "add", "-q", wt)
	time.Sleep(20 * time.Millisecond)
	git(t, wt, "update-index", "--refresh")
	r, err := Open(wt, "")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	idx, err := r.Index()
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range files {
		id, ok := idx.Clean(p, lstat(t, filepath.Join(wt, p)))
		if !ok {
			t.Fatalf("%s not clean in the worktree", p)
		}
		if b, err := r.Blob(id); err != nil || !bytes.Equal(b, want) {
			t.Fatalf("%s: %v", p, err)
		}
	}
}

// TestBlobOutlivesGC: a blob read from a pack once stays readable after
// git made it unreachable and gc deleted that pack, through the pack's
// open descriptor.
func TestBlobOutlivesGC(t *testing.T) {
	dir, files := makeRepo(t)
	git(t, dir, "gc", "-q", "--prune=now")
	r, err := Open(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := files["d0/f0.txt"]
	id := BlobID(want)
	if !r.Has(id) {
		t.Fatal("blob not found before gc")
	}
	// A history without that version, everything else dropped.
	writeFile(t, filepath.Join(dir, "d0/f0.txt"), []byte("new\n"))
	git(t, dir, "checkout", "-q", "--orphan", "fresh")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "fresh")
	git(t, dir, "branch", "-q", "-D", "master")
	git(t, dir, "reflog", "expire", "--expire=now", "--all")
	git(t, dir, "gc", "-q", "--prune=now")
	if out := exec.Command("git", "-C", dir, "cat-file", "-e", id.String()).Run(); out == nil {
		t.Fatal("git still has the blob: the test proves nothing")
	}
	// Finding an object of the new pack reads the pack list again.
	if !r.Has(BlobID([]byte("new\n"))) {
		t.Fatal("the new version is not found")
	}
	got, err := r.Blob(id)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("after gc: %v", err)
	}
}

// FuzzParseIndex: whatever the bytes, parsing an index never panics and
// never returns entries out of order.
func FuzzParseIndex(f *testing.F) {
	if _, err := exec.LookPath("git"); err == nil {
		dir := f.TempDir()
		for _, v := range []string{"2", "3", "4"} {
			cmd := exec.Command("sh", "-c", "git init -q && echo a > a && mkdir -p d && echo b > d/b && git add -A && git update-index --index-version "+v)
			cmd.Dir = dir
			if cmd.Run() == nil {
				if b, err := os.ReadFile(filepath.Join(dir, ".git/index")); err == nil {
					f.Add(b)
				}
			}
		}
	}
	f.Add([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		// The checksum would reject almost every mutation: parse the body
		// as if it were whole (a zero checksum is not checked).
		if len(b) >= 20 {
			copy(b[len(b)-20:], make([]byte, 20))
		}
		x, err := parseIndex(b)
		if err != nil {
			return
		}
		for i := 1; i < len(x.entries); i++ {
			if x.entries[i-1].Path >= x.entries[i].Path {
				t.Fatalf("entries out of order: %q %q", x.entries[i-1].Path, x.entries[i].Path)
			}
		}
	})
}

// FuzzApplyDelta: a damaged delta is an error, never a panic or a result
// of another size than it says.
func FuzzApplyDelta(f *testing.F) {
	f.Add([]byte("hello world"), []byte{11, 5, 0x90, 5})
	f.Add([]byte("abc"), []byte{3, 4, 0x91, 1, 2, 1, 'x'})
	f.Fuzz(func(t *testing.T, base, d []byte) {
		out, err := applyDelta(base, d)
		if err != nil {
			return
		}
		_, rest, _ := deltaSize(d)
		want, _, _ := deltaSize(rest)
		if uint64(len(out)) != want {
			t.Fatalf("%d bytes, the delta says %d", len(out), want)
		}
	})
}
