package blackbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The workspaces of --isolation worktree, through the binary, with real
// git and real builds: three agents fixing three bugs of one repository at
// once.

// calcRepo makes a Go module with three bugs, one per function, and a
// test of each; it returns the repository and the commit at HEAD.
func calcRepo(t *testing.T) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed (scripts/deps.sh installs it)")
	}
	dir := filepath.Join(tempDir(t), "calc")
	files := map[string]string{
		"go.mod":      "module calc\n\ngo 1.22\n",
		"add.go":      "package calc\n\n// Add adds.\nfunc Add(a, b int) int { return a - b }\n",
		"mul.go":      "package calc\n\n// Mul multiplies.\nfunc Mul(a, b int) int { return a + b }\n",
		"neg.go":      "package calc\n\n// Neg negates.\nfunc Neg(a int) int { return a }\n",
		"README":      "calc: three bugs, one per agent\n",
		"add_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(Add(2, 3))\n\t}\n}\n",
		"mul_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestMul(t *testing.T) {\n\tif Mul(2, 3) != 6 {\n\t\tt.Fatal(Mul(2, 3))\n\t}\n}\n",
		"neg_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestNeg(t *testing.T) {\n\tif Neg(2) != -2 {\n\t\tt.Fatal(Neg(2))\n\t}\n}\n",
		".gitignore":  "*.out\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "calc with three bugs")
	return dir, gitIn(t, dir, "rev-parse", "HEAD")
}

