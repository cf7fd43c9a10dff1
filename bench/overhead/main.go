// Command overhead measures what boris adds to the work it does: a bash
// tool call over stdio against a bare `bash -c true` spawn, and a view of a
// small file. It builds boris from the repository, drives it with the
// official go-sdk client, and prints medians and the ratio.
//
//	go run ./bench/overhead [-n 300]
//
// With -sandbox it compares a bash call of `true` with the sandbox off and
// on instead (two servers, calls interleaved), and reports the time boris
// took to build the Landlock ruleset at start-up.
//
//	go run ./bench/overhead -sandbox [-sandbox-net deny] [-n 300]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	n := flag.Int("n", 300, "calls per measurement")
	shellPath := flag.String("shell", "/bin/bash", "shell to compare against")
	sandboxMode := flag.Bool("sandbox", false, "compare bash calls with --sandbox off and on")
	sandboxNet := flag.String("sandbox-net", "allow", "with -sandbox: the --sandbox-net of the sandboxed server (deny adds the MPTCP seccomp filter)")
	flag.Parse()

	tmp, err := os.MkdirTemp("", "boris-bench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "boris")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		log.Fatalf("build: %v (run from the repository root)", err)
	}
	work := filepath.Join(tmp, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		log.Fatal(err)
	}
	var small strings.Builder
	for i := range 40 {
		fmt.Fprintf(&small, "line %d of a small source file\n", i)
	}
	if err := os.WriteFile(filepath.Join(work, "small.go"), []byte(small.String()), 0o644); err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	if *sandboxMode {
		sandboxBench(ctx, bin, tmp, work, *shellPath, *sandboxNet, *n)
		return
	}
	cmd := exec.Command(bin, "--transport=stdio", "--workdir="+work, "--shell="+*shellPath, "--log-level=error")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	callTool := func(name string, args map[string]any) time.Duration {
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		d := time.Since(start)
		if err != nil || res.IsError {
			log.Fatalf("%s: %v %+v", name, err, res)
		}
		return d
	}
	spawn := func() time.Duration {
		start := time.Now()
		if err := exec.Command(*shellPath, "-c", "true").Run(); err != nil {
			log.Fatal(err)
		}
		return time.Since(start)
	}

	// Interleave the two so machine noise hits both alike.
	var tool, bare []time.Duration
	for range 20 {
		callTool("bash", map[string]any{"command": "true"})
		spawn()
	}
	for range *n {
		tool = append(tool, callTool("bash", map[string]any{"command": "true"}))
		bare = append(bare, spawn())
	}
	// The protocol floor: a call that does no work (an unknown task id).
	roundTrip := func() time.Duration {
		start := time.Now()
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "task_output", Arguments: map[string]any{"task_id": "none"}}); err != nil {
			log.Fatal(err)
		}
		return time.Since(start)
	}
	var view, floor []time.Duration
	for range 50 {
		callTool("view", map[string]any{"path": "small.go"})
		roundTrip()
	}
	for range *n * 3 {
		view = append(view, callTool("view", map[string]any{"path": "small.go"}))
		floor = append(floor, roundTrip())
	}

	tp, bp := median(tool), median(bare)
	fmt.Printf("bash tool call over stdio   p50 %8s  p90 %8s\n", round(tp), round(pct(tool, 90)))
	fmt.Printf("bare %s -c true spawn  p50 %8s  p90 %8s\n", *shellPath, round(bp), round(pct(bare, 90)))
	fmt.Printf("ratio (goal <= 1.15)        %.3f\n", float64(tp)/float64(bp))
	fmt.Printf("view of a 40-line file      p50 %8s  p90 %8s  (goal p50 <= 300µs)\n", round(median(view)), round(pct(view, 90)))
	fmt.Printf("MCP round trip, no work     p50 %8s  p90 %8s\n", round(median(floor)), round(pct(floor, 90)))
}

// sandboxBench times `true` through the bash tool of two servers, one with
// the sandbox off and one with it on (a denied directory included, so the
// ruleset is built as the complement of it), interleaved.
func sandboxBench(ctx context.Context, bin, tmp, work, shellPath, net string, n int) {
	secret, tmpdir := filepath.Join(tmp, "secret"), filepath.Join(tmp, "tmpdir")
	for _, d := range []string{secret, tmpdir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			log.Fatal(err)
		}
	}
	start := func(args ...string) (*mcp.ClientSession, *strings.Builder) {
		cmd := exec.Command(bin, append([]string{"--transport=stdio", "--workdir=" + work, "--shell=" + shellPath, "--deny-dir=" + secret}, args...)...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmpdir)
		logs := &strings.Builder{}
		cmd.Stderr = logs
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			log.Fatalf("start boris %v: %v\n%s", args, err, logs)
		}
		return cs, logs
	}
	off, _ := start("--log-level=error")
	defer off.Close()
	on, logs := start("--sandbox=on", "--sandbox-net="+net, "--log-level=info")
	defer on.Close()
	callTrue := func(cs *mcp.ClientSession) time.Duration {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "true"}})
		d := time.Since(t0)
		if err != nil || res.IsError {
			log.Fatalf("bash: %v %+v", err, res)
		}
		return d
	}
	for range 20 {
		callTrue(off)
		callTrue(on)
	}
	var a, b []time.Duration
	for i := range n {
		// Alternate which goes first so neither always runs on a warm cache.
		if i%2 == 0 {
			a = append(a, callTrue(off))
			b = append(b, callTrue(on))
		} else {
			b = append(b, callTrue(on))
			a = append(a, callTrue(off))
		}
	}
	build := "?"
	rules := "?"
	for _, line := range strings.Split(logs.String(), "\n") {
		if !strings.Contains(line, "sandbox on") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "build="); ok {
				build = v
			}
			if v, ok := strings.CutPrefix(f, "rules="); ok {
				rules = v
			}
		}
	}
	ap, bp := median(a), median(b)
	fmt.Printf("bash true, sandbox off           p50 %8s  p90 %8s\n", round(ap), round(pct(a, 90)))
	fmt.Printf("bash true, sandbox on, net %-5s p50 %8s  p90 %8s\n", net, round(bp), round(pct(b, 90)))
	fmt.Printf("ratio on/off (goal <= 1.2)       %.3f\n", float64(bp)/float64(ap))
	fmt.Printf("ruleset build at start-up        %s (%s rules, one denied directory)\n", build, rules)
}

func median(d []time.Duration) time.Duration { return pct(d, 50) }

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func round(d time.Duration) time.Duration { return d.Round(time.Microsecond) }
