package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/bench/internal/kit"
)

// startMain measures what a start of boris costs with checkpoints on, on
// each tree twice: committed to git (clean status) and the same files
// without git. Every figure is set against a warm `git status
// --porcelain` of the git copy, taken in the same rounds:
//
//   - the first call that can change the tree (bash `echo x >> f`) with a
//     fresh store: from starting the binary to its answer, and the same
//     with --checkpoints off;
//   - the same on a second start with the store of the first (the file
//     the first call changed was put back in between, as a harness
//     resetting a task would);
//   - the store's size after the first start;
//   - a restore of 100 changed files (paths given) against `git checkout
//     -- <the 100 files>`;
//   - a call that changes nothing (bash `true`), checkpoints on and off.
func startMain(trees string, n int, linuxTar, linuxDir, linuxGit string) {
	tmp, bin := kit.Build("boris-bench-start")
	defer os.RemoveAll(tmp)
	up, _ := exec.Command("uptime").Output()
	fmt.Printf("checkpoint start-up costs, %d rounds (medians), git %s; %s", n, gitVersion(), up)
	for _, name := range strings.Split(trees, ",") {
		var plain, gitTree string
		switch name {
		case "repo":
			gitTree = filepath.Join(tmp, "repo-git")
			run("git", "clone", "-q", ".", gitTree)
			plain = filepath.Join(tmp, "repo-plain")
			run("cp", "-a", gitTree, plain)
			check(os.RemoveAll(filepath.Join(plain, ".git")))
		case "linux":
			plain = linuxDir
			if plain == "" {
				plain = unpackLinux(tmp, linuxTar)
				fixIgnore(plain)
			}
			gitTree = linuxGit
			if gitTree == "" {
				gitTree = filepath.Join(tmp, "linux-git")
				run("cp", "-a", plain+"/.", gitTree)
				git(gitTree, "init", "-q")
				git(gitTree, "add", "-A")
				git(gitTree, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "base")
			}
		default:
			fmt.Printf("unknown tree %s (repo or linux)\n", name)
			continue
		}
		files, bytes := count(plain)
		fmt.Printf("\n== %s: %d files, %.1f MB (not ignored)\n", name, files, float64(bytes)/1e6)
		startTree(name+", git", gitTree, gitTree, tmp, bin, n)
		startTree(name+", no git", plain, gitTree, tmp, bin, n)
	}
}

// startTree measures one tree (ws); gitTree is the git copy whose status
// and checkout are the reference (ws itself on the git tree).
func startTree(label, ws, gitTree, tmp, bin string, n int) {
	ctx := context.Background()
	changed := pick(ws, 100)
	f0 := filepath.Join(ws, changed[0])
	orig, err := os.ReadFile(f0)
	check(err)
	reset := func() {
		check(os.WriteFile(f0, orig, 0o644))
		if ws == gitTree {
			// As after a fresh checkout: the index has the file's stat.
			_ = exec.Command("git", "-C", ws, "update-index", "-q", "--refresh").Run()
		}
	}
	store := filepath.Join(tmp, "store-"+strings.NewReplacer(" ", "", ",", "-").Replace(label))
	status := func() time.Duration {
		t0 := time.Now()
		git(gitTree, "status", "--porcelain")
		return time.Since(t0)
	}
	status() // warm
	firstCall := func(args ...string) time.Duration {
		t0 := time.Now()
		cs, cmd := kit.Stdio(ctx, bin, append([]string{"--workdir=" + ws, "--log-level=error"}, args...)...)
		kit.Call(ctx, cs, "bash", map[string]any{"command": "echo x >> " + sqb(f0)})
		d := time.Since(t0)
		cs.Close()
		_ = cmd.Wait()
		reset()
		return d
	}
	var first, second, off, st1, st2, st3 []time.Duration
	var storeBytes int64
	for i := 0; i < n; i++ {
		check(os.RemoveAll(store))
		first = append(first, firstCall("--checkpoint-dir="+store))
		storeBytes = dirSize(store)
		st1 = append(st1, status())
		second = append(second, firstCall("--checkpoint-dir="+store))
		st2 = append(st2, status())
		off = append(off, firstCall("--checkpoints=off"))
		st3 = append(st3, status())
	}
	gs := append(append(append([]time.Duration{}, st1...), st2...), st3...)
	fmt.Printf("-- %s\n", label)
	row("first modifying call, fresh store", first, "git status --porcelain (warm)", gs)
	row("second start, same store", second, "git status --porcelain (warm)", gs)
	row("first modifying call, --checkpoints off", off, "git status --porcelain (warm)", gs)
	// What checkpoints add to the wait (the process start and the MCP
	// handshake are the same either way): paired by round.
	row("  wait added, first start (on − off)", sub(first, off), "git status --porcelain (warm)", gs)
	row("  wait added, second start (on − off)", sub(second, off), "git status --porcelain (warm)", gs)
	fmt.Printf("%-44s %10.1f MB after the first start (%s)\n", "store", float64(storeBytes)/1e6, store)

	// One session from here: restores of 100 files and calls that change
	// nothing, against git in the same rounds.
	cs, cmd := kit.Stdio(ctx, bin, "--workdir="+ws, "--checkpoint-dir="+store, "--log-level=error")
	offCS, offCmd := kit.Stdio(ctx, bin, "--workdir="+ws, "--checkpoints=off", "--log-level=error")
	defer func() { cs.Close(); offCS.Close(); _ = cmd.Wait(); _ = offCmd.Wait() }()
	kit.Call(ctx, cs, "bash", map[string]any{"command": "true"})
	base := newestID(ctx, cs)
	var restore, checkout []time.Duration
	for i := 0; i < n; i++ {
		edit(ws, changed, i)
		t0 := time.Now()
		kit.Call(ctx, cs, "checkpoint", map[string]any{"action": "restore", "id": base, "paths": changed})
		restore = append(restore, time.Since(t0))
		edit(gitTree, changed, i)
		t0 = time.Now()
		git(gitTree, append([]string{"checkout", "--"}, changed...)...)
		checkout = append(checkout, time.Since(t0))
		if ws == gitTree {
			// The restore changed the files' stat: as after a checkout.
			_ = exec.Command("git", "-C", ws, "update-index", "-q", "--refresh").Run()
		}
	}
	row("restore of 100 changed files (paths)", restore, "git checkout -- <100 files>", checkout)
	var on, offT, st []time.Duration
	for i := 0; i < 20*n; i++ {
		t0 := time.Now()
		kit.Call(ctx, cs, "bash", map[string]any{"command": "true"})
		on = append(on, time.Since(t0))
		t0 = time.Now()
		kit.Call(ctx, offCS, "bash", map[string]any{"command": "true"})
		offT = append(offT, time.Since(t0))
		st = append(st, status())
	}
	row("no-change call (bash true), checkpoints on", on, "git status --porcelain (warm)", st)
	row("no-change call (bash true), checkpoints off", offT, "git status --porcelain (warm)", st)
}

// newestID is the id of the newest checkpoint.
func newestID(ctx context.Context, cs *mcp.ClientSession) string {
	out := kit.Call(ctx, cs, "checkpoint", map[string]any{"action": "list"})
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(f[0], "c") {
			return f[0]
		}
	}
	check(fmt.Errorf("no checkpoint in %q", out))
	return ""
}

func sqb(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// sub is a − b, round by round.
func sub(a, b []time.Duration) []time.Duration {
	out := make([]time.Duration, len(a))
	for i := range a {
		out[i] = max(a[i]-b[i], 0)
	}
	return out
}
