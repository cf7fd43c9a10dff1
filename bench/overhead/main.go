// Command overhead measures what boris adds to the work it does: a bash
// tool call against a bare `bash -c true` spawn, a tool call that does no
// work (task_output of an unknown task), and a view of a 40-line file.
//
// Each is measured through two clients over stdio — the official go-sdk
// client, and a line client that writes the request's line and reads the
// answer's, so that what it times is boris and the pipes — and through the
// line client over HTTP at the stateless revision (one POST per call, on a
// kept-alive connection). The same clients against a stand-in server that
// answers every call with a canned line show what the clients cost by
// themselves. A round makes a burst of calls of every kind, rounds repeat
// n times, and the table gives medians (p90 in brackets). -baseline runs a
// second boris binary in the same rounds (an earlier build, for a before
// and after on one machine).
//
//	go run ./bench/overhead [-n 300] [-bin BORIS] [-baseline OTHER_BORIS] [-trace-endpoint URL] [-text-only]
//
// -trace-endpoint adds the same binary with tracing on, exporting over
// OTLP/HTTP to a collector at URL (internal/otelcoltest/testdata/otelcol builds one).
// -text-only adds the same binary with --structured-content=off: the cost
// of making and encoding structured results is the ratio of the two.
//
// -isolation makes the workdir a git repository and adds the same binary
// with --isolation worktree: every server's session works in a workspace
// of its own (made at its first call, before the rounds), so the ratio of
// the two columns is the per-call cost of isolation.
//
// With -sandbox it compares a bash call of `true` with the sandbox off and
// on instead (two servers, calls interleaved), and reports the time boris
// took to build the Landlock ruleset at start-up.
//
//	go run ./bench/overhead -sandbox [-sandbox-net deny] [-n 300]
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/bench/internal/kit"
)

