// Command checkpoint measures what workspace checkpoints cost, side by
// side with git doing the same work on a copy of the same tree, in the
// same run (medians of -n rounds, the two alternating):
//
//   - the first checkpoint of a tree vs `git init && git add -A`;
//   - a checkpoint when nothing changed — the automatic one (changes
//     tracked with inotify) and an explicit create (a full stat scan) — vs
//     a warm `git status --porcelain`;
//   - a checkpoint after 100 files changed (automatic and explicit) vs
//     `git add -A && git write-tree`;
//   - a restore of those 100 files (which first checkpoints the state
//     before it) vs `git checkout -- <the 100 files>`;
//   - what the automatic checkpoint adds to a bash `true` call through MCP
//     over stdio: the same binary with --checkpoints on and off, calls
//     interleaved;
//   - the store's size after 100 checkpoints of one-line edits against the
//     first checkpoint's size (and git's objects after the same 100 edits
//     committed).
//
// The store-level figures call the checkpoint package in this process
// (the code the checkpoint tool runs, without the MCP round trip); the
// bash figure goes through the binary.
//
// Trees: "repo" (this repository, copied) and "linux" (Debian's
// linux-source tarball unpacked; its .gitignore's "/*" rule, which Debian
// adds to ignore everything at the top, is dropped so the ~78k files
// count, for git and boris alike).
//
// -start measures instead what a start costs (start.go): the first call
// that can change the tree and a second start on the same store, on the
// tree committed to git and on the same tree without git, each against a
// warm `git status` in the same rounds; the store's size; a restore of
// 100 files against `git checkout -- <files>`; a call that changes
// nothing.
//
//	go run ./bench/checkpoint [-trees repo,linux] [-n 5] [-calls 200] [-linux-tar /usr/src/linux-source-6.1.tar.xz] [-linux-dir DIR]
//	go run ./bench/checkpoint -start [-trees repo,linux] [-n 5] [-linux-dir DIR] [-linux-git DIR]
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
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/bench/internal/kit"
	"github.com/boris-mcp/boris/internal/checkpoint"
)

type caller struct{ first string }

func (c *caller) ID() string                   { return "bench" }
func (c *caller) CheckpointKey() string        { return "bench" }
func (c *caller) FirstCheckpoint() string      { return c.first }
func (c *caller) SetFirstCheckpoint(id string) { c.first = id }

func main() {
	trees := flag.String("trees", "repo,linux", "trees to measure: repo, linux, or directories")
	n := flag.Int("n", 5, "rounds of each store-level measurement")
	calls := flag.Int("calls", 200, "bash calls per server for the per-call cost")
	linuxTar := flag.String("linux-tar", "/usr/src/linux-source-6.1.tar.xz", "the linux-source tarball (apt-get install linux-source-6.1)")
	linuxDir := flag.String("linux-dir", "", "an unpacked linux tree to copy instead of unpacking the tarball")
	linuxGit := flag.String("linux-git", "", "-start: the same linux tree committed to git (made from -linux-dir when not given)")
	start := flag.Bool("start", false, "measure what a start costs (see start.go) instead")
	flag.Parse()
	if *start {
		startMain(*trees, *n, *linuxTar, *linuxDir, *linuxGit)
		return
	}

	tmp, bin := kit.Build("boris-bench-checkpoint")
	defer os.RemoveAll(tmp)
	fmt.Printf("checkpoints vs git %s, %d CPUs (GOMAXPROCS %d), medians of %d rounds; git %s\n",
		runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), *n, gitVersion())
	for _, name := range strings.Split(*trees, ",") {
		src := name
		switch name {
		case "repo":
			src = "."
		case "linux":
			src = *linuxDir
			if src == "" {
				src = unpackLinux(tmp, *linuxTar)
			}
		}
		measure(name, src, tmp, bin, *n, *calls)
	}
}

