package blackbox

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/app"
	"github.com/boris-mcp/boris/internal/config"
	"github.com/boris-mcp/boris/internal/lsp"
	"github.com/boris-mcp/boris/internal/tool"
	"github.com/boris-mcp/boris/internal/tool/catalog"
	"github.com/boris-mcp/boris/internal/tool/checkpoint"
	exectool "github.com/boris-mcp/boris/internal/tool/exec"
)

// binPath is the boris binary built once for the tests that run it as a
// separate process.
var binPath string

// moduleRoot is the boris module's directory (go test runs a package's
// tests in the package's directory): the command is built there, and the
// benchmark programs run from there.
const moduleRoot = ".."

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "boris-test-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "boris")
	// The binaries the tests start keep their checkpoint stores here, not
	// in the user's state directory.
	os.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	// The tag adds the sandbox's test-only probe cap (BORIS_SANDBOX_TEST_ABI),
	// so a test can show the refusal on a kernel without Landlock.
	build := exec.Command("go", "build", "-tags=boris_sandboxtest", "-o", binPath, ".")
	build.Dir = moduleRoot
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build boris:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// logBuffer collects a server's stderr lines.
type logBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (l *logBuffer) add(s string) { l.mu.Lock(); l.lines = append(l.lines, s); l.mu.Unlock() }
func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// listenRe finds the port and scheme in the "listening" line.
var listenRe = regexp.MustCompile(`msg=listening addr=\S*:(\d+) url=(https?)://`)

// scanLogs reads a server's stderr until it reports its port, then keeps
// collecting the rest in the background. It returns the server's base URL,
// http:// or https:// as the server says.
func scanLogs(t *testing.T, r io.Reader, logs *logBuffer) string {
	t.Helper()
	portc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		sent := false
		for sc.Scan() {
			logs.add(sc.Text())
			if m := listenRe.FindStringSubmatch(sc.Text()); m != nil && !sent {
				portc <- m[2] + "://127.0.0.1:" + m[1]
				sent = true
			}
		}
		if !sent {
			close(portc)
		}
	}()
	select {
	case url, ok := <-portc:
		if !ok {
			t.Fatalf("server exited before listening:\n%s", logs)
		}
		return url
	case <-time.After(10 * time.Second):
		t.Fatalf("server did not start:\n%s", logs)
	}
	return ""
}

// inProcess is boris running in this test process through app.Run.
type inProcess struct {
	url  string
	dir  string
	logs *logBuffer
	stop func() error
}

// startInProcess runs boris over HTTP on a free port with the given extra
// arguments; the workdir is a fresh temp dir unless args set one.
func startInProcess(t *testing.T, args ...string) *inProcess {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	full := append([]string{"--port=0", "--log-level=debug", "--workdir=" + dir}, args...)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := app.Run(ctx, full, func(string) string { return "" }, strings.NewReader(""), io.Discard, pw)
		pw.Close()
		done <- err
	}()
	logs := &logBuffer{}
	p := &inProcess{url: scanLogs(t, pr, logs), dir: dir, logs: logs}
	var once sync.Once
	var stopErr error
	p.stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case stopErr = <-done:
			case <-time.After(15 * time.Second):
				stopErr = fmt.Errorf("server did not stop")
			}
		})
		return stopErr
	}
	t.Cleanup(func() {
		if err := p.stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return p
}

// bearer adds an Authorization header to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// handshakeEra is the handshake-era revision tests pin clients to; the
// go-sdk client's default is the stateless revision.
const (
	handshakeEra  = "2025-11-25"
	statelessEra  = "2026-07-28"
	defaultClient = ""
)

func connectHTTP(t *testing.T, url, token string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return connectHTTPAt(t, url, token, defaultClient, opts)
}

// connectHTTPAt connects over streamable HTTP at a protocol revision
// (defaultClient: the client's own choice) and checks what was negotiated.
func connectHTTPAt(t *testing.T, url, token, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return connectClient(t, url, token, http.DefaultTransport, version, opts)
}

// connectClient is connectHTTPAt over a given HTTP transport (one that
// trusts a test CA, say).
func connectClient(t *testing.T, url, token string, rt http.RoundTripper, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: rt}
	if token != "" {
		hc.Transport = bearer{token: token, next: rt}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "boris-test", Version: "1"}, opts).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	checkNegotiated(t, cs, version)
	return cs
}

// checkNegotiated fails unless the session speaks the revision asked for,
// or the stateless one when the client chose.
func checkNegotiated(t *testing.T, cs *mcp.ClientSession, version string) {
	t.Helper()
	want := version
	if want == defaultClient {
		want = statelessEra
	}
	if got := cs.InitializeResult().ProtocolVersion; got != want {
		t.Fatalf("negotiated protocol %s, want %s", got, want)
	}
}

