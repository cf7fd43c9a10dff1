// Package otelcoltest runs a real OpenTelemetry Collector for tests: the one
// built from the module in testdata/otelcol (the OTLP receiver over gRPC and
// HTTP, the file exporter), so that the spans boris emits are checked by an
// OTLP implementation rather than by a mock that agrees with boris's
// mistakes.
//
// The package uses only the standard library: the collector is a separate
// program, built once per source version into the user's cache directory, so
// its dependencies stay out of boris's go.mod.
package otelcoltest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildFlags are part of the cache key: a binary built otherwise is another
// binary.
var buildFlags = []string{"-trimpath", "-buildvcs=false", "-mod=readonly", "-ldflags=-s -w"}

// lifelineEnv is the variable testdata/otelcol/main.go reads: set to 1, the
// collector shuts down when its standard input closes, which happens when
// the test process dies without running its cleanups.
const lifelineEnv = "OTELCOL_EXIT_ON_STDIN_EOF"

const (
	readyTimeout = 30 * time.Second
	stopTimeout  = 10 * time.Second
	// flushInterval is how often the file exporter flushes its buffer: a
	// span is in the file at most this long after the collector took it.
	flushInterval = "100ms"
)

// Binary returns the path of the collector built from testdata/otelcol,
// building it first if no build of the current sources is cached. The cache
// is os.UserCacheDir()/boris-otelcol/<hash of go.mod, go.sum and *.go>; test
// processes building at the same time wait for each other, and a binary
// appears there only complete (built aside, then renamed). The first build
// compiles the collector and its dependencies: minutes, and it needs the Go
// module proxy or a module cache that holds them.
func Binary(tb testing.TB) string {
	tb.Helper()
	dir, err := moduleDir()
	if err != nil {
		tb.Fatalf("otelcoltest: %v", err)
	}
	ctx := context.Background()
	if d, ok := tb.(interface{ Deadline() (time.Time, bool) }); ok {
		if deadline, ok := d.Deadline(); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, deadline.Add(-5*time.Second))
			defer cancel()
		}
	}
	bin, err := build(ctx, dir, tb.Logf)
	if err != nil {
		tb.Fatalf("otelcoltest: %v", err)
	}
	return bin
}

// moduleDir finds testdata/otelcol: next to this source file when the
// test binary knows where that is (not under -trimpath), else in the module
// the go command sees from the working directory.
func moduleDir() (string, error) {
	var tried []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dir := filepath.Join(filepath.Dir(file), "testdata", "otelcol")
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		tried = append(tried, dir)
	}
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("finding the boris module: go env GOMOD: %w", err)
	}
	if gomod := strings.TrimSpace(string(out)); gomod != "" && gomod != os.DevNull {
		dir := filepath.Join(filepath.Dir(gomod), "internal", "otelcoltest", "testdata", "otelcol")
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		tried = append(tried, dir)
	}
	return "", fmt.Errorf("the collector's module (internal/otelcoltest/testdata/otelcol/go.mod in the boris module) is not in %s; run the test from inside the boris module",
		strings.Join(append(tried, "the module of the working directory"), " nor "))
}

// sourceHash identifies a version of the collector's sources.
func sourceHash(dir string) (string, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return "", err
	}
	slices.Sort(names)
	names = append([]string{filepath.Join(dir, "go.mod"), filepath.Join(dir, "go.sum")}, names...)
	h := sha256.New()
	fmt.Fprintf(h, "%q\n", buildFlags)
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(name), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func build(ctx context.Context, dir string, logf func(string, ...any)) (string, error) {
	hash, err := sourceHash(dir)
	if err != nil {
		return "", fmt.Errorf("reading the collector's sources: %w", err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the collector binary (set XDG_CACHE_HOME or HOME): %w", err)
	}
	out := filepath.Join(cache, "boris-otelcol", hash)
	bin := filepath.Join(out, "otelcol")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(filepath.Join(out, "lock"))
	if err != nil {
		return "", fmt.Errorf("locking the collector's cache directory: %w", err)
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin, nil // another process built it while this one waited
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("building the collector needs the go command on PATH: %w", err)
	}
	tmp, err := os.MkdirTemp(out, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)

	logf("otelcoltest: building the OpenTelemetry Collector from %s into %s (the first build takes minutes)", dir, out)
	start := time.Now()
	args := append([]string{"build"}, buildFlags...)
	args = append(args, "-o", filepath.Join(tmp, "otelcol"), ".")
	cmd := exec.CommandContext(ctx, goCmd, args...)
	cmd.Dir = dir
	// Static, so no C toolchain is needed; GOWORK off, so a go.work above
	// the module cannot change what is built.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
	output, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return "", fmt.Errorf("go build of the collector in %s did not finish before the test's deadline (%v so far); the first build takes minutes: run once with a longer -timeout, e.g. go test -timeout 30m ./internal/otelcoltest", dir, time.Since(start).Round(time.Second))
	}
	if err != nil {
		return "", fmt.Errorf("go build of the collector in %s: %v (the modules pinned in its go.mod come from GOPROXY or the module cache)\n%s", dir, err, output)
	}
	if err := os.Rename(filepath.Join(tmp, "otelcol"), bin); err != nil {
		return "", err
	}
	logf("otelcoltest: built the collector in %v", time.Since(start).Round(time.Second))
	return bin, nil
}