func main() {
	n := flag.Int("n", 300, "rounds (each takes a burst of samples of every measurement)")
	binFlag := flag.String("bin", "", "boris binary (default: build from the repository)")
	baseline := flag.String("baseline", "", "a second boris binary measured in the same rounds")
	traceEndpoint := flag.String("trace-endpoint", "", "also measure boris with tracing on, exporting over OTLP/HTTP to this endpoint (e.g. http://127.0.0.1:4318, a collector)")
	shellPath := flag.String("shell", "/bin/bash", "shell to compare against")
	sandboxMode := flag.Bool("sandbox", false, "compare bash calls with --sandbox off and on")
	sandboxNet := flag.String("sandbox-net", "allow", "with -sandbox: the --sandbox-net of the sandboxed server (deny adds the MPTCP seccomp filter)")
	textOnly := flag.Bool("text-only", false, "also measure the same binary with --structured-content=off (answers without structuredContent)")
	isolation := flag.Bool("isolation", false, "make the workdir a git repository and also measure the same binary with --isolation worktree")
	canned := flag.Bool("canned", false, "serve canned answers on stdin/stdout (the stand-in server; used by the benchmark itself)")
	flag.Parse()
	if *canned {
		serveCanned(os.Stdin, os.Stdout)
		return
	}

	tmp, bin := "", *binFlag
	if bin == "" {
		tmp, bin = kit.Build("boris-bench-overhead")
	} else {
		var err error
		if tmp, err = os.MkdirTemp("", "boris-bench-overhead"); err != nil {
			log.Fatal(err)
		}
	}
	defer os.RemoveAll(tmp)
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

	if *isolation {
		for _, a := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q", "-m", "bench"}} {
			cmd := exec.Command("git", a...)
			cmd.Dir = work
			if out, err := cmd.CombinedOutput(); err != nil {
				log.Fatalf("git %v: %v\n%s", a, err, out)
			}
		}
	}

	ctx := context.Background()
	if *sandboxMode {
		sandboxBench(ctx, bin, tmp, work, *shellPath, *sandboxNet, *n)
		return
	}

	args := []string{"--workdir=" + work, "--shell=" + *shellPath}
	cols := []*column{newColumn(ctx, "boris", bin, args)}
	if *traceEndpoint != "" {
		// The servers of this column inherit the variables.
		vars := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": *traceEndpoint, "OTEL_SERVICE_NAME": "boris-bench"}
		for k, v := range vars {
			os.Setenv(k, v)
		}
		cols = append(cols, newColumn(ctx, "traced", bin, args))
		for k := range vars {
			os.Unsetenv(k)
		}
	}
	if *textOnly {
		cols = append(cols, newColumn(ctx, "text-only", bin, append(slices.Clone(args), "--structured-content=off")))
	}
	if *isolation {
		cols = append(cols, newColumn(ctx, "isolated", bin, append(slices.Clone(args), "--isolation=worktree")))
	}
	if *baseline != "" {
		cols = append(cols, newColumn(ctx, "baseline", *baseline, args))
	}
	defer func() {
		for _, c := range cols {
			c.close()
		}
	}()
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	cannedSDK, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: exec.Command(self, "-canned")}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cannedSDK.Close()
	cannedLine := startLine(self, "-canned")
	defer cannedLine.close()
	spawn := func() time.Duration {
		start := time.Now()
		if err := exec.Command(*shellPath, "-c", "true").Run(); err != nil {
			log.Fatal(err)
		}
		return time.Since(start)
	}

	// A round makes a burst of calls of each kind, in an order that
	// rotates from round to round, so that the machine's changes in speed
	// and whatever one measurement leaves behind (a cold cache, a
	// collection) fall on all of them alike. The first call of a burst
	// comes after the server sat idle while the others were measured (an
	// agent's call after the model's turn); the rest come back to back (a
	// harness driving a session as fast as it can).
	var bare, floorSDK, floorLine series
	steps := []step{
		{&bare, spawn},
		{&floorSDK, func() time.Duration {
			return sdkCall(ctx, cannedSDK, "task_output", map[string]any{"task_id": "none"}, true)
		}},
		{&floorLine, func() time.Duration { return cannedLine.call("task_output", `{"task_id":"none"}`, true) }},
	}
	for _, c := range cols {
		steps = append(steps, c.steps(ctx)...)
	}
	for round := range 5 + *n {
		for i := range steps {
			st := steps[(round+i)%len(steps)]
			for call := range burst {
				d := st.call()
				if round >= 5 {
					st.into.add(call, d)
				}
			}
		}
	}

	fmt.Printf("p50 [p90] of %d rounds, interleaved; %s\n", *n, machine())
	fmt.Printf("b2b: calls back to back (%d a round); paused: the first of a round, after the server sat idle\n\n", burst-1)
	header := fmt.Sprintf("%-32s", "")
	for _, c := range cols {
		header += fmt.Sprintf("  %-20s  %-9s", c.name+" ("+filepath.Base(c.bin)+") b2b", "paused")
	}
	fmt.Println(header)
	for _, row := range []struct {
		label string
		pick  func(*column) *series
	}{
		{"stdio, go-sdk client: bash true", func(c *column) *series { return &c.sdkBash }},
		{"stdio, go-sdk client: null call", func(c *column) *series { return &c.sdkNull }},
		{"stdio, go-sdk client: view", func(c *column) *series { return &c.sdkView }},
		{"stdio, line client: bash true", func(c *column) *series { return &c.lineBash }},
		{"stdio, line client: null call", func(c *column) *series { return &c.lineNull }},
		{"stdio, line client: view", func(c *column) *series { return &c.lineView }},
		{"HTTP stateless, line: null call", func(c *column) *series { return &c.httpNull }},
		{"HTTP stateless, line: view", func(c *column) *series { return &c.httpView }},
	} {
		line := fmt.Sprintf("%-32s", row.label)
		for _, c := range cols {
			line += row.pick(c).cells()
		}
		fmt.Println(line)
	}
	fmt.Printf("%-32s%s\n", "bare "+*shellPath+" -c true", bare.cells())
	fmt.Printf("%-32s%s\n", "canned server, go-sdk client", floorSDK.cells())
	fmt.Printf("%-32s%s\n", "canned server, line client", floorLine.cells())

	fmt.Println()
	for _, c := range cols {
		name := c.name
		fmt.Printf("%s: bash true / bare spawn, paused %.2f (go-sdk client), %.2f (line client); b2b %.2f, %.2f; goal <= 1.0\n",
			name, ratio(c.sdkBash.paused, bare.paused), ratio(c.lineBash.paused, bare.paused), ratio(c.sdkBash.b2b, bare.b2b), ratio(c.lineBash.b2b, bare.b2b))
		fmt.Printf("%s: null call over stdio, b2b %s, paused %s (line client; go-sdk client %s, of which the client alone %s); goal <= 100µs\n",
			name, us(c.lineNull.b2b), us(c.lineNull.paused), us(c.sdkNull.b2b), us(floorSDK.b2b))
		fmt.Printf("%s: view / null call, b2b %.2f (line client), %.2f (go-sdk client); goal <= 1.3\n",
			name, ratio(c.lineView.b2b, c.lineNull.b2b), ratio(c.sdkView.b2b, c.sdkNull.b2b))
	}
	for _, c := range cols[1:] {
		b := cols[0]
		if c.name == "text-only" {
			fmt.Printf("boris / text-only p50 (the cost of structured results): line client b2b: null call %.3f, view %.3f, bash true %.3f; go-sdk b2b: null %.3f, view %.3f, bash %.3f; HTTP b2b: null %.3f, view %.3f; goal <= 1.05\n",
				ratio(b.lineNull.b2b, c.lineNull.b2b), ratio(b.lineView.b2b, c.lineView.b2b), ratio(b.lineBash.b2b, c.lineBash.b2b),
				ratio(b.sdkNull.b2b, c.sdkNull.b2b), ratio(b.sdkView.b2b, c.sdkView.b2b), ratio(b.sdkBash.b2b, c.sdkBash.b2b),
				ratio(b.httpNull.b2b, c.httpNull.b2b), ratio(b.httpView.b2b, c.httpView.b2b))
			continue
		}
		goal := "goal <= 1.05 (tracing on / off)"
		switch c.name {
		case "baseline":
			goal = "boris / baseline"
		case "isolated":
			goal = "isolation worktree / off"
		}
		fmt.Printf("%s / boris p50: bash true b2b %.2f, paused %.2f; null call line b2b %.2f, paused %.2f, go-sdk b2b %.2f; HTTP null %.2f; %s\n",
			c.name, ratio(c.lineBash.b2b, b.lineBash.b2b), ratio(c.lineBash.paused, b.lineBash.paused),
			ratio(c.lineNull.b2b, b.lineNull.b2b), ratio(c.lineNull.paused, b.lineNull.paused), ratio(c.sdkNull.b2b, b.sdkNull.b2b),
			ratio(c.httpNull.b2b, b.httpNull.b2b), goal)
	}
}

