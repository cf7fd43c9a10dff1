// Command tenantbench measures what one agent's attacks do to another agent
// of the same boris: for each attack of package tenant (fork bomb, memory
// hogs, every core busy, a full disk), in a fresh boris:latest container
// with a pids and a memory limit, agent B's latency and failures with agent
// A idle and during the attack (the ratios are within one run), and boris's
// resident memory. Run it from the e2e directory after `make images`:
//
//	go run ./cmd/tenantbench                 # the shipped protections
//	go run ./cmd/tenantbench -unguarded      # BORIS_UNGUARDED=1, --sandbox off
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	tclog "github.com/testcontainers/testcontainers-go/log"

	"github.com/boris-mcp/boris/e2e/tenant"
)

func main() {
	image := flag.String("image", "boris:latest", "boris image to run")
	unguarded := flag.Bool("unguarded", false, "turn the protections off (BORIS_UNGUARDED=1, --sandbox off)")
	sandbox := flag.String("sandbox", "", "--sandbox value with the protections on (default: none, the image's auto: on with two tokens)")
	only := flag.String("attacks", "", "comma-separated attack keys to run (default all: "+keys()+")")
	idle := flag.Duration("idle", 5*time.Second, "how long B is measured with A idle, before each attack")
	verbose := flag.Bool("v", false, "log progress")
	shares := flag.Int64("cpu-shares", 0, "the container's cpu.shares (0: docker's 1024); a large value keeps the machine's other work from deciding B's latency")
	flag.Parse()
	os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	tclog.SetDefault(log.New(io.Discard, "", 0))
	if err := run(tenant.Options{Image: *image, Unguarded: *unguarded, Sandbox: *sandbox, CPUShares: *shares}, *only, *idle, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "tenantbench:", err)
		os.Exit(1)
	}
}

func keys() string {
	var k []string
	for _, a := range tenant.Attacks {
		k = append(k, a.Key)
	}
	return strings.Join(k, ",")
}

func run(opts tenant.Options, only string, idle time.Duration, verbose bool) error {
	ctx := context.Background()
	image, unguarded, sandbox := opts.Image, opts.Unguarded, opts.Sandbox
	ro := tenant.RunOptions{Idle: idle}
	if verbose {
		ro.Log = func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	}
	var results []*tenant.Result
	for _, at := range tenant.Attacks {
		if only != "" && !slices.Contains(strings.Split(only, ","), at.Key) {
			continue
		}
		box, err := tenant.Start(ctx, opts)
		if err != nil {
			return err
		}
		r, err := tenant.Run(ctx, box, at, ro)
		if verbose && err == nil && (r.EndErr != nil || r.AnswerErr != nil) {
			fmt.Fprintf(os.Stderr, "log of boris (%s):\n%s\n", at.Key, box.Logs(ctx))
		}
		box.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", at.Name, err)
		}
		results = append(results, r)
	}
	mode := "protections on"
	if unguarded {
		mode = "protections off (BORIS_UNGUARDED=1, --sandbox off)"
	} else if sandbox != "" {
		mode += ", --sandbox " + sandbox
	}
	if opts.CPUShares > 0 {
		mode += fmt.Sprintf(", --cpu-shares %d", opts.CPUShares)
	}
	fmt.Printf("%s, --pids-limit %d, --memory %d MiB (no swap), /workspace tmpfs %s; %s\n",
		image, tenant.PidsLimit, tenant.MemoryLimit>>20, tenant.WorkspaceSize, mode)
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("this machine's load average at the end: %s", load)
	}
	fmt.Printf("B: bash (echo ok), view, grep every %s; A idle for %s, then the attack (one container each)\n\n", tenant.Tick, idle)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "attack\tB calls\tfailed\tp50 idle\tp50\t×\tp99 idle\tp99\t×\tRSS idle\tRSS peak\tpids peak\tmem peak\tOOM kills\tboris\tA left\t")
	for _, r := range results {
		alive := "alive"
		if err := r.After.Alive(r.Before); err != nil {
			alive = "DEAD"
		}
		left := fmt.Sprintf("%d", len(r.Remaining))
		if r.RemainingErr != nil {
			left = "?"
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%d\t%s\t%s\t\n", r.Attack.Name,
			r.During.Calls, r.Failed,
			msec(r.Idle.P50), msec(r.During.P50), ratio(r.During.P50, r.Idle.P50),
			msec(r.Idle.P99), msec(r.During.P99), ratio(r.During.P99, r.Idle.P99),
			mib(r.RSSIdle), mib(r.RSSPeak), r.PidsPeak, mib(r.MemoryPeak), r.OOMKills, alive, left)
	}
	w.Flush()
	fmt.Println()
	for _, r := range results {
		fmt.Printf("%s: A's command over by %s; A's answer: %s\n", r.Attack.Name, r.EndedBy, oneLine(r.Answer, r.AnswerErr))
		if r.EndErr != nil {
			fmt.Printf("  ending it (%s) failed: %v\n", r.EndedBy, r.EndErr)
		}
		if r.Failed > 0 {
			fmt.Printf("  B's first failures: %s\n", strings.Join(r.During.Errors, "; "))
		}
		if run, idle := burners(r); run > 0 {
			fmt.Printf("  A's running processes at the hold: %d, at SCHED_IDLE: %d\n", run, idle)
		}
		if err := r.After.Alive(r.Before); err != nil {
			fmt.Printf("  boris: %v\n", err)
		}
		if verbose {
			fmt.Printf("  B's slowest calls during the attack: %s\n", slowest(r, 8))
		}
	}
	return nil
}

// burners counts A's running processes when the attack had lasted its
// hold, and those of them at SCHED_IDLE (policy 5).
func burners(r *tenant.Result) (running, idle int) {
	for _, p := range r.AtHold {
		if p.Cwd == tenant.ADir && p.State == "R" {
			running++
			if p.Policy == 5 {
				idle++
			}
		}
	}
	return running, idle
}

// slowest lists B's slowest calls of the attack window, with when they
// were sent (from the attack's start).
func slowest(r *tenant.Result, n int) string {
	start := r.Idle.End
	var in []tenant.Sample
	for _, s := range r.Samples {
		if !s.At.Before(start) && s.At.Before(r.During.End) {
			in = append(in, s)
		}
	}
	slices.SortFunc(in, func(a, b tenant.Sample) int { return int(b.Took - a.Took) })
	var out []string
	for _, s := range in[:min(n, len(in))] {
		out = append(out, fmt.Sprintf("%s %s at +%s", s.Tool, msec(s.Took), s.At.Sub(start).Round(time.Millisecond)))
	}
	return strings.Join(out, ", ")
}

func msec(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }

func ratio(a, b time.Duration) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(a)/float64(b))
}

func mib(n int64) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
}

func oneLine(s string, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	s = strings.ReplaceAll(strings.TrimSpace(s), "\n", " | ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
