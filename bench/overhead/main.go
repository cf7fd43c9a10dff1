// Command overhead measures what boris adds to the work it does: a bash
// tool call over stdio against a bare `bash -c true` spawn, and a view of a
// small file. It builds boris from the repository, drives it with the
// official go-sdk client, and prints medians and the ratio.
//
//	go run ./bench/overhead [-n 300]
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

func median(d []time.Duration) time.Duration { return pct(d, 50) }

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func round(d time.Duration) time.Duration { return d.Round(time.Microsecond) }