// Collector is a running collector whose OTLP receiver takes traces on
// GRPCEndpoint and HTTPEndpoint and whose file exporter writes them where
// Spans reads them.
type Collector struct {
	// GRPCEndpoint is the OTLP/gRPC receiver's address, "127.0.0.1:port".
	GRPCEndpoint string
	// HTTPEndpoint is the OTLP/HTTP receiver's base URL,
	// "http://127.0.0.1:port"; traces go to HTTPEndpoint+"/v1/traces".
	HTTPEndpoint string

	spansPath string
	logPath   string
	cmd       *exec.Cmd
	// lifeline is the write end of the collector's standard input; it is
	// kept here so that it stays open (an unreachable *os.File is closed by
	// its finalizer) until the cleanup closes it.
	lifeline *os.File
	exited   chan struct{} // closed once cmd.Wait returned, into waitErr
	waitErr  error
}

// Start builds the collector if needed (see Binary), starts it on free
// loopback ports with its files in tb.TempDir(), and returns once both
// receivers accept connections. The collector's own telemetry binds
// nothing: its metrics are off and its log goes to a file, printed if the
// test fails. The cleanup stops it with SIGTERM.
func Start(tb testing.TB) *Collector {
	tb.Helper()
	bin := Binary(tb)
	dir := tb.TempDir()
	for attempt := 1; ; attempt++ {
		c, err := start(bin, dir)
		if err == nil {
			tb.Cleanup(func() { c.stop(tb) })
			return c
		}
		// The ports were free when picked; another process can take one
		// before the collector binds it.
		if errors.Is(err, syscall.EADDRINUSE) && attempt < 3 {
			tb.Logf("otelcoltest: %v; trying other ports", err)
			continue
		}
		tb.Fatalf("otelcoltest: %v", err)
	}
}

// config is the collector's configuration. JSON strings are YAML strings,
// so paths need no YAML quoting rules of their own.
func config(grpcAddr, httpAddr, spansPath string) string {
	q := func(s string) string {
		b, _ := json.Marshal(s)
		return string(b)
	}
	return `receivers:
  otlp:
    protocols:
      grpc:
        endpoint: ` + q(grpcAddr) + `
      http:
        endpoint: ` + q(httpAddr) + `
exporters:
  file:
    path: ` + q(spansPath) + `
    flush_interval: ` + flushInterval + `
service:
  telemetry:
    logs:
      level: info
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file]
`
}

func start(bin, dir string) (*Collector, error) {
	addrs, err := freeAddrs(2)
	if err != nil {
		return nil, err
	}
	c := &Collector{
		GRPCEndpoint: addrs[0],
		HTTPEndpoint: "http://" + addrs[1],
		spansPath:    filepath.Join(dir, "spans.jsonl"),
		logPath:      filepath.Join(dir, "otelcol.log"),
		exited:       make(chan struct{}),
	}
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(config(addrs[0], addrs[1], c.spansPath)), 0o644); err != nil {
		return nil, err
	}
	logFile, err := os.Create(c.logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	stdin, lifeline, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer stdin.Close()
	c.lifeline = lifeline
	c.cmd = exec.Command(bin, "--config=file:"+cfgPath)
	c.cmd.Dir = dir
	c.cmd.Env = append(os.Environ(), lifelineEnv+"=1")
	c.cmd.Stdin, c.cmd.Stdout, c.cmd.Stderr = stdin, logFile, logFile
	if err := c.cmd.Start(); err != nil {
		lifeline.Close()
		return nil, fmt.Errorf("starting the collector %s: %w", bin, err)
	}
	go func() {
		c.waitErr = c.cmd.Wait()
		close(c.exited)
	}()
	if err := c.waitReady(); err != nil {
		c.kill()
		return nil, err
	}
	return c, nil
}