// burst is the number of calls of one kind made in a row in a round.
const burst = 8

// series holds the samples of one measurement: the first call of each
// burst (after a pause) and the others (back to back).
type series struct{ paused, b2b []time.Duration }

func (s *series) add(call int, d time.Duration) {
	if call == 0 {
		s.paused = append(s.paused, d)
	} else {
		s.b2b = append(s.b2b, d)
	}
}

func (s *series) cells() string {
	return fmt.Sprintf("  %-20s  %-9s", p50p90(s.b2b), us(s.paused))
}

// step is one kind of call and where its samples go.
type step struct {
	into *series
	call func() time.Duration
}

// column is one boris binary with its three clients and their samples.
type column struct {
	name    string // boris, traced, baseline
	bin     string
	sdk     *mcp.ClientSession
	line    *lineClient
	http    *httpClient
	httpCmd *exec.Cmd

	sdkBash, sdkNull, sdkView    series
	lineBash, lineNull, lineView series
	httpNull, httpView           series
}

func newColumn(ctx context.Context, name, bin string, args []string) *column {
	c := &column{name: name, bin: bin}
	c.sdk, _ = kit.Stdio(ctx, bin, append(args, "--log-level=error")...)
	c.line = startLine(bin, append([]string{"--transport=stdio", "--log-level=error"}, args...)...)
	var url string
	c.httpCmd, url = kit.HTTP(bin, append(args, "--log-level=info")...)
	c.http = &httpClient{url: url + "/mcp", client: &http.Client{}}
	return c
}

func (c *column) steps(ctx context.Context) []step {
	null := map[string]any{"task_id": "none"}
	view := map[string]any{"path": "small.go"}
	bash := map[string]any{"command": "true"}
	return []step{
		{&c.sdkBash, func() time.Duration { return sdkCall(ctx, c.sdk, "bash", bash, false) }},
		{&c.sdkNull, func() time.Duration { return sdkCall(ctx, c.sdk, "task_output", null, true) }},
		{&c.sdkView, func() time.Duration { return sdkCall(ctx, c.sdk, "view", view, false) }},
		{&c.lineBash, func() time.Duration { return c.line.call("bash", `{"command":"true"}`, false) }},
		{&c.lineNull, func() time.Duration { return c.line.call("task_output", `{"task_id":"none"}`, true) }},
		{&c.lineView, func() time.Duration { return c.line.call("view", `{"path":"small.go"}`, false) }},
		{&c.httpNull, func() time.Duration { return c.http.call("task_output", `{"task_id":"none"}`, true) }},
		{&c.httpView, func() time.Duration { return c.http.call("view", `{"path":"small.go"}`, false) }},
	}
}

