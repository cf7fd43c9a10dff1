package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestPathScopeOnMountedWorkspace runs boris:latest with
// --allow-dir /workspace --deny-dir '**/.env' over a bind-mounted host
// directory holding secrets and symlinks that lead out of it (§6).
func TestPathScopeOnMountedWorkspace(t *testing.T) {
	requireImages(t)
	t.Parallel()
	ws := workspace(t)
	for name, content := range map[string]string{
		"notes.txt":   "hello scope\n",
		".env":        "SECRET=hunter2\n",
		"app/.env":    "SECRET=hunter3\n",
		"app/main.go": "package main\n",
	} {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Links resolved inside the container: to its /etc/passwd and /etc.
	if err := os.Symlink("/etc/passwd", filepath.Join(ws, "passwd-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(ws, "etc-link")); err != nil {
		t.Fatal(err)
	}

	srv := startBoris(t, spec{
		image:     imageLatest,
		args:      []string{"--allow-dir", "/workspace", "--deny-dir", "**/.env"},
		workspace: ws,
	})
	if logs := srv.logs(t); !strings.Contains(logs, `allow_dirs=/workspace`) || !strings.Contains(logs, `deny=**/.env`) {
		t.Fatalf("start-up log does not show the scope:\n%s", logs)
	}
	cs := srv.connect(t)

	if got := mustOK(t, cs, "view", map[string]any{"path": "notes.txt"}); !strings.Contains(got, "hello scope") {
		t.Fatalf("view notes.txt: %q", got)
	}
	for _, path := range []string{
		".env", "/workspace/.env", "app/.env", // denied pattern, at any depth
		"/workspace/../etc/passwd", "../etc/passwd", "/etc/passwd", // outside the allowed dir
		"passwd-link", "etc-link/passwd", // symlinks escaping it
	} {
		text := mustErr(t, cs, "view", map[string]any{"path": path}, "ACCESS_DENIED")
		if strings.Contains(text, "hunter") || strings.Contains(text, "root:x:0") {
			t.Fatalf("view %s leaked content: %q", path, text)
		}
	}
	mustErr(t, cs, "create_file", map[string]any{"path": "/tmp/outside.txt", "content": "x"}, "ACCESS_DENIED")
	mustErr(t, cs, "create_file", map[string]any{"path": "app/.env", "content": "SECRET=overwritten\n"}, "ACCESS_DENIED")
	mustErr(t, cs, "create_file", map[string]any{"path": "passwd-link", "content": "x"}, "ACCESS_DENIED")
	if got, _ := os.ReadFile(filepath.Join(ws, "app/.env")); string(got) != "SECRET=hunter3\n" {
		t.Fatalf("denied file changed: %q", got)
	}

	// grep and find skip what is denied, silently.
	grep := mustOK(t, cs, "grep", map[string]any{"pattern": "hunter|root:x", "path": "/workspace", "output_mode": "content"})
	if strings.Contains(grep, "hunter") || strings.Contains(grep, "root:x") {
		t.Fatalf("grep leaked denied content: %q", grep)
	}
	if found := mustOK(t, cs, "find", map[string]any{"pattern": "*.env"}); strings.Contains(found, ".env") {
		t.Fatalf("find lists denied files: %q", found)
	}

	// A file the tools create in the workspace belongs to the container's
	// user, 65532, on the host too.
	mustOK(t, cs, "create_file", map[string]any{"path": "new/created.txt", "content": "made in the container\n"})
	fi, err := os.Stat(filepath.Join(ws, "new", "created.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != 65532 {
		t.Fatalf("created file owner: %+v, want uid 65532", fi.Sys())
	}
	// Clean up what 65532 made in a subdirectory, so a non-root test user
	// can remove the workspace.
	bash(t, cs, "rm -rf /workspace/new")

	// bash is deliberately not scoped (isolation comes from the container).
	if res := bash(t, cs, "cat /workspace/.env"); !strings.Contains(res, "SECRET=hunter2") {
		t.Fatalf("bash is expected to read any file the user can: %s", res)
	}
}

// TestUserHealthMetricsAuth checks the non-root user, the open /health and
// /metrics endpoints and bearer auth on /mcp in boris:latest.
func TestUserHealthMetricsAuth(t *testing.T) {
	requireImages(t)
	t.Parallel()
	const token = "e2e-0123456789abcdef"
	srv := startBoris(t, spec{image: imageLatest, env: map[string]string{"BORIS_TOKEN": token}})

	if user := srv.inspect(t).Config.User; user != "65532:65532" {
		t.Fatalf("image user %q, want 65532:65532", user)
	}
	// PID 1 (boris) runs as 65532, not root.
	code, status := srv.exec(t, "cat", "/proc/1/status")
	if code != 0 || !strings.Contains(status, "\nUid:\t65532\t65532\t65532\t65532\n") || !strings.Contains(status, "\nGid:\t65532\t65532\t65532\t65532\n") {
		t.Fatalf("boris's credentials (exit %d):\n%s", code, status)
	}

	// /health and /metrics need no token.
	resp, err := http.Get(srv.url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var health map[string]string
	err = json.NewDecoder(resp.Body).Decode(&health)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || health["status"] != "ok" || health["version"] == "" {
		t.Fatalf("/health: %d %v %v", resp.StatusCode, health, err)
	}

	// /mcp: 401 without a token and with a wrong one.
	for _, auth := range []string{"", "Bearer wrong-token", "Basic " + token} {
		req, _ := http.NewRequest(http.MethodPost, srv.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), `"unauthorized"`) {
			t.Fatalf("Authorization %q: %d %s", auth, resp.StatusCode, body)
		}
	}
	// The right token: a session, and commands run as 65532 too.
	cs := connect(t, srv.url, token)
	if res := bash(t, cs, "id -u; id -g"); !strings.Contains(res, "stdout:\n65532\n65532\n") {
		t.Fatalf("id: %s", res)
	}

	resp, err = http.Get(srv.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %d", resp.StatusCode)
	}
	for _, want := range []string{
		"boris_build_info{version=",
		`boris_tool_calls_total{outcome="ok",tool="bash"} 1`,
		"boris_sessions_active 1",
		"process_resident_memory_bytes",
	} {
		if !strings.Contains(string(metrics), want) {
			t.Fatalf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(string(metrics), token) || strings.Contains(srv.logs(t), token) {
		t.Fatal("the token shows up in metrics or logs")
	}
}