// freeAddrs returns n distinct loopback addresses nothing listens on.
func freeAddrs(n int) ([]string, error) {
	var addrs []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free loopback port: %w", err)
		}
		defer l.Close()
		addrs = append(addrs, l.Addr().String())
	}
	return addrs, nil
}

func (c *Collector) waitReady() error {
	deadline := time.Now().Add(readyTimeout)
	poll := time.NewTicker(20 * time.Millisecond)
	defer poll.Stop()
	for {
		ready := true
		for _, addr := range []string{c.GRPCEndpoint, strings.TrimPrefix(c.HTTPEndpoint, "http://")} {
			conn, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				ready = false
				break
			}
			conn.Close()
		}
		if ready {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the collector's receivers (%s, %s) did not accept connections within %v; its log %s:\n%s",
				c.GRPCEndpoint, c.HTTPEndpoint, readyTimeout, c.logPath, c.log())
		}
		select {
		case <-c.exited:
			log := c.log()
			err := fmt.Errorf("the collector exited at start (%v); its log %s:\n%s", c.waitErr, c.logPath, log)
			if strings.Contains(log, "address already in use") {
				err = fmt.Errorf("%w: %w", syscall.EADDRINUSE, err)
			}
			return err
		case <-poll.C:
		}
	}
}

// log returns the collector's output, its last 64 KiB if longer.
func (c *Collector) log() string {
	b, err := os.ReadFile(c.logPath)
	if err != nil {
		return err.Error()
	}
	const most = 64 << 10
	if len(b) > most {
		b = append([]byte("…\n"), b[len(b)-most:]...)
	}
	return string(b)
}

func (c *Collector) kill() {
	c.cmd.Process.Kill()
	<-c.exited
	c.lifeline.Close()
}

func (c *Collector) stop(tb testing.TB) {
	tb.Helper()
	select {
	case <-c.exited:
		tb.Errorf("otelcoltest: the collector exited during the test: %v", c.waitErr)
	default:
		if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			c.cmd.Process.Kill()
		}
		select {
		case <-c.exited:
			if c.waitErr != nil {
				tb.Errorf("otelcoltest: the collector's shutdown: %v", c.waitErr)
			}
		case <-time.After(stopTimeout):
			c.cmd.Process.Kill()
			<-c.exited
			tb.Errorf("otelcoltest: the collector did not stop within %v of SIGTERM and was killed", stopTimeout)
		}
	}
	c.lifeline.Close()
	if tb.Failed() {
		tb.Logf("otelcoltest: collector log %s:\n%s", c.logPath, c.log())
	}
}

// Spans returns every span the file exporter has written so far, in the
// order it wrote them.
func (c *Collector) Spans() ([]Span, error) {
	b, err := os.ReadFile(c.spansPath)
	if err != nil {
		return nil, err
	}
	return parseSpans(b)
}

// WaitSpans polls Spans until ok holds for what it returns, and returns
// that. It fails tb with the spans seen if ok does not hold within timeout,
// or at once if the collector has exited.
func (c *Collector) WaitSpans(tb testing.TB, ok func([]Span) bool, timeout time.Duration) []Span {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	poll := time.NewTicker(50 * time.Millisecond)
	defer poll.Stop()
	for {
		spans, err := c.Spans()
		if err == nil && ok(spans) {
			return spans
		}
		exited := false
		select {
		case <-c.exited:
			exited = true
		default:
		}
		if exited || time.Now().After(deadline) {
			var why strings.Builder
			if exited {
				fmt.Fprintf(&why, "the collector exited (%v) before the expected spans came", c.waitErr)
			} else {
				fmt.Fprintf(&why, "the expected spans did not come within %v", timeout)
			}
			if err != nil {
				fmt.Fprintf(&why, "; reading %s: %v", c.spansPath, err)
			}
			fmt.Fprintf(&why, "; %d spans seen", len(spans))
			for _, s := range spans {
				fmt.Fprintf(&why, "\n  %s", s)
			}
			tb.Fatalf("otelcoltest: %s", why.String())
		}
		<-poll.C
	}
}
