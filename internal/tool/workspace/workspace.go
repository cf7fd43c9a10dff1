// Package workspace is the family of the workspace tool, and the kernel's
// Isolation: a session that works in a git workspace of its own (package
// workspace) gets the environment of that workspace in every call — its
// scope, file service and checkpoints; its commands start there, confined
// to it when the sandbox is on — and the tool shows, diffs and commits
// the session's work and lists, opens and removes workspaces.
//
// With --isolation worktree every session gets a workspace at its first
// call; without, a session asks for one (create, or open a kept one)
// before it has run anything — with session: "new", that is a new handle
// working in a new workspace, so one client can run several isolated
// agents. When the session ends the workspace is released: removed
// without work, kept with it.
package workspace

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/dialect"
	"github.com/boris-mcp/boris/internal/results"
	"github.com/boris-mcp/boris/internal/scope"
	"github.com/boris-mcp/boris/internal/session"
	"github.com/boris-mcp/boris/internal/tool"
	"github.com/boris-mcp/boris/internal/workspace"
)

// Name is the tool's name, and its --disable-tools name.
const Name = "workspace"

// releaseTimeout bounds what a session's end does to its workspace.
const releaseTimeout = 2 * time.Minute

// Options are what the family is built from.
type Options struct {
	// Manager keeps the repository's workspaces; nil when there are none
	// to have (not a git work tree): the tool is then not served.
	Manager *workspace.Manager
	// Auto gives every session a workspace at its first call
	// (--isolation worktree).
	Auto bool
	// Env makes the environment of a workspace's sessions from the
	// process's: its scope policy, file service and checkpoints. closeEnv
	// releases them when the session ends (removed: the workspace is
	// gone, and with it what was kept of it).
	Env func(ws *workspace.Workspace, base *tool.Env) (env *tool.Env, closeEnv func(removed bool), err error)
	// Domain, if set, makes the sandbox domain a session working in ws
	// starts its commands in.
	Domain func(ws *workspace.Workspace) func() (session.Domain, error)
	// StopLSP, if set, stops the language servers of a workspace's
	// directory when its session ends.
	StopLSP func(dir string)
	Logger  *slog.Logger
}

// Isolation binds sessions to workspaces; it implements tool.Isolation.
// Safe for concurrent use.
type Isolation struct {
	o Options

	mu     sync.Mutex
	bound  map[*session.Session]*binding
	closed bool
	wg     sync.WaitGroup // releases
}

// binding is a session's workspace.
type binding struct {
	ready    chan struct{} // closed once made (err set when it failed)
	err      error
	ws       *workspace.Workspace
	env      *tool.Env
	closeEnv func(removed bool)
	told     atomic.Bool
}

// New returns the Isolation of o (nil when o has no Manager).
func New(o Options) *Isolation {
	if o.Manager == nil {
		return nil
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Isolation{o: o, bound: map[*session.Session]*binding{}}
}

// Enter implements tool.Isolation.
func (iso *Isolation) Enter(ctx context.Context, sess *session.Session, toolName, credential string, env *tool.Env) (*tool.Env, string, error) {
	iso.mu.Lock()
	b := iso.bound[sess]
	if b == nil {
		// The workspace tool makes (or opens) the session's workspace
		// itself, as its action says.
		if !iso.o.Auto || toolName == Name {
			iso.mu.Unlock()
			return env, "", nil
		}
		var err error
		if b, err = iso.bindLocked(sess, env, func(ctx context.Context) (*workspace.Workspace, error) {
			return iso.o.Manager.Create(ctx, workspace.Owner{Credential: credential, Session: sess.ID()}, nameFor(credential, sess.ID()))
		}); err != nil {
			iso.mu.Unlock()
			return nil, "", err
		}
	}
	iso.mu.Unlock()
	if err := b.wait(ctx); err != nil {
		return nil, "", err
	}
	return b.env, b.note(), nil
}

// nameFor names a session's workspace: the credential and the session's
// id as the logs show it (a handle's first characters, never the whole
// handle).
func nameFor(credential, id string) string {
	id = strings.TrimSuffix(id, "…")
	if len(id) > 16 {
		id = id[:16]
	}
	if credential != "" {
		return credential + "-" + id
	}
	return id
}

// bindLocked starts making a session's workspace with make and returns
// its binding; the session is moved into it before its first command.
func (iso *Isolation) bindLocked(sess *session.Session, base *tool.Env, open func(context.Context) (*workspace.Workspace, error)) (*binding, error) {
	if iso.closed {
		return nil, codes.Errorf(codes.SessionClosed, "boris is shutting down; no workspace can be made")
	}
	select {
	case <-sess.Closed():
		return nil, codes.Errorf(codes.SessionClosed, "this session has been closed; start a new one")
	default:
	}
	b := &binding{ready: make(chan struct{})}
	iso.bound[sess] = b
	iso.wg.Add(1)
	go func() {
		defer iso.wg.Done()
		iso.make(sess, base, b, open)
		if b.err != nil {
			return
		}
		<-sess.Closed()
		iso.release(sess, b)
	}()
	return b, nil
}

// make makes or opens a binding's workspace, moves the session into it
// and builds its environment; a failure forgets the binding (the next call
// tries again).
func (iso *Isolation) make(sess *session.Session, base *tool.Env, b *binding, open func(context.Context) (*workspace.Workspace, error)) {
	defer close(b.ready)
	fail := func(err error) {
		b.err = err
		iso.mu.Lock()
		if iso.bound[sess] == b {
			delete(iso.bound, sess)
		}
		iso.mu.Unlock()
	}
	ws, err := open(context.Background())
	if err != nil {
		fail(err)
		return
	}
	env, closeEnv, err := iso.o.Env(ws, base)
	if err == nil {
		var dom func() (session.Domain, error)
		if iso.o.Domain != nil {
			dom = iso.o.Domain(ws)
		}
		if err = sess.Isolate(ws.Root, dom); err != nil {
			closeEnv(false)
			err = codes.Errorf(codes.InvalidInput, "this session cannot move into workspace %s: %v; start a new session for it (session: \"new\")", ws.Name, err)
		}
	}
	if err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
		defer cancel()
		_, _, _ = iso.o.Manager.Release(ctx, ws)
		fail(err)
		return
	}
	b.ws, b.env, b.closeEnv = ws, env, closeEnv
}

