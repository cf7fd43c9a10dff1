package blackbox

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/tlscert/certtest"
)

// The credentials of the agents one boris serves: what a command can learn
// of them, and how tokens come and go through --token-file.

// nobody is the uid (and gid) the tests below run boris as when they run
// as root, where reading another process's /proc files is always allowed:
// the protection under test is per user.
const nobody = 65534

// asUser prepares cmd to run as nobody when the test runs as root (as the
// current user otherwise), from a copy of the binary that user can execute
// in a directory it can enter. It returns that directory (world-readable;
// make what boris must write there).
func asUser(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "boris-tenancy-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(binPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Path = filepath.Join(dir, "boris")
	if err := os.WriteFile(cmd.Path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}}
	}
	return dir
}

// userDir makes a directory under base owned by the user boris runs as.
func userDir(t *testing.T, base, name string) string {
	t.Helper()
	d := filepath.Join(base, name)
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 {
		if err := os.Chown(d, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// TestCommandsCannotReadBorisEnvironment: boris, started with BORIS_TOKEN
// in its environment as an ordinary user, is non-dumpable: a command of
// the same user cannot read its environment or open its memory, while the
// same command reads the environment of a dumpable process of that user
// (a child of its own) — so the refusal comes from boris's flag, not from
// the environment the test happens to run in.
func TestCommandsCannotReadBorisEnvironment(t *testing.T) {
	const token = "tenancy-secret-7f3a9c"
	cmd := exec.Command(binPath, "--port=0", "--checkpoints=off", "--lsp=off", "--log-level=debug")
	dir := asUser(t, cmd)
	ws := userDir(t, dir, "ws")
	cmd.Args = append(cmd.Args, "--workdir="+ws)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + ws, "BORIS_TOKEN=" + token}
	url, logs := serveBinary(t, cmd)
	cs := connectHTTP(t, url, token, nil)
	pid := cmd.Process.Pid

	script := fmt.Sprintf(`id -u
echo "parent $PPID"
for p in $PPID %d; do
  echo "environ $p:"; cat /proc/$p/environ 2>&1 | tr '\0' '\n'; echo "rc=${PIPESTATUS[0]}"
  if (exec 3</proc/$p/mem) 2>/dev/null; then echo "mem $p: opened"; else echo "mem $p: refused"; fi
done
CONTROL_MARK=dumpable-child-env sleep 60 & c=$!
for i in $(seq 100); do grep -q CONTROL_MARK /proc/$c/environ 2>/dev/null && break; sleep 0.05; done
echo "control:"; tr '\0' '\n' < /proc/$c/environ | grep CONTROL_MARK
if (exec 3</proc/$c/mem) 2>/dev/null; then echo "mem control: opened"; else echo "mem control: refused"; fi
kill $c`, pid)
	out := mustOK(t, cs, "bash", map[string]any{"command": script})
	wantUID := strconv.Itoa(os.Getuid())
	if os.Getuid() == 0 {
		wantUID = strconv.Itoa(nobody)
	}
	if !strings.Contains(out, "stdout:\n"+wantUID+"\n") {
		t.Fatalf("the command does not run as uid %s:\n%s", wantUID, out)
	}
	if strings.Contains(out, token) {
		t.Fatalf("a command read boris's token:\n%s\n%s", out, logs)
	}
	if !strings.Contains(out, fmt.Sprintf("environ %d:\ncat: /proc/%d/environ: Permission denied\nrc=1\n", pid, pid)) {
		t.Fatalf("reading boris's environment was not refused:\n%s", out)
	}
	if !strings.Contains(out, fmt.Sprintf("mem %d: refused", pid)) {
		t.Fatalf("boris's memory could be opened:\n%s", out)
	}
	// The control: a dumpable process of the same user is readable.
	if !strings.Contains(out, "control:\nCONTROL_MARK=dumpable-child-env\n") || !strings.Contains(out, "mem control: opened") {
		t.Fatalf("a dumpable process of the same user was not readable, so the refusal above proves nothing:\n%s", out)
	}
	// The token is on neither boris's command line nor the command's
	// environment.
	if out := mustOK(t, cs, "bash", map[string]any{"command": fmt.Sprintf("tr '\\0' ' ' </proc/%d/cmdline; echo; env", pid)}); strings.Contains(out, token) || !strings.Contains(out, "--workdir="+ws) {
		t.Fatalf("cmdline or environment:\n%s", out)
	}
}

// TestTokenFileUnreadableAtStart: a token file boris's user cannot read
// stops boris at start, saying whose permission is missing. As root, boris
// runs as nobody and the file is root's, mode 0600; otherwise the file has
// mode 0.
func TestTokenFileUnreadableAtStart(t *testing.T) {
	cmd := exec.Command(binPath, "--port=0", "--checkpoints=off", "--lsp=off")
	dir := asUser(t, cmd)
	ws := userDir(t, dir, "ws")
	file := filepath.Join(dir, "tokens")
	if err := os.WriteFile(file, []byte("alpha\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() != 0 {
		if err := os.Chmod(file, 0); err != nil {
			t.Fatal(err)
		}
	}
	cmd.Args = append(cmd.Args, "--workdir="+ws, "--token-file="+file)
	out, err := cmd.CombinedOutput()
	uid := os.Getuid()
	if uid == 0 {
		uid = nobody
	}
	if err == nil || !strings.Contains(string(out), "invalid --token-file: open "+file+": permission denied (boris runs as uid "+strconv.Itoa(uid)) {
		t.Fatalf("err %v:\n%s", err, out)
	}
}

// waitStatus polls until a request with token gets the status, or fails.
func waitStatus(t *testing.T, url, token string, want int, logs fmt.Stringer) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := postTools(t, url, token)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("token %q: status %d, want %d after the token file changed:\n%s", token, got, want, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitLog polls until the log holds s, or fails.
func waitLog(t *testing.T, logs fmt.Stringer, s string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the log:\n%s", s, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTokenFileReload: through the binary, over HTTP with the go-sdk
// client. A token added to the file is accepted without a restart; a
// token removed is refused from then on, and every session it had open —
// handshake-era and stateless, with a command running in the foreground
// and a background task — is closed, its processes ended, while another
// token's session and processes carry on. A file that disappears or holds
// no token changes nothing but a warning; a token added back is a new
// credential.
func TestTokenFileReload(t *testing.T) {
	ws, auth := tempDir(t), tempDir(t)
	file := filepath.Join(auth, "tokens")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("# agents\nalpha\n")
	url, logs := serveBinary(t, exec.Command(binPath, "--port=0", "--workdir="+ws, "--token-file="+file, "--log-level=debug"))
	if !strings.Contains(logs.String(), `auth="bearer token (--token-file reloaded on change)"`) {
		t.Fatalf("the listening line does not say how /mcp is protected:\n%s", logs)
	}
	if got := postTools(t, url, "beta"); got != http.StatusUnauthorized {
		t.Fatalf("beta before it is in the file: %d", got)
	}

	write("# agents\nalpha\nbeta\n")
	waitStatus(t, url, "beta", http.StatusOK, logs)
	b := connectHTTP(t, url, "beta", nil)
	mustOK(t, b, "bash", map[string]any{"command": "echo $$ > b-bg.pid; exec sleep 300", "run_in_background": true})
	bPid := readPid(t, filepath.Join(ws, "b-bg.pid"))

	a := connectHTTPAt(t, url, "alpha", handshakeEra, nil)
	mustOK(t, a, "bash", map[string]any{"command": "echo $$ > a-bg.pid; exec sleep 300", "run_in_background": true})
	aStateless := connectHTTP(t, url, "alpha", nil)
	fg := make(chan error, 1)
	go func() {
		_, err := aStateless.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo $$ > a-fg.pid; exec sleep 300"}})
		fg <- err
	}()
	aPids := []int{readPid(t, filepath.Join(ws, "a-bg.pid")), readPid(t, filepath.Join(ws, "a-fg.pid"))}

	write("beta\n")
	waitStatus(t, url, "alpha", http.StatusUnauthorized, logs)
	waitGone(t, 10*time.Second, aPids...)
	select {
	case <-fg:
	case <-time.After(10 * time.Second):
		t.Fatal("alpha's call in progress did not end with its session")
	}
	// Two sessions: the handshake-era client's and the stateless one's.
	// The handshake-era connections closed are at least client a's; the
	// polls of waitStatus, each an initialize, add one per poll made
	// before the reload, a number that depends on the machine's speed.
	line := waitLogLine(t, logs, `msg="token removed: its sessions are closed and its requests refused" credential=token-1 sessions=2 connections=`)
	if n, err := strconv.Atoi(strings.TrimSpace(line[strings.LastIndex(line, "connections=")+len("connections="):])); err != nil || n < 1 {
		t.Fatalf("closed connections in %q: want at least client a's", line)
	}
	for name, cs := range map[string]*mcp.ClientSession{"handshake-era": a, "stateless": aStateless} {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo hi"}})
		if err == nil || !strings.Contains(err.Error(), "Unauthorized") {
			t.Fatalf("%s client of a removed token: %v, want 401 Unauthorized", name, err)
		}
	}
	if !processAlive(bPid) {
		t.Fatal("beta's task ended with alpha's sessions")
	}
	mustOK(t, b, "task_output", map[string]any{"task_id": "task_1"})

	// A file that is gone, then empty, keeps the tokens (beta works).
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	waitLog(t, logs, `msg="the token file cannot be used; the tokens it held before stay valid until it can"`)
	mustOK(t, b, "bash", map[string]any{"command": "true"})
	write("# rotating\n")
	waitLog(t, logs, "holds no token")
	mustOK(t, b, "bash", map[string]any{"command": "true"})
	if got := postTools(t, url, "alpha"); got != http.StatusUnauthorized {
		t.Fatalf("alpha while the file is empty: %d", got)
	}

	// alpha back: a new credential, with a fresh default session.
	write("beta\nalpha\n")
	waitStatus(t, url, "alpha", http.StatusOK, logs)
	waitLog(t, logs, `added=token-3`)
	again := connectHTTP(t, url, "alpha", nil)
	if out := mustOK(t, again, "bash", map[string]any{"command": "pwd"}); out != "exit_code: 0\nstdout:\n"+ws+"\n" {
		t.Fatalf("alpha back: %q", out)
	}
	if strings.Contains(logs.String(), "alpha") || strings.Contains(logs.String(), "=beta") {
		t.Fatalf("a token in the log:\n%s", logs)
	}
}

// TestTokenFileDeniedToTheAgent: the token file is denied to the tools
// without any --deny-dir. A plain file: view refuses it, grep does not
// show it. In a Secret volume (files behind the "..data" symlink) with
// --sandbox on: the whole volume is denied, so neither view nor cat reads
// the token, before or after the kubelet swaps in a new version — which
// boris itself reads (the token it adds works).
func TestTokenFileDeniedToTheAgent(t *testing.T) {
	t.Run("plain file", func(t *testing.T) {
		ws := tempDir(t)
		file := filepath.Join(ws, "tokens.txt")
		if err := os.WriteFile(file, []byte("plain-file-token\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		url, _ := serveBinary(t, exec.Command(binPath, "--port=0", "--workdir="+ws, "--token-file="+file))
		cs := connectHTTP(t, url, "plain-file-token", nil)
		mustErr(t, cs, "view", map[string]any{"path": file}, "ACCESS_DENIED")
		if out := mustOK(t, cs, "grep", map[string]any{"pattern": "plain-file", "path": ws}); strings.Contains(out, "tokens.txt") {
			t.Fatalf("grep shows the token file: %q", out)
		}
		// With the sandbox on, a token file where commands may write
		// could not be kept from them: boris refuses to start.
		cmd := exec.Command(binPath, "--port=0", "--workdir="+ws, "--token-file="+file, "--sandbox=on")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "--sandbox on: the --token-file "+file+" lies inside "+ws+", where commands may write") {
			t.Fatalf("sandbox with the token file in the workspace: %v\n%s", err, out)
		}
	})
	t.Run("Secret volume, sandbox on", func(t *testing.T) {
		l := newSBLayout(t)
		authDir := filepath.Join(l.root, "auth")
		if err := os.Mkdir(authDir, 0o755); err != nil {
			t.Fatal(err)
		}
		secret := certtest.NewSecretDir(t, authDir, map[string][]byte{"token": []byte("first-secret-token\n")})
		cmd := exec.Command(binPath, "--port=0", "--workdir="+l.ws, "--sandbox=on", "--token-file="+secret.Path("token"))
		cmd.Env = append(os.Environ(), "TMPDIR="+l.tmp)
		url, logs := serveBinary(t, cmd)
		cs := connectHTTP(t, url, "first-secret-token", nil)
		denied := func(when string) {
			t.Helper()
			for _, p := range []string{secret.Path("token"), filepath.Join(authDir, "..data", "token")} {
				mustErr(t, cs, "view", map[string]any{"path": p}, "ACCESS_DENIED")
				if code, out := bashExit(t, cs, "cat "+p); code == 0 || strings.Contains(out, "secret-token") || !strings.Contains(out, "Permission denied") {
					t.Fatalf("%s: a command read the token file %s: %q", when, p, out)
				}
			}
		}
		denied("at start-up")
		secret.Update(t, map[string][]byte{"token": []byte("first-secret-token\nsecond-secret-token\n")})
		waitStatus(t, url, "second-secret-token", http.StatusOK, logs)
		denied("after the update")
	})
}
