package checkpoint

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func gitCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// gitTree makes a committed repository of n files, with the index written
// after the files so that none is racy, as after a clone.
func gitTree(t *testing.T, n int) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed (scripts/deps.sh installs it)")
	}
	root := t.TempDir()
	gitCmd(t, root, "init", "-q")
	for i := 0; i < n; i++ {
		write(t, filepath.Join(root, fmt.Sprintf("d%d/f%d.txt", i%5, i)), strings.Repeat(fmt.Sprintf("file %d\n", i), 50), 0o644)
	}
	write(t, filepath.Join(root, "run.sh"), "#!/bin/sh\necho hi\n", 0o755)
	if err := os.Symlink("run.sh", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, ".gitignore"), "*.log\n", 0o644)
	gitCmd(t, root, "add", "-A")
	gitCmd(t, root, "commit", "-qm", "base")
	time.Sleep(30 * time.Millisecond)
	gitCmd(t, root, "update-index", "--refresh")
	return root
}

// TestGitBorrow: on a clean git work tree the start-up checkpoint copies
// no tracked file, only the untracked ones; files changed, removed and
// renamed after it (by hand and by git itself) are restored from blobs the
// store copied when it noticed, even after git has dropped them.
func TestGitBorrow(t *testing.T) {
	root := gitTree(t, 60)
	write(t, filepath.Join(root, "untracked.txt"), "mine\n", 0o644)
	write(t, filepath.Join(root, "skip.log"), "ignored\n", 0o644)
	write(t, filepath.Join(root, "d0/f0.txt"), "dirty before start\n", 0o644)
	sv := openTest(t, root, 1<<30)
	if sv.sc.borrowed != 61 || sv.sc.copied != 2 {
		t.Fatalf("start-up: %d files borrowed, %d copied; want 61 (60 files, run.sh and .gitignore, less the dirty d0/f0.txt) and 2 (untracked.txt, d0/f0.txt)", sv.sc.borrowed, sv.sc.copied)
	}
	c := &testCaller{id: "s", key: "k"}
	skip := func(rel string) bool {
		return rel == ".git" || strings.HasPrefix(rel, ".git/") || strings.HasSuffix(rel, ".log")
	}
	base := fsState(t, root, skip)
	l, _ := sv.List(c)
	first := l.Checkpoints[0].ID
	if l.Bytes > 64<<10 {
		t.Fatalf("the store holds %d bytes after a start-up that copied two small files", l.Bytes)
	}

	// Changes of every kind, then git makes the old blobs unreachable
	// and prunes them.
	write(t, filepath.Join(root, "d1/f1.txt"), "changed\n", 0o644)
	os.Remove(filepath.Join(root, "d2/f2.txt"))
	os.Rename(filepath.Join(root, "d3/f3.txt"), filepath.Join(root, "d3/moved.txt"))
	os.Chmod(filepath.Join(root, "d4/f4.txt"), 0o600)
	os.Remove(filepath.Join(root, "link"))
	os.Symlink("d1/f1.txt", filepath.Join(root, "link"))
	gitCmd(t, root, "rm", "-q", "d1/f6.txt")
	if err := sv.Auto(c, fixed("after edits")); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, root, "add", "-A")
	gitCmd(t, root, "commit", "-q", "--amend", "-m", "rewritten")
	gitCmd(t, root, "reflog", "expire", "--expire=now", "--all")
	gitCmd(t, root, "gc", "-q", "--prune=now")
	if sv.adopted == 0 {
		t.Fatal("no blob was copied into the store")
	}
	if _, err := sv.Restore(c, first, nil); err != nil {
		t.Fatal(err)
	}
	if d := diffStates(base, fsState(t, root, skip)); len(d) > 0 {
		t.Fatalf("restore after gc: %v", d)
	}
	if err := sv.Verify(); err != nil {
		t.Fatal(err)
	}

	// git checkout and git stash rewrite files from git; the checkpoint
	// before the next call has what they replaced.
	write(t, filepath.Join(root, "d1/f11.txt"), "edited by the agent\n", 0o644)
	write(t, filepath.Join(root, "d2/f12.txt"), "stashed\n", 0o644)
	if err := sv.Auto(c, fixed("before git")); err != nil {
		t.Fatal(err)
	}
	l, _ = sv.List(c)
	edited := l.Checkpoints[0].ID
	editedState := fsState(t, root, skip)
	gitCmd(t, root, "checkout", "--", "d1/f11.txt")
	gitCmd(t, root, "stash", "-q")
	if err := sv.Auto(c, fixed("after git")); err != nil {
		t.Fatal(err)
	}
	if _, err := sv.Restore(c, edited, nil); err != nil {
		t.Fatal(err)
	}
	if d := diffStates(editedState, fsState(t, root, skip)); len(d) > 0 {
		t.Fatalf("restore of what git checkout and git stash replaced: %v", d)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "skip.log")); string(b) != "ignored\n" {
		t.Fatalf("an ignored file was touched: %q", b)
	}
}

// TestGitConvertingAttributes: a .gitattributes that converts working
// files makes the scanner copy the repository's files.
func TestGitConvertingAttributes(t *testing.T) {
	root := gitTree(t, 10)
	write(t, filepath.Join(root, "d1/.gitattributes"), "*.txt text\n", 0o644)
	sv := openTest(t, root, 1<<30)
	if sv.sc.borrowed != 0 {
		t.Fatalf("%d files borrowed from a repository whose attributes convert files", sv.sc.borrowed)
	}
}

