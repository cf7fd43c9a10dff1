// Command patch measures apply_patch against the same edits made with
// str_replace, through MCP over stdio: a 20-hunk patch of a 5,000-line
// file, and a 50-file patch (one hunk each). It builds boris from the
// repository, drives it with the official go-sdk client, and prints the
// median (p50) and p90 of each way, and their ratio.
//
//	go run ./bench/patch [-n 50]
//
// Each round restores the files first (outside the timing). The str_replace
// side is timed twice: with a view of each file before its edits, as
// boris's default view-before-edit requires, and without (a server started
// with --require-view-before-edit=false).
//
// With -corpus it measures apply_patch on real changes instead: every
// commit of a git repository's history (-repo, this one by default)
// written as the V4A patch that makes it from its parent, with an
// "@@ <enclosing function>" line per hunk and with bare "@@" (see
// internal/patch/corpus), applied at the parent's files over stdio and
// over HTTP, -n rounds each; it prints p50, p90, p99 and the maximum of
// the call's latency and checks every result against the commit.
//
//	go run ./bench/patch -corpus [-repo DIR] [-n 3]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/bench/internal/kit"
)

const (
	fileLines = 5000
	hunks     = 20
	files     = 50
)

func main() {
	n := flag.Int("n", 50, "rounds per measurement (with -corpus: per commit and style, default 3)")
	corpusMode := flag.Bool("corpus", false, "measure apply_patch on a git repository's history")
	repo := flag.String("repo", ".", "with -corpus: the repository")
	flag.Parse()

	tmp, bin := kit.Build("boris-bench-patch")
	defer os.RemoveAll(tmp)
	if *corpusMode {
		rounds := *n
		if !isSet("n") {
			rounds = 3
		}
		if err := runCorpus(bin, tmp, *repo, rounds); err != nil {
			log.Fatal(err)
		}
		return
	}
	work := filepath.Join(tmp, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	strict, _ := kit.Stdio(ctx, bin, "--workdir="+work, "--log-level=error")
	defer strict.Close()
	loose, _ := kit.Stdio(ctx, bin, "--workdir="+work, "--log-level=error", "--require-view-before-edit=false")
	defer loose.Close()

	// One file, twenty hunks.
	big := bigFile()
	bigEdits := bigFileEdits()
	bigPatch := patchOf(map[string][]edit{"big.go": bigEdits})
	restoreBig := func() { write(work, "big.go", big) }

	// Fifty files, one hunk each.
	small := map[string]string{}
	manyEdits := map[string][]edit{}
	for i := range files {
		name := fmt.Sprintf("pkg%02d/file.go", i)
		small[name] = smallFile(i)
		manyEdits[name] = []edit{{old: fmt.Sprintf("\treturn %d\n", i), new: fmt.Sprintf("\treturn %d + 1\n", i), ctx: fmt.Sprintf("func F%d() int {\n", i)}}
	}
	manyPatch := patchOf(manyEdits)
	restoreMany := func() {
		for name, c := range small {
			write(work, name, c)
		}
	}

	fmt.Printf("apply_patch vs str_replace through MCP over stdio, %d rounds each (p50 / p90)\n\n", *n)
	report("20 hunks, one 5,000-line file", *n, restoreBig,
		func() { call(ctx, strict, "apply_patch", map[string]any{"input": bigPatch}) },
		func() {
			call(ctx, strict, "view", map[string]any{"path": "big.go"})
			for _, e := range bigEdits {
				call(ctx, strict, "str_replace", map[string]any{"path": "big.go", "old_str": e.ctx + e.old, "new_str": e.ctx + e.new})
			}
		},
		func() {
			for _, e := range bigEdits {
				call(ctx, loose, "str_replace", map[string]any{"path": "big.go", "old_str": e.ctx + e.old, "new_str": e.ctx + e.new})
			}
		})
	names := make([]string, 0, len(manyEdits))
	for name := range manyEdits {
		names = append(names, name)
	}
	slices.Sort(names)
	report("50 files, one hunk each", *n, restoreMany,
		func() { call(ctx, strict, "apply_patch", map[string]any{"input": manyPatch}) },
		func() {
			for _, name := range names {
				e := manyEdits[name][0]
				call(ctx, strict, "view", map[string]any{"path": name})
				call(ctx, strict, "str_replace", map[string]any{"path": name, "old_str": e.ctx + e.old, "new_str": e.ctx + e.new})
			}
		},
		func() {
			for _, name := range names {
				e := manyEdits[name][0]
				call(ctx, loose, "str_replace", map[string]any{"path": name, "old_str": e.ctx + e.old, "new_str": e.ctx + e.new})
			}
		})
}

func call(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) {
	kit.Call(ctx, cs, name, args)
}

// report times each way n times (restoring the files before each round,
// untimed, and interleaving the ways so the machine's drift hits all).
func report(what string, n int, restore func(), patch, viewReplace, replace func()) {
	ways := []struct {
		name string
		run  func()
		d    []time.Duration
	}{{name: "apply_patch (1 call)", run: patch}, {name: "view + str_replace", run: viewReplace}, {name: "str_replace only", run: replace}}
	for range n {
		for i := range ways {
			restore()
			start := time.Now()
			ways[i].run()
			ways[i].d = append(ways[i].d, time.Since(start))
		}
	}
	fmt.Println(what)
	p50 := func(d []time.Duration) time.Duration { return kit.Pct(d, 50) }
	base := p50(ways[0].d)
	for _, w := range ways {
		fmt.Printf("  %-22s p50 %9s  p90 %9s  %5.1fx apply_patch\n", w.name, p50(w.d).Round(time.Microsecond), kit.Pct(w.d, 90).Round(time.Microsecond), float64(p50(w.d))/float64(base))
	}
	fmt.Println()
}

// edit replaces old (which follows ctx) with new.
type edit struct{ ctx, old, new string }

func bigFile() string {
	var b strings.Builder
	for i := range fileLines / 5 {
		fmt.Fprintf(&b, "func F%d(x int) int {\n\ty := x * %d\n\treturn y + %d\n}\n\n", i, i, i)
	}
	return b.String()
}

// bigFileEdits spreads the hunks evenly over the file.
func bigFileEdits() []edit {
	var out []edit
	for k := range hunks {
		i := k * (fileLines / 5 / hunks)
		out = append(out, edit{ctx: fmt.Sprintf("func F%d(x int) int {\n", i), old: fmt.Sprintf("\ty := x * %d\n", i), new: fmt.Sprintf("\ty := x * %d * 2\n", i)})
	}
	return out
}

func smallFile(i int) string {
	return fmt.Sprintf("package pkg%02d\n\n// F%d returns a number.\nfunc F%d() int {\n\treturn %d\n}\n", i, i, i, i)
}

// patchOf writes a V4A patch making the edits, one hunk per edit with the
// line before it as context.
func patchOf(edits map[string][]edit) string {
	names := make([]string, 0, len(edits))
	for name := range edits {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	for _, name := range names {
		fmt.Fprintf(&b, "*** Update File: %s\n", name)
		for _, e := range edits[name] {
			b.WriteString("@@\n")
			for _, l := range strings.SplitAfter(strings.TrimSuffix(e.ctx, "\n"), "\n") {
				b.WriteString(" " + strings.TrimSuffix(l, "\n") + "\n")
			}
			b.WriteString("-" + strings.TrimSuffix(e.old, "\n") + "\n")
			b.WriteString("+" + strings.TrimSuffix(e.new, "\n") + "\n")
		}
	}
	b.WriteString("*** End Patch\n")
	return b.String()
}

func write(dir, name, content string) {
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		log.Fatal(err)
	}
}

// isSet reports whether a flag was given.
func isSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
