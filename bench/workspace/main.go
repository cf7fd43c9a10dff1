// Command workspace measures what a session's workspace costs to make
// (package workspace: git clone --shared, a checkout of HEAD on its own
// branch, the branch in the repository, the count of the main checkout's
// uncommitted changes) against `git worktree add` by hand, and against
// the same clone and checkout by hand, on one repository in the same
// rounds (the order rotating from round to round), with the disk each
// takes. Each made tree is removed before the next.
//
//	go run ./bench/workspace [-repo DIR] [-n 5]
//
// -repo defaults to the current directory; it must be a repository of your
// own (a clone: the benchmark makes and deletes branches, worktrees and
// workspaces in it). For the Linux tree, commit it to git first (git init
// && git add -A && git commit) and give its directory.
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"time"

	"github.com/boris-mcp/boris/internal/workspace"
)

func main() {
	repo := flag.String("repo", ".", "a git work tree with a commit")
	n := flag.Int("n", 5, "rounds")
	flag.Parse()
	top, err := filepath.Abs(*repo)
	if err != nil {
		log.Fatal(err)
	}
	if top, err = filepath.EvalSymlinks(top); err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	m, kept, err := workspace.Open(ctx, workspace.Options{Workdir: top, Env: os.Environ(), MaxCount: 1 << 20})
	if err != nil {
		log.Fatal(err)
	}
	if len(kept) > 0 {
		log.Fatalf("%s has workspaces with work; remove them first", top)
	}
	scratch, err := os.MkdirTemp(filepath.Dir(top), ".bench-workspace-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(scratch)
	git := func(dir string, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			log.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	head := func() string {
		out, err := exec.Command("git", "-C", top, "rev-parse", "HEAD").Output()
		if err != nil {
			log.Fatal(err)
		}
		return string(out[:len(out)-1])
	}()

	type result struct {
		name string
		ds   []time.Duration
		disk int64
	}
	res := []*result{{name: "boris workspace (Create)"}, {name: "git worktree add -b"}, {name: "git clone --shared + checkout"}}
	runs := []func(i int) (time.Duration, int64){
		func(i int) (time.Duration, int64) {
			t0 := time.Now()
			ws, err := m.Create(ctx, workspace.Owner{Session: "bench"}, fmt.Sprintf("bench-%d", i))
			d := time.Since(t0)
			if err != nil {
				log.Fatal(err)
			}
			size := du(ws.Dir)
			if _, removed, err := m.Release(ctx, ws); err != nil || !removed {
				log.Fatalf("release: removed=%v %v", removed, err)
			}
			return d, size
		},
		func(i int) (time.Duration, int64) {
			dir := filepath.Join(scratch, fmt.Sprintf("wt-%d", i))
			branch := fmt.Sprintf("bench-wt-%d", i)
			t0 := time.Now()
			git(top, "worktree", "add", "-q", "-b", branch, dir, "HEAD")
			d := time.Since(t0)
			size := du(dir) + du(filepath.Join(top, ".git", "worktrees", filepath.Base(dir)))
			git(top, "worktree", "remove", "--force", dir)
			git(top, "branch", "-q", "-D", branch)
			return d, size
		},
		func(i int) (time.Duration, int64) {
			dir := filepath.Join(scratch, fmt.Sprintf("clone-%d", i))
			t0 := time.Now()
			git(scratch, "clone", "-q", "--shared", "--no-checkout", "--single-branch", top, dir)
			git(dir, "checkout", "-q", "-f", "-B", "bench", head)
			d := time.Since(t0)
			size := du(dir)
			if err := os.RemoveAll(dir); err != nil {
				log.Fatal(err)
			}
			return d, size
		},
	}
	for i := range *n {
		for j := range runs {
			k := (i + j) % len(runs)
			d, size := runs[k](i)
			res[k].ds = append(res[k].ds, d)
			res[k].disk = size
		}
	}
	files, _ := exec.Command("git", "-C", top, "ls-files").Output()
	nfiles := 0
	for _, b := range files {
		if b == '\n' {
			nfiles++
		}
	}
	fmt.Printf("%s: %d files at HEAD; %d rounds, interleaved; %s, %d CPUs\n", top, nfiles, *n, runtime.GOOS, runtime.NumCPU())
	for _, r := range res {
		slices.Sort(r.ds)
		fmt.Printf("%-32s median %-10v min %-10v max %-10v disk %s\n", r.name, r.ds[len(r.ds)/2].Round(time.Millisecond), r.ds[0].Round(time.Millisecond), r.ds[len(r.ds)-1].Round(time.Millisecond), mib(r.disk))
	}
	fmt.Printf("boris / git worktree add: %.2f (median)\n", float64(res[0].ds[len(res[0].ds)/2])/float64(res[1].ds[len(res[1].ds)/2]))
}

// du is the disk a tree takes (allocated blocks), symlinks not followed.
func du(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		var st syscall.Stat_t
		if syscall.Lstat(p, &st) == nil {
			n += st.Blocks * 512
		}
		return nil
	})
	return n
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
