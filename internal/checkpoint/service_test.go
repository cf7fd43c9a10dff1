package checkpoint

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/boris-mcp/boris/internal/codes"
)

type testCaller struct {
	id, key, first string
}

func (c *testCaller) ID() string                   { return c.id }
func (c *testCaller) CheckpointKey() string        { return c.key }
func (c *testCaller) FirstCheckpoint() string      { return c.first }
func (c *testCaller) SetFirstCheckpoint(id string) { c.first = id }

// fsState is a tree as a test sees it: path → "f:<mode>:<content>",
// "l:<target>" or "d:<mode>".
func fsState(t *testing.T, root string, skip func(rel string) bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if skip != nil && skip(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			tg, _ := os.Readlink(p)
			out[rel] = "l:" + tg
		case fi.IsDir():
			out[rel] = fmt.Sprintf("d:%o", fi.Mode().Perm())
		default:
			b, _ := os.ReadFile(p)
			out[rel] = fmt.Sprintf("f:%o:%s", fi.Mode().Perm(), b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffStates(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			out = append(out, "-"+k)
		} else if v != w {
			out = append(out, "~"+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, "+"+k)
		}
	}
	sort.Strings(out)
	return out
}

func openTest(t *testing.T, root string, maxBytes int64) *Service {
	t.Helper()
	sv, err := Open(Options{Dir: filepath.Join(t.TempDir(), "store"), Roots: []string{root}, MaxBytes: maxBytes, MaxFileSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sv.Close)
	<-sv.Ready()
	return sv
}

func write(t *testing.T, p, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func TestCreateDiffRestore(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a.txt"), "one\ntwo\n", 0o644)
	write(t, filepath.Join(root, "dir/b.sh"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(root, "dir/sub/c.bin"), "\x00\x01\x02", 0o600)
	if err := os.Symlink("a.txt", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "empty"), 0o750); err != nil {
		t.Fatal(err)
	}
	sv := openTest(t, root, 1<<30)
	c := &testCaller{id: "s1", key: "k1"}
	first, err := sv.Create(c, "start")
	if err != nil {
		t.Fatal(err)
	}
	want := fsState(t, root, nil)

	// Change everything there is to change.
	write(t, filepath.Join(root, "a.txt"), "one\nTWO\n", 0o644)
	os.Chmod(filepath.Join(root, "dir/b.sh"), 0o644)
	os.RemoveAll(filepath.Join(root, "dir/sub"))
	os.Remove(filepath.Join(root, "link"))
	os.Symlink("dir", filepath.Join(root, "link"))
	os.Remove(filepath.Join(root, "empty"))
	write(t, filepath.Join(root, "empty"), "now a file", 0o644)
	write(t, filepath.Join(root, "new/deep/x.txt"), "x", 0o644)

	d, err := sv.Diff(c, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.From != first.Record.ID || d.To != "now" {
		t.Fatalf("diff %s → %s", d.From, d.To)
	}
	var got []string
	for _, f := range d.Files {
		got = append(got, string(f.Op)+" "+f.Rel)
	}
	wantOps := []string{"M a.txt", "M dir/b.sh", "D dir/sub/c.bin", "D empty", "A empty", "M link", "A new/deep/x.txt"}
	sort.Strings(got)
	sort.Strings(wantOps)
	if strings.Join(got, ",") != strings.Join(wantOps, ",") {
		t.Fatalf("diff names %v, want %v", got, wantOps)
	}
	for _, f := range d.Files {
		if f.Rel == "a.txt" && !strings.Contains(f.Patch, "-two\n+TWO\n") {
			t.Fatalf("patch of a.txt: %q", f.Patch)
		}
	}

	r, err := sv.Restore(c, first.Record.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := diffStates(want, fsState(t, root, nil)); len(got) > 0 {
		t.Fatalf("after restore the tree differs: %v", got)
	}
	// The restore is undoable: the state before it is a checkpoint.
	changed := fsState(t, root, nil)
	_ = changed
	if _, err := sv.Restore(c, r.Before.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got := fsState(t, root, nil); got["a.txt"] != "f:644:one\nTWO\n" || got["new/deep/x.txt"] != "f:644:x" {
		t.Fatalf("undo did not bring the changes back: %v", got)
	}
	if err := sv.Verify(); err != nil {
		t.Fatal(err)
	}
}

func TestAutoCoalesces(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a"), "1", 0o644)
	sv := openTest(t, root, 1<<30)
	c := &testCaller{id: "s", key: "k"}
	for i := 0; i < 3; i++ {
		if err := sv.Auto(c, fixed("before bash")); err != nil {
			t.Fatal(err)
		}
	}
	l, _ := sv.List(c)
	if len(l.Checkpoints) != 1 {
		t.Fatalf("%d checkpoints, want the start-up one only", len(l.Checkpoints))
	}
	write(t, filepath.Join(root, "a"), "2", 0o644)
	if err := sv.Auto(c, fixed("before bash: x")); err != nil {
		t.Fatal(err)
	}
	l, _ = sv.List(c)
	if len(l.Checkpoints) != 2 || l.Checkpoints[0].Changes.Modified != 1 {
		t.Fatalf("after a change: %+v", l.Checkpoints)
	}
}

// TestRandomRestore applies random changes and checks that restoring
// any earlier checkpoint gives back exactly its tree.
func TestRandomRestore(t *testing.T) {
	seeds := 3
	if testing.Short() {
		seeds = 1
	}
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		for _, tracking := range []bool{true, false} {
			t.Run(fmt.Sprintf("seed=%d/tracking=%v", seed, tracking), func(t *testing.T) { testRandomRestore(t, seed, tracking) })
		}
	}
}

func testRandomRestore(t *testing.T, seed uint64, tracking bool) {
	{
		{
			root := t.TempDir()
			sv := openTest(t, root, 1<<30)
			if !tracking {
				sv.mu.Lock()
				sv.sc.close()
				sv.mu.Unlock()
			}
			c := &testCaller{id: "s", key: "k"}
			r := rand.New(rand.NewPCG(seed, uint64(len(root))))
			type point struct {
				id    string
				state map[string]string
			}
			var points []point
			for step := 0; step < 40; step++ {
				for k := 0; k < 1+r.IntN(5); k++ {
					randomChange(t, r, root)
				}
				if r.IntN(2) == 0 {
					if err := sv.Auto(c, fixed("step")); err != nil {
						t.Fatal(err)
					}
					l, _ := sv.List(c)
					points = append(points, point{l.Checkpoints[0].ID, fsState(t, root, nil)})
				} else {
					cr, err := sv.Create(c, "")
					if err != nil {
						t.Fatal(err)
					}
					points = append(points, point{cr.Record.ID, fsState(t, root, nil)})
				}
				if n := len(points); n >= 2 {
					d, err := sv.Diff(c, points[n-2].id, points[n-1].id, nil)
					if err != nil {
						t.Fatal(err)
					}
					var got []string
					for _, f := range d.Files {
						got = append(got, f.Rel)
					}
					got = uniq(got)
					if want := expectedChanges(points[n-2].state, points[n-1].state); strings.Join(got, "|") != strings.Join(want, "|") {
						t.Fatalf("step %d: diff %s→%s names %q, want %q", step, points[n-2].id, points[n-1].id, got, want)
					}
				}
				if step%5 == 4 {
					p := points[r.IntN(len(points))]
					if _, err := sv.Restore(c, p.id, nil); err != nil {
						t.Fatal(err)
					}
					if got := diffStates(p.state, fsState(t, root, nil)); len(got) > 0 {
						t.Fatalf("step %d: restore of %s differs: %v", step, p.id, got)
					}
				}
			}
			if err := sv.Verify(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func uniq(s []string) []string {
	sort.Strings(s)
	var out []string
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// expectedChanges are the paths a diff must name between two states:
// files and symlinks that differ, directories added or removed while
// empty, directories whose mode changed, and kind changes.
func expectedChanges(a, b map[string]string) []string {
	empty := func(m map[string]string, p string) bool {
		for k := range m {
			if strings.HasPrefix(k, p+"/") {
				return false
			}
		}
		return true
	}
	isDir := func(v string) bool { return strings.HasPrefix(v, "d:") }
	var out []string
	seen := map[string]bool{}
	for _, m := range []map[string]string{a, b} {
		for p := range m {
			if seen[p] {
				continue
			}
			seen[p] = true
			va, ina := a[p]
			vb, inb := b[p]
			changed := false
			switch {
			case ina && inb && isDir(va) && isDir(vb):
				changed = va != vb
			case ina && inb && !isDir(va) && !isDir(vb):
				changed = va != vb
			case ina && inb:
				changed = true
			case ina:
				changed = !isDir(va) || empty(a, p)
			default:
				changed = !isDir(vb) || empty(b, p)
			}
			if changed {
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}

var names = []string{"a", "b", "c.txt", "d d", "ü", "sub/e", "sub/f", "sub/deep/g", "x/y/z"}

var opLog []string

func randomChange(t *testing.T, r *rand.Rand, root string) {
	p := filepath.Join(root, names[r.IntN(len(names))])
	op := r.IntN(8)
	opLog = append(opLog, fmt.Sprintf("%d %s", op, p[len(root):]))
	switch op {
	case 0, 1:
		os.RemoveAll(p)
		write(t, p, fmt.Sprintf("content %d\r\n", r.IntN(5)), []os.FileMode{0o644, 0o755, 0o600}[r.IntN(3)])
	case 2:
		os.RemoveAll(p)
	case 3:
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			os.Chmod(p, fi.Mode().Perm()^0o111)
		}
	case 4:
		os.RemoveAll(p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.Symlink(names[r.IntN(len(names))], p)
	case 5:
		os.RemoveAll(p)
		os.MkdirAll(p, 0o755)
	case 6:
		q := filepath.Join(root, names[r.IntN(len(names))])
		if q != p && !strings.HasPrefix(q, p+"/") && !strings.HasPrefix(p, q+"/") {
			os.MkdirAll(filepath.Dir(q), 0o755)
			os.Rename(p, q)
		}
	case 7:
		os.RemoveAll(p)
		b := make([]byte, r.IntN(3000))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		write(t, p, string(b), 0o644)
	}
}

func TestTooLarge(t *testing.T) {
	root := t.TempDir()
	b := make([]byte, 200<<10)
	r := rand.New(rand.NewPCG(1, 1))
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	write(t, filepath.Join(root, "big"), string(b), 0o644)
	sv := openTest(t, root, 100<<10)
	_, err := sv.Create(&testCaller{id: "s", key: "k"}, "")
	if e, ok := codes.As(err); !ok || e.Code != codes.CheckpointTooLarge {
		t.Fatalf("want CHECKPOINT_TOO_LARGE, got %v", err)
	}
}

func TestPruneOldest(t *testing.T) {
	root := t.TempDir()
	sv := openTest(t, root, 600<<10)
	c := &testCaller{id: "s", key: "k"}
	r := rand.New(rand.NewPCG(3, 3))
	var ids []string
	for i := 0; i < 8; i++ {
		b := make([]byte, 100<<10)
		for j := range b {
			b[j] = byte(r.IntN(256))
		}
		write(t, filepath.Join(root, "f"), string(b), 0o644)
		cr, err := sv.Create(c, "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cr.Record.ID)
	}
	l, _ := sv.List(c)
	if l.Bytes > 600<<10 {
		t.Fatalf("store holds %d bytes, over the bound", l.Bytes)
	}
	if l.Checkpoints[0].ID != ids[len(ids)-1] {
		t.Fatalf("the newest checkpoint is gone")
	}
	if len(l.Checkpoints) >= 8 {
		t.Fatalf("nothing was pruned")
	}
	if err := sv.Verify(); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreRollsBack: a step of the second phase fails (here the fourth
// rename); the paths already changed are put back as they were before the
// restore, nothing staged is left behind, and the error says so.
func TestRestoreRollsBack(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 8; i++ {
		write(t, filepath.Join(root, fmt.Sprintf("f%d", i)), "old", 0o644)
	}
	sv := openTest(t, root, 1<<30)
	c := &testCaller{id: "s", key: "k"}
	first, err := sv.Create(c, "first")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 8; i++ {
		write(t, filepath.Join(root, fmt.Sprintf("f%d", i)), "new", 0o644)
	}
	write(t, filepath.Join(root, "added"), "x", 0o644)
	before := fsState(t, root, nil)
	failed := false
	renameFault = func(n int) error {
		if n == 3 && !failed {
			failed = true // once: putting back works
			return syscall.EIO
		}
		return nil
	}
	defer func() { renameFault = nil }()
	_, err = sv.Restore(c, first.Record.ID, nil)
	if e, ok := codes.As(err); !ok || e.Code != codes.CheckpointFailed || !strings.Contains(err.Error(), "put back") {
		t.Fatalf("want CHECKPOINT_FAILED saying the changes were put back, got %v", err)
	}
	renameFault = nil
	if d := diffStates(before, fsState(t, root, nil)); len(d) > 0 {
		t.Fatalf("after the failed restore the tree differs from before it: %v", d)
	}
	// And the restore works once the fault is gone.
	if _, err := sv.Restore(c, first.Record.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got := fsState(t, root, nil); got["f0"] != "f:644:old" || got["added"] != "" {
		t.Fatalf("restore after the fault: %v", got)
	}
}
