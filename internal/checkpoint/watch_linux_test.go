package checkpoint

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOverflowMeansFullScan: events the kernel could not queue are lost;
// it says so (IN_Q_OVERFLOW), and the next checkpoint then scans
// everything instead of trusting the tree. Without the overflow flag the
// same lost events would go unnoticed, which is what the flag is for.
func TestOverflowMeansFullScan(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "sub/a"), "1", 0o644)
	sv := openTest(t, root, 1<<30)
	if !sv.sc.tracking() {
		t.Skip("no inotify here")
	}
	c := &testCaller{id: "s", key: "k"}
	lose := func(overflow bool) {
		sv.mu.Lock()
		defer sv.mu.Unlock()
		w := sv.sc.w.(*inotify)
		w.drain() // the events are gone
		if overflow {
			w.mu.Lock()
			w.overflow = true
			w.mu.Unlock()
		}
	}
	newest := func() *Record {
		l, err := sv.List(c)
		if err != nil {
			t.Fatal(err)
		}
		return l.Checkpoints[0]
	}

	// Lost events without the overflow notice: the change is missed (the
	// control that shows the test can fail).
	write(t, filepath.Join(root, "sub/a"), "2", 0o644)
	lose(false)
	before := newest()
	if err := sv.Auto(c, fixed("x")); err != nil {
		t.Fatal(err)
	}
	if newest() != before {
		t.Fatal("a change was seen without its events: the test cannot show the fallback")
	}
	// With the notice, the next checkpoint scans everything and finds both
	// that change and a new one.
	write(t, filepath.Join(root, "sub/b"), "3", 0o644)
	lose(true)
	if err := sv.Auto(c, fixed("y")); err != nil {
		t.Fatal(err)
	}
	r := newest()
	if r == before || r.Changes.Total() != 2 {
		t.Fatalf("after an overflow: %+v", r)
	}
}

// TestWatchedChangesBetweenCalls: changes made while no checkpoint runs
// (a background process) are in the next one, and a directory created
// with files in it, renamed, and removed is followed.
func TestWatchedChangesBetweenCalls(t *testing.T) {
	root := t.TempDir()
	sv := openTest(t, root, 1<<30)
	if !sv.sc.tracking() {
		t.Skip("no inotify here")
	}
	c := &testCaller{id: "s", key: "k"}
	steps := []func(){
		func() { write(t, filepath.Join(root, "d/e/f"), "x", 0o644) },
		func() { os.Rename(filepath.Join(root, "d"), filepath.Join(root, "moved")) },
		func() { write(t, filepath.Join(root, "moved/e/g"), "y", 0o755) },
		func() { os.Rename(filepath.Join(root, "moved/e"), filepath.Join(root, "e2")) },
		func() { os.RemoveAll(filepath.Join(root, "moved")) },
		func() { write(t, filepath.Join(root, "e2/h"), "z", 0o644) },
		func() { os.Chmod(filepath.Join(root, "e2"), 0o700) },
	}
	for i, step := range steps {
		step()
		if err := sv.Auto(c, fixed("step")); err != nil {
			t.Fatal(err)
		}
		// What the tracker made must be what a full scan makes.
		sv.mu.Lock()
		tracked := sv.cur
		sv.mu.Unlock()
		full, err := sv.Create(c, "full")
		if err != nil {
			t.Fatal(err)
		}
		if full.Record.Root != tracked.String() {
			t.Fatalf("step %d: the tracked tree differs from a full scan: %v", i, full.Changes)
		}
	}
}

// TestTrackedEqualsFullScan: after random changes of every kind, the tree
// the tracker keeps up to date is the tree a full scan finds.
func TestTrackedEqualsFullScan(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ".gitignore"), "*.log\nz\n", 0o644)
	sv := openTest(t, root, 1<<30)
	if !sv.sc.tracking() {
		t.Skip("no inotify here")
	}
	c := &testCaller{id: "s", key: "k"}
	seed := uint64(5)
	fmt.Sscan(os.Getenv("CHECKPOINT_SEED"), &seed)
	r := rand.New(rand.NewPCG(seed, 5))
	for step := 0; step < 150; step++ {
		opLog = append(opLog, fmt.Sprintf("-- step %d", step))
		for k := 0; k < 1+r.IntN(4); k++ {
			randomChange(t, r, root)
		}
		switch r.IntN(12) {
		case 0:
			// A change to the ignore rules re-judges a whole subtree.
			write(t, filepath.Join(root, ".gitignore"), []string{"*.log\n", "*.log\nsub/\n", "c.txt\n", "!sub/e\n"}[r.IntN(4)], 0o644)
		case 1:
			if fi, err := os.Stat(filepath.Join(root, "sub")); err == nil && fi.IsDir() {
				write(t, filepath.Join(root, "sub/.gitignore"), []string{"e\n", "deep/\n", "/f\n", ""}[r.IntN(4)], 0o644)
			}
		case 2:
			os.Remove(filepath.Join(root, "sub/.gitignore"))
		case 3:
			// A nested repository: the rules from above stop there.
			if fi, err := os.Stat(filepath.Join(root, "x")); err == nil && fi.IsDir() {
				if r.IntN(2) == 0 {
					os.Mkdir(filepath.Join(root, "x/.git"), 0o755)
				} else {
					os.RemoveAll(filepath.Join(root, "x/.git"))
				}
			}
		}
		if step%9 == 8 {
			// A restore's own changes reach the tracker too.
			l, err := sv.List(c)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sv.Restore(c, l.Checkpoints[r.IntN(len(l.Checkpoints))].ID, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := sv.Auto(c, fixed("step")); err != nil {
			t.Fatal(err)
		}
		sv.mu.Lock()
		tracked := sv.cur
		sv.mu.Unlock()
		full, err := sv.Create(c, "full")
		if err != nil {
			t.Fatal(err)
		}
		// And what a process that never saw the tree before finds: an
		// oracle that shares no state with the scans above.
		fresh, err := Open(Options{Dir: filepath.Join(t.TempDir(), "fresh"), Roots: []string{root}, MaxBytes: 1 << 30, MaxFileSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		<-fresh.Ready()
		fl, err := fresh.List(c)
		fresh.Close()
		if err != nil || len(fl.Checkpoints) != 1 {
			t.Fatalf("fresh scan: %v", err)
		}
		if fl.Checkpoints[0].Root != full.Record.Root {
			t.Fatalf("step %d: a fresh scan finds another tree than the full rescan\n%s", step, strings.Join(opLog[max(0, len(opLog)-25):], "\n"))
		}
		if full.Record.Root != tracked.String() {
			var got []string
			for _, ch := range full.Changes {
				got = append(got, fmt.Sprintf("%c %s old=%+v new=%+v", ch.Op, ch.Rel, ch.Old, ch.New))
			}
			t.Fatalf("step %d: the tracked tree differs from a full scan: %v\n%s", step, got, strings.Join(opLog[max(0, len(opLog)-25):], "\n"))
		}
	}
}
