package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/shell"
)

// TestMain reaps as boris does: the reaper takes every child's status, so
// the package's git commands must get theirs from it.
func TestMain(m *testing.M) {
	if err := shell.EnableReaping(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// gitT runs git in dir for a test, with an identity.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
	out, err := output(cmd)
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// output runs cmd and returns its combined output, its status taken from
// the reaper.
func output(cmd *exec.Cmd) ([]byte, error) {
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	wait, err := shell.StartWaited(cmd, nil)
	if err != nil {
		return nil, err
	}
	err = wait()
	return b.Bytes(), err
}

// newRepo makes a repository with one commit: a.txt, sub/b.txt.
func newRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed (scripts/deps.sh installs it)")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(dir, "repo")
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "sub", "b.txt"), []byte("beta\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.o\n"), 0o644)
	gitT(t, dir, "init", "-q")
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "start")
	return dir
}

// create makes workspace want of m for owner, failing the test if it
// cannot.
func create(t *testing.T, m *Manager, owner Owner, want string) *Workspace {
	t.Helper()
	ws, err := m.Create(context.Background(), owner, want)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func open(t *testing.T, workdir string, mod ...func(*Options)) (*Manager, []Info) {
	t.Helper()
	o := Options{Workdir: workdir, Env: os.Environ()}
	for _, f := range mod {
		f(&o)
	}
	m, kept, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return m, kept
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A workspace is a checkout of HEAD on its own branch, and the
// repository gets the branch; with nothing done in it, its release
// removes both, and the main checkout never changes.
func TestCreateAndReleaseEmpty(t *testing.T) {
	repo := newRepo(t)
	head := gitT(t, repo, "rev-parse", "HEAD")
	m, kept := open(t, repo)
	if len(kept) != 0 {
		t.Fatalf("kept at first start: %v", kept)
	}
	ctx := context.Background()
	ws := create(t, m, Owner{Session: "s_Abc/../x y"}, "s_Abc/../x y")
	if ws.Name != "s_Abc-.-x-y" || ws.Branch != "boris/s_Abc-.-x-y" {
		t.Fatalf("name %q branch %q", ws.Name, ws.Branch)
	}
	if got := read(t, filepath.Join(ws.Dir, "sub", "b.txt")); got != "beta\n" {
		t.Fatalf("checkout: %q", got)
	}
	if ws.Root != ws.Dir || ws.Base != head || !strings.HasPrefix(ws.Dir, filepath.Join(repo, ".git", "boris", "worktrees")+"/") {
		t.Fatalf("workspace %+v", ws)
	}
	if got := gitT(t, repo, "rev-parse", "refs/heads/"+ws.Branch); got != head {
		t.Fatalf("branch in the repository at %s, want %s", got, head)
	}
	if got := gitT(t, ws.Dir, "symbolic-ref", "--short", "HEAD"); got != ws.Branch {
		t.Fatalf("workspace on %q", got)
	}
	if st := gitT(t, repo, "status", "--porcelain"); st != "" {
		t.Fatalf("main checkout status: %q", st)
	}
	info, removed, err := m.Release(ctx, ws)
	if err != nil || !removed || info.HasWork() {
		t.Fatalf("release: removed=%v err=%v info=%+v", removed, err, info)
	}
	if _, err := os.Stat(ws.Dir); !os.IsNotExist(err) {
		t.Fatalf("directory left: %v", err)
	}
	if out := gitT(t, repo, "branch", "--list", "boris/*"); out != "" {
		t.Fatalf("branch left: %s", out)
	}
}

// The workdir below the top of the work tree: sessions start at the same
// place in their workspace.
func TestWorkdirBelowTop(t *testing.T) {
	repo := newRepo(t)
	m, _ := open(t, filepath.Join(repo, "sub"))
	ws := create(t, m, Owner{}, "w")
	if ws.Root != filepath.Join(ws.Dir, "sub") || read(t, filepath.Join(ws.Root, "b.txt")) != "beta\n" {
		t.Fatalf("root %s", ws.Root)
	}
}

// Uncommitted changes of the main checkout are not carried over, and
// counted.
func TestMainChangesNotCarried(t *testing.T) {
	repo := newRepo(t)
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("human's edit\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "new.txt"), []byte("untracked\n"), 0o644)
	m, _ := open(t, repo)
	ws := create(t, m, Owner{}, "w")
	if got := read(t, filepath.Join(ws.Dir, "a.txt")); got != "alpha\n" {
		t.Fatalf("a.txt in the workspace: %q", got)
	}
	if _, err := os.Stat(filepath.Join(ws.Dir, "new.txt")); !os.IsNotExist(err) {
		t.Fatal("an untracked file of the main checkout was carried over")
	}
	if ws.MainChanges != 2 {
		t.Fatalf("MainChanges = %d, want 2", ws.MainChanges)
	}
	if got := read(t, filepath.Join(repo, "a.txt")); got != "human's edit\n" {
		t.Fatalf("main checkout changed: %q", got)
	}
}

// Work of each kind keeps a workspace at release, and its commits reach
// the repository's branch; the main checkout's files, index and HEAD do
// not change.
func TestWorkKeptAndExported(t *testing.T) {
	repo := newRepo(t)
	mainHead := gitT(t, repo, "rev-parse", "HEAD")
	m, _ := open(t, repo)
	ctx := context.Background()
	kinds := map[string]func(dir string){
		"uncommitted": func(dir string) { os.WriteFile(filepath.Join(dir, "a.txt"), []byte("changed\n"), 0o644) },
		"untracked":   func(dir string) { os.WriteFile(filepath.Join(dir, "n.txt"), []byte("new\n"), 0o644) },
		"commit": func(dir string) {
			os.WriteFile(filepath.Join(dir, "c.txt"), []byte("c\n"), 0o644)
			gitT(t, dir, "add", "c.txt")
			gitT(t, dir, "commit", "-q", "-m", "add c")
		},
		"stash": func(dir string) {
			os.WriteFile(filepath.Join(dir, "a.txt"), []byte("stashed\n"), 0o644)
			gitT(t, dir, "stash", "-q")
		},
		"other-branch": func(dir string) {
			gitT(t, dir, "checkout", "-q", "-b", "fix")
			os.WriteFile(filepath.Join(dir, "f.txt"), []byte("f\n"), 0o644)
			gitT(t, dir, "add", "f.txt")
			gitT(t, dir, "commit", "-q", "-m", "fix")
			gitT(t, dir, "checkout", "-q", "-")
		},
	}
	for kind, do := range kinds {
		ws, err := m.Create(ctx, Owner{}, kind)
		if err != nil {
			t.Fatal(err)
		}
		do(ws.Dir)
		info, removed, err := m.Release(ctx, ws)
		if err != nil || removed || !info.HasWork() {
			t.Fatalf("%s: removed=%v err=%v info=%+v", kind, removed, err, info)
		}
		if _, err := os.Stat(ws.Dir); err != nil {
			t.Fatalf("%s: directory gone: %v", kind, err)
		}
		if kind == "commit" {
			if got := gitT(t, repo, "rev-parse", ws.Branch); got != info.Head || got == mainHead {
				t.Fatalf("commit: branch at %s, workspace HEAD %s", got, info.Head)
			}
			if got := gitT(t, repo, "show", ws.Branch+":c.txt"); got != "c" {
				t.Fatalf("the branch lacks the commit's file: %q", got)
			}
			if info.CommitCount != 1 || len(info.Commits) != 1 || info.Commits[0].Subject != "add c" {
				t.Fatalf("commits: %+v", info.Commits)
			}
		}
	}
	if got := gitT(t, repo, "rev-parse", "HEAD"); got != mainHead {
		t.Fatalf("main HEAD moved to %s", got)
	}
	if st := gitT(t, repo, "status", "--porcelain"); st != "" {
		t.Fatalf("main checkout status: %q", st)
	}
	if got := gitT(t, repo, "stash", "list"); got != "" {
		t.Fatalf("a workspace's stash reached the repository: %q", got)
	}
}

// Work merged into the repository's HEAD no longer keeps a workspace.
func TestMergedWorkNotKept(t *testing.T) {
	repo := newRepo(t)
	m, _ := open(t, repo)
	ctx := context.Background()
	ws := create(t, m, Owner{}, "w")
	os.WriteFile(filepath.Join(ws.Dir, "c.txt"), []byte("c\n"), 0o644)
	if _, err := ws.Commit(ctx, "add c"); err != nil {
		t.Fatal(err)
	}
	gitT(t, repo, "merge", "-q", "--ff-only", ws.Branch)
	if _, removed, err := m.Release(ctx, ws); err != nil || !removed {
		t.Fatalf("removed=%v err=%v", removed, err)
	}
	if out := gitT(t, repo, "branch", "--list", "boris/*"); out != "" {
		t.Fatalf("merged branch left: %s", out)
	}
}

// diff shows commits, staged, unstaged and untracked changes against the
// base without touching the workspace's index; commit commits them all
// (hooks not run) and brings the branch up to date.
func TestDiffAndCommit(t *testing.T) {
	repo := newRepo(t)
	m, _ := open(t, repo)
	ctx := context.Background()
	ws := create(t, m, Owner{Session: "s1"}, "w")
	d := ws.Dir
	os.WriteFile(filepath.Join(d, "c.txt"), []byte("committed\n"), 0o644)
	gitT(t, d, "add", "c.txt")
	gitT(t, d, "commit", "-q", "-m", "c")
	os.WriteFile(filepath.Join(d, "a.txt"), []byte("unstaged\n"), 0o644)
	os.WriteFile(filepath.Join(d, "s.txt"), []byte("staged\n"), 0o644)
	gitT(t, d, "add", "s.txt")
	os.WriteFile(filepath.Join(d, "u.txt"), []byte("untracked\n"), 0o644)
	os.WriteFile(filepath.Join(d, "x.o"), []byte("ignored\n"), 0o644)
	os.Remove(filepath.Join(d, "sub", "b.txt"))
	// A hook and a file system monitor the agent planted: boris's git
	// must run neither.
	marker := filepath.Join(t.TempDir(), "ran")
	hook := "#!/bin/sh\necho ran >> " + marker + "\n"
	os.WriteFile(filepath.Join(d, ".git", "hooks", "pre-commit"), []byte(hook), 0o755)
	os.WriteFile(filepath.Join(d, ".git", "hooks", "post-commit"), []byte(hook), 0o755)
	os.WriteFile(filepath.Join(d, "monitor.sh"), []byte(hook), 0o755)
	gitT(t, d, "config", "core.fsmonitor", filepath.Join(d, "monitor.sh"))
	indexBefore := gitT(t, d, "-c", "core.fsmonitor=false", "diff", "--cached", "--name-only")

	res, err := ws.Diff(ctx, nil, 100000)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range res.Files {
		got[f.Path] = f.Code
	}
	want := map[string]string{"c.txt": "A", "a.txt": "M", "s.txt": "A", "u.txt": "A", "monitor.sh": "A", "sub/b.txt": "D"}
	if len(got) != len(want) {
		t.Fatalf("diff files %v, want %v", got, want)
	}
	for p, c := range want {
		if got[p] != c {
			t.Fatalf("diff files %v, want %v", got, want)
		}
	}
	for _, s := range []string{"+committed", "+unstaged", "+untracked", "-beta"} {
		if !strings.Contains(res.Patch, s) {
			t.Fatalf("patch lacks %q:\n%s", s, res.Patch)
		}
	}
	if strings.Contains(res.Patch, "ignored") {
		t.Fatal("an ignored file is in the diff")
	}
	if after := gitT(t, d, "-c", "core.fsmonitor=false", "diff", "--cached", "--name-only"); after != indexBefore {
		t.Fatalf("the workspace's index changed: %q, was %q", after, indexBefore)
	}
	narrow, err := ws.Diff(ctx, []string{"sub"}, 100000)
	if err != nil || len(narrow.Files) != 1 || narrow.Files[0].Path != "sub/b.txt" {
		t.Fatalf("diff of sub: %+v %v", narrow, err)
	}
	small, err := ws.Diff(ctx, nil, 40)
	if err != nil || !small.Truncated || len(small.Patch) > 40 || small.Total <= 40 {
		t.Fatalf("bounded diff: truncated=%v len=%d total=%d", small.Truncated, len(small.Patch), small.Total)
	}

	cr, err := ws.Commit(ctx, "the agent's work")
	if err != nil {
		t.Fatal(err)
	}
	if cr.Files != 5 || cr.Info.ChangeCount != 0 || cr.Info.CommitCount != 2 {
		t.Fatalf("commit: %+v", cr)
	}
	if got := gitT(t, repo, "rev-parse", ws.Branch); got != cr.ID {
		t.Fatalf("branch at %s, commit %s", got, cr.ID)
	}
	if got := gitT(t, repo, "show", ws.Branch+":u.txt"); got != "untracked" {
		t.Fatalf("u.txt on the branch: %q", got)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("boris's git ran the workspace's hook or monitor: %s", read(t, marker))
	}
	if _, err := ws.Commit(ctx, "again"); err == nil {
		t.Fatal("a commit with nothing to commit succeeded")
	} else if e, ok := codes.As(err); !ok || e.Code != codes.InvalidInput {
		t.Fatalf("nothing to commit: %v", err)
	}
}

// The index of a workspace replaced by a symlink out of it: diff refuses
// to follow it (the agent cannot make boris read another file).
func TestDiffIndexSymlink(t *testing.T) {
	repo := newRepo(t)
	m, _ := open(t, repo)
	ws := create(t, m, Owner{}, "w")
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("SECRET"), 0o600)
	os.Remove(filepath.Join(ws.Dir, ".git", "index"))
	os.Symlink(secret, filepath.Join(ws.Dir, ".git", "index"))
	if _, err := ws.Diff(context.Background(), nil, 1000); err == nil {
		t.Fatal("diff followed a symlinked index out of the workspace")
	}
	if _, err := os.Lstat(filepath.Join(ws.Dir, ".git", "boris-diff.index")); !os.IsNotExist(err) {
		t.Fatal("a copy was left")
	}
}

// Someone moved the branch in the repository: boris leaves it there.
func TestExportLeavesMovedBranch(t *testing.T) {
	repo := newRepo(t)
	m, _ := open(t, repo)
	ctx := context.Background()
	ws := create(t, m, Owner{}, "w")
	os.WriteFile(filepath.Join(repo, "h.txt"), []byte("human\n"), 0o644)
	gitT(t, repo, "add", "h.txt")
	gitT(t, repo, "commit", "-q", "-m", "human")
	human := gitT(t, repo, "rev-parse", "HEAD")
	gitT(t, repo, "branch", "-f", ws.Branch, human)
	os.WriteFile(filepath.Join(ws.Dir, "c.txt"), []byte("c\n"), 0o644)
	cr, err := ws.Commit(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if cr.Info.ExportNote == "" || !strings.Contains(cr.Info.ExportNote, "moved by someone else") {
		t.Fatalf("note: %q", cr.Info.ExportNote)
	}
	if got := gitT(t, repo, "rev-parse", ws.Branch); got != human {
		t.Fatalf("boris moved a branch someone else had moved: %s", got)
	}
}

// Too many workspaces: a clear WORKSPACE_LIMIT naming the kept ones.
func TestMaxCount(t *testing.T) {
	repo := newRepo(t)
	m, _ := open(t, repo, func(o *Options) { o.MaxCount = 2 })
	ctx := context.Background()
	a := create(t, m, Owner{}, "a")
	create(t, m, Owner{}, "b")
	os.WriteFile(filepath.Join(a.Dir, "w.txt"), []byte("w"), 0o644)
	if _, removed, _ := m.Release(ctx, a); removed {
		t.Fatal("a workspace with work was removed")
	}
	_, err := m.Create(ctx, Owner{}, "c")
	e, ok := codes.As(err)
	if !ok || e.Code != codes.WorkspaceLimit || !strings.Contains(e.Message, "kept: a") || !strings.Contains(e.Message, "--max-worktrees 2") {
		t.Fatalf("third workspace: %v", err)
	}
}

// Remove: a live one is refused, another credential's is refused,
// uncommitted work needs force, and a branch with commits stays.
func TestRemove(t *testing.T) {
	repo := newRepo(t)
	m, _ := open(t, repo)
	ctx := context.Background()
	ws := create(t, m, Owner{Credential: "token-1"}, "w")
	if _, err := m.Remove(ctx, "w", "token-1", true); err == nil {
		t.Fatal("removed a live workspace")
	}
	os.WriteFile(filepath.Join(ws.Dir, "c.txt"), []byte("c\n"), 0o644)
	if _, err := ws.Commit(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws.Dir, "d.txt"), []byte("d\n"), 0o644)
	if _, removed, _ := m.Release(ctx, ws); removed {
		t.Fatal("removed at release")
	}
	if _, err := m.Remove(ctx, "w", "token-2", true); err == nil {
		t.Fatal("another credential removed it")
	}
	if _, err := m.Remove(ctx, "nope", "token-1", false); err == nil || !strings.Contains(err.Error(), "there are: w") {
		t.Fatalf("unknown name: %v", err)
	}
	if _, err := m.Remove(ctx, "w", "token-1", false); err == nil || !strings.Contains(err.Error(), "1 uncommitted") {
		t.Fatalf("remove without force: %v", err)
	}
	r, err := m.Remove(ctx, "w", "token-1", true)
	if err != nil || !r.BranchKept {
		t.Fatalf("remove: %+v %v", r, err)
	}
	if got := gitT(t, repo, "show", ws.Branch+":c.txt"); got != "c" {
		t.Fatalf("branch lost its commit: %q", got)
	}
	if _, err := os.Stat(ws.Dir); !os.IsNotExist(err) {
		t.Fatal("directory left")
	}
}

// A restart after a crash: the workspace with work is found, kept, listed
// and its commits reach its branch; the empty one and the one boris was
// making are removed; an unknown record is left alone.
func TestRecoverAfterCrash(t *testing.T) {
	repo := newRepo(t)
	m, _ := open(t, repo)
	ctx := context.Background()
	work := create(t, m, Owner{Credential: "token-1", Session: "s_a"}, "work")
	empty := create(t, m, Owner{}, "empty")
	half := create(t, m, Owner{}, "half")
	half.save(stateCreating) // as if boris died while making it
	os.WriteFile(filepath.Join(work.Dir, "c.txt"), []byte("c\n"), 0o644)
	gitT(t, work.Dir, "add", "c.txt")
	gitT(t, work.Dir, "commit", "-q", "-m", "c")
	os.WriteFile(filepath.Join(work.Dir, "u.txt"), []byte("uncommitted\n"), 0o644)
	os.WriteFile(filepath.Join(m.Dir(), "stray.json"), []byte("not json"), 0o644)
	// No Release: boris was killed.

	m2, kept := open(t, repo)
	if len(kept) != 1 || kept[0].Name != "work" || kept[0].ChangeCount != 1 || kept[0].CommitCount != 1 || kept[0].Owner.Credential != "token-1" {
		t.Fatalf("kept: %+v", kept)
	}
	if got := read(t, filepath.Join(work.Dir, "u.txt")); got != "uncommitted\n" {
		t.Fatalf("uncommitted work: %q", got)
	}
	if got := gitT(t, repo, "show", work.Branch+":c.txt"); got != "c" {
		t.Fatalf("the branch lacks the commit: %q", got)
	}
	for _, gone := range []*Workspace{empty, half} {
		if _, err := os.Stat(gone.Dir); !os.IsNotExist(err) {
			t.Fatalf("%s left", gone.Name)
		}
	}
	if _, err := os.Stat(filepath.Join(m.Dir(), "stray.json")); err != nil {
		t.Fatal("an unknown record was removed")
	}
	if l := m2.List(ctx); len(l) != 1 || l[0].Live {
		t.Fatalf("list: %+v", l)
	}
	ws, err := m2.Attach("work", "token-1", "s_b")
	if err != nil || ws.Dir != work.Dir {
		t.Fatalf("attach: %v", err)
	}
	if _, err := m2.Attach("work", "token-1", "s_c"); err == nil {
		t.Fatal("attached twice")
	}
}

// git gc --prune=now and git worktree prune in the repository, and gc in
// each workspace, while the workspaces work: every workspace stays whole.
func TestSharedGitStateRaces(t *testing.T) {
	repo := newRepo(t)
	m, _ := open(t, repo)
	ctx := context.Background()
	var all []*Workspace
	for _, n := range []string{"a", "b", "c"} {
		ws, err := m.Create(ctx, Owner{}, n)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ws)
	}
	var wg sync.WaitGroup
	for i, ws := range all {
		wg.Go(func() {
			for j := range 5 {
				p := filepath.Join(ws.Dir, "f"+string(rune('0'+j))+".txt")
				os.WriteFile(p, []byte(strings.Repeat("x", i+j+1)), 0o644)
				gitT(t, ws.Dir, "add", "-A")
				gitT(t, ws.Dir, "commit", "-q", "-m", "step")
				if j == 2 {
					if _, err := ws.Commit(ctx, "nothing"); err == nil {
						t.Error("commit with nothing to commit")
					}
					gitT(t, ws.Dir, "gc", "-q", "--prune=now")
				}
			}
		})
	}
	// git documents gc --prune=now as unsafe beside other writers: the
	// repository's own gc may fail here (a pack it was renaming taken by
	// a writer's pruning), which is git's affair; what must hold is that
	// every workspace stays whole, and that a gc afterwards succeeds.
	wg.Go(func() {
		for range 3 {
			for _, args := range [][]string{{"gc", "-q", "--prune=now"}, {"worktree", "prune"}} {
				cmd := exec.Command("git", args...)
				cmd.Dir = repo
				if out, err := output(cmd); err != nil {
					t.Logf("git %s beside the workspaces' work: %v\n%s", strings.Join(args, " "), err, out)
				}
			}
		}
	})
	wg.Wait()
	for _, ws := range all {
		gitT(t, ws.Dir, "fsck", "--no-progress")
		info, err := ws.Export(ctx)
		if err != nil || info.CommitCount != 5 || info.ChangeCount != 0 {
			t.Fatalf("%s: %+v %v", ws.Name, info, err)
		}
	}
	gitT(t, repo, "gc", "-q", "--prune=now")
	for _, ws := range all {
		gitT(t, ws.Dir, "fsck", "--no-progress")
		if got := gitT(t, repo, "rev-list", "--count", ws.Base+".."+ws.Branch); got != "5" {
			t.Fatalf("%s: %s commits on the branch", ws.Name, got)
		}
	}
}

// Not a repository, a bare one, one without a commit: clear errors.
func TestOpenErrors(t *testing.T) {
	plain := t.TempDir()
	bare := t.TempDir()
	gitT(t, bare, "init", "-q", "--bare")
	empty := t.TempDir()
	gitT(t, empty, "init", "-q")
	for dir, want := range map[string]string{plain: "not in a git repository", bare: "not inside a git work tree", empty: "no commit at HEAD"} {
		_, _, err := Open(context.Background(), Options{Workdir: dir, Env: os.Environ()})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--isolation off") {
			t.Fatalf("%s: %v", dir, err)
		}
	}
}

