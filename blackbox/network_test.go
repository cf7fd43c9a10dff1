package blackbox

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// otherAddress returns an address of this machine that is not loopback,
// standing in for "another machine on the network": a listener reachable
// through it is reachable from the LAN.
func otherAddress(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	t.Fatalf("this machine has no non-loopback IPv4 address to try the network attack from (%v)", addrs)
	return ""
}

// portOf returns the port of a test server URL.
func portOf(url string) string { return url[strings.LastIndexByte(url, ':')+1:] }

// postTools sends a tools/list to url without a session, with an optional
// bearer token, and returns the status.
func postTools(t *testing.T, url, token string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestDefaultListenerIsLoopbackOnly tries the network attack on a plain
// start: the server answers on 127.0.0.1 and the same port on the
// machine's network address refuses the connection.
func TestDefaultListenerIsLoopbackOnly(t *testing.T) {
	p := startInProcess(t)
	if !strings.Contains(p.logs.String(), "msg=listening addr=127.0.0.1:") ||
		!strings.Contains(p.logs.String(), "url=http://127.0.0.1:"+portOf(p.url)+"/mcp") ||
		!strings.Contains(p.logs.String(), `reachable_from="this machine only (loopback)"`) {
		t.Fatalf("start-up log does not say where it listens:\n%s", p.logs)
	}
	if code := postTools(t, p.url, ""); code != http.StatusOK {
		t.Fatalf("loopback request: %d", code)
	}
	remote := "http://" + net.JoinHostPort(otherAddress(t), portOf(p.url))
	_, err := (&http.Client{Timeout: 5 * time.Second}).Get(remote + "/health")
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("a request through %s reached a default server: err=%v", remote, err)
	}
}

var generatedTokenRe = regexp.MustCompile(`generated bearer token \(shown once\): ([0-9a-f]{64})`)

// TestNonLoopbackWithoutTokenGeneratesOne: every interface and no token
// means a generated token, printed once; requests from the network without
// it are refused, with it they work.
func TestNonLoopbackWithoutTokenGeneratesOne(t *testing.T) {
	p := startInProcess(t, "--host=0.0.0.0")
	m := generatedTokenRe.FindStringSubmatch(p.logs.String())
	if m == nil {
		t.Fatalf("no generated token on stderr:\n%s", p.logs)
	}
	token := m[1]
	if strings.Count(p.logs.String(), token) != 1 {
		t.Fatalf("the token is shown more than once:\n%s", p.logs)
	}
	if !strings.Contains(p.logs.String(), `reachable_from="every network interface"`) || !strings.Contains(p.logs.String(), `auth="bearer token"`) {
		t.Fatalf("start-up log:\n%s", p.logs)
	}
	remote := "http://" + net.JoinHostPort(otherAddress(t), portOf(p.url))
	for _, tok := range []string{"", "wrong"} {
		if code := postTools(t, remote, tok); code != http.StatusUnauthorized {
			t.Fatalf("token %q from the network: %d, want 401", tok, code)
		}
	}
	cs := connectHTTP(t, remote, token, nil)
	if text := mustOK(t, cs, "bash", map[string]any{"command": "echo reached"}); !strings.Contains(text, "reached") {
		t.Fatalf("with the token: %q", text)
	}
	// Probes and scrapers need no token.
	resp, err := http.Get(remote + "/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health: %v %v", err, resp)
	}
	resp.Body.Close()
}

// TestNoAuthServesAndWarns: --no-auth is the operator saying the network is
// trusted; boris serves without a token and says so at warn level.
func TestNoAuthServesAndWarns(t *testing.T) {
	p := startInProcess(t, "--host=0.0.0.0", "--no-auth")
	if generatedTokenRe.MatchString(p.logs.String()) {
		t.Fatal("a token was generated despite --no-auth")
	}
	if !regexp.MustCompile(`level=WARN msg="no authentication \(--no-auth\): anyone who can reach \S+ can run commands`).MatchString(p.logs.String()) {
		t.Fatalf("no warning:\n%s", p.logs)
	}
	remote := "http://" + net.JoinHostPort(otherAddress(t), portOf(p.url))
	cs := connectHTTP(t, remote, "", nil)
	mustOK(t, cs, "bash", map[string]any{"command": "true"})
}

// originRequest sends a request to /mcp as a browser page at origin would.
func originRequest(t *testing.T, method, url, origin string, extra map[string]string) (*http.Response, map[string]string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	req, _ := http.NewRequest(method, url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got map[string]string
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && resp.StatusCode >= 400 {
		_ = json.NewDecoder(resp.Body).Decode(&got)
	}
	return resp, got
}

func TestOriginRules(t *testing.T) {
	p := startInProcess(t, "--allow-origin=https://app.example.com", "--allow-origin=http://127.0.0.1:3000")
	preflight := map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type,mcp-protocol-version"}

	// No Origin: every non-browser client, unaffected and given no CORS headers.
	resp, _ := originRequest(t, "POST", p.url, "", nil)
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("no origin: %d %v", resp.StatusCode, resp.Header)
	}
	// Unlisted origins, including ones that merely resemble a listed one.
	for _, o := range []string{"https://evil.example", "https://app.example.com.evil.example", "http://app.example.com", "http://127.0.0.1:3001", "null"} {
		resp, body := originRequest(t, "POST", p.url, o, nil)
		if resp.StatusCode != 403 || body["error"] != "origin_not_allowed" || resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Fatalf("origin %q: %d %v %v", o, resp.StatusCode, body, resp.Header)
		}
		resp, _ = originRequest(t, "OPTIONS", p.url, o, preflight)
		if resp.StatusCode != 403 || resp.Header.Get("Access-Control-Allow-Origin") != "" || resp.Header.Get("Access-Control-Allow-Headers") != "" {
			t.Fatalf("preflight from %q: %d %v", o, resp.StatusCode, resp.Header)
		}
	}
	// Listed origins are echoed, never "*", with Vary: Origin.
	for _, o := range []string{"https://app.example.com", "http://127.0.0.1:3000"} {
		resp, _ := originRequest(t, "OPTIONS", p.url, o, preflight)
		h := resp.Header
		if resp.StatusCode != 204 || h.Get("Access-Control-Allow-Origin") != o || h.Get("Vary") != "Origin" ||
			!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Mcp-Protocol-Version") || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") {
			t.Fatalf("preflight from %q: %d %v", o, resp.StatusCode, h)
		}
		resp, _ = originRequest(t, "POST", p.url, o, nil)
		if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != o || !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") {
			t.Fatalf("POST from %q: %d %v", o, resp.StatusCode, resp.Header)
		}
	}
	// /health and /metrics answer probes and scrapers as before.
	for _, path := range []string{"/health", "/metrics"} {
		req, _ := http.NewRequest("GET", p.url+path, nil)
		req.Header.Set("Origin", "https://evil.example")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %v %v", path, err, resp)
		}
		resp.Body.Close()
	}
	if !strings.Contains(p.logs.String(), `refused a request from a browser origin not in --allow-origin" origin=https://evil.example`) {
		t.Fatalf("refusal not logged:\n%s", p.logs)
	}
}

func TestOriginWildcardOnlyWhenListed(t *testing.T) {
	p := startInProcess(t, "--allow-origin=*")
	if !strings.Contains(p.logs.String(), "level=WARN msg=\"--allow-origin * lets every web page") {
		t.Fatalf("no warning for *:\n%s", p.logs)
	}
	resp, _ := originRequest(t, "POST", p.url, "https://anything.example", nil)
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("with * listed: %d %v", resp.StatusCode, resp.Header)
	}
}
