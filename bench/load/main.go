// Command load drives a boris binary with many concurrent MCP sessions and
// reports throughput, latency per tool, memory, file descriptors and
// goroutines — during the load and after every session has closed, when
// they must be back at the idle baseline (the run fails otherwise). It also
// measures idle memory per session and the time from start to healthy.
//
//	go run ./bench/load [-sessions 50,500] [-duration 20s] [-era stateless|handshake]
package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/bench/internal/kit"
)

func main() {
	sessionsFlag := flag.String("sessions", "50,500", "comma-separated session counts to run")
	duration := flag.Duration("duration", 20*time.Second, "load time per run")
	idle := flag.Int("idle", 1000, "sessions for the idle-memory measurement (0: skip)")
	mix := flag.String("tools", "bash,view,grep,find,str_replace,create_file", "the tools each session calls, in this order, round after round")
	startups := flag.Int("startups", 20, "start-ups to time (0: skip)")
	bin := flag.String("bin", "", "boris binary (default: build from the repository)")
	eraFlag := flag.String("era", "stateless", "protocol era of the clients: stateless (2026-07-28: each worker mints a session handle, sessions end by the idle timeout) or handshake (2025-11-25: each worker's connection is its session, ended by DELETE)")
	flag.Parse()
	switch *eraFlag {
	case "stateless":
		// Long enough that a worker's session outlives the wait for its
		// next call when hundreds share two cores (a round of six calls
		// can take several seconds), short enough to end soon after.
		clientVersion, idleTimeout = "", "10s"
	case "handshake":
		clientVersion, idleTimeout = "2025-11-25", "0"
	default:
		log.Fatalf("-era: stateless or handshake, not %q", *eraFlag)
	}

	tmp, err := os.MkdirTemp("", "boris-load")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if *bin == "" {
		*bin = filepath.Join(tmp, "boris")
		build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", *bin, ".")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			log.Fatalf("build: %v (run from the repository root)", err)
		}
	}

	if *startups > 0 {
		fmt.Printf("start-up to healthy: %s (median of %d)\n", startupToHealthy(*bin, tmp, *startups), *startups)
	}

	failed := false
	for _, s := range strings.Split(*sessionsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			log.Fatalf("bad -sessions %q", s)
		}
		if !runLoad(*bin, tmp, n, *duration, strings.Split(*mix, ",")) {
			failed = true
		}
	}
	if *idle > 0 {
		idleMemory(*bin, tmp, *idle)
	}
	if failed {
		os.Exit(1)
	}
}

// clientVersion is the revision clients ask for ("": the client's default,
// 2026-07-28), and idleTimeout the server's --session-idle-timeout under
// load: stateless sessions end only by idling.
var clientVersion, idleTimeout string

// server is a running boris.
type server struct {
	cmd *exec.Cmd
	url string
	pid int
}

func start(bin, workdir, idle string) *server {
	cmd, url := kit.HTTP(bin, "--workdir="+workdir, "--log-level=info", "--session-idle-timeout="+idle)
	return &server{cmd: cmd, url: url, pid: cmd.Process.Pid}
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	_ = s.cmd.Wait()
}

// sample is the server's resource use at one moment.
type sample struct {
	rssKB, fds, goroutines, children int
	heapInuse, stackInuse            float64
}

func (s *server) sample() sample {
	var out sample
	out.rssKB = statusField(s.pid, "VmRSS:")
	entries, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", s.pid))
	out.fds = len(entries)
	out.children = countChildren(s.pid)
	m := s.metrics()
	out.goroutines = int(m["go_goroutines"])
	out.heapInuse = m["go_memstats_heap_inuse_bytes"]
	out.stackInuse = m["go_memstats_stack_inuse_bytes"]
	return out
}

// scrape fetches /metrics on a connection of its own each time, so that
// no idle connection of the harness's is left holding a goroutine in boris
// between samples (the goroutine count would vary by one).
var scrape = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

func (s *server) metrics() map[string]float64 {
	resp, err := scrape.Get(s.url + "/metrics")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, val, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if f, err := strconv.ParseFloat(val, 64); err == nil {
			out[name] = f
		}
	}
	return out
}

func statusField(pid int, field string) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}

