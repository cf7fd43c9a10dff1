package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestShellDetection starts each image and checks which shell boris found
// (§3): /bin/bash when present, else /bin/sh (busybox in boris:latest), else
// none, in which case bash and task_output are not offered but the file tools
// work. Each image's HEALTHCHECK must pass too.
func TestShellDetection(t *testing.T) {
	requireImages(t)
	fileTools := []string{"view", "str_replace", "create_file", "apply_patch", "grep", "find"}
	cases := []struct {
		name, image string
		logShell    string // the shell= field of the start-up log line
		bash        bool
		probe       string // a command whose output shows which shell ran it
		wantProbe   string
	}{
		{
			name: "bash", image: imageBash, logShell: `shell="/bin/bash (detected)"`, bash: true,
			probe: `readlink /proc/$$/exe; echo "${BASH_VERSINFO[0]}"`, wantProbe: "/bin/bash\n5",
		},
		{
			name: "sh", image: imageLatest, logShell: `shell="/bin/sh (detected)"`, bash: true,
			probe: `readlink /proc/$$/exe; test -e /bin/bash || echo no-bash`, wantProbe: "/bin/busybox\nno-bash",
		},
		{
			name: "none", image: imageDistroless, logShell: `shell="none (bash and task_output disabled)"`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.image == imageBash && bashImageErr != nil {
				if inCI() {
					t.Fatal(bashImageErr)
				}
				t.Skip(bashImageErr)
			}
			ws := workspace(t)
			srv := startBoris(t, spec{image: tc.image, workspace: ws, healthInterval: time.Second})
			logs := srv.logs(t)
			if !strings.Contains(logs, `msg="boris starting"`) || !strings.Contains(logs, tc.logShell) {
				t.Fatalf("start-up log does not name %s:\n%s", tc.logShell, logs)
			}
			// Only sh: a line of its own says what that means for commands.
			if shOnly := strings.Contains(logs, "this image has no /bin/bash"); shOnly != (tc.name == "sh") {
				t.Fatalf("the sh-only start-up line (want it: %v):\n%s", tc.name == "sh", logs)
			}
			cs := srv.connect(t)
			names := toolNames(t, cs)
			for _, name := range fileTools {
				if !slices.Contains(names, name) {
					t.Errorf("tool %s missing from %v", name, names)
				}
			}
			hasBash := slices.Contains(names, "bash") && slices.Contains(names, "task_output")
			if hasBash != tc.bash {
				t.Fatalf("bash and task_output offered: %v, want %v (tools %v)", hasBash, tc.bash, names)
			}
			if tc.bash {
				res := bash(t, cs, tc.probe)
				if exitCode(t, res) != 0 || !strings.Contains(res, "stdout:\n"+tc.wantProbe+"\n") {
					t.Fatalf("probe %q: want stdout %q, got:\n%s", tc.probe, tc.wantProbe, res)
				}
			} else {
				if !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "no shell found") {
					t.Fatalf("no warning about the missing shell:\n%s", logs)
				}
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "true"}})
				if err == nil && !res.IsError {
					t.Fatal("a bash call succeeded without a shell")
				}
			}
			// The file tools work on the mounted workspace in every image.
			mustOK(t, cs, "create_file", map[string]any{"path": "/workspace/made-by-boris.txt", "content": "from " + tc.name + "\n"})
			if got, err := os.ReadFile(filepath.Join(ws, "made-by-boris.txt")); err != nil || string(got) != "from "+tc.name+"\n" {
				t.Fatalf("created file on the host: %q, %v", got, err)
			}
			if view := mustOK(t, cs, "view", map[string]any{"path": "made-by-boris.txt"}); !strings.Contains(view, "1\tfrom "+tc.name) {
				t.Fatalf("view: %q", view)
			}
			if found := mustOK(t, cs, "find", map[string]any{"pattern": "*.txt"}); !strings.Contains(found, "made-by-boris.txt") {
				t.Fatalf("find: %q", found)
			}
			srv.waitHealthy(t, 30*time.Second)
		})
	}
}