// TestGitTouchKeepsBlob: a tracked file touched (new times, same bytes)
// keeps its git name: nothing is copied and nothing reads as changed.
func TestGitTouchKeepsBlob(t *testing.T) {
	root := gitTree(t, 10)
	sv := openTest(t, root, 1<<30)
	c := &testCaller{id: "s", key: "k"}
	later := time.Now().Add(2 * time.Second)
	os.Chtimes(filepath.Join(root, "d1/f1.txt"), later, later)
	cr, err := sv.Create(c, "")
	if err != nil {
		t.Fatal(err)
	}
	if !cr.Existing {
		t.Fatalf("a touched file made a new checkpoint: %+v", cr.Changes)
	}
}

// TestRestartIsAStatWalk: a second process on the same store and an
// unchanged tree reads no file (plain tree and git tree alike); a file
// changed while no process ran is read, and restored.
func TestRestartIsAStatWalk(t *testing.T) {
	for _, kind := range []string{"plain", "git"} {
		t.Run(kind, func(t *testing.T) {
			var root string
			if kind == "git" {
				root = gitTree(t, 40)
			} else {
				root = t.TempDir()
				for i := 0; i < 40; i++ {
					write(t, filepath.Join(root, fmt.Sprintf("d%d/f%d.txt", i%5, i)), strings.Repeat(fmt.Sprintf("file %d\n", i), 50), 0o644)
				}
			}
			write(t, filepath.Join(root, "untracked.txt"), "mine\n", 0o644)
			// Times well before the scan, so no entry is racy.
			old := time.Now().Add(-time.Minute)
			filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
				if err == nil && fi.Mode().IsRegular() && !strings.Contains(p, "/.git/") {
					os.Chtimes(p, old, old)
				}
				return nil
			})
			if kind == "git" {
				gitCmd(t, root, "update-index", "--refresh")
			}
			// A file changed within racyWindow of a scan is read again
			// by the next one, whose stat data cannot vouch for it: the
			// change times Chtimes just set must be older than that.
			time.Sleep(time.Until(time.Now().Add(2 * racyWindow)))
			store := filepath.Join(t.TempDir(), "store")
			open := func() *Service {
				sv, err := Open(Options{Dir: store, Roots: []string{root}, MaxBytes: 1 << 30, MaxFileSize: 1 << 20})
				if err != nil {
					t.Fatal(err)
				}
				<-sv.Ready()
				return sv
			}
			sv := open()
			if kind == "plain" && sv.sc.copied == 0 {
				t.Fatal("the first start read nothing")
			}
			sv.Close()
			sv = open()
			if sv.sc.copied != 0 || sv.cachedFiles == 0 {
				t.Fatalf("second start: %d files read, %d named by the cache", sv.sc.copied, sv.cachedFiles)
			}
			sv.Close()
			write(t, filepath.Join(root, "d1/f1.txt"), "changed while down\n", 0o644)
			sv = open()
			defer sv.Close()
			if sv.sc.copied != 1 {
				t.Fatalf("third start: %d files read, want 1", sv.sc.copied)
			}
			c := &testCaller{id: "s", key: "k"}
			if _, err := sv.Restore(c, "c1", nil); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(filepath.Join(root, "d1/f1.txt")); string(b) != strings.Repeat("file 1\n", 50) {
				t.Fatalf("restore: %q", b)
			}
		})
	}
}

// TestGitSubdirAndNested: a workspace that is a directory inside a work
// tree borrows by its path in the work tree, and a repository nested in
// the workspace (a submodule, a clone) borrows from its own index.
func TestGitSubdirAndNested(t *testing.T) {
	top := gitTree(t, 20)
	root := filepath.Join(top, "d2")
	nested := filepath.Join(root, "vendor")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, nested, "init", "-q")
	for i := 0; i < 5; i++ {
		write(t, filepath.Join(nested, fmt.Sprintf("v%d.go", i)), fmt.Sprintf("package v // %d\n", i), 0o644)
	}
	gitCmd(t, nested, "add", "-A")
	gitCmd(t, nested, "commit", "-qm", "v")
	time.Sleep(2 * racyWindow)
	gitCmd(t, nested, "update-index", "--refresh")
	sv := openTest(t, root, 1<<30)
	// d2 holds 4 of the 20 files; vendor's 5 come from its own index.
	if sv.sc.borrowed != 9 || sv.sc.copied != 0 {
		t.Fatalf("%d borrowed, %d read; want 9 and 0", sv.sc.borrowed, sv.sc.copied)
	}
	c := &testCaller{id: "s", key: "k"}
	skip := func(rel string) bool { return rel == "vendor/.git" || strings.HasPrefix(rel, "vendor/.git/") }
	base := fsState(t, root, skip)
	os.Remove(filepath.Join(nested, "v1.go"))
	write(t, filepath.Join(root, "f2.txt"), "changed\n", 0o644)
	if _, err := sv.Restore(c, "c1", nil); err != nil {
		t.Fatal(err)
	}
	if d := diffStates(base, fsState(t, root, skip)); len(d) > 0 {
		t.Fatalf("restore: %v", d)
	}
}
