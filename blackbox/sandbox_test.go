package blackbox

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The sandbox tests run the boris binary on trees the test itself creates
// and writes (as whichever user runs it, root included): every write they
// expect to fail would succeed without the sandbox, so a refusal can only
// come from Landlock.

// sbLayout is a test tree: ws is the workdir, tmp is TMPDIR, outside and
// secret are neither.
type sbLayout struct{ root, ws, tmp, outside, secret string }

func newSBLayout(t *testing.T) sbLayout {
	t.Helper()
	root := tempDir(t)
	l := sbLayout{root: root, ws: filepath.Join(root, "ws"), tmp: filepath.Join(root, "tmp"), outside: filepath.Join(root, "outside"), secret: filepath.Join(root, "secret")}
	for _, d := range []string{l.ws, l.tmp, l.outside, l.secret} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	for p, s := range map[string]string{
		filepath.Join(l.outside, "victim"): "keep me\n",
		filepath.Join(l.secret, "key"):     "s3cret\n",
		filepath.Join(l.ws, "mine"):        "mine\n",
	} {
		if err := os.WriteFile(p, []byte(s), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// startSandboxed starts the binary over stdio in l.ws with TMPDIR=l.tmp
// and extra environment.
func startSandboxed(t *testing.T, l sbLayout, env []string, args ...string) (*mcp.ClientSession, *logBuffer) {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"--transport=stdio", "--workdir=" + l.ws, "--log-level=debug"}, args...)...)
	cmd.Env = append(append(os.Environ(), "TMPDIR="+l.tmp), env...)
	cs, logs := connectCmd(t, cmd, defaultClient, nil)
	t.Cleanup(func() { cs.Close() })
	return cs, logs
}

// bashExit runs a command and returns its exit code and output.
func bashExit(t *testing.T, cs *mcp.ClientSession, command string) (int, string) {
	t.Helper()
	out := mustOK(t, cs, "bash", map[string]any{"command": command})
	code, err := strconv.Atoi(between(out, "exit_code: ", "\n"))
	if err != nil {
		t.Fatalf("no exit code in %q", out)
	}
	return code, out
}

func TestSandboxConfinesWrites(t *testing.T) {
	l := newSBLayout(t)
	if err := os.Symlink(l.outside, filepath.Join(l.ws, "escape")); err != nil {
		t.Fatal(err)
	}
	cs, logs := startSandboxed(t, l, nil, "--sandbox=on")
	// The log is read by another goroutine: give it a moment.
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(logs.String(), "sandbox on") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "sandbox on") {
		t.Fatalf("no start-up line about the sandbox:\n%s", logs)
	}
	o := l.outside
	for _, c := range []string{
		"touch " + o + "/new",
		"echo x > " + o + "/new",
		": > " + o + "/victim",
		"mv mine " + o + "/",
		"rm " + o + "/victim",
		"sh -c 'touch " + o + "/child'",
		`sh -c 'sh -c "touch ` + o + `/grandchild"'`,
		"echo x > escape/through-link",
		"touch " + l.root + "/beside",
	} {
		code, out := bashExit(t, cs, c)
		if code == 0 || !strings.Contains(out, "Permission denied") {
			t.Errorf("%q: want a non-zero exit and Permission denied, got %q", c, out)
		}
	}
	for _, name := range []string{"new", "child", "grandchild", "through-link", "mine"} {
		if _, err := os.Lstat(filepath.Join(o, name)); err == nil {
			t.Errorf("%s appeared outside", name)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(o, "victim")); string(b) != "keep me\n" {
		t.Errorf("victim changed: %q", b)
	}

	// The workspace and the temp dir are writable; reading outside works.
	code, out := bashExit(t, cs, `touch a && echo x > b && mkdir d && mv a d/ && rm b && sh -c 'sh -c "echo deep > deep"' && echo t > "$TMPDIR/t" && cat deep "$TMPDIR/t" `+o+`/victim`)
	if code != 0 || !strings.Contains(out, "deep\nt\nkeep me\n") {
		t.Fatalf("inside the writable set: %q", out)
	}

	// Background tasks are confined too.
	text := mustOK(t, cs, "bash", map[string]any{"command": "touch " + o + "/bg; echo done", "run_in_background": true})
	id := between(text, "task_id: ", "\n")
	// Each read returns the output since the previous one: the refusal
	// may come in a read before the one that says the task completed.
	all := ""
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		out = mustOK(t, cs, "task_output", map[string]any{"task_id": id})
		all += out
		if strings.HasPrefix(out, "status: completed") || time.Now().After(deadline) {
			break
		}
	}
	if !strings.Contains(out, "exit_code: 0") || !strings.Contains(all, "Permission denied") {
		t.Fatalf("background task: %q", all)
	}
	if _, err := os.Lstat(filepath.Join(o, "bg")); err == nil {
		t.Fatal("a background task wrote outside")
	}

	// The model is told.
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if tl.Name == "bash" && !strings.Contains(tl.Description, "do not retry") {
			t.Fatalf("bash description says nothing about the sandbox:\n%s", tl.Description)
		}
	}
}

