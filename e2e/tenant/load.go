package tenant

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tick is how often agent B works: each tick it makes a bash, a view and a
// grep call, one after the other.
const Tick = 100 * time.Millisecond

// callTimeout bounds one of B's calls: longer is a failure.
const callTimeout = 15 * time.Second

// Sample is one of B's calls.
type Sample struct {
	Tool string
	At   time.Time // when it was sent
	Took time.Duration
	Err  string // "" when the call succeeded with the expected answer
}

// BDir is agent B's directory, and BNote the file it reads and searches.
const (
	BDir  = Workspace + "/b"
	BNote = BDir + "/notes.txt"
)

// setupB gives B its directory and the file its calls read.
const setupB = `mkdir -p ` + BDir + ` && cd ` + BDir + ` && for i in $(seq 200); do echo "line $i of agent b's notes"; done > notes.txt && echo ready`

// Recorder keeps B's samples as B's loop makes them.
type Recorder struct {
	mu      sync.Mutex
	samples []Sample
}

func (r *Recorder) add(s Sample) {
	r.mu.Lock()
	r.samples = append(r.samples, s)
	r.mu.Unlock()
}

// Samples returns a copy of the samples so far.
func (r *Recorder) Samples() []Sample {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.samples)
}

// Work runs agent B's loop until ctx is done: every Tick, `echo ok`
// through bash, a view of BNote and a grep in BDir, each checked.
func Work(ctx context.Context, cs *mcp.ClientSession, rec *Recorder) {
	t := time.NewTicker(Tick)
	defer t.Stop()
	calls := []struct {
		tool  string
		args  map[string]any
		check func(string) bool
	}{
		{"bash", map[string]any{"command": "echo ok"}, func(s string) bool {
			return strings.HasPrefix(s, "exit_code: 0\n") && strings.Contains(s, "ok\n")
		}},
		{"view", map[string]any{"path": BNote, "view_range": []int{100, 102}}, func(s string) bool {
			return strings.Contains(s, "line 101 of agent b's notes")
		}},
		{"grep", map[string]any{"pattern": "line 17[0-9] of", "path": BDir, "output_mode": "count"}, func(s string) bool {
			return strings.Contains(s, "notes.txt") && strings.Contains(s, "10")
		}},
	}
	for {
		for _, c := range calls {
			if ctx.Err() != nil {
				return
			}
			cctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			start := time.Now()
			res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
			s := Sample{Tool: c.tool, At: start, Took: time.Since(start)}
			cancel()
			switch text := resultText(res); {
			case err != nil:
				s.Err = "protocol error: " + err.Error()
			case res.IsError:
				s.Err = "tool error: " + text
			case !c.check(text):
				s.Err = "unexpected answer: " + text
			}
			rec.add(s)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func resultText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// Stats summarize B's calls in a window.
type Stats struct {
	// Start and End are the window's.
	Start, End    time.Time
	Calls, Failed int
	P50, P99, Max time.Duration
	// Errors are the first failures, for the report.
	Errors []string
}

// Summarize the samples sent in [from, to).
func Summarize(samples []Sample, from, to time.Time) Stats {
	st := Stats{Start: from, End: to}
	var d []time.Duration
	for _, s := range samples {
		if s.At.Before(from) || !s.At.Before(to) {
			continue
		}
		st.Calls++
		d = append(d, s.Took)
		if s.Err != "" {
			st.Failed++
			if len(st.Errors) < 5 {
				st.Errors = append(st.Errors, fmt.Sprintf("%s at +%s: %s", s.Tool, s.At.Sub(from).Round(time.Millisecond), s.Err))
			}
		}
	}
	if len(d) == 0 {
		return st
	}
	slices.Sort(d)
	st.P50, st.P99, st.Max = percentile(d, 0.50), percentile(d, 0.99), d[len(d)-1]
	return st
}

// percentile of sorted durations, nearest rank.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func (s Stats) String() string {
	return fmt.Sprintf("%d calls, %d failed, p50 %s, p99 %s, max %s", s.Calls, s.Failed, ms(s.P50), ms(s.P99), ms(s.Max))
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// Gauge is the container's state at a moment: boris's resident memory,
// and, where the cgroup is readable from here, the container's processes
// and memory use (0 when not).
type Gauge struct {
	At                   time.Time
	RSS, Pids, MemoryUse int64
}

// sampleGauges records gauges every interval until ctx is done.
func sampleGauges(ctx context.Context, b *Box, every time.Duration) <-chan []Gauge {
	out := make(chan []Gauge, 1)
	go func() {
		var samples []Gauge
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			g := Gauge{At: time.Now()}
			g.RSS, _ = b.RSS(ctx)
			g.Pids, _ = b.cgroupInt("pids", "pids.current")
			g.MemoryUse, _ = b.memoryUse()
			samples = append(samples, g)
			select {
			case <-ctx.Done():
				out <- samples
				return
			case <-t.C:
			}
		}
	}()
	return out
}

// Peak is the largest value of f over the gauges in [from, to), 0 if none.
func Peak(samples []Gauge, from, to time.Time, f func(Gauge) int64) int64 {
	var peak int64
	for _, s := range samples {
		if !s.At.Before(from) && s.At.Before(to) {
			peak = max(peak, f(s))
		}
	}
	return peak
}