// cpuTimes returns the CPU seconds (user+system) used by pid itself and
// by its children that have been waited for.
func cpuTimes(pid int) (self, children float64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	// Fields 14-17 of stat (utime, stime, cutime, cstime), here 11-14.
	tick := func(i int) float64 { v, _ := strconv.ParseFloat(f[i], 64); return v / 100 }
	return tick(11) + tick(12), tick(13) + tick(14)
}

// countChildren counts live processes whose parent is pid.
func countChildren(pid int) int { return len(children(pid)) }

// children lists pid's live (not zombie) children.
func children(pid int) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 1 && f[0] != "Z" && f[1] == strconv.Itoa(pid) {
			out = append(out, e.Name())
		}
	}
	return out
}

// childrenPSS counts pid's live children and sums their proportional
// set size (shared pages split among the processes sharing them), in KB.
func childrenPSS(pid int) (n, pssKB int) {
	kids := children(pid)
	for _, k := range kids {
		rollup, _ := os.ReadFile("/proc/" + k + "/smaps_rollup")
		for _, l := range strings.Split(string(rollup), "\n") {
			if v, ok := strings.CutPrefix(l, "Pss:"); ok {
				kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
				pssKB += kb
			}
		}
	}
	return len(kids), pssKB
}

func connect(url string, hc *http.Client) (*mcp.ClientSession, error) {
	return mcp.NewClient(&mcp.Implementation{Name: "load", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc},
			&mcp.ClientSessionOptions{ProtocolVersion: clientVersion})
}

var handleRe = regexp.MustCompile(`session: (s_\S+)\n`)

// makeTree writes a shared tree to search and one directory per session.
func makeTree(dir string, sessions int) {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		log.Fatalf("go env GOROOT: %v", err)
	}
	src := filepath.Join(strings.TrimSpace(string(goroot)), "src", "net", "http")
	entries, _ := os.ReadDir(src)
	shared := filepath.Join(dir, "shared")
	os.MkdirAll(shared, 0o755)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".go") {
			if b, err := os.ReadFile(filepath.Join(src, e.Name())); err == nil {
				os.WriteFile(filepath.Join(shared, e.Name()), b, 0o644)
			}
		}
	}
	for i := range sessions {
		d := filepath.Join(dir, fmt.Sprintf("s%d", i))
		os.MkdirAll(d, 0o755)
		var b strings.Builder
		for j := range 100 {
			fmt.Fprintf(&b, "line %d of session %d\n", j, i)
		}
		os.WriteFile(filepath.Join(d, "notes.txt"), []byte(b.String()), 0o644)
		os.WriteFile(filepath.Join(d, "counter.txt"), []byte("count: even\n"), 0o644)
	}
}

type stats struct {
	mu   sync.Mutex
	lat  map[string][]time.Duration
	errs []string
}

func (s *stats) add(tool string, d time.Duration, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if len(s.errs) < 20 {
			s.errs = append(s.errs, fmt.Sprintf("%s: %v", tool, err))
		} else {
			s.errs = append(s.errs[:20], "…")
		}
		return
	}
	s.lat[tool] = append(s.lat[tool], d)
}