func TestSandboxDeniedReads(t *testing.T) {
	l := newSBLayout(t)
	keys := filepath.Join(l.root, "keys")
	if err := os.Mkdir(keys, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(keys, "old.pem"), []byte("old-key\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(keys, "cert.txt"), []byte("public\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(l.root, "other")
	if err := os.Mkdir(other, 0o777); err != nil {
		t.Fatal(err)
	}
	deny := []string{"--deny-dir=" + l.secret, "--deny-dir=" + l.root + "/*/*.pem"}

	// Off: bash is not scoped, the file is readable.
	off, _ := startSandboxed(t, l, nil, deny...)
	if code, out := bashExit(t, off, "cat "+l.secret+"/key"); code != 0 || !strings.Contains(out, "s3cret") {
		t.Fatalf("sandbox off: %q", out)
	}

	on, _ := startSandboxed(t, l, nil, append(deny, "--sandbox=on")...)
	for _, c := range []string{"cat " + l.secret + "/key", "cat " + keys + "/old.pem", "ln -s " + l.secret + "/key k; cat k"} {
		if code, out := bashExit(t, on, c); code == 0 || strings.Contains(out, "s3cret") || strings.Contains(out, "old-key") || !strings.Contains(out, "Permission denied") {
			t.Errorf("%q: want refused, got %q", c, out)
		}
	}
	if code, out := bashExit(t, on, "cat "+keys+"/cert.txt; ls "+l.secret); code != 0 || !strings.Contains(out, "public\nkey\n") {
		t.Errorf("siblings and names: %q", out)
	}
	// A glob covers what existed at start-up. A match created later in a
	// directory that held none is readable (documented); anything created
	// later beside a denied path is not, whatever its name.
	for _, p := range []string{filepath.Join(other, "new.pem"), filepath.Join(keys, "new.pem"), filepath.Join(keys, "new.txt")} {
		if err := os.WriteFile(p, []byte("new-key\n"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	if code, out := bashExit(t, on, "cat "+other+"/new.pem"); code != 0 || !strings.Contains(out, "new-key") {
		t.Errorf("a match created after start-up elsewhere: %q (documented as not covered)", out)
	}
	for _, p := range []string{filepath.Join(keys, "new.pem"), filepath.Join(keys, "new.txt")} {
		if code, out := bashExit(t, on, "cat "+p); code == 0 || !strings.Contains(out, "Permission denied") {
			t.Errorf("%s, created after start-up beside a denied file: %q", p, out)
		}
	}

	// A deny inside the workspace cannot be expressed: start-up refuses.
	cmd := exec.Command(binPath, "--transport=stdio", "--workdir="+l.ws, "--sandbox=on", "--deny-dir="+filepath.Join(l.ws, "mine"))
	cmd.Env = append(os.Environ(), "TMPDIR="+l.tmp)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "lies inside the writable directory "+l.ws) {
		t.Fatalf("deny inside the workspace: %v %s", err, out)
	}
}

func TestSandboxNetwork(t *testing.T) {
	l := newSBLayout(t)
	listen := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		return port
	}
	a, b := listen(), listen()
	connect := func(port string) string { return "exec 3<>/dev/tcp/127.0.0.1/" + port + " && echo connected" }
	for _, tc := range []struct {
		net        string
		wantA, wAB bool
	}{
		{"allow", true, true},
		{"deny", false, false},
		{a, true, false},
	} {
		t.Run(tc.net, func(t *testing.T) {
			cs, _ := startSandboxed(t, l, nil, "--sandbox=on", "--shell=/bin/bash", "--sandbox-net="+tc.net)
			for _, c := range []struct {
				port string
				want bool
			}{{a, tc.wantA}, {b, tc.wAB}} {
				code, out := bashExit(t, cs, connect(c.port))
				if got := code == 0 && strings.Contains(out, "connected"); got != c.want {
					t.Errorf("connect to port %s: connected=%v, want %v: %q", c.port, got, c.want, out)
				}
				if !c.want && !strings.Contains(out, "Permission denied") {
					t.Errorf("connect to port %s: want Permission denied, got %q", c.port, out)
				}
			}
		})
	}
}

// A kernel without Landlock (the probe made to fail through the test-only
// hook this test binary is built with) refuses to start.
func TestSandboxRefusedWithoutLandlock(t *testing.T) {
	l := newSBLayout(t)
	for _, tc := range []struct {
		abi  string
		args []string
		want string
	}{
		{"0", nil, "this kernel has no Landlock"},
		{"3", []string{"--sandbox-net=deny"}, "--sandbox-net deny needs Landlock ABI 4"},
	} {
		cmd := exec.Command(binPath, append([]string{"--transport=stdio", "--workdir=" + l.ws, "--sandbox=on"}, tc.args...)...)
		cmd.Env = append(os.Environ(), "TMPDIR="+l.tmp, "BORIS_SANDBOX_TEST_ABI="+tc.abi)
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("ABI %s: want a refusal naming %q, got err=%v %s", tc.abi, tc.want, err, out)
		}
	}
	// Off, the same kernel is fine.
	cmd := exec.Command(binPath, "--transport=stdio", "--workdir="+l.ws)
	cmd.Env = append(os.Environ(), "BORIS_SANDBOX_TEST_ABI=0")
	cmd.Stdin = strings.NewReader("")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sandbox off with no Landlock: %v %s", err, out)
	}
}

func TestSandboxHealthAndMetrics(t *testing.T) {
	get := func(url string) string {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	p := startInProcess(t, "--sandbox=on", "--sandbox-net=443,80")
	var health struct {
		Sandbox struct {
			Enabled bool   `json:"enabled"`
			ABI     int    `json:"landlock_abi"`
			Net     string `json:"net"`
		} `json:"sandbox"`
	}
	if err := json.Unmarshal([]byte(get(p.url+"/health")), &health); err != nil {
		t.Fatal(err)
	}
	if !health.Sandbox.Enabled || health.Sandbox.ABI < 4 || health.Sandbox.Net != "ports:443,80" {
		t.Fatalf("/health sandbox: %+v", health.Sandbox)
	}
	if h := get(p.url + "/health"); strings.Contains(h, p.dir) || !strings.Contains(h, `"writable_paths":2`) || !strings.Contains(h, `"domains":"per-session"`) {
		t.Fatalf("/health must count the sandbox's paths, never name them: %s", h)
	}
	m := get(p.url + "/metrics")
	if !strings.Contains(m, `boris_sandbox_enforced{landlock_abi="`+strconv.Itoa(health.Sandbox.ABI)+`",net="ports:443,80",scoped="true"} 1`) {
		t.Fatalf("metric missing:\n%s", grepLines(m, "sandbox"))
	}
	off := startInProcess(t)
	if h := get(off.url + "/health"); strings.Contains(h, "sandbox") {
		t.Fatalf("/health with the sandbox off: %s", h)
	}
	if m := get(off.url + "/metrics"); !strings.Contains(m, `boris_sandbox_enforced{landlock_abi="0",net="off",scoped="false"} 0`) {
		t.Fatalf("metric with the sandbox off:\n%s", grepLines(m, "sandbox"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