// gitIn runs git in dir for a test, with an identity, main as the first
// branch and no user or system configuration; it returns the output.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// snapshot hashes every file of a tree (.git included when withGit),
// with its mode: two equal snapshots are two identical trees.
func snapshot(t *testing.T, root string, withGit bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() && (rel == filepath.Join(".git", "boris") || (!withGit && rel == ".git")) {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		var sum string
		if d.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			sum = "link:" + target
		} else {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			sum = hex.EncodeToString(h[:8])
		}
		out[rel] = fmt.Sprintf("%o %s", fi.Mode().Perm(), sum)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameSnapshot(a, b map[string]string) []string {
	var diff []string
	for k, v := range a {
		if b[k] != v {
			diff = append(diff, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			diff = append(diff, k)
		}
	}
	sort.Strings(diff)
	return diff
}

// wsAgent is one agent's way of calling boris: its own session (a handle on
// a shared client, or its own client).
type wsAgent struct {
	name string // its workspace's name: fix-add, fix-mul, fix-neg
	call func(tool string, args map[string]any) (string, bool)
	dir  string // its workspace, once made
}

// must calls a tool that must succeed; failures are reported (t.Errorf,
// so agents running at once all report) and the text returned.
func (a *wsAgent) must(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	text, isErr := a.call(tool, args)
	if isErr {
		t.Errorf("%s: %s %v failed: %s", a.name, tool, args, text)
	}
	return text
}

// sh runs a command that must exit 0 and returns its answer.
func (a *wsAgent) sh(t *testing.T, command string) string {
	t.Helper()
	out := a.must(t, "bash", map[string]any{"command": command})
	if !strings.HasPrefix(out, "exit_code: 0") {
		t.Errorf("%s: %q: %s", a.name, command, out)
	}
	return out
}

// fails runs a command that must not exit 0.
func (a *wsAgent) fails(t *testing.T, command string) string {
	t.Helper()
	out := a.must(t, "bash", map[string]any{"command": command})
	if strings.HasPrefix(out, "exit_code: 0") {
		t.Errorf("%s: %q succeeded: %s", a.name, command, out)
	}
	return out
}

// denied calls a file tool that must be refused (ACCESS_DENIED or, for a
// path that leads nowhere it may look, not found).
func (a *wsAgent) denied(t *testing.T, tool string, args map[string]any) {
	t.Helper()
	text, isErr := a.call(tool, args)
	if !isErr || !(strings.HasPrefix(text, "[ACCESS_DENIED]") || strings.HasPrefix(text, "[PATH_NOT_FOUND]")) {
		t.Errorf("%s: %s %v was not refused: %.300s", a.name, tool, args, text)
	}
}

var workspaceDirRe = regexp.MustCompile(`now works in (\S+)\.\n`)

// enter makes the agent's workspace with the workspace tool and records
// where it is.
func (a *wsAgent) enter(t *testing.T) {
	t.Helper()
	out := a.must(t, "workspace", map[string]any{"action": "create", "name": a.name})
	m := workspaceDirRe.FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "on the branch boris/"+a.name) {
		t.Fatalf("%s: create: %s", a.name, out)
	}
	a.dir = m[1]
}

// goEnv is what the agents' go commands need inside the sandbox: a build
// cache in the temp directory (shared and warmed by the test), no
// toolchain download.
const goEnv = "export GOCACHE=$TMPDIR/gocache GOTOOLCHAIN=local GOFLAGS=-mod=mod GOTELEMETRY=off; "

// runThreeAgents plays the scenario: three agents at once, each fixing
// its bug in its workspace with edits and commands (git checkout -b, git
// stash, go build, go test), one with a failing build while the others'
// tests pass; none can see or change another's files (file tools, and
// with the sandbox its commands); one agent's checkpoint restore changes
// nothing of the others'. It leaves each with one commit and one
// uncommitted file. The first agent's commands cannot write into the
// second's workspace nor the main checkout at repo (kernelRefuses). On a
// failure it ends the test with boris's log; otherwise it returns each
// agent's workspace directory by name.
func runThreeAgents(t *testing.T, agents []*wsAgent, repo string, logs fmt.Stringer) map[string]string {
	defer func() {
		if t.Failed() {
			t.Logf("boris's log:\n%s", logs)
		}
	}()
	others := func(a *wsAgent) []*wsAgent {
		var o []*wsAgent
		for _, b := range agents {
			if b != a {
				o = append(o, b)
			}
		}
		return o
	}
	for _, a := range agents {
		a.enter(t)
	}
	if t.Failed() {
		t.FailNow()
	}
	byName := map[string]*wsAgent{}
	for _, a := range agents {
		byName[a.name] = a
	}
	add, mul, neg := byName["fix-add"], byName["fix-mul"], byName["fix-neg"]

	var wg sync.WaitGroup
	broken := make(chan struct{})    // mul's build is broken
	tested := make(chan struct{}, 2) // add's and neg's tests passed meanwhile
	wg.Go(func() {
		a := add
		a.sh(t, "git checkout -b fix-add")
		a.must(t, "view", map[string]any{"path": "add.go"})
		a.must(t, "str_replace", map[string]any{"path": "add.go", "old_str": "a - b", "new_str": "a + b"})
		<-broken
		a.sh(t, goEnv+"go test -count=1 -run TestAdd ./...")
		tested <- struct{}{}
		// git stash in this workspace holds this agent's change only.
		out := a.sh(t, "git stash -q && git stash list | wc -l && grep -c 'a - b' add.go && git stash pop -q && grep -c 'a + b' add.go")
		if !strings.Contains(out, "stdout:\n1\n1\n1\n") {
			t.Errorf("add: stash: %s", out)
		}
		a.sh(t, "git commit -qam 'fix Add' && echo '// add was here' > add-notes.txt")
	})
	wg.Go(func() {
		a := mul
		a.sh(t, "git checkout -b fix-mul && sed -i 's/a + b/a * b/' mul.go && printf 'func broken( {\\n' >> mul.go")
		out := a.fails(t, goEnv+"go build ./...")
		if !strings.Contains(out, "mul.go") {
			t.Errorf("mul: the failing build does not name mul.go: %s", out)
		}
		close(broken)
		<-tested
		<-tested
		a.fails(t, goEnv+"go vet ./...") // still broken after the others passed
		a.sh(t, "sed -i '$d' mul.go && "+goEnv+"go build ./... && go test -count=1 -run TestMul ./...")
		a.must(t, "create_file", map[string]any{"path": "mul-notes.txt", "content": "MARKER-MUL\n"})
		out = a.must(t, "workspace", map[string]any{"action": "commit", "message": "fix Mul"})
		if !strings.Contains(out, "The branch boris/fix-mul in ") {
			t.Errorf("mul: commit: %s", out)
		}
		a.sh(t, "echo 'mul again' > mul-wip.txt")
	})
	wg.Go(func() {
		a := neg
		a.must(t, "view", map[string]any{"path": "neg.go"})
		a.must(t, "str_replace", map[string]any{"path": "neg.go", "old_str": "return a }", "new_str": "return -a }"})
		<-broken
		out := a.sh(t, "git stash -q && ("+goEnv+"go test -count=1 -run TestNeg ./... ; echo \"unfixed: $?\") && git stash pop -q && go test -count=1 -run TestNeg ./...")
		if !strings.Contains(out, "unfixed: 1") {
			t.Errorf("neg: the stashed (unfixed) code passed its test: %s", out)
		}
		tested <- struct{}{}
		a.sh(t, "git checkout -q -b fix-neg && git commit -qam 'fix Neg' && echo wip > neg-wip.txt")
	})
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	// None sees another's files: not through "..", absolute paths,
	// symlinks, grep or find; the main checkout neither.
	for _, a := range agents {
		for _, o := range others(a) {
			for _, p := range []string{filepath.Join(o.dir, "mul.go"), "../" + filepath.Base(o.dir) + "/neg.go", filepath.Join(o.dir, ".git", "config")} {
				a.denied(t, "view", map[string]any{"path": p})
				a.denied(t, "create_file", map[string]any{"path": filepath.Join(filepath.Dir(p), "planted.txt"), "content": "x"})
			}
			link := "link-to-" + o.name
			a.sh(t, "ln -sfn "+o.dir+" "+link)
			a.denied(t, "view", map[string]any{"path": link + "/README"})
			a.denied(t, "grep", map[string]any{"pattern": "MARKER", "path": o.dir})
			if out, _ := a.call("grep", map[string]any{"pattern": "MARKER-MUL", "path": "."}); a != mul && strings.Contains(out, "mul-notes") {
				t.Errorf("%s found mul's file through grep: %s", a.name, out)
			}
			if out, _ := a.call("find", map[string]any{"pattern": "**/*notes*", "path": "."}); strings.Contains(out, o.name[4:]+"-notes") {
				t.Errorf("%s found %s's file through find: %s", a.name, o.name, out)
			}
			a.sh(t, "rm "+link)
		}
		a.denied(t, "view", map[string]any{"path": filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(a.dir)))), "add.go")})
		if out := a.sh(t, "git worktree list --porcelain"); strings.Count(out, "worktree ") != 1 || !strings.Contains(out, "worktree "+a.dir) {
			t.Errorf("%s: git worktree list: %s", a.name, out)
		}
	}

	// One agent's checkpoint restore: its own change is undone, the
	// others' files are untouched.
	before := map[string]map[string]string{}
	for _, o := range others(add) {
		before[o.name] = snapshot(t, o.dir, true)
	}
	made := add.must(t, "checkpoint", map[string]any{"action": "create", "label": "before scratch"})
	m := regexp.MustCompile(`checkpoint (c\d+)`).FindStringSubmatch(made)
	if m == nil {
		t.Fatalf("add: checkpoint create: %s", made)
	}
	add.sh(t, "echo scratch > scratch.txt && sed -i 's/a + b/a + b + 0/' add.go")
	add.must(t, "checkpoint", map[string]any{"action": "restore", "id": m[1]})
	if _, err := os.Stat(filepath.Join(add.dir, "scratch.txt")); !os.IsNotExist(err) {
		t.Errorf("add's restore did not remove its scratch file")
	}
	if b, _ := os.ReadFile(filepath.Join(add.dir, "add.go")); strings.Contains(string(b), "+ 0") {
		t.Errorf("add's restore did not undo its edit")
	}
	for _, o := range others(add) {
		if d := sameSnapshot(before[o.name], snapshot(t, o.dir, true)); len(d) > 0 {
			t.Errorf("add's restore changed %s's files: %v", o.name, d)
		}
	}
	kernelRefuses(t, agents[0], agents[1], repo)
	if t.Failed() {
		t.FailNow()
	}
	dirs := map[string]string{}
	for _, a := range agents {
		dirs[a.name] = a.dir
	}
	return dirs
}

