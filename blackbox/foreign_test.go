package blackbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A checkout owned by the user who cloned it (uid 1000), served by boris
// running as another uid, as itself without a passwd entry or a usable
// HOME, and as root: what an agent meets in `docker run -v $PWD:/workspace`.

// foreignUID has no entry in /etc/passwd on the machines the tests run on;
// ownerUID owns the checkout.
const (
	foreignUID = 4711
	ownerUID   = 1000
)

// rootOnly skips a test that must switch uids (the suite runs as root in CI).
func rootOnly(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set and this test needs root to run boris as other uids")
		}
		t.Skip("needs root to run boris as other uids")
	}
}

// sharedBinary is a copy of the test binary any uid may run.
func sharedBinary(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "boris-bin-shared")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(binPath)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "boris")
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// ownedCheckout makes a git repository with one commit, owned by uid:gid
// throughout, in a directory any uid may enter.
func ownedCheckout(t *testing.T, uid int) string {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal("git is needed: apt-get install git")
	}
	parent, err := os.MkdirTemp("", "boris-foreign")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(parent, "checkout")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "calc.py"), []byte("import json\n\n\ndef double(x):\n    return json.dumps(x * 2)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=Owner", "-c", "user.email=owner@example.com", "commit", "-qm", "first"}} {
		cmd := exec.Command(git, args...)
		cmd.Dir = ws
		cmd.Env = []string{"HOME=" + parent, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	if err := filepath.Walk(ws, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	}); err != nil {
		t.Fatal(err)
	}
	return ws
}

// startAs runs boris over stdio as uid:gid with HOME=/, as an image that
// has no passwd entry for the uid gives it.
func startAs(t *testing.T, bin, ws string, uid int, args ...string) (*mcp.ClientSession, *logBuffer) {
	t.Helper()
	state, err := os.MkdirTemp("", "boris-foreign-state")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(state) })
	if err := os.Chown(state, uid, uid); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"--transport=stdio", "--workdir=" + ws, "--log-level=debug", "--checkpoint-dir=" + state}, args...)...)
	cmd.Env = []string{"HOME=/", "PATH=/usr/local/bin:/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1"}
	if uid != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	cs, logs := connectCmd(t, cmd, defaultClient, nil)
	t.Cleanup(func() { cs.Close() })
	return cs, logs
}

