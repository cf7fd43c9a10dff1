package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/testcontainers/testcontainers-go"
	tcexec "github.com/testcontainers/testcontainers-go/exec"
	"github.com/testcontainers/testcontainers-go/wait"
)

// spec describes one boris container.
type spec struct {
	image     string
	args      []string          // arguments after the entrypoint
	env       map[string]string // extra environment
	workspace string            // host directory bind-mounted at /workspace
	// healthInterval replaces the image HEALTHCHECK's interval (its command
	// is kept), so a test need not wait the image's 10 s for a first probe.
	healthInterval time.Duration
	// mounts are host directories bind-mounted read-only: host path →
	// path in the container.
	mounts map[string]string
	// entrypoint replaces the image's, user its USER (uid:gid).
	entrypoint []string
	user       string
	// volumes are named Docker volumes mounted read-only: volume → path.
	volumes map[string]string
	// readOnly mounts the image's root filesystem read-only, with a
	// tmpfs at each tmpfs path (path → mount options).
	readOnly bool
	tmpfs    map[string]string
	// tls, when set, is the client side of HTTPS: boris serves TLS and is
	// reached over https with this configuration (its CA, its server name).
	tls *tls.Config
}

// server is a running boris container.
type server struct {
	c   testcontainers.Container
	url string // http(s)://host:port, reachable from this process
	// transport reaches url: it trusts the spec's CA when boris serves TLS.
	transport http.RoundTripper
	// token is the bearer token /mcp wants: BORIS_TOKEN when the spec set
	// it, else the one boris generated and printed, as `docker run` shows.
	token string
}

// startBoris starts a container and waits until boris listens and answers
// /health through the published port. The container is removed at cleanup,
// after its log is printed if the test failed.
func startBoris(t *testing.T, s spec) *server {
	t.Helper()
	requireImages(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	opts := []testcontainers.ContainerCustomizer{
		testcontainers.WithExposedPorts("8080/tcp"),
		testcontainers.WithWaitStrategy(wait.ForLog("msg=listening").WithStartupTimeout(60 * time.Second)),
	}
	if len(s.args) > 0 {
		opts = append(opts, testcontainers.WithCmd(s.args...))
	}
	if len(s.env) > 0 {
		opts = append(opts, testcontainers.WithEnv(s.env))
	}
	if s.workspace != "" {
		opts = append(opts, testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.Binds = append(hc.Binds, s.workspace+":/workspace")
		}))
	}
	if len(s.entrypoint) > 0 || s.user != "" {
		opts = append(opts, testcontainers.WithConfigModifier(func(c *container.Config) {
			if len(s.entrypoint) > 0 {
				c.Entrypoint = s.entrypoint
			}
			if s.user != "" {
				c.User = s.user
			}
			if s.workspace != "" {
				c.WorkingDir = "/workspace"
			}
		}))
	}
	if s.readOnly || len(s.tmpfs) > 0 {
		opts = append(opts, testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.ReadonlyRootfs = s.readOnly
			hc.Tmpfs = s.tmpfs
		}))
	}
	for vol, path := range s.volumes {
		opts = append(opts, testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.Binds = append(hc.Binds, vol+":"+path+":ro")
		}))
	}
	for host, path := range s.mounts {
		opts = append(opts, testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.Binds = append(hc.Binds, host+":"+path+":ro")
		}))
	}
	if s.healthInterval > 0 {
		opts = append(opts, testcontainers.WithConfigModifier(func(c *container.Config) {
			// An empty Test inherits the image's command.
			c.Healthcheck = &container.HealthConfig{Interval: s.healthInterval, Timeout: 5 * time.Second}
		}))
	}
	c, err := testcontainers.Run(ctx, s.image, opts...)
	srv := &server{c: c, transport: http.DefaultTransport}
	if s.tls != nil {
		srv.transport = &http.Transport{TLSClientConfig: s.tls, ForceAttemptHTTP2: true}
	}
	if c != nil {
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("log of %s:\n%s", s.image, srv.logs(t))
			}
			if err := testcontainers.TerminateContainer(c); err != nil {
				t.Logf("terminate: %v", err)
			}
		})
	}
	if err != nil {
		t.Fatalf("start %s: %v", s.image, err)
	}
	port, err := c.MappedPort(ctx, "8080/tcp")
	if err != nil {
		t.Fatalf("mapped port: %v", err)
	}
	var hosts []string
	if h, err := c.Host(ctx); err == nil {
		hosts = append(hosts, h)
	}
	srv.url = reachable(t, hosts, port.Port(), s.tls)
	srv.token = s.env["BORIS_TOKEN"]
	if srv.token == "" && s.env["BORIS_NO_AUTH"] == "" {
		srv.token = generatedToken(t, srv.logs(t))
	}
	return srv
}

var generatedTokenRe = regexp.MustCompile(`generated bearer token \(shown once\): ([0-9a-f]{64})`)

// generatedToken finds the token boris printed at start-up: the images
// listen on every interface, so without BORIS_TOKEN boris makes one.
func generatedToken(t *testing.T, log string) string {
	t.Helper()
	m := generatedTokenRe.FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("no generated token in the container's log:\n%s", log)
	}
	return m[1]
}