// checkBranches checks that each workspace's branch in the repository
// holds exactly its agent's fix.
func checkBranches(t *testing.T, repo, base string) {
	t.Helper()
	for branch, file := range map[string]string{"boris/fix-add": "add.go", "boris/fix-mul": "mul-notes.txt\nmul.go", "boris/fix-neg": "neg.go"} {
		if got := gitIn(t, repo, "diff", "--name-only", base, branch); got != file {
			t.Errorf("%s changes %q, want %q", branch, got, file)
		}
	}
	gitIn(t, repo, "fsck", "--no-progress")
}

// checkKept checks what a list after a restart says of the three
// workspaces, and their files on disk.
func checkKept(t *testing.T, list string, dirs map[string]string) {
	t.Helper()
	for name, wip := range map[string]string{"fix-add": "add-notes.txt", "fix-mul": "mul-wip.txt", "fix-neg": "neg-wip.txt"} {
		if !regexp.MustCompile(`- ` + name + ` \(kept\): branch boris/` + name + `, 1 commit\(s\), 1 uncommitted change\(s\)`).MatchString(list) {
			t.Errorf("%s is not listed as kept with its work:\n%s", name, list)
		}
		if _, err := os.Stat(filepath.Join(dirs[name], wip)); err != nil {
			t.Errorf("%s's uncommitted file: %v", name, err)
		}
	}
}