// worker runs one session's mix of tools until the deadline.
func worker(cs *mcp.ClientSession, i int, mix []string, deadline time.Time, st *stats, failures *atomic.Int64) {
	dir := fmt.Sprintf("s%d", i)
	// Over the stateless revision each worker is an agent with a session
	// of its own: its first call asks for a new one, the rest name it.
	handle := ""
	if cs.InitializeResult().ProtocolVersion >= "2026-07-28" {
		handle = "new"
	}
	callTool := func(name string, args map[string]any) {
		if handle != "" {
			args["session"] = handle
		}
		start := time.Now()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err == nil && res.IsError {
			err = errors.New(text(res))
		}
		if err != nil {
			failures.Add(1)
		} else if handle == "new" {
			if m := handleRe.FindStringSubmatch(text(res)); m != nil {
				handle = m[1]
			}
		}
		st.add(name, time.Since(start), err)
	}
	callTool("view", map[string]any{"path": dir + "/counter.txt"})
	even := true
	for k := 0; time.Now().Before(deadline); k++ {
		for _, tool := range mix {
			switch tool {
			case "bash":
				callTool("bash", map[string]any{"command": "echo session " + strconv.Itoa(i) + " && ls " + dir + " | head -3"})
			case "view":
				callTool("view", map[string]any{"path": dir + "/notes.txt", "view_range": []int{10, 30}})
			case "grep":
				callTool("grep", map[string]any{"pattern": "func \\(\\w+ \\*Server\\)", "path": "shared", "head_limit": 20})
			case "find":
				callTool("find", map[string]any{"pattern": "*_test.go", "path": "shared"})
			case "str_replace":
				from, to := "even", "odd"
				if !even {
					from, to = to, from
				}
				callTool("str_replace", map[string]any{"path": dir + "/counter.txt", "old_str": from, "new_str": to})
				even = !even
			case "create_file":
				callTool("create_file", map[string]any{"path": dir + "/out.txt", "content": "iteration " + strconv.Itoa(k) + "\n"})
			default:
				log.Fatalf("-tools: unknown tool %q", tool)
			}
		}
	}
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// runLoad runs n sessions for d and reports; false when a call failed or
// resources did not return to the baseline.
func runLoad(bin, tmp string, n int, d time.Duration, mix []string) bool {
	dir := filepath.Join(tmp, fmt.Sprintf("tree-%d", n))
	makeTree(dir, n)
	srv := start(bin, dir, idleTimeout)
	defer srv.stop()
	transport := &http.Transport{MaxIdleConnsPerHost: n * 2, MaxConnsPerHost: 0}
	hc := &http.Client{Transport: transport}

	// Baseline: after one session has come and gone, so lazily built
	// state is already there.
	if cs, err := connect(srv.url, hc); err == nil {
		cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "true"}})
		cs.Close()
	}
	transport.CloseIdleConnections()
	waitSessions(srv, 0)
	time.Sleep(200 * time.Millisecond)
	base := srv.sample()

	var sessions []*mcp.ClientSession
	for range n {
		cs, err := connect(srv.url, hc)
		if err != nil {
			log.Fatalf("connect: %v", err)
		}
		sessions = append(sessions, cs)
	}
	st := &stats{lat: map[string][]time.Duration{}}
	var failures atomic.Int64
	var peak sample
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-t.C:
			}
			s := srv.sample()
			peak.fds = max(peak.fds, s.fds)
			peak.goroutines = max(peak.goroutines, s.goroutines)
			peak.children = max(peak.children, s.children)
		}
	}()
	cpuBefore, childBefore := cpuTimes(srv.pid)
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for i, cs := range sessions {
		wg.Go(func() { worker(cs, i, mix, deadline, st, &failures) })
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpuAfter, childAfter := cpuTimes(srv.pid)
	close(stopSampling)
	<-sampled
	peak.rssKB = statusField(srv.pid, "VmHWM:")

	for _, cs := range sessions {
		cs.Close()
	}
	transport.CloseIdleConnections()
	waitSessions(srv, 0)
	after := settle(srv, base)

	total := 0
	for _, l := range st.lat {
		total += len(l)
	}
	fmt.Printf("\n== %d sessions for %s ==\n", n, d)
	fmt.Printf("calls: %d ok, %d failed, %.0f calls/s\n", total, failures.Load(), float64(total)/elapsed.Seconds())
	fmt.Printf("CPU: boris %.1f s (%.0f%% of a core), the commands it ran %.1f s, over %.1f s\n",
		cpuAfter-cpuBefore, 100*(cpuAfter-cpuBefore)/elapsed.Seconds(), childAfter-childBefore, elapsed.Seconds())
	fmt.Printf("%-12s %8s %10s %10s\n", "tool", "calls", "p50", "p99")
	for _, tool := range []string{"bash", "view", "grep", "find", "str_replace", "create_file"} {
		l := st.lat[tool]
		if len(l) == 0 {
			continue
		}
		slices.Sort(l)
		fmt.Printf("%-12s %8d %10s %10s\n", tool, len(l), l[len(l)/2].Round(10*time.Microsecond), l[len(l)*99/100].Round(10*time.Microsecond))
	}
	fmt.Printf("%-12s %10s %10s %10s\n", "", "baseline", "peak", "after")
	fmt.Printf("%-12s %10s %10s %10s\n", "RSS", mb(base.rssKB), mb(peak.rssKB), mb(after.rssKB))
	fmt.Printf("%-12s %10d %10d %10d\n", "open fds", base.fds, peak.fds, after.fds)
	fmt.Printf("%-12s %10d %10d %10d\n", "goroutines", base.goroutines, peak.goroutines, after.goroutines)
	fmt.Printf("%-12s %10d %10d %10d\n", "children", base.children, peak.children, after.children)
	for _, e := range st.errs {
		fmt.Println("error:", e)
	}
	ok := failures.Load() == 0
	if after.fds != base.fds || after.goroutines != base.goroutines || after.children != base.children {
		fmt.Println("FAIL: resources did not return to the idle baseline")
		ok = false
	}
	if failures.Load() > 0 {
		fmt.Println("FAIL: calls failed")
	}
	return ok
}