func (c *column) close() {
	c.sdk.Close()
	c.line.close()
	_ = c.httpCmd.Process.Signal(syscall.SIGTERM)
	_ = c.httpCmd.Wait()
}

// sdkCall times one call through the go-sdk client; wantError says
// whether the tool is expected to answer with isError (the null call).
func sdkCall(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any, wantError bool) time.Duration {
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	d := time.Since(start)
	if err != nil || res.IsError != wantError {
		log.Fatalf("%s: %v %+v", name, err, res)
	}
	return d
}

// lineClient is kit's line client with this benchmark's checks.
type lineClient struct{ *kit.Line }

func startLine(bin string, args ...string) *lineClient {
	return &lineClient{kit.StartLine(bin, args...)}
}

func (c *lineClient) call(tool, args string, wantError bool) time.Duration {
	answer, id, d := c.CallTool(tool, []byte(args))
	checkAnswer(answer, id, tool, wantError)
	return d
}

func (c *lineClient) close() { c.Close() }

// httpClient makes each call one POST at the stateless revision, on a
// connection kept alive between calls.
type httpClient struct {
	url    string
	client *http.Client
	id     int
}

func (h *httpClient) call(tool, args string, wantError bool) time.Duration {
	h.id++
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`, h.id, tool, args)
	req, err := http.NewRequest("POST", h.url, bytes.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	req.Header = http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2026-07-28"},
		"Mcp-Method":           {"tools/call"},
		"Mcp-Name":             {tool},
	}
	start := time.Now()
	resp, err := h.client.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if err != nil || resp.StatusCode != http.StatusOK {
		log.Fatalf("HTTP %s: %d %v %s", tool, resp.StatusCode, err, answer)
	}
	// The answer is one server-sent event, or the message itself.
	for _, l := range bytes.Split(answer, []byte("\n")) {
		if data, ok := bytes.CutPrefix(l, []byte("data: ")); ok {
			answer = data
		}
	}
	checkAnswer(answer, h.id, tool, wantError)
	return d
}

func checkAnswer(answer []byte, id int, tool string, wantError bool) {
	var msg struct {
		ID     int `json:"id"`
		Result *struct {
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(answer, &msg); err != nil || msg.ID != id || msg.Result == nil || msg.Result.IsError != wantError {
		log.Fatalf("%s: unexpected answer to request %d: %s", tool, id, answer)
	}
}

// serveCanned is the stand-in server: it answers initialize and every
// tools/call at once with a fixed result, so that a client's time against
// it is the client's own cost plus the pipes.
func serveCanned(in io.Reader, out io.Writer) {
	r := bufio.NewReaderSize(in, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &msg) != nil || msg.ID == nil {
			continue // notifications need no answer
		}
		var result string
		switch msg.Method {
		case "initialize":
			result = fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"canned","version":"1"}}`, msg.Params.ProtocolVersion)
		case "tools/call":
			result = `{"content":[{"type":"text","text":"[BASH_TASK_NOT_FOUND] no background task \"none\" in this session"}],"isError":true}`
		default:
			result = `{}`
		}
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", msg.ID, result)
	}
}

func p50p90(d []time.Duration) string {
	return fmt.Sprintf("%s [%s]", kit.Pct(d, 50).Round(time.Microsecond), kit.Pct(d, 90).Round(time.Microsecond))
}

func us(d []time.Duration) string { return kit.Pct(d, 50).Round(time.Microsecond).String() }

func ratio(a, b []time.Duration) float64 { return float64(kit.Pct(a, 50)) / float64(kit.Pct(b, 50)) }

// machine names the CPU and the kernel, for the record.
func machine() string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	var u syscall.Utsname
	kernel := ""
	if syscall.Uname(&u) == nil {
		var b []byte
		for _, c := range u.Release {
			if c == 0 {
				break
			}
			b = append(b, byte(c))
		}
		kernel = ", Linux " + string(b)
	}
	return fmt.Sprintf("%s, %d CPUs%s", cpu, runtime.NumCPU(), kernel)
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

func median(d []time.Duration) time.Duration { return kit.Pct(d, 50) }

func pct(d []time.Duration, p int) time.Duration { return kit.Pct(d, p) }

func round(d time.Duration) time.Duration { return d.Round(time.Microsecond) }