// measure runs every measurement on two copies of src: one for boris,
// one for git.
func measure(name, src, tmp, bin string, n, calls int) {
	ws := filepath.Join(tmp, name+"-boris")
	gw := filepath.Join(tmp, name+"-git")
	for _, d := range []string{ws, gw} {
		run("cp", "-a", src+"/.", d)
		os.RemoveAll(filepath.Join(d, ".git"))
		fixIgnore(d)
	}
	files, bytes := count(ws)
	fmt.Printf("\n== %s: %d files, %.1f MB (not ignored)\n", name, files, float64(bytes)/1e6)
	changed := pick(ws, 100)

	var first, gitFirst []time.Duration
	var firstSize int64
	store := filepath.Join(tmp, name+"-store")
	for i := 0; i < n; i++ {
		os.RemoveAll(store)
		t0 := time.Now()
		sv := open(store, ws)
		<-sv.Ready()
		first = append(first, time.Since(t0))
		l, err := sv.List(&caller{})
		check(err)
		firstSize = l.Bytes
		sv.Close()

		os.RemoveAll(filepath.Join(gw, ".git"))
		t0 = time.Now()
		git(gw, "init", "-q")
		git(gw, "add", "-A")
		gitFirst = append(gitFirst, time.Since(t0))
	}
	row("first checkpoint", first, "git init && git add -A", gitFirst)
	gitSize := dirSize(filepath.Join(gw, ".git"))
	fmt.Printf("   store after it: %.1f MB; git's .git: %.1f MB\n", float64(firstSize)/1e6, float64(gitSize)/1e6)

	// The store and the tracker stay open from here on.
	os.RemoveAll(store)
	sv := open(store, ws)
	<-sv.Ready()
	c := &caller{}
	git(gw, "status", "--porcelain") // warm
	var auto, create, status []time.Duration
	for i := 0; i < n*3; i++ {
		t0 := time.Now()
		check(sv.Auto(c, func() string { return "bench" }))
		auto = append(auto, time.Since(t0))
		t0 = time.Now()
		_, err := sv.Create(c, "")
		check(err)
		create = append(create, time.Since(t0))
		t0 = time.Now()
		git(gw, "status", "--porcelain")
		status = append(status, time.Since(t0))
	}
	row("nothing changed: automatic", auto, "git status --porcelain (warm)", status)
	row("nothing changed: create (full scan)", create, "git status --porcelain (warm)", status)

	var auto100, create100, gitAdd []time.Duration
	var restore, gitCheckout []time.Duration
	for i := 0; i < n; i++ {
		// 100 files changed, then the automatic checkpoint.
		edit(ws, changed, i)
		edit(gw, changed, i)
		t0 := time.Now()
		check(sv.Auto(c, func() string { return "bench" }))
		auto100 = append(auto100, time.Since(t0))
		t0 = time.Now()
		git(gw, "add", "-A")
		git(gw, "write-tree")
		gitAdd = append(gitAdd, time.Since(t0))
		l, err := sv.List(c)
		check(err)
		base := l.Checkpoints[0].ID

		// Again, with an explicit create (a full scan).
		edit(ws, changed, i+1000)
		t0 = time.Now()
		_, err = sv.Create(c, "")
		check(err)
		create100 = append(create100, time.Since(t0))

		// Restore: back to base from a third edit, not yet checkpointed,
		// so the restore first stores the state before it, as it would
		// after any command.
		edit(ws, changed, i+2000)
		edit(gw, changed, i+2000)
		t0 = time.Now()
		_, err = sv.Restore(c, base, nil)
		check(err)
		restore = append(restore, time.Since(t0))
		t0 = time.Now()
		git(gw, append([]string{"checkout", "--"}, changed...)...)
		gitCheckout = append(gitCheckout, time.Since(t0))
	}
	row("100 files changed: automatic", auto100, "git add -A && git write-tree", gitAdd)
	row("100 files changed: create (full scan)", create100, "git add -A && git write-tree", gitAdd)
	row("restore of 100 changed files", restore, "git checkout -- <100 files>", gitCheckout)
	sv.Close()

	// Store growth: 100 checkpoints of one-line edits.
	os.RemoveAll(store)
	sv = open(store, ws)
	<-sv.Ready()
	l, err := sv.List(c)
	check(err)
	size1 := l.Bytes
	gitBefore := dirSize(filepath.Join(gw, ".git", "objects"))
	git(gw, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "base")
	gitBase := dirSize(filepath.Join(gw, ".git", "objects"))
	for i := 0; i < 100; i++ {
		f := changed[i%len(changed)]
		appendLine(filepath.Join(ws, f), i)
		appendLine(filepath.Join(gw, f), i)
		check(sv.Auto(c, func() string { return "bench" }))
		git(gw, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qam", "edit")
	}
	l, err = sv.List(c)
	check(err)
	gitAfter := dirSize(filepath.Join(gw, ".git", "objects"))
	fmt.Printf("%-44s %10.2f MB → %.2f MB after 100 checkpoints of one-line edits (+%.2f%%, %d checkpoints kept); git objects %.2f MB → %.2f MB after 100 commits (loose)\n",
		"store size", float64(size1)/1e6, float64(l.Bytes)/1e6, 100*float64(l.Bytes-size1)/float64(size1), len(l.Checkpoints),
		float64(gitBase)/1e6, float64(gitAfter)/1e6)
	_ = gitBefore
	sv.Close()

	bashOverhead(bin, ws, changed, calls, status)
}

// bashOverhead times bash `true` calls and one-line str_replace edits
// through MCP over stdio against two servers on the same tree,
// checkpoints on and off, calls interleaved. Before each edit the server
// with checkpoints takes one (the previous edit changed a file); the two
// servers edit different files.
func bashOverhead(bin, ws string, files []string, calls int, status []time.Duration) {
	ctx := context.Background()
	store, err := os.MkdirTemp("", "boris-bench-store")
	check(err)
	defer os.RemoveAll(store)
	on, onCmd := kit.Stdio(ctx, bin, "--workdir="+ws, "--checkpoint-dir="+store, "--log-level=error")
	off, offCmd := kit.Stdio(ctx, bin, "--workdir="+ws, "--checkpoints=off", "--log-level=error")
	defer func() { on.Close(); off.Close(); _ = onCmd.Wait(); _ = offCmd.Wait() }()
	args := map[string]any{"command": "true"}
	kit.Call(ctx, on, "checkpoint", map[string]any{"action": "list"}) // after the start-up checkpoint
	for i := 0; i < 20; i++ {
		kit.Call(ctx, on, "bash", args)
		kit.Call(ctx, off, "bash", args)
	}
	var tOn, tOff []time.Duration
	for i := 0; i < calls; i++ {
		t0 := time.Now()
		kit.Call(ctx, on, "bash", args)
		tOn = append(tOn, time.Since(t0))
		t0 = time.Now()
		kit.Call(ctx, off, "bash", args)
		tOff = append(tOff, time.Since(t0))
	}
	mOn, mOff := kit.Pct(tOn, 50), kit.Pct(tOff, 50)
	fmt.Printf("%-44s %10s  vs  %-32s %10s  → %+.1f µs (%+.1f%%); a warm git status takes %s\n",
		"bash `true`, checkpoints on", ms(mOn), "checkpoints off", ms(mOff), float64(mOn-mOff)/1e3, 100*(float64(mOn)/float64(mOff)-1), ms(kit.Pct(status, 50)))

	// Edits: each server views its file once, then replaces a line back
	// and forth.
	edits := func(cs *mcp.ClientSession, f string) func(i int) {
		p := filepath.Join(ws, f)
		appendLine(p, -1)
		kit.Call(ctx, cs, "view", map[string]any{"path": p})
		return func(i int) {
			from, to := "// edit -1\n", "// edit -2\n"
			if i%2 == 1 {
				from, to = to, from
			}
			kit.Call(ctx, cs, "str_replace", map[string]any{"path": p, "old_str": from, "new_str": to})
		}
	}
	eOn, eOff := edits(on, files[0]), edits(off, files[1])
	tOn, tOff = tOn[:0], tOff[:0]
	for i := 0; i < calls; i++ {
		t0 := time.Now()
		eOn(i)
		tOn = append(tOn, time.Since(t0))
		t0 = time.Now()
		eOff(i)
		tOff = append(tOff, time.Since(t0))
	}
	mOn, mOff = kit.Pct(tOn, 50), kit.Pct(tOff, 50)
	fmt.Printf("%-44s %10s  vs  %-32s %10s  → %+.1f µs (%+.1f%%)\n",
		"str_replace, a checkpoint before each", ms(mOn), "checkpoints off", ms(mOff), float64(mOn-mOff)/1e3, 100*(float64(mOn)/float64(mOff)-1))
}

func open(store, ws string) *checkpoint.Service {
	sv, err := checkpoint.Open(checkpoint.Options{Dir: store, Roots: []string{ws}, MaxBytes: 8 << 30, MaxFileSize: 32 << 20})
	check(err)
	return sv
}

func row(what string, a []time.Duration, gitWhat string, b []time.Duration) {
	ma, mb := kit.Pct(a, 50), kit.Pct(b, 50)
	fmt.Printf("%-44s %10s  vs  %-32s %10s  = %.3f×\n", what, ms(ma), gitWhat, ms(mb), float64(ma)/float64(mb))
}

func ms(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.1f µs", float64(d)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// pick chooses k text files of the tree, spread over it, the same for
// every run.
func pick(root string, k int) []string {
	var all []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() && (strings.HasSuffix(p, ".c") || strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".md")) {
			rel, _ := filepath.Rel(root, p)
			all = append(all, rel)
		}
		return nil
	})
	slices.Sort(all)
	step := max(len(all)/k, 1)
	var out []string
	for i := 0; i < len(all) && len(out) < k; i += step {
		out = append(out, all[i])
	}
	return out
}

