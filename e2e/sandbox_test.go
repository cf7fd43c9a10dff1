package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestSandboxInImage: in boris:latest, as its non-root user under Docker's
// default seccomp profile, a sandboxed command cannot write to its home
// directory — which the same command writes without the sandbox — while
// /workspace and /tmp stay writable.
func TestSandboxInImage(t *testing.T) {
	requireImages(t)
	t.Parallel()
	const token = "e2e-sandbox-0123456789"
	off := startBoris(t, spec{image: imageLatest, env: map[string]string{"BORIS_TOKEN": token}})
	on := startBoris(t, spec{image: imageLatest, env: map[string]string{"BORIS_TOKEN": token, "BORIS_SANDBOX": "on"}})

	if !strings.Contains(on.logs(t), "sandbox on") {
		t.Fatalf("no start-up line about the sandbox:\n%s", on.logs(t))
	}
	resp, err := http.Get(on.url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var health struct {
		Sandbox struct {
			Enabled bool `json:"enabled"`
			ABI     int  `json:"landlock_abi"`
		} `json:"sandbox"`
	}
	err = json.NewDecoder(resp.Body).Decode(&health)
	resp.Body.Close()
	if err != nil || !health.Sandbox.Enabled || health.Sandbox.ABI < 3 {
		t.Fatalf("/health: %+v %v", health, err)
	}

	home := `echo "home=$HOME uid=$(id -u)"; touch "$HOME/probe" && echo wrote-home`
	inside := `touch /workspace/probe /tmp/probe && echo wrote-inside`
	csOff := connect(t, off.url, token)
	if out := bash(t, csOff, home); exitCode(t, out) != 0 || !strings.Contains(out, "home=/home/boris uid=65532") || !strings.Contains(out, "wrote-home") {
		t.Fatalf("without the sandbox the home directory must be writable (else this test proves nothing): %q", out)
	}
	csOn := connect(t, on.url, token)
	out := bash(t, csOn, home)
	if exitCode(t, out) == 0 || strings.Contains(out, "wrote-home") || !strings.Contains(out, "Permission denied") || !strings.Contains(out, "uid=65532") {
		t.Fatalf("sandboxed write to $HOME: %q", out)
	}
	if code, _ := on.exec(t, "ls", "/home/boris/probe"); code == 0 {
		t.Fatal("the sandboxed command created a file in its home directory")
	}
	for _, cs := range []struct {
		name string
		s    string
	}{{"off", bash(t, csOff, inside)}, {"on", bash(t, csOn, inside)}} {
		if exitCode(t, cs.s) != 0 || !strings.Contains(cs.s, "wrote-inside") {
			t.Fatalf("sandbox %s: /workspace and /tmp must be writable: %q", cs.name, cs.s)
		}
	}
}