// serveBinary starts a prepared boris command serving HTTP, waits for its
// "listening" line, and kills it when the test ends; it returns the base
// URL and the log.
func serveBinary(t *testing.T, cmd *exec.Cmd) (string, *logBuffer) {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	logs := &logBuffer{}
	return scanLogs(t, stderr, logs), logs
}

// connectStdio starts the boris binary in stdio mode.
func connectStdio(t *testing.T, dir string, args ...string) (*mcp.ClientSession, *exec.Cmd, *logBuffer) {
	t.Helper()
	return connectStdioAt(t, dir, defaultClient, args...)
}

// connectStdioAt starts the boris binary in stdio mode and connects at a
// protocol revision (defaultClient: the client's own choice).
func connectStdioAt(t *testing.T, dir, version string, args ...string) (*mcp.ClientSession, *exec.Cmd, *logBuffer) {
	t.Helper()
	return connectStdioWith(t, dir, version, nil, args...)
}

// connectStdioWith is connectStdioAt with client options.
func connectStdioWith(t *testing.T, dir, version string, opts *mcp.ClientOptions, args ...string) (*mcp.ClientSession, *exec.Cmd, *logBuffer) {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"--transport=stdio", "--workdir=" + dir, "--log-level=debug"}, args...)...)
	cs, logs := connectCmd(t, cmd, version, opts)
	return cs, cmd, logs
}

// collectLogs collects the stderr lines of a command about to start.
func collectLogs(t *testing.T, cmd *exec.Cmd) *logBuffer {
	t.Helper()
	logs := &logBuffer{}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			logs.add(sc.Text())
		}
	}()
	return logs
}

// connectCmd starts a prepared boris command in stdio mode, collects its
// log, and connects at a protocol revision.
func connectCmd(t *testing.T, cmd *exec.Cmd, version string, opts *mcp.ClientOptions) (*mcp.ClientSession, *logBuffer) {
	t.Helper()
	logs := collectLogs(t, cmd)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "boris-test", Version: "1"}, opts).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect stdio: %v\n%s", err, logs)
	}
	checkNegotiated(t, cs, version)
	return cs, logs
}

// call invokes a tool and returns its text and IsError; a protocol error
// fails the test.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return resultText(res), res.IsError
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// mustOK calls a tool that must succeed.
func mustOK(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	text, isErr := call(t, cs, name, args)
	if isErr {
		t.Fatalf("%s failed: %s", name, text)
	}
	return text
}

// mustErr calls a tool that must fail with the code.
func mustErr(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, code string) string {
	t.Helper()
	text, isErr := call(t, cs, name, args)
	if !isErr || !strings.HasPrefix(text, "["+code+"] ") {
		if len(text) > 500 {
			text = text[:500] + "…"
		}
		t.Fatalf("%s: want [%s], got isError=%v %q", name, code, isErr, text)
	}
	return text
}

// declaredTools are the names, sorted as tools/list gives them, of the
// tools the declarations (internal/tool/catalog) give a server started with
// args on this machine: its dialect, --disable-tools, and whether it has a
// shell, language servers and checkpoints.
func declaredTools(t *testing.T, args ...string) []string {
	t.Helper()
	cfg, err := config.Parse(config.Program{Version: "test", Tools: catalog.Naming()}, append([]string{"--workdir", t.TempDir()}, args...), func(string) string { return "" }, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	env := tool.Env{Mode: cfg.Dialect, Disabled: cfg.DisableTools}
	if !cfg.LSPOff {
		env.LSP = lsp.New(lsp.Options{Workdir: cfg.Workdir})
	}
	set, err := catalog.NewSet(env, catalog.Options{
		Exec:       exectool.Options{Shell: cfg.Shell},
		Checkpoint: checkpoint.Options{On: cfg.Checkpoints},
	})
	if err != nil {
		t.Fatal(err)
	}
	return slices.Sorted(slices.Values(set.Names()))
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// processAlive reports whether pid runs (zombies count as gone).
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z'
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && pid > 0 {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

// waitGone polls until none of pids runs, or fails after limit.
func waitGone(t *testing.T, limit time.Duration, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		var alive []int
		for _, p := range pids {
			if processAlive(p) {
				alive = append(alive, p)
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v still running after %v", alive, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// schemaJSON renders a schema for inspection.
func schemaJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// propertyNames returns the sorted property names of an input schema.
func propertyNames(t *testing.T, schema any) []string {
	t.Helper()
	var s struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal([]byte(schemaJSON(t, schema)), &s); err != nil {
		t.Fatal(err)
	}
	var names []string
	for k := range s.Properties {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}