// Names are safe for directories and for git's branch names.
func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"s_AbCdEf…":             "s_AbCdEf",
		"../../etc":             "etc",
		"a..b":                  "a.b",
		"-rf":                   "rf",
		"x.lock":                "x",
		"a b/c\\d:e?f*g[h~^":    "a-b-c-d-e-f-g-h",
		"":                      "workspace",
		"@{":                    "workspace",
		strings.Repeat("z", 80): strings.Repeat("z", 48),
		"token-1-default":       "token-1-default",
	} {
		got := Sanitize(in)
		if got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
		if _, err := output(exec.Command("git", "check-ref-format", "refs/heads/"+BranchPrefix+got)); err != nil {
			t.Errorf("refs/heads/boris/%s is not a valid ref name", got)
		}
	}
}

// Two workspaces asked for with one name get two.
func TestUniqueNames(t *testing.T) {
	repo := newRepo(t)
	m, _ := open(t, repo)
	a := create(t, m, Owner{}, "same")
	b := create(t, m, Owner{}, "same")
	if a.Name != "same" || b.Name != "same-2" {
		t.Fatalf("names %s %s", a.Name, b.Name)
	}
	var r record
	if err := json.Unmarshal([]byte(read(t, b.recordPath())), &r); err != nil || r.State != stateReady || r.Base != b.Base {
		t.Fatalf("record %+v %v", r, err)
	}
}