// wait waits for a binding's workspace, or for ctx.
func (b *binding) wait(ctx context.Context) error {
	select {
	case <-b.ready:
		return b.err
	case <-ctx.Done():
		return codes.Errorf(codes.WorkspaceFailed, "the call ended while this session's workspace was being made (%v); it is still being made: call again", ctx.Err())
	}
}

// note is said once, after the first answer of a bound session: where it
// works.
func (b *binding) note() string {
	if !b.told.CompareAndSwap(false, true) {
		return ""
	}
	ws := b.ws
	var s strings.Builder
	fmt.Fprintf(&s, "workspace: this session works in a git workspace of its own, %s, on the branch %s, made from commit %s (the HEAD of %s). Your commands, edits and checkpoints stay in it; the main checkout is never changed. The workspace tool shows your work (status, diff) and commits it (commit) to the branch %s of that repository, for people to merge.", ws.Root, ws.Branch, short(ws.Base), ws.RepoTop(), ws.Branch)
	if ws.MainChanges > 0 {
		fmt.Fprintf(&s, " The main checkout had %d uncommitted change(s), which this workspace does not have: it starts from the last commit.", ws.MainChanges)
	}
	return s.String() + "\n"
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// release ends a session's use of its workspace: its checkpoints and
// language servers stop, and the workspace is removed (no work) or kept.
func (iso *Isolation) release(sess *session.Session, b *binding) {
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if iso.o.StopLSP != nil {
		iso.o.StopLSP(b.ws.Dir)
	}
	_, removed, err := iso.o.Manager.Release(ctx, b.ws)
	if err != nil {
		iso.o.Logger.Warn("workspaces: releasing a session's workspace failed", "workspace", b.ws.Name, "err", err)
	}
	b.closeEnv(removed)
	iso.mu.Lock()
	if iso.bound[sess] == b {
		delete(iso.bound, sess)
	}
	iso.mu.Unlock()
}

// Close refuses new workspaces and waits until the workspaces of the
// sessions that have ended are released (call it once the sessions are
// closed).
func (iso *Isolation) Close() {
	if iso == nil {
		return
	}
	iso.mu.Lock()
	iso.closed = true
	iso.mu.Unlock()
	iso.o.Manager.Close()
	iso.wg.Wait()
}

// of returns a session's binding once made, nil when it has none.
func (iso *Isolation) of(ctx context.Context, sess *session.Session) (*binding, error) {
	iso.mu.Lock()
	b := iso.bound[sess]
	iso.mu.Unlock()
	if b == nil {
		return nil, nil
	}
	if err := b.wait(ctx); err != nil {
		return nil, err
	}
	return b, nil
}

// ensure returns the session's binding, making its workspace first when
// every session gets one; nil when it has none and need not.
func (iso *Isolation) ensure(ctx context.Context, c *tool.Call) (*binding, error) {
	if b, err := iso.of(ctx, c.Sess); b != nil || err != nil {
		return b, err
	}
	if !iso.o.Auto {
		return nil, nil
	}
	return iso.bindWith(ctx, c, func(ctx context.Context) (*workspace.Workspace, error) {
		return iso.o.Manager.Create(ctx, workspace.Owner{Credential: c.Rec.Credential, Session: c.Sess.ID()}, nameFor(c.Rec.Credential, c.Sess.ID()))
	})
}

// bindWith binds the calling session with make and waits for it.
func (iso *Isolation) bindWith(ctx context.Context, c *tool.Call, open func(context.Context) (*workspace.Workspace, error)) (*binding, error) {
	iso.mu.Lock()
	if b := iso.bound[c.Sess]; b != nil {
		iso.mu.Unlock()
		if err := b.wait(ctx); err != nil {
			return nil, err
		}
		return nil, codes.Errorf(codes.InvalidInput, "this session already works in workspace %s (%s); start a new session for another (session: \"new\")", b.ws.Name, b.ws.Root)
	}
	b, err := iso.bindLocked(c.Sess, c.Env, open)
	iso.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if err := b.wait(ctx); err != nil {
		return nil, err
	}
	return b, nil
}

var actions = []string{"status", "diff", "commit", "list", "create", "open", "remove"}

type args struct {
	Action  string    `json:"action,omitempty" jsonschema:"status (the default), diff, commit, list, create, open or remove."`
	Message string    `json:"message,omitempty" jsonschema:"commit: the commit message."`
	Paths   []string  `json:"paths,omitempty" jsonschema:"diff: only these files or directories (relative to the working directory, or absolute)."`
	Name    string    `json:"name,omitempty" jsonschema:"create: a name for the workspace and its branch boris/NAME (default: the session's); open, remove: the workspace."`
	Force   tool.Bool `json:"force,omitempty" jsonschema:"remove: delete its uncommitted and stashed changes too."`
}

const desc = `Your git workspace: a working tree and branch of your own in which your commands, edits and checkpoints stay, so that other agents working on the same repository at the same time never see or change your files, and you never change theirs or the main checkout. Bring your work back through git.

- status (the default): where your workspace is, the branch that holds your work, the commit it started from, your commits since and your uncommitted changes.
- diff: everything you changed since the workspace started — commits, staged and unstaged changes, new files (not ignored ones) — as one unified diff; paths narrows it. Answers are cut at 30000 characters.
- commit: commit every change (new files included, ignored ones not) with message, on the branch checked out in the workspace, and bring the branch boris/NAME of the repository to it, where people merge it. Your workspace's git hooks are not run.
- list: every workspace of the repository: in use, or kept with work after its session ended (also after a crash).
- create: start working in a new workspace now (name chooses its name and branch). Only before this session has run a command; with session: "new" it is a new session in a new workspace, so several agents can work at once.
- open: continue in a kept workspace (name) made under your credential, e.g. after a restart. Same condition as create.
- remove: delete a kept workspace (name) made under your credential; its uncommitted and stashed changes only with force. A branch holding commits stays.
A workspace whose session ends is removed when it holds no work, and kept otherwise.`

// Specs declares the family's tool, served when there is a repository to
// make workspaces of.
func Specs(iso *Isolation) []tool.Spec {
	hint := `workspace {action: "create", session: "new"} starts a session in a git workspace of its own (a working tree and branch boris/NAME), so that several agents can work on the repository at once without touching each other's files or the main checkout.`
	if iso != nil && iso.o.Auto {
		hint = "Each session works in a git workspace of its own (a clone of the repository at HEAD on its branch boris/NAME), made at its first call, which says where; the main checkout is never changed. The workspace tool shows and commits a session's work; merging is left to people."
	}
	return []tool.Spec{{
		Names: map[dialect.Mode]string{dialect.Boris: Name, dialect.Claude: Name, dialect.Codex: Name},
		Needs: func(*tool.Env) bool { return iso != nil },
		Hint:  map[dialect.Mode]string{dialect.Boris: hint, dialect.Claude: hint, dialect.Codex: hint},
		Build: func(dialect.Mode) (*tool.Def, error) { return iso.tool() },
	}}
}

func (iso *Isolation) tool() (*tool.Def, error) {
	return tool.Define(tool.Meta{Name: Name, Title: "Your git workspace", Description: desc, Returns: tool.Returns(results.Workspace{}),
		Tune: func(s *jsonschema.Schema) {
			tool.SetEnum(s, "action", actions...)
			tool.SetDefault(s, "action", "status")
		}},
		func(ctx context.Context, c *tool.Call, in *args) (*mcp.CallToolResult, error) {
			action := strings.ToLower(strings.TrimSpace(in.Action))
			if action == "" {
				action = "status"
			}
			c.Rec.Operation = action
			m := iso.o.Manager
			switch action {
			case "status", "diff", "commit":
				b, err := iso.ensure(ctx, c)
				if err != nil {
					return nil, err
				}
				if b == nil {
					return tool.Answer(renderNone(m, c.Env.Workdir), &results.Workspace{Action: action}), nil
				}
				switch action {
				case "status":
					info, err := b.ws.Export(ctx)
					if err != nil {
						return nil, codes.Errorf(codes.WorkspaceFailed, "%v", err)
					}
					return tool.Answer(renderStatus(&info, m), &results.Workspace{Action: action, Workspace: results.FromWorkspaceInfo(&info, true, true)}), nil
				case "diff":
					paths, err := relPaths(b.ws, c.Sess.Cwd(), in.Paths)
					if err != nil {
						return nil, err
					}
					c.Rec.Paths = paths
					d, err := b.ws.Diff(ctx, paths, maxDiffChars)
					if err != nil {
						return nil, err
					}
					info := workspaceInfo(b.ws)
					return tool.Answer(renderDiff(&info, d), results.FromWorkspaceDiff(&info, d)), nil
				default:
					cr, err := b.ws.Commit(ctx, in.Message)
					if err != nil {
						return nil, err
					}
					return tool.Answer(renderCommit(cr, m), &results.Workspace{Action: action, Commit: cr.ID, Workspace: results.FromWorkspaceInfo(&cr.Info, true, true)}), nil
				}
			case "list":
				b, err := iso.of(ctx, c.Sess)
				if err != nil {
					return nil, err
				}
				mine := ""
				if b != nil {
					mine = b.ws.Name
				}
				all := m.List(ctx)
				out := &results.Workspace{Action: action, Workspaces: []results.WorkspaceInfo{}}
				for i := range all {
					out.Workspaces = append(out.Workspaces, *results.FromWorkspaceInfo(&all[i], all[i].Name == mine, all[i].Owner.Credential == c.Rec.Credential))
				}
				return tool.Answer(renderList(all, mine, c.Rec.Credential, m), out), nil
			case "create", "open":
				name := strings.TrimSpace(in.Name)
				if action == "open" && name == "" {
					return nil, codes.Errorf(codes.InvalidInput, "open needs name: the kept workspace to continue in (action \"list\" shows them)")
				}
				if name == "" {
					name = nameFor(c.Rec.Credential, c.Sess.ID())
				}
				b, err := iso.bindWith(ctx, c, func(ctx context.Context) (*workspace.Workspace, error) {
					if action == "open" {
						return m.Attach(name, c.Rec.Credential, c.Sess.ID())
					}
					return m.Create(ctx, workspace.Owner{Credential: c.Rec.Credential, Session: c.Sess.ID()}, name)
				})
				if err != nil {
					return nil, err
				}
				info, err := b.ws.Inspect(ctx)
				if err != nil {
					info = workspaceInfo(b.ws)
				}
				return tool.Answer(renderEntered(action, &info, b.note()), &results.Workspace{Action: action, Workspace: results.FromWorkspaceInfo(&info, true, true)}), nil
			case "remove":
				name := strings.TrimSpace(in.Name)
				if name == "" {
					return nil, codes.Errorf(codes.InvalidInput, "remove needs name: the workspace to delete (action \"list\" shows them)")
				}
				r, err := m.Remove(ctx, name, c.Rec.Credential, bool(in.Force))
				if err != nil {
					return nil, err
				}
				return tool.Answer(renderRemoved(r, m), &results.Workspace{Action: action, Workspace: results.FromWorkspaceInfo(&r.Info, false, true), BranchKept: r.BranchKept}), nil
			}
			return nil, codes.Errorf(codes.InvalidInput, "unknown action %q: valid actions are %s", in.Action, strings.Join(actions, ", ")).WithValid("action", actions...)
		})
}

// maxDiffChars bounds diff's patch.
const maxDiffChars = 30000

// workspaceInfo is what is known of a workspace without git.
func workspaceInfo(ws *workspace.Workspace) workspace.Info {
	return workspace.Info{Name: ws.Name, Dir: ws.Dir, Root: ws.Root, Branch: ws.Branch, Base: ws.Base, Created: ws.Created, Owner: ws.Owner, Live: true, MainChanges: ws.MainChanges, Size: -1}
}

// relPaths makes diff's paths relative to the workspace's top, refusing
// any outside it.
func relPaths(ws *workspace.Workspace, cwd string, paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		if strings.TrimSpace(p) == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		p = filepath.Clean(p)
		if !scope.Within(p, ws.Dir) {
			return nil, codes.Errorf(codes.AccessDenied, "%s is outside this session's workspace %s: give paths inside it (relative to the working directory)", p, ws.Dir)
		}
		rel, err := filepath.Rel(ws.Dir, p)
		if err != nil {
			return nil, codes.Errorf(codes.InvalidInput, "path %s: %v", p, err)
		}
		out = append(out, rel)
	}
	return out, nil
}