func edit(root string, files []string, round int) {
	for _, f := range files {
		appendLine(filepath.Join(root, f), round)
	}
}

func appendLine(p string, i int) {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	check(err)
	fmt.Fprintf(f, "// edit %d\n", i)
	check(f.Close())
}

// count sums up the files git would add (git ls-files after add, read
// through git check-ignore would be slower: the walk below applies no
// ignore rules and so overcounts only what is ignored).
func count(root string) (int, int64) {
	out, err := exec.Command("git", "-C", root, "ls-files", "--others", "--exclude-standard", "-z").Output()
	if err != nil {
		// Not a git checkout (the copy has no .git): git init a scratch one.
		run("git", "-C", root, "init", "-q")
		defer os.RemoveAll(filepath.Join(root, ".git"))
		out, err = exec.Command("git", "-C", root, "ls-files", "--others", "--exclude-standard", "-z").Output()
		check(err)
	}
	var n int
	var size int64
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(root, f)); err == nil {
			n++
			size += fi.Size()
		}
	}
	return n, size
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// fixIgnore drops Debian's "ignore everything at the top" rule from a
// linux-source tree's .gitignore.
func fixIgnore(root string) {
	p := filepath.Join(root, ".gitignore")
	b, err := os.ReadFile(p)
	if err != nil {
		return
	}
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "/*" && l != "!/debian/" {
			keep = append(keep, l)
		}
	}
	check(os.WriteFile(p, []byte(strings.Join(keep, "\n")), 0o644))
}

func unpackLinux(tmp, tar string) string {
	if _, err := os.Stat(tar); err != nil {
		log.Fatalf("%s: %v (apt-get install -y linux-source-6.1, or pass -linux-dir)", tar, err)
	}
	dst := filepath.Join(tmp, "linux-src")
	check(os.Mkdir(dst, 0o755))
	run("tar", "-xf", tar, "-C", dst)
	ents, err := os.ReadDir(dst)
	check(err)
	if len(ents) != 1 {
		log.Fatalf("%s: expected one directory in the tarball", tar)
	}
	return filepath.Join(dst, ents[0].Name())
}

func git(dir string, args ...string) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		log.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func gitVersion() string {
	out, _ := exec.Command("git", "--version").Output()
	return strings.TrimSpace(strings.TrimPrefix(string(out), "git version "))
}

func run(name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatalf("%s %v: %v", name, args, err)
	}
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