// What a workspace's commands may reach: its own directory; of the main
// checkout only .git; of the other workspaces nothing.
func TestConfinement(t *testing.T) {
	repo := newRepo(t)
	m, _ := open(t, repo)
	ctx := context.Background()
	a, _ := m.Create(ctx, Owner{}, "a")
	b, _ := m.Create(ctx, Owner{}, "b")
	c, err := a.Confinement()
	if err != nil {
		t.Fatal(err)
	}
	hidden := map[string]bool{}
	for _, h := range c.Hidden {
		hidden[h] = true
	}
	for _, want := range []string{filepath.Join(repo, "a.txt"), filepath.Join(repo, "sub"), b.Dir, filepath.Join(m.Dir(), "b.json"), filepath.Join(m.Dir(), "a.json")} {
		if !hidden[want] {
			t.Errorf("%s is not hidden: %v", want, c.Hidden)
		}
	}
	for _, not := range []string{filepath.Join(repo, ".git"), a.Dir} {
		if hidden[not] {
			t.Errorf("%s is hidden", not)
		}
	}
	if len(c.Writable) != 1 || c.Writable[0] != a.Dir {
		t.Fatalf("writable %v", c.Writable)
	}
}

// Past the disk bound: a clear WORKSPACE_LIMIT saying what the
// workspaces take and how to make room.
func TestMaxBytes(t *testing.T) {
	repo := newRepo(t)
	m, _ := open(t, repo, func(o *Options) { o.MaxBytes = 4096 })
	ctx := context.Background()
	a := create(t, m, Owner{}, "a")
	m.measure(a) // what the background measure does, now
	_, err := m.Create(ctx, Owner{}, "b")
	e, ok := codes.As(err)
	if !ok || e.Code != codes.WorkspaceLimit || !strings.Contains(e.Message, "--worktree-max-bytes 4.0 KiB") || !strings.Contains(e.Message, "remove kept workspaces") {
		t.Fatalf("past the disk bound: %v", err)
	}
}
