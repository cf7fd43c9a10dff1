package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/config"
	"github.com/boris-mcp/boris/internal/files"
	"github.com/boris-mcp/boris/internal/metrics"
	"github.com/boris-mcp/boris/internal/scope"
	"github.com/boris-mcp/boris/internal/session"
	"github.com/boris-mcp/boris/internal/shell"
	"github.com/boris-mcp/boris/internal/tool"
	"github.com/boris-mcp/boris/internal/tool/catalog"
	"github.com/boris-mcp/boris/internal/tool/exec"
)

const testToken = "t0k3n-Secret_value"

// syncBuffer collects log output written from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type testServer struct {
	url  string
	logs *syncBuffer
	srv  *Server
	stop func() // idempotent; also run at cleanup
}

// serve runs a file-tools-only server with a token, debug logging and the
// given timeouts on a loopback port until the test ends.
func serve(t *testing.T, headerTimeout, bodyTimeout time.Duration) *testServer {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.Parse(testProgram, []string{"--workdir=" + dir, "--token=" + testToken, "--max-file-size=4KB", "--log-level=debug"},
		func(string) string { return "" }, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	policy, err := scope.New(cfg.AllowDirs, cfg.DenyPatterns, cfg.Workdir)
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New("test")
	set, err := testSet(cfg, policy, logger, m, true)
	if err != nil {
		t.Fatal(err)
	}
	sessOpts := session.Options{Workdir: dir}
	if cfg.Shell != "" {
		sessOpts.Runner = shell.NewRunner(cfg.Shell, shell.Environ(os.Environ()), shell.Options{})
	}
	srv := New(Deps{Options: testOptions(cfg), Version: "test", Logger: logger, Tools: set, Metrics: m,
		Sessions: sessOpts, HeaderTimeout: headerTimeout, BodyTimeout: bodyTimeout})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeHTTP(ctx, ln, m.Handler()) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("ServeHTTP: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return &testServer{url: "http://" + ln.Addr().String(), logs: logs, srv: srv, stop: stop}
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func post(t *testing.T, url string, header map[string]string, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func TestAuthRefusesEveryWrongForm(t *testing.T) {
	ts := serve(t, 0, 0)
	wrong := map[string]string{
		"missing":          "",
		"empty bearer":     "Bearer ",
		"no scheme":        testToken,
		"basic scheme":     "Basic " + testToken,
		"scheme glued":     "Bearer" + testToken,
		"prefix":           "Bearer " + testToken[:len(testToken)-1],
		"longer":           "Bearer " + testToken + "x",
		"case of token":    "Bearer " + strings.ToUpper(testToken),
		"two tokens":       "Bearer " + testToken + " " + testToken,
		"NUL after":        "Bearer " + testToken + "\x00",
		"non-ASCII":        "Bearer " + testToken + "é",
		"long":             "Bearer " + strings.Repeat("a", 16<<10),
		"comma separated":  "Bearer " + testToken + ", Bearer " + testToken,
		"token as scheme":  testToken + " Bearer",
		"quoted":           `Bearer "` + testToken + `"`,
		"tab, not a space": "Bearer\t" + testToken,
	}
	for name, h := range wrong {
		t.Run(name, func(t *testing.T) {
			// Raw, as net/http's client refuses to send some of these.
			c, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			hdr := ""
			if h != "" {
				hdr = "Authorization: " + h + "\r\n"
			}
			fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: x\r\n%sContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", hdr, len(initBody), initBody)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			// 401, or 400 where net/http itself refuses the header.
			if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("%q: status %d, want 401", h, resp.StatusCode)
			}
		})
	}
	// The scheme is case-insensitive; surrounding spaces are tolerated.
	for _, h := range []string{"Bearer " + testToken, "bearer " + testToken, "BEARER " + testToken, "Bearer   " + testToken + "  "} {
		if resp := post(t, ts.url, map[string]string{"Authorization": h}, initBody); resp.StatusCode != http.StatusOK {
			t.Fatalf("%q: status %d, want 200", h, resp.StatusCode)
		}
	}
	// Unauthenticated requests reach nothing: no session was made for them.
	if strings.Contains(ts.logs.String(), testToken) {
		t.Fatal("the token appears in the logs")
	}
	rec := &bytes.Buffer{}
	resp := httpGet(t, ts.url+"/metrics")
	_, _ = io.Copy(rec, resp.Body)
	resp.Body.Close()
	if strings.Contains(rec.String(), testToken) {
		t.Fatal("the token appears in the metrics")
	}
}

func httpGet(t *testing.T, url string) *http.Response {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestOversizedHeadersAndBodies(t *testing.T) {
	ts := serve(t, 0, 0)
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	// 64 KB of headers is the limit: more is 431, before auth runs.
	big := map[string]string{"Authorization": "Bearer " + testToken, "X-Padding": strings.Repeat("p", 128<<10)}
	if resp := post(t, ts.url, big, initBody); resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("oversized headers: %d, want 431", resp.StatusCode)
	}
	// The body limit follows --max-file-size (4 KB here): twice it plus
	// 1 MB for the JSON around it. Past that: 413.
	huge := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"` + strings.Repeat("x", 2<<20) + `"}}`
	if resp := post(t, ts.url, auth, huge); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized body: %d, want 413", resp.StatusCode)
	}
	// Garbage bodies are a clear client error, not a crash.
	for _, body := range []string{"", "{", "null", "[]", `{"jsonrpc":"2.0"}`, "\x00\xff\xfe", strings.Repeat("[", 100000)} {
		if resp := post(t, ts.url, auth, body); resp.StatusCode < 400 || resp.StatusCode >= 500 {
			t.Fatalf("body %.20q: %d, want a 4xx", body, resp.StatusCode)
		}
	}
	// The server still works for a well-behaved client.
	cs := connect(t, ts.url)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "view", Arguments: map[string]any{"path": "."}})
	if err != nil || res.IsError {
		t.Fatalf("view after hostile input: %v %v", err, res)
	}
}

func connect(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: bearer{}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type bearer struct{}

func (bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+testToken)
	return http.DefaultTransport.RoundTrip(r)
}

// TestSlowClientsAreCutOff: a client that trickles its headers, or sends
// headers and then stalls in its body, loses its connection after the
// timeout instead of holding it forever.
func TestSlowClientsAreCutOff(t *testing.T) {
	ts := serve(t, 300*time.Millisecond, 500*time.Millisecond)
	addr := strings.TrimPrefix(ts.url, "http://")

	closedWithin := func(t *testing.T, c net.Conn, limit time.Duration) {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(limit))
		start := time.Now()
		_, err := io.Copy(io.Discard, c) // returns when the server closes
		if err != nil {
			t.Fatalf("connection still open after %s: %v", time.Since(start).Round(time.Millisecond), err)
		}
	}

	t.Run("headers", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: x\r\n")
		// …and never finish the headers.
		closedWithin(t, c, 3*time.Second)
	})
	t.Run("body", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", testToken, len(initBody))
		_, _ = io.WriteString(c, initBody[:10]) // …and stall.
		closedWithin(t, c, 3*time.Second)
	})
	t.Run("body read in time, then a long call", func(t *testing.T) {
		// The body deadline is lifted once the body is in: a call that
		// runs well past it completes (were the deadline left on the
		// connection, its close detection would cancel the call).
		cs := connect(t, ts.url)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "sleep 1.5; echo finished"}})
		if err != nil || res.IsError || !strings.Contains(fmt.Sprint(res.Content[0]), "finished") {
			t.Fatalf("long call: %v %+v", err, res)
		}
	})
}

// Sessions are made by tool calls, not by requests: twenty calls of one
// handshake-era connection share one session, and requests naming an
// unknown Mcp-Session-Id, or GET and DELETE without one, make none.
func TestSessionsComeFromCalls(t *testing.T) {
	ts := serve(t, 0, 0)
	cs := connect(t, ts.url)
	if n := ts.srv.ActiveSessions(); n != 0 {
		t.Fatalf("%d sessions before any tool call", n)
	}
	for range 20 {
		if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "view", Arguments: map[string]any{"path": "."}}); err != nil || res.IsError {
			t.Fatalf("view: %v %+v", err, res)
		}
	}
	if n := ts.srv.ActiveSessions(); n != 1 {
		t.Fatalf("%d sessions after 20 calls of one connection", n)
	}
	resp := post(t, ts.url, map[string]string{"Authorization": "Bearer " + testToken, "Mcp-Session-Id": "no-such-session"}, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown session: %d, want 404", resp.StatusCode)
	}
	for _, method := range []string{"GET", "DELETE"} {
		req, _ := http.NewRequest(method, ts.url+"/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode < 400 || resp.StatusCode >= 500 {
			t.Fatalf("%s without a session: %d", method, resp.StatusCode)
		}
	}
	if n := ts.srv.ActiveSessions(); n != 1 {
		t.Fatalf("requests naming no or an unknown session made sessions: %d", n)
	}
}

// A request over loopback naming another host (a DNS-rebinding attack
// from a browser) is refused, even with the token; SECURITY.md relies on it.
func TestForeignHostOnLoopbackRefused(t *testing.T) {
	ts := serve(t, 0, 0)
	for host, want := range map[string]int{"evil.example.com": http.StatusForbidden, strings.TrimPrefix(ts.url, "http://"): http.StatusOK} {
		req, _ := http.NewRequest("POST", ts.url+"/mcp", strings.NewReader(initBody))
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// A shutdown that finishes in time says nothing about being late, though
// ServeHTTP waits for it from two goroutines and cancels its deadline as
// soon as it returns. ServeHTTP waits for both before it returns, so the
// log is complete when stop returns: no sleep is needed to see a warning.
func TestCleanShutdownIsQuiet(t *testing.T) {
	for i := range 40 {
		ts := serve(t, 0, 0)
		if i%2 == 0 {
			connect(t, ts.url)
		}
		ts.stop()
		if strings.Contains(ts.logs.String(), "did not close in time") {
			t.Fatalf("spurious warning:\n%s", ts.logs)
		}
	}
}

// BenchmarkNewSession is what a new MCP connection costs the server: a
// client connects over an in-memory transport, makes one call (in the
// process's session: the server here serves no HTTP), and closes.
func BenchmarkNewSession(b *testing.B) {
	dir := b.TempDir()
	cfg, err := config.Parse(testProgram, []string{"--workdir=" + dir}, func(string) string { return "" }, io.Discard, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	policy, _ := scope.New(cfg.AllowDirs, cfg.DenyPatterns, cfg.Workdir)
	set, err := testSet(cfg, policy, slog.New(slog.DiscardHandler), nil, false)
	if err != nil {
		b.Fatal(err)
	}
	srv := New(Deps{Options: testOptions(cfg), Version: "test", Logger: slog.New(slog.DiscardHandler), Tools: set, Sessions: session.Options{Workdir: dir}})
	client := mcp.NewClient(&mcp.Implementation{Name: "b", Version: "1"}, nil)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.mcp.Connect(ctx, st, nil)
		if err != nil {
			b.Fatal(err)
		}
		cs, err := client.Connect(ctx, ct, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "view", Arguments: map[string]any{"path": "."}}); err != nil {
			b.Fatal(err)
		}
		cs.Close()
		ss.Wait()
	}
}

// testProgram is boris's command line with its tools' names.
var testProgram = config.Program{Version: "test", Tools: catalog.Naming()}

// testSet builds the tool set of cfg (without language servers or
// checkpoints) for a server test.
func testSet(cfg *config.Config, policy *scope.Policy, logger *slog.Logger, obs tool.Observer, viewFirst bool) (*tool.Set, error) {
	env := tool.Env{
		Mode: cfg.Dialect, Workdir: cfg.Workdir, Policy: policy, Logger: logger, Observer: obs,
		Files:      files.New(files.Options{Policy: policy, MaxFileSize: cfg.MaxFileSize, RequireViewBeforeEdit: viewFirst}),
		Structured: cfg.StructuredContent, SessionIdleTimeout: cfg.SessionIdleTimeout, Disabled: cfg.DisableTools,
	}
	return catalog.NewSet(env, catalog.Options{Exec: exec.Options{Shell: cfg.Shell, Timeout: cfg.BashTimeout, TTYCols: cfg.TTYCols, TTYRows: cfg.TTYRows}})
}

// testOptions are the server's settings from cfg.
func testOptions(cfg *config.Config) Options {
	return Options{SessionIdleTimeout: cfg.SessionIdleTimeout, MaxSessions: cfg.MaxSessions, MaxFileSize: cfg.MaxFileSize,
		AllowOrigins: cfg.AllowOrigins, Tokens: cfg.Tokens, LogLevel: cfg.LogLevel, AllowDirs: cfg.AllowDirs, DenyPatterns: cfg.DenyPatterns}
}