// reachable returns the first http://host:port (https:// with tlsConf)
// among the hosts (and localhost) whose /health answers 200.
// testcontainers derives the host from the environment and can pick a
// gateway address that does not forward published ports (a VM with a stray
// /.dockerenv, say); the daemon's own host, localhost, does.
func reachable(t *testing.T, hosts []string, port string, tlsConf *tls.Config) string {
	t.Helper()
	if os.Getenv("TESTCONTAINERS_HOST_OVERRIDE") == "" {
		hosts = append(hosts, "localhost")
	}
	scheme, client := "http://", &http.Client{Timeout: 2 * time.Second}
	if tlsConf != nil {
		scheme, client.Transport = "https://", &http.Transport{TLSClientConfig: tlsConf}
	}
	deadline := time.Now().Add(30 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		for _, h := range hosts {
			u := scheme + net.JoinHostPort(h, port)
			resp, err := client.Get(u + "/health")
			if err != nil {
				last = err
				continue
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return u
			}
			last = fmt.Errorf("%s/health: %s", u, resp.Status)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("boris not reachable on port %s via %v: %v", port, hosts, last)
	return ""
}

// logs returns the container's log so far (boris logs to stderr only).
func (s *server) logs(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rc, err := s.c.Logs(ctx)
	if err != nil {
		return fmt.Sprintf("(logs: %v)", err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return fmt.Sprintf("%s(reading the logs: %v)", b, err)
	}
	return string(b)
}

// exec runs a command in the container (as the image's user) and returns its
// exit code and combined output.
func (s *server) exec(t *testing.T, cmd ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code, r, err := s.c.Exec(ctx, cmd, tcexec.Multiplexed())
	if err != nil {
		t.Fatalf("exec %v: %v", cmd, err)
	}
	out, _ := io.ReadAll(r)
	return code, string(out)
}

// inspect returns the container's current state.
func (s *server) inspect(t *testing.T) *container.InspectResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := s.c.Inspect(ctx)
	if err != nil {
		t.Fatalf("inspect: %v", err)
	}
	return info
}

// waitHealthy polls the container's health status until Docker reports it
// healthy, which means the image's HEALTHCHECK (boris --healthcheck) passed
// inside the container.
func (s *server) waitHealthy(t *testing.T, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		info := s.inspect(t)
		if h := info.State.Health; h != nil {
			if h.Status == container.Healthy {
				return
			}
			if time.Now().After(deadline) {
				var probes []string
				for _, r := range h.Log {
					probes = append(probes, fmt.Sprintf("exit %d: %s", r.ExitCode, strings.TrimSpace(r.Output)))
				}
				t.Fatalf("health is %q after %s; probes: %v", h.Status, within, probes)
			}
		} else if time.Now().After(deadline) {
			t.Fatal("the container has no health check")
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// workspace makes a host directory to mount at /workspace, writable by the
// container's user (65532) whatever uid runs the tests.
func workspace(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "boris-e2e-ws")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Files the container made belong to 65532; a non-root test user can
		// still remove them from this world-writable directory.
		if err := os.RemoveAll(dir); err != nil {
			t.Logf("leaving %s behind: %v", dir, err)
		}
	})
	return dir
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

// connect opens an MCP session with the server's token.
func (s *server) connect(t *testing.T) *mcp.ClientSession {
	t.Helper()
	return connectVia(t, s.url, s.token, s.transport, "")
}

// connect opens an MCP session over streamable HTTP at the client's
// default protocol revision (2026-07-28).
func connect(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	return connectAt(t, url, token, "")
}

// call invokes a tool and returns its text and IsError; a protocol error
// fails the test.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: protocol error: %v", name, args, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// mustOK calls a tool that must succeed.
func mustOK(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	text, isErr := call(t, cs, name, args)
	if isErr {
		t.Fatalf("%s %v failed: %s", name, args, text)
	}
	return text
}

// mustErr calls a tool that must fail with the error code.
func mustErr(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, code string) string {
	t.Helper()
	text, isErr := call(t, cs, name, args)
	if !isErr || !strings.HasPrefix(text, "["+code+"] ") {
		t.Fatalf("%s %v: want [%s], got isError=%v %q", name, args, code, isErr, text)
	}
	return text
}

// bash runs a command through the bash tool and returns the result text.
func bash(t *testing.T, cs *mcp.ClientSession, command string) string {
	t.Helper()
	return mustOK(t, cs, "bash", map[string]any{"command": command})
}

// exitCode parses the first line of a bash result, "exit_code: N".
func exitCode(t *testing.T, result string) int {
	t.Helper()
	first, _, _ := strings.Cut(result, "\n")
	n, err := strconv.Atoi(strings.TrimPrefix(first, "exit_code: "))
	if !strings.HasPrefix(first, "exit_code: ") || err != nil {
		t.Fatalf("bash result does not start with exit_code: %q", result)
	}
	return n
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("list tools: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}