// TestWorkspacesThreeAgents: one client runs three agents at once, each
// in a session handle of its own working in a workspace of its own, with
// the sandbox on; then boris is killed (SIGKILL) and started again: the
// three workspaces are listed with their work intact, each branch holds
// exactly its agent's fix, and the main checkout never changed.
func TestWorkspacesThreeAgents(t *testing.T) {
	repo, base := calcRepo(t)
	tmp := filepath.Join(tempDir(t), "tmp")
	os.Mkdir(tmp, 0o755)
	warmGo(t, repo, tmp)
	mainBefore := snapshot(t, repo, true)
	env := append(os.Environ(), "TMPDIR="+tmp)
	args := []string{"--transport=stdio", "--workdir=" + repo, "--isolation=worktree", "--sandbox=on", "--lsp=off", "--log-level=debug"}

	cmd := exec.Command(binPath, args...)
	cmd.Env = env
	cs, logs := connectCmd(t, cmd, defaultClient, nil)
	t.Cleanup(func() { cs.Close(); _ = cmd.Process.Kill() })
	var agents []*wsAgent
	for _, name := range []string{"fix-add", "fix-mul", "fix-neg"} {
		a := &wsAgent{name: name}
		handle := ""
		a.call = func(tool string, args map[string]any) (string, bool) {
			if handle == "" {
				args["session"] = "new"
			} else {
				args["session"] = handle
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
			if err != nil {
				return "protocol error: " + err.Error(), true
			}
			text := resultText(res)
			if m := regexp.MustCompile(`session: (s_[A-Za-z0-9_-]+)`).FindStringSubmatch(text); handle == "" && m != nil {
				handle = m[1]
			}
			return text, res.IsError
		}
		agents = append(agents, a)
	}
	dirs := runThreeAgents(t, agents, repo, logs)

	// Killed mid-way: no session end, no release.
	// The client's transport owns the process: closing it reaps the
	// killed boris (a Wait of the test's own would race the transport's,
	// which the kill's end of stdout may already have started).
	_ = cmd.Process.Signal(syscall.SIGKILL)
	cs.Close()

	cmd2 := exec.Command(binPath, args...)
	cmd2.Env = env
	cs2, logs2 := connectCmd(t, cmd2, defaultClient, nil)
	t.Cleanup(func() { cs2.Close(); _ = cmd2.Process.Kill() })
	waitFor(t, 10*time.Second, func() bool { return strings.Count(logs2.String(), "workspace kept from an earlier run") == 3 })
	list := mustOK(t, cs2, "workspace", map[string]any{"action": "list"})
	checkKept(t, list, dirs)
	checkBranches(t, repo, base)
	// An agent continues where it was.
	out := mustOK(t, cs2, "workspace", map[string]any{"action": "open", "name": "fix-neg", "session": "new"})
	h := regexp.MustCompile(`session: (s_[A-Za-z0-9_-]+)`).FindStringSubmatch(out)
	if h == nil {
		t.Fatalf("open: %s", out)
	}
	if out := mustOK(t, cs2, "bash", map[string]any{"command": "cat neg-wip.txt && git log --oneline -1", "session": h[1]}); !strings.Contains(out, "wip") || !strings.Contains(out, "fix Neg") {
		t.Errorf("the reopened workspace: %s", out)
	}
	cs2.Close()
	_ = cmd2.Wait()
	checkMainUntouched(t, repo, base, mainBefore)
	if t.Failed() {
		t.Logf("boris's log (second run):\n%s", logs2)
	}
}

// checkMainUntouched checks that the main checkout is as it was: its
// files, index, HEAD, branch and configuration (the repository gains the
// workspaces' branches and the objects they need, nothing else).
func checkMainUntouched(t *testing.T, repo, base string, before map[string]string) {
	t.Helper()
	if d := sameSnapshot(before, snapshot(t, repo, true)); len(d) > 0 {
		for _, p := range d {
			if !strings.HasPrefix(p, ".git/") || strings.HasPrefix(p, ".git/index") || p == ".git/HEAD" || strings.HasPrefix(p, ".git/refs/heads/main") || p == ".git/config" || strings.HasPrefix(p, ".git/hooks") {
				t.Errorf("the main checkout changed: %s", p)
			}
		}
	}
	if st := gitIn(t, repo, "status", "--porcelain"); st != "" {
		t.Errorf("main checkout status: %q", st)
	}
	if got := gitIn(t, repo, "rev-parse", "HEAD"); got != base {
		t.Errorf("main HEAD moved to %s", got)
	}
}

// kernelRefuses checks what the sandbox refuses one agent's commands
// (add) in another's workspace (mul) and in the main checkout (repo):
// reading, writing, symlinks, git -C and /proc.
func kernelRefuses(t *testing.T, add, mul *wsAgent, repo string) {
	t.Helper()
	task := mul.must(t, "bash", map[string]any{"command": "sleep 300", "run_in_background": true})
	pid := regexp.MustCompile(`pgid: (\d+)|process group (\d+)|pid[: ]+(\d+)`).FindStringSubmatch(task)
	for _, c := range []string{
		"cat " + mul.dir + "/mul.go",
		"echo x > " + mul.dir + "/planted.txt",
		"cat " + mul.dir + "/mul-wip.txt",
		"cat " + repo + "/add.go",
		"echo x > " + repo + "/planted.txt",
		"ln -s " + mul.dir + "/mul.go l && cat l",
	} {
		add.fails(t, c)
	}
	add.sh(t, "rm -f l")
	// git -C finds nothing of the other workspace: its directory cannot
	// be read, so git walks up to the repository's own git directory.
	if out := add.must(t, "bash", map[string]any{"command": "git -C " + mul.dir + " status --short; git -C " + mul.dir + " diff; git -C " + mul.dir + " stash list"}); strings.Contains(out, "mul-wip") || strings.Contains(out, "mul again") {
		t.Errorf("git -C showed another workspace's uncommitted work: %s", out)
	}
	if pid != nil {
		p := pid[1] + pid[2] + pid[3]
		add.fails(t, "ls /proc/"+p+"/cwd/ && cat /proc/"+p+"/cwd/mul.go")
		add.denied(t, "view", map[string]any{"path": "/proc/" + p + "/cwd/mul.go"})
	} else {
		t.Errorf("no process group in the task's answer: %s", task)
	}
}

// warmGo fills the build cache the agents share, so that their builds
// take a second, not a compile of the standard library each.
func warmGo(t *testing.T, repo, tmp string) {
	t.Helper()
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "GOCACHE="+filepath.Join(tmp, "gocache"), "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet: %v\n%s", err, out)
	}
	cmd = exec.Command("go", "test", "-count=1", "-run", "XXX", "./...")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "GOCACHE="+filepath.Join(tmp, "gocache"), "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test: %v\n%s", err, out)
	}
}