// settle waits (up to 10 s) for fds, goroutines and children to come back
// to the baseline, and returns the last sample.
func settle(srv *server, base sample) sample {
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := srv.sample()
		if (s.fds == base.fds && s.goroutines == base.goroutines && s.children == base.children) || time.Now().After(deadline) {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func waitSessions(srv *server, want float64) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if srv.metrics()["boris_sessions_active"] == want {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	log.Printf("sessions did not reach %v", want)
}

func mb(kb int) string { return fmt.Sprintf("%.1f MB", float64(kb)/1024) }

// idleMemory opens n sessions that each made one call and then sit idle,
// and reports what each costs beyond the baseline.
func idleMemory(bin, tmp string, n int) {
	dir := filepath.Join(tmp, "idle")
	os.MkdirAll(dir, 0o755)
	srv := start(bin, dir, "0")
	defer srv.stop()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	warm, _ := connect(srv.url, hc)
	warm.CallTool(context.Background(), &mcp.CallToolParams{Name: "view", Arguments: map[string]any{"path": "."}})
	time.Sleep(300 * time.Millisecond)
	before := srv.sample()
	var sessions []*mcp.ClientSession
	for range n {
		cs, err := connect(srv.url, hc)
		if err != nil {
			log.Fatal(err)
		}
		// A view and a bash call: after a bash call a session keeps its
		// next shell started (within the server's bound on waiting
		// shells), which the per-session figure must include.
		var handle string
		for _, c := range []struct {
			tool string
			args map[string]any
		}{{"view", map[string]any{"path": "."}}, {"bash", map[string]any{"command": "true"}}} {
			if clientVersion == "" {
				// One session per agent, as a connection is in the handshake era.
				c.args["session"] = cmp.Or(handle, "new")
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
			if err != nil || res.IsError {
				log.Fatalf("%s: %v %v", c.tool, err, res)
			}
			if m := handleRe.FindStringSubmatch(text(res)); m != nil {
				handle = m[1]
			}
		}
		sessions = append(sessions, cs)
	}
	time.Sleep(time.Second)
	after := srv.sample()
	heap := (after.heapInuse + after.stackInuse - before.heapInuse - before.stackInuse) / float64(n) / 1024
	rss := float64(after.rssKB-before.rssKB) / float64(n)
	kids, kidsPSS := childrenPSS(srv.pid)
	fmt.Printf("\n== idle memory: %d sessions, each after a view and a bash call ==\n", n)
	fmt.Printf("per session: %.1f KB heap+stack in use, %.1f KB RSS of boris (goal <= 100 KB); goroutines %d -> %d\n",
		heap, rss, before.goroutines, after.goroutines)
	fmt.Printf("waiting shells: %d processes, %.1f MB PSS in all, %.1f KB per session; boris and shells %.1f KB per session\n",
		kids, float64(kidsPSS)/1024, float64(kidsPSS)/float64(n), rss+float64(kidsPSS)/float64(n))
	for _, cs := range sessions {
		cs.Close()
	}
	warm.Close()
}

// startupToHealthy spawns boris repeatedly and polls /health until it
// answers, returning the median time from exec to the first 200.
func startupToHealthy(bin, tmp string, n int) time.Duration {
	var times []time.Duration
	for i := range n {
		port := 39000 + i
		start := time.Now()
		cmd := exec.Command(bin, "--port="+strconv.Itoa(port), "--workdir="+tmp, "--log-level=error")
		if err := cmd.Start(); err != nil {
			log.Fatal(err)
		}
		url := "http://127.0.0.1:" + strconv.Itoa(port) + "/health"
		hc := &http.Client{Timeout: 100 * time.Millisecond}
		for time.Since(start) < 5*time.Second {
			resp, err := hc.Get(url)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					break
				}
			}
			time.Sleep(200 * time.Microsecond)
		}
		times = append(times, time.Since(start))
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
	slices.Sort(times)
	return times[len(times)/2].Round(100 * time.Microsecond)
}
