package e2e

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectAt opens an MCP session at a protocol revision ("" is the
// client's default, the stateless 2026-07-28) and checks what was agreed.
func connectAt(t *testing.T, url, token, version string) *mcp.ClientSession {
	t.Helper()
	return connectVia(t, url, token, http.DefaultTransport, version)
}

// connectVia is connectAt over a given HTTP transport (one trusting a
// test CA, say).
func connectVia(t *testing.T, url, token string, rt http.RoundTripper, version string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: rt}
	if token != "" {
		hc.Transport = bearer{token: token, next: rt}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "boris-e2e", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect %s/mcp at %q: %v", url, version, err)
	}
	t.Cleanup(func() { cs.Close() })
	want := version
	if want == "" {
		want = "2026-07-28"
	}
	if got := cs.InitializeResult().ProtocolVersion; got != want {
		t.Fatalf("negotiated %s, want %s", got, want)
	}
	return cs
}

// TestBothProtocolErasInContainer: in boris:latest a 2026-07-28 client
// (stateless: no Mcp-Session-Id) and a handshake-era one both work; cd
// persists without a session argument, and a minted handle keeps its own
// directory.
func TestBothProtocolErasInContainer(t *testing.T) {
	requireImages(t)
	t.Parallel()
	srv := startBoris(t, spec{image: imageLatest})
	bash(t, srv.connect(t), "mkdir -p /workspace/a /workspace/b")
	for _, version := range []string{"", "2025-11-25"} {
		cs := connectAt(t, srv.url, srv.token, version)
		if (cs.ID() == "") != (version == "") {
			t.Fatalf("%q: session id %q", version, cs.ID())
		}
		bash(t, cs, "cd /workspace/a")
		if got := bash(t, cs, "pwd"); !strings.Contains(got, "stdout:\n/workspace/a\n") {
			t.Fatalf("%q: cd did not persist: %q", version, got)
		}
		text := mustOK(t, cs, "bash", map[string]any{"command": "cd /workspace/b", "session": "new"})
		m := regexp.MustCompile(`session: (s_\S+)\n`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("%q: no handle in %q", version, text)
		}
		if got := mustOK(t, cs, "bash", map[string]any{"command": "pwd", "session": m[1]}); !strings.Contains(got, "stdout:\n/workspace/b\n") {
			t.Fatalf("%q: handle directory: %q", version, got)
		}
		if got := bash(t, cs, "pwd; cd /workspace"); !strings.Contains(got, "stdout:\n/workspace/a\n") {
			t.Fatalf("%q: the handle moved the implicit session: %q", version, got)
		}
	}
}