// TestWorkspacesHTTPThreeTokens: the same with three MCP clients over
// HTTP, one bearer token each (so --sandbox auto turns the sandbox on),
// two at the stateless protocol revision and one at a handshake-era one,
// each agent in its client's implicit session; then a SIGKILL and a
// restart, after which an agent opens only its own credential's
// workspace.
func TestWorkspacesHTTPThreeTokens(t *testing.T) {
	repo, base := calcRepo(t)
	tmp := filepath.Join(tempDir(t), "tmp")
	os.Mkdir(tmp, 0o755)
	warmGo(t, repo, tmp)
	mainBefore := snapshot(t, repo, true)
	args := []string{"--port=0", "--workdir=" + repo, "--isolation=worktree", "--token=tok-a", "--token=tok-b", "--token=tok-c", "--lsp=off", "--log-level=debug"}
	start := func() (*exec.Cmd, string, *logBuffer) {
		cmd := exec.Command(binPath, args...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		url, logs := serveBinary(t, cmd)
		return cmd, url, logs
	}
	cmd, url, logs := start()
	if !strings.Contains(logs.String(), "sandbox on") {
		waitFor(t, 5*time.Second, func() bool { return strings.Contains(logs.String(), "sandbox on") })
	}
	var agents []*wsAgent
	for i, c := range []struct{ name, token, era string }{{"fix-add", "tok-a", statelessEra}, {"fix-mul", "tok-b", handshakeEra}, {"fix-neg", "tok-c", statelessEra}} {
		cs := connectHTTPAt(t, url, c.token, c.era, nil)
		agents = append(agents, &wsAgent{name: c.name, call: func(tool string, args map[string]any) (string, bool) {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
			if err != nil {
				return fmt.Sprintf("client %d: protocol error: %v", i, err), true
			}
			return resultText(res), res.IsError
		}})
	}
	dirs := runThreeAgents(t, agents, repo, logs)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()

	cmd2, url2, logs2 := start()
	waitFor(t, 10*time.Second, func() bool { return strings.Count(logs2.String(), "workspace kept from an earlier run") == 3 })
	csA := connectHTTPAt(t, url2, "tok-a", statelessEra, nil)
	list := mustOK(t, csA, "workspace", map[string]any{"action": "list"})
	checkKept(t, list, dirs)
	if strings.Contains(list, dirs["fix-mul"]) || !strings.Contains(list, dirs["fix-add"]) {
		t.Errorf("the list shows another credential's directory, or not the caller's:\n%s", list)
	}
	checkBranches(t, repo, base)
	mustErr(t, csA, "workspace", map[string]any{"action": "open", "name": "fix-mul"}, "ACCESS_DENIED")
	mustErr(t, csA, "workspace", map[string]any{"action": "remove", "name": "fix-mul", "force": true}, "ACCESS_DENIED")
	if out := mustOK(t, csA, "workspace", map[string]any{"action": "open", "name": "fix-add"}); !strings.Contains(out, "1 commit(s)") {
		t.Errorf("open: %s", out)
	}
	if out := mustOK(t, csA, "bash", map[string]any{"command": "cat add-notes.txt; echo more >> add-notes.txt"}); !strings.Contains(out, "add was here") {
		t.Errorf("the reopened workspace: %s", out)
	}
	_ = cmd2.Process.Signal(syscall.SIGTERM)
	_ = cmd2.Wait()
	checkMainUntouched(t, repo, base, mainBefore)
	if t.Failed() {
		t.Logf("boris's log (second run):\n%s", logs2)
	}
}

// TestIsolationNeedsARepository: --isolation worktree outside a git work
// tree fails start-up with a message saying why and what to do; a
// repository without a commit too.
func TestIsolationNeedsARepository(t *testing.T) {
	plain := tempDir(t)
	empty := tempDir(t)
	gitIn(t, empty, "init", "-q")
	for dir, want := range map[string]string{plain: "is not in a git repository", empty: "no commit at HEAD"} {
		cmd := exec.Command(binPath, "--transport=stdio", "--workdir="+dir, "--isolation=worktree")
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), want) || !strings.Contains(string(out), "--isolation off") {
			t.Errorf("%s: err=%v\n%s", dir, err, out)
		}
	}
	// Without --isolation, the same directories serve as before, and no
	// workspace tool is offered where there is no repository.
	cs, _, _ := connectStdio(t, plain)
	if slices := toolNames(t, cs); strings.Contains(strings.Join(slices, ","), "workspace") {
		t.Errorf("the workspace tool is served outside a repository: %v", slices)
	}
}

// TestIsolationLayoutRefused: with the sandbox on, a repository inside a
// directory every session's commands may write (here the temp directory)
// would let one agent's commands change the others' workspaces there:
// start-up fails saying so; and an --allow-dir holding the repository
// would give the file tools every workspace.
func TestIsolationLayoutRefused(t *testing.T) {
	repo, _ := calcRepo(t)
	tmp := filepath.Dir(filepath.Dir(repo))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sandbox=on"}, "commands may write " + tmp},
		{[]string{"--allow-dir=" + filepath.Dir(repo)}, "holds the whole repository"},
	} {
		cmd := exec.Command(binPath, append([]string{"--transport=stdio", "--workdir=" + repo, "--isolation=worktree"}, c.args...)...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("%v: err=%v\n%s", c.args, err, out)
		}
	}
}
