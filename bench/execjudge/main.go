// Command execjudge measures what checking every exec costs: the same
// shell loop of -n execs of /bin/true run plainly and with the exec filter
// (each exec held by the kernel, its argv read by boris, a judge asked,
// the answer sent back), alternated in each of -rounds rounds so the
// machine's load weighs on both alike. It prints the median time of the
// loop each way and the difference per exec; the judge is an allow-all
// function, so the figure is the mechanism's own cost (a rules engine's
// match comes on top).
//
//	go run ./bench/execjudge [-n 200] [-rounds 15]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/boris-mcp/boris/internal/execcheck"
	"github.com/boris-mcp/boris/internal/shell"
)

func main() {
	n := flag.Int("n", 200, "execs of /bin/true per loop")
	rounds := flag.Int("rounds", 15, "rounds (each runs the loop both ways)")
	prof := flag.String("cpuprofile", "", "write boris's CPU profile of the rounds here")
	flag.Parse()

	dir, err := os.MkdirTemp("", "execjudge")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	env := shell.Environ(os.Environ())
	script := `i=0; while [ $i -lt ` + strconv.Itoa(*n) + ` ]; do /bin/true; i=$((i+1)); done`

	plain := shell.NewRunner("/bin/bash", env, shell.Options{})
	th := execcheck.NewThread()
	defer th.Close()
	w, err := execcheck.Attach(th.Do)
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	judged := shell.NewRunner("/bin/bash", env, shell.Options{Start: th.Start})
	allow := func(context.Context, int, []string) error { return nil }

	// cpu is boris's own CPU time so far and its reaped children's.
	cpu := func() (self, children time.Duration) {
		var s, c syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &s)
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &c)
		tv := func(r syscall.Rusage) time.Duration {
			return time.Duration(r.Utime.Nano() + r.Stime.Nano())
		}
		return tv(s), tv(c)
	}
	var selfCPU, childCPU [2]time.Duration
	run := func(r *shell.Runner, track bool) time.Duration {
		k := 0
		if track {
			k = 1
		}
		s0, c0 := cpu()
		defer func() {
			s1, c1 := cpu()
			selfCPU[k] += s1 - s0
			childCPU[k] += c1 - c0
		}()
		p, err := r.Start(shell.Command{Script: script, Dir: dir, Gated: true})
		if err != nil {
			log.Fatal(err)
		}
		if track {
			c := w.Track(p.Pgid(), context.Background(), allow)
			defer c.Untrack()
		}
		t0 := time.Now()
		if err := p.Open(); err != nil {
			log.Fatal(err)
		}
		res := p.Wait(context.Background(), time.Minute)
		d := time.Since(t0)
		p.Close()
		if res.ExitCode != 0 {
			log.Fatalf("loop failed: %+v %s", res, res.Stderr.Text)
		}
		return d
	}
	run(plain, false) // warm the page cache and the probe
	run(judged, true)
	selfCPU, childCPU = [2]time.Duration{}, [2]time.Duration{}
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	var a, b, diff []time.Duration
	for i := range *rounds {
		// Alternate which goes first, so neither always follows the other.
		var x, y time.Duration
		if i%2 == 0 {
			x = run(plain, false)
			y = run(judged, true)
		} else {
			y = run(judged, true)
			x = run(plain, false)
		}
		a, b, diff = append(a, x), append(b, y), append(diff, y-x)
	}
	checked, _ := w.Counts()
	ma, mb := median(a), median(b)
	fmt.Printf("loop of %d execs, median of %d rounds: plain %v, every exec judged %v (ratio %.2f)\n", *n, *rounds, ma.Round(time.Microsecond), mb.Round(time.Microsecond), float64(mb)/float64(ma))
	fmt.Printf("per exec: plain %.1f µs, judged %.1f µs; the check's cost (median of the rounds' paired differences) %.1f µs wall (%d execs checked in all)\n",
		us(ma)/float64(*n), us(mb)/float64(*n), us(median(diff))/float64(*n), checked)
	execs := float64(*n * *rounds)
	fmt.Printf("CPU per exec: boris %.1f µs plain, %.1f µs judged; the commands' processes %.1f µs plain, %.1f µs judged\n",
		us(selfCPU[0])/execs, us(selfCPU[1])/execs, us(childCPU[0])/execs, us(childCPU[1])/execs)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