// waitLogLine waits for a line of boris's log containing all of want.
func waitLogLine(t *testing.T, logs *logBuffer, want ...string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, l := range strings.Split(logs.String(), "\n") {
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(l, w)
			}
			if ok {
				return l
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q in:\n%s", want, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWorkspaceOfAnotherUID: boris running as a uid that neither owns the
// checkout nor has a passwd entry says at start-up that it cannot write
// the workspace and whom to run as; git works there all the same; an edit
// or a new file is refused with the owner named and the fix, not chmod.
func TestWorkspaceOfAnotherUID(t *testing.T) {
	rootOnly(t)
	bin := sharedBinary(t)
	ws := ownedCheckout(t, ownerUID)
	cs, logs := startAs(t, bin, ws, foreignUID)

	waitLogLine(t, logs, "level=WARN", "workspace "+ws+" belongs to uid 1000", "cannot write it", "--user 1000:1000")
	waitLogLine(t, logs, "has no entry in /etc/passwd")
	waitLogLine(t, logs, "HOME /: not writable by this user", "HOME=/tmp/boris-home-4711")

	out := mustOK(t, cs, "bash", map[string]any{"command": "git status --short --branch && git log --oneline | wc -l && echo home=$HOME"})
	if !strings.HasPrefix(out, "exit_code: 0") || !strings.Contains(out, "## master") && !strings.Contains(out, "## main") || strings.Contains(out, "dubious ownership") {
		t.Fatalf("git in a checkout another uid owns: %s", out)
	}
	if !strings.Contains(out, "home=/tmp/boris-home-4711") {
		t.Fatalf("commands' HOME: %s", out)
	}

	mustOK(t, cs, "view", map[string]any{"path": "calc.py"})
	msg := mustErr(t, cs, "str_replace", map[string]any{"path": "calc.py", "old_str": "x * 2", "new_str": "x * 3"}, "IO_ERROR")
	for _, want := range []string{"belongs to uid 1000", "boris runs as uid 4711", "--user 1000:1000", "chmod will not help", "unchanged"} {
		if !strings.Contains(msg, want) {
			t.Errorf("str_replace of another uid's file: %q lacks %q", msg, want)
		}
	}
	msg = mustErr(t, cs, "create_file", map[string]any{"path": "new.py", "content": "x = 1\n"}, "IO_ERROR")
	for _, want := range []string{"permission denied", "directory " + ws + " belongs to uid 1000", "--user 1000:1000"} {
		if !strings.Contains(msg, want) {
			t.Errorf("create_file in another uid's directory: %q lacks %q", msg, want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "calc.py")); !strings.Contains(string(b), "x * 2") {
		t.Fatalf("calc.py changed: %s", b)
	}
}

// TestWorkspaceAsItsOwnerWithoutHome: run as the checkout's owner (the
// documented --user $(id -u):$(id -g)) with HOME=/, commands and the
// language server get a writable HOME of boris's choosing, so pylsp finds a
// definition in the standard library (its cache is written there); edits
// work and keep the owner; git commits.
func TestWorkspaceAsItsOwnerWithoutHome(t *testing.T) {
	rootOnly(t)
	if _, err := exec.LookPath("pylsp"); err != nil {
		t.Fatal("pylsp is needed: apt-get install python3-pylsp")
	}
	bin := sharedBinary(t)
	ws := ownedCheckout(t, ownerUID)
	cs, logs := startAs(t, bin, ws, ownerUID)
	waitLogLine(t, logs, "HOME=/tmp/boris-home-1000")

	def := mustOK(t, cs, "lsp", map[string]any{"operation": "goToDefinition", "filePath": "calc.py", "line": 5, "character": 17})
	if !strings.Contains(def, "json/__init__.py") || !strings.Contains(def, "def dumps") {
		t.Fatalf("pylsp's definition of json.dumps: %s", def)
	}
	mustOK(t, cs, "view", map[string]any{"path": "calc.py"})
	mustOK(t, cs, "str_replace", map[string]any{"path": "calc.py", "old_str": "x * 2", "new_str": "x * 3"})
	mustOK(t, cs, "create_file", map[string]any{"path": "notes.txt", "content": "by the agent\n"})
	for _, f := range []string{"calc.py", "notes.txt"} {
		fi, err := os.Stat(filepath.Join(ws, f))
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != ownerUID {
			t.Errorf("%s belongs to uid %d, want %d", f, st.Uid, ownerUID)
		}
	}
	out := mustOK(t, cs, "bash", map[string]any{"command": "git -c user.name=Agent -c user.email=agent@example.com commit -qam 'triple it' && git log --oneline | wc -l"})
	if !strings.Contains(out, "stdout:\n2\n") {
		t.Fatalf("git commit as the owner: %s", out)
	}
}

// TestWorkspaceOfAnotherUIDAsRoot: boris as root in someone's checkout
// warns at start-up, and the files its tools create belong to the
// directory's owner.
func TestWorkspaceOfAnotherUIDAsRoot(t *testing.T) {
	rootOnly(t)
	ws := ownedCheckout(t, ownerUID)
	cs, logs := startAs(t, binPath, ws, 0)
	waitLogLine(t, logs, "level=WARN", "boris runs as root", "--user 1000:1000")
	mustOK(t, cs, "create_file", map[string]any{"path": "made-by-root.txt", "content": "x\n"})
	fi, err := os.Stat(filepath.Join(ws, "made-by-root.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != ownerUID || st.Gid != ownerUID {
		t.Fatalf("a file root's tools created belongs to %d:%d, want the directory's owner %d:%d", st.Uid, st.Gid, ownerUID, ownerUID)
	}
}
