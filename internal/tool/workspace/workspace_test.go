package workspace

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/files"
	"github.com/boris-mcp/boris/internal/scope"
	"github.com/boris-mcp/boris/internal/session"
	"github.com/boris-mcp/boris/internal/shell"
	"github.com/boris-mcp/boris/internal/tool"
	"github.com/boris-mcp/boris/internal/tool/edit"
	execfam "github.com/boris-mcp/boris/internal/tool/exec"
	"github.com/boris-mcp/boris/internal/tool/tooltest"
	"github.com/boris-mcp/boris/internal/workspace"
)

func TestMain(m *testing.M) {
	if err := shell.EnableReaping(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// gitT runs git for a test, its status from the reaper.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = dir
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	wait, err := shell.StartWaited(cmd, nil)
	if err == nil {
		err = wait()
	}
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, b.String())
	}
	return strings.TrimSpace(b.String())
}

// fixture is a repository, its workspaces and the tool set of a server
// started there.
type fixture struct {
	repo string
	iso  *Isolation
	set  *tool.Set
}

func newFixture(t *testing.T, auto bool) *fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(base, "repo")
	os.MkdirAll(repo, 0o755)
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("alpha\n"), 0o644)
	gitT(t, repo, "init", "-q")
	gitT(t, repo, "add", "-A")
	gitT(t, repo, "commit", "-q", "-m", "start")
	m, _, err := workspace.Open(context.Background(), workspace.Options{Workdir: repo, Env: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	pol, _ := scope.New(nil, nil, repo)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	iso := New(Options{Manager: m, Auto: auto, Logger: log,
		Env: func(ws *workspace.Workspace, base *tool.Env) (*tool.Env, func(bool), error) {
			p, err := scope.New([]string{ws.Dir}, nil, ws.Root)
			if err != nil {
				return nil, nil, err
			}
			e := *base
			e.Workdir, e.Policy, e.Files = ws.Root, p, files.New(files.Options{Policy: p, MaxFileSize: 1 << 20})
			return &e, func(bool) {}, nil
		}})
	env := tool.Env{Workdir: repo, Policy: pol, Files: files.New(files.Options{Policy: pol, MaxFileSize: 1 << 20}), Logger: log, Isolation: iso}
	specs := slices.Concat(execfam.Specs(execfam.Options{Shell: "/bin/bash", Timeout: time.Minute, TTYCols: 80, TTYRows: 24}), edit.Specs(), Specs(iso))
	set, err := tool.NewSet(env, specs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(iso.Close)
	return &fixture{repo: repo, iso: iso, set: set}
}

func (f *fixture) session(t *testing.T, id string) (*mcp.ClientSession, *session.Session) {
	t.Helper()
	sess := session.New(id, session.Options{Workdir: f.repo, Runner: shell.NewRunner("/bin/bash", shell.Environ(os.Environ()), shell.Options{Grace: time.Second})})
	t.Cleanup(sess.Close)
	return tooltest.Connect(t, f.set, sess), sess
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return tool.TextOf(res), res.IsError
}

// With --isolation worktree a session's first call makes its workspace and
// runs there, said once; the file tools see only it; its end removes it
// when it holds nothing and keeps it otherwise.
func TestAutoWorkspace(t *testing.T) {
	f := newFixture(t, true)
	cs, sess := f.session(t, "s_AbCdEf…")
	out, isErr := call(t, cs, "bash", map[string]any{"command": "pwd"})
	ws := filepath.Join(f.repo, ".git", "boris", "worktrees", "s_AbCdEf")
	if isErr || !strings.Contains(out, "stdout:\n"+ws+"\n") || strings.Count(out, "workspace: this session works in a git workspace of its own, "+ws+", on the branch boris/s_AbCdEf") != 1 {
		t.Fatalf("first call: %s", out)
	}
	if out, _ := call(t, cs, "bash", map[string]any{"command": "true"}); strings.Contains(out, "workspace:") {
		t.Fatalf("said twice: %s", out)
	}
	if out, isErr := call(t, cs, "view", map[string]any{"path": filepath.Join(f.repo, "a.txt")}); !isErr || !strings.Contains(out, "ACCESS_DENIED") {
		t.Fatalf("the main checkout through view: %s", out)
	}
	if out, isErr := call(t, cs, "create_file", map[string]any{"path": "b.txt", "content": "b\n"}); isErr {
		t.Fatal(out)
	}
	if out, _ := call(t, cs, "workspace", nil); !strings.Contains(out, "?? b.txt") || !strings.Contains(out, "uncommitted changes: 1") {
		t.Fatalf("status: %s", out)
	}
	if out, isErr := call(t, cs, "workspace", map[string]any{"action": "create"}); !isErr || !strings.Contains(out, "already works in workspace s_AbCdEf") {
		t.Fatalf("create in a bound session: %s", out)
	}
	sess.Close()
	f.iso.Close()
	if _, err := os.Stat(filepath.Join(ws, "b.txt")); err != nil {
		t.Fatalf("a workspace with work was not kept: %v", err)
	}

	// A session that does nothing but look: its workspace goes.
	g := newFixture(t, true)
	cs2, sess2 := g.session(t, "other")
	call(t, cs2, "bash", map[string]any{"command": "ls"})
	sess2.Close()
	g.iso.Close()
	if _, err := os.Stat(filepath.Join(g.repo, ".git", "boris", "worktrees", "other")); !os.IsNotExist(err) {
		t.Fatalf("an empty workspace was kept: %v", err)
	}
}

// With --isolation off sessions work in the workdir; create moves a
// session that has run nothing into a workspace of its own, and refuses
// one that has.
func TestCreateOnRequest(t *testing.T) {
	f := newFixture(t, false)
	cs, _ := f.session(t, "a")
	if out, _ := call(t, cs, "bash", map[string]any{"command": "pwd"}); !strings.Contains(out, "stdout:\n"+f.repo+"\n") {
		t.Fatalf("without isolation: %s", out)
	}
	if out, _ := call(t, cs, "workspace", nil); !strings.Contains(out, "This session has no workspace") {
		t.Fatalf("status without a workspace: %s", out)
	}
	if out, isErr := call(t, cs, "workspace", map[string]any{"action": "create"}); !isErr || !strings.Contains(out, "already run commands") {
		t.Fatalf("create after a command: %s", out)
	}
	if _, err := os.Stat(filepath.Join(f.repo, ".git", "boris", "worktrees", "a")); !os.IsNotExist(err) {
		t.Fatal("the refused workspace was left")
	}
	cs2, _ := f.session(t, "b")
	out, isErr := call(t, cs2, "workspace", map[string]any{"action": "create", "name": "../x y"})
	if isErr || !strings.Contains(out, "Made workspace x-y") {
		t.Fatalf("create: %s", out)
	}
	if out, _ := call(t, cs2, "bash", map[string]any{"command": "pwd"}); !strings.Contains(out, filepath.Join(f.repo, ".git", "boris", "worktrees", "x-y")) || strings.Contains(out, "workspace:") {
		t.Fatalf("after create: %s", out)
	}
	if out, isErr := call(t, cs2, "workspace", map[string]any{"action": "nope"}); !isErr || !strings.Contains(out, "valid actions are status, diff, commit, list, create, open, remove") {
		t.Fatalf("bad action: %s", out)
	}
}
