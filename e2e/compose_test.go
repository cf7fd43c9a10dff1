package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// composeCommands returns the Compose implementations installed: the
// `docker compose` plugin (v2) and/or the standalone docker-compose (v1).
func composeCommands() map[string][]string {
	found := map[string][]string{}
	if exec.Command("docker", "compose", "version").Run() == nil {
		found["v2"] = []string{"docker", "compose"}
	}
	if p, err := exec.LookPath("docker-compose"); err == nil && exec.Command(p, "version").Run() == nil {
		found["v1"] = []string{p}
	}
	return found
}

// TestCompose brings compose.yaml up with every Compose found, serving a
// temporary directory, makes real MCP calls and takes it down again.
func TestCompose(t *testing.T) {
	requireImages(t)
	impls := composeCommands()
	if len(impls) == 0 {
		if inCI() {
			t.Fatal("neither `docker compose` nor docker-compose is installed (CI is set)")
		}
		t.Skip("neither `docker compose` nor docker-compose is installed")
	}
	for name, argv := range impls {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testCompose(t, argv)
		})
	}
}

func testCompose(t *testing.T, argv []string) {
	ws := workspace(t)
	if err := os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hello from the host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const token = "compose-e2e-token"
	port := freePort(t)
	project := fmt.Sprintf("boris-e2e-%d-%d", os.Getpid(), port)
	env := append(os.Environ(),
		"BORIS_TOKEN="+token,
		"BORIS_WORKSPACE="+ws,
		"BORIS_HOST_PORT="+strconv.Itoa(port),
		"BORIS_IMAGE="+imageLatest,
	)
	compose := func(timeout time.Duration, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		full := append(append(append([]string{}, argv[1:]...), "-f", filepath.Join(repoRoot, "compose.yaml"), "-p", project), args...)
		cmd := exec.CommandContext(ctx, argv[0], full...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	if out, err := compose(2*time.Minute, "up", "-d"); err != nil {
		t.Fatalf("up: %v\n%s", err, out)
	}
	downed := false
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := compose(time.Minute, "logs", "--no-color")
			t.Logf("compose logs:\n%s", out)
		}
		if !downed {
			if out, err := compose(2*time.Minute, "down", "-v", "--remove-orphans"); err != nil {
				t.Logf("down: %v\n%s", err, out)
			}
		}
	})

	url := reachable(t, nil, strconv.Itoa(port), nil)
	cs := connect(t, url, token)
	if res := bash(t, cs, "echo hello-compose; pwd"); !strings.Contains(res, "stdout:\nhello-compose\n/workspace\n") {
		t.Fatalf("bash: %s", res)
	}
	if view := mustOK(t, cs, "view", map[string]any{"path": "hello.txt"}); !strings.Contains(view, "1\thello from the host") {
		t.Fatalf("view: %q", view)
	}

	// The compose health check (boris --healthcheck) reports healthy.
	id, err := compose(time.Minute, "ps", "-q", "boris")
	id = strings.TrimSpace(id)
	if err != nil || id == "" {
		t.Fatalf("ps: %v %q", err, id)
	}
	deadline := time.Now().Add(45 * time.Second)
	for {
		out, err := exec.Command("docker", "inspect", "--format", "{{.State.Health.Status}}", id).CombinedOutput()
		status := strings.TrimSpace(string(out))
		if err == nil && status == "healthy" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("health status %q (%v)", status, err)
		}
		time.Sleep(500 * time.Millisecond)
	}

	cs.Close()
	if out, err := compose(2*time.Minute, "down", "-v", "--remove-orphans"); err != nil {
		t.Fatalf("down: %v\n%s", err, out)
	}
	downed = true
	if out, err := exec.Command("docker", "ps", "-aq", "--filter", "id="+id).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "" {
		t.Fatalf("container %s still exists after down: %q %v", id, out, err)
	}
}

// freePort returns a TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestComposeToolchain brings compose.toolchain.yaml up with every Compose
// found: boris copied into a volume and run in the Python toolchain image
// as the owner of a real project's checkout, whose tests it runs and whose
// code pylsp knows; then down, the volume removed.
func TestComposeToolchain(t *testing.T) {
	requireToolchainImages(t)
	impls := composeCommands()
	if len(impls) == 0 {
		if inCI() {
			t.Fatal("neither `docker compose` nor docker-compose is installed (CI is set)")
		}
		t.Skip("neither `docker compose` nor docker-compose is installed")
	}
	for name, argv := range impls {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ws := filepath.Join(workspace(t), "checkout")
			checkout(t, pythonProject, ws, checkoutUID)
			const token = "compose-toolchain-token"
			port := freePort(t)
			project := fmt.Sprintf("boris-e2e-tc-%d-%d", os.Getpid(), port)
			env := append(os.Environ(), "BORIS_TOKEN="+token, "BORIS_WORKSPACE="+ws, "BORIS_HOST_PORT="+strconv.Itoa(port),
				"BORIS_IMAGE="+imageLatest, "BORIS_TOOLCHAIN_IMAGE="+imagePython, "BORIS_USER=1000:1000")
			compose := func(timeout time.Duration, args ...string) (string, error) {
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				defer cancel()
				full := append(append(append([]string{}, argv[1:]...), "-f", filepath.Join(repoRoot, "compose.toolchain.yaml"), "-p", project), args...)
				cmd := exec.CommandContext(ctx, argv[0], full...)
				cmd.Env = env
				out, err := cmd.CombinedOutput()
				return string(out), err
			}
			if out, err := compose(3*time.Minute, "up", "-d"); err != nil {
				t.Fatalf("up: %v\n%s", err, out)
			}
			t.Cleanup(func() {
				if t.Failed() {
					out, _ := compose(time.Minute, "logs", "--no-color")
					t.Logf("compose logs:\n%s", out)
				}
				if out, err := compose(2*time.Minute, "down", "-v", "--remove-orphans"); err != nil {
					t.Logf("down: %v\n%s", err, out)
				}
			})
			url := reachable(t, nil, strconv.Itoa(port), nil)
			cs := connect(t, url, token)
			defer cs.Close()
			out := bash(t, cs, pythonProject.test+"; id -u; git status --short | wc -l")
			if exitCode(t, out) != 0 || !strings.Contains(out, pythonProject.pass) || !strings.Contains(out, "\n1000\n0\n") {
				t.Fatalf("the project's tests in the toolchain image: %s", out)
			}
			line, char := position(t, ws, pythonProject.defFile, pythonProject.defNeedle)
			def := mustOK(t, cs, "lsp", map[string]any{"operation": "goToDefinition", "filePath": pythonProject.defFile, "line": line, "character": char})
			if !strings.Contains(def, pythonProject.defWant) {
				t.Fatalf("goToDefinition through pylsp: %s", def)
			}
		})
	}
}
