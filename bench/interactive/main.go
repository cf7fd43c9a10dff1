// Command interactive measures boris's interactive commands through MCP
// over stdio: the round trip of a task_input to a cat under a terminal
// until its echo is read (the input sent with wait_ms 0, then read), p50
// and p90 over -n calls; and boris's RSS with 10 sessions × 10 idle
// terminal tasks.
//
//	go run ./bench/interactive [-n 300]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/boris-mcp/boris/bench/internal/kit"
)

func main() {
	n := flag.Int("n", 300, "task_input calls")
	flag.Parse()

	tmp, bin := kit.Build("boris-bench-interactive")
	defer os.RemoveAll(tmp)
	ctx := context.Background()
	cs, cmd := kit.Stdio(ctx, bin, "--workdir="+tmp, "--log-level=error")
	defer cs.Close()
	call := func(name string, args map[string]any) string { return kit.Call(ctx, cs, name, args) }
	idRe := regexp.MustCompile(`task_id: (task_\d+)`)

	// Round trip: a line to cat under a terminal until its echo is back.
	id := idRe.FindStringSubmatch(call("bash", map[string]any{"command": "cat", "tty": true, "wait_ms": 200}))[1]
	var trips, sends []time.Duration
	for i := range *n {
		line := "line " + strconv.Itoa(i)
		start := time.Now()
		got := call("task_input", map[string]any{"task_id": id, "input": line + "\n", "wait_ms": 0})
		sends = append(sends, time.Since(start))
		for strings.Count(got, line+"\n") < 2 { // the terminal's echo, then cat's copy
			got += call("task_output", map[string]any{"task_id": id, "wait_ms": 1000})
		}
		trips = append(trips, time.Since(start))
	}
	fmt.Printf("cat under a terminal, %d lines through MCP over stdio:\n", *n)
	fmt.Printf("  task_input with wait_ms 0 (the call alone)  p50 %v  p90 %v\n", pct(sends, 50), pct(sends, 90))
	fmt.Printf("  line sent → its echo read (round trip)      p50 %v  p90 %v\n", pct(trips, 50), pct(trips, 90))
	call("task_kill", map[string]any{"task_id": id})

	// Memory: 10 sessions × 10 idle terminal tasks.
	base := rss(cmd.Process.Pid)
	handleRe := regexp.MustCompile(`session: (s_[A-Za-z0-9_-]+)`)
	for range 10 {
		h := handleRe.FindStringSubmatch(call("bash", map[string]any{"command": "true", "session": "new"}))[1]
		for range 10 {
			call("bash", map[string]any{"command": "cat", "tty": true, "wait_ms": 0, "session": h})
		}
	}
	time.Sleep(time.Second)
	all := rss(cmd.Process.Pid)
	fmt.Printf("boris RSS: %.1f MB before, %.1f MB with 10 sessions × 10 idle terminal tasks (%.0f KB a task)\n",
		float64(base)/1024, float64(all)/1024, float64(all-base)/100)
}

func pct(d []time.Duration, p int) time.Duration { return kit.Pct(d, p).Round(time.Microsecond) }

// rss returns a process's resident set in KB.
func rss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}
