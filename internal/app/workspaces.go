package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/boris-mcp/boris/internal/checkpoint"
	"github.com/boris-mcp/boris/internal/config"
	"github.com/boris-mcp/boris/internal/files"
	"github.com/boris-mcp/boris/internal/lsp"
	"github.com/boris-mcp/boris/internal/sandbox"
	"github.com/boris-mcp/boris/internal/scope"
	"github.com/boris-mcp/boris/internal/session"
	"github.com/boris-mcp/boris/internal/shell"
	"github.com/boris-mcp/boris/internal/tool"
	workspacetool "github.com/boris-mcp/boris/internal/tool/workspace"
	"github.com/boris-mcp/boris/internal/workspace"
)

// openWorkspaces opens the workdir's repository for workspaces and lists
// those kept from an earlier run: with --isolation worktree it must work
// (a workdir outside a git work tree fails start-up); with off it is tried,
// so that the workspace tool can make one on request, and nil without a
// repository. sb and base are the sandbox and its configuration (nil: off).
func openWorkspaces(ctx context.Context, cfg *config.Config, sb *sandbox.Sandbox, base sandbox.Config, logger *slog.Logger) (*workspace.Manager, error) {
	auto := cfg.Isolation.Worktree()
	fail := func(err error) (*workspace.Manager, error) {
		if auto {
			return nil, fmt.Errorf("--isolation worktree: %w", err)
		}
		logger.Debug("no workspaces (the workspace tool is not served)", "why", err)
		return nil, nil
	}
	if !auto {
		if _, err := exec.LookPath("git"); err != nil {
			return fail(err)
		}
	}
	opts := workspace.Options{
		Workdir:  cfg.Workdir,
		Env:      shell.Environ(os.Environ()),
		MaxCount: cfg.Isolation.MaxWorktrees,
		MaxBytes: cfg.Isolation.MaxBytes,
		Logger:   logger.With("component", "workspaces"),
	}
	if sb != nil {
		// boris's own git in a workspace runs as confined as the
		// agent's commands there.
		opts.Confine = func(ws *workspace.Workspace) (workspace.Starter, error) {
			d, err := workspaceDomain(sb, base, ws)
			if err != nil {
				return workspace.Starter{}, err
			}
			return workspace.Starter{Start: d.Start, Done: d.Close}, nil
		}
	}
	// The repository is found first, so that the checks below can refuse
	// a layout before anything of an earlier run is touched.
	repo, err := workspace.FindRepo(ctx, opts)
	if err != nil {
		return fail(err)
	}
	if err := checkIsolationLayout(cfg, repo, sb != nil, base); err != nil {
		return fail(err)
	}
	m, kept, err := workspace.Open(ctx, opts)
	if err != nil {
		return fail(err)
	}
	for _, k := range kept {
		logger.Warn("workspace kept from an earlier run: it holds work (the workspace tool lists it; open continues in it, remove deletes it)",
			"workspace", k.Name, "dir", k.Root, "branch", k.Branch, "uncommitted", k.ChangeCount, "commits", k.CommitCount, "stashes", k.Stashes, "credential", k.Owner.Credential, "note", k.ExportNote+k.Err)
	}
	if auto {
		logger.Info("isolation: each session works in a git workspace of its own, made at its first call", "repository", m.Repo().Toplevel, "workspaces", m.Dir(), "max", cfg.Isolation.MaxWorktrees, "max_bytes", cfg.Isolation.MaxBytes, "kept", len(kept))
	}
	return m, nil
}

// checkIsolationLayout refuses what would let a session reach past its
// workspace: an allowed directory holding the whole repository (so every
// workspace), or, with the sandbox, a writable path holding it.
func checkIsolationLayout(cfg *config.Config, repo workspace.Repo, sandboxed bool, base sandbox.Config) error {
	for _, a := range cfg.AllowDirs {
		if a != repo.Toplevel && scope.Within(repo.Toplevel, a) {
			return fmt.Errorf("--allow-dir %s holds the whole repository %s, and so every session's workspace in it: give allowed directories inside the repository (each session gets the same place in its own workspace) or outside it", a, repo.Toplevel)
		}
	}
	if !sandboxed {
		return nil
	}
	for _, w := range base.Writable {
		if scope.Within(w, repo.Toplevel) {
			continue // replaced by the session's workspace
		}
		for _, p := range []string{repo.Toplevel, repo.GitDir} {
			if scope.Within(p, w) {
				return fmt.Errorf("with the sandbox on, commands may write %s, which holds %s: a session's commands could change the main checkout and the other sessions' workspaces there. Keep the repository out of the temp directory (TMPDIR), --sandbox-write and --allow-dir paths", w, p)
			}
		}
	}
	return nil
}

// workspaceDomain makes a sandbox domain confined to a workspace: writable
// are its directory, the temp directory and --sandbox-write paths (not the
// workdir); unreadable, beside the denied paths, the main checkout's files
// and the other workspaces.
func workspaceDomain(sb *sandbox.Sandbox, base sandbox.Config, ws *workspace.Workspace) (*sandbox.Domain, error) {
	c, err := ws.Confinement()
	if err != nil {
		return nil, fmt.Errorf("what workspace %s may reach: %w", ws.Name, err)
	}
	top := ws.RepoTop()
	cfg := base
	cfg.Writable = nil
	for _, w := range base.Writable {
		if !scope.Within(w, top) {
			cfg.Writable = append(cfg.Writable, w)
		}
	}
	cfg.Writable = append(cfg.Writable, c.Writable...)
	cfg.Deny = append(slices.Clone(base.Deny), c.Hidden...)
	return sb.NewDomainWith(cfg)
}

// newIsolation binds sessions to the workspaces of m (nil when m is).
func newIsolation(cfg *config.Config, m *workspace.Manager, sb *sandbox.Sandbox, base sandbox.Config, lspMgr *lsp.Manager, getenv func(string) string, logger *slog.Logger) *workspacetool.Isolation {
	if m == nil {
		return nil
	}
	o := workspacetool.Options{
		Manager: m,
		Auto:    cfg.Isolation.Worktree(),
		Env:     workspaceEnv(cfg, m.Repo(), getenv, logger),
		Logger:  logger.With("component", "workspaces"),
	}
	if sb != nil {
		o.Domain = func(ws *workspace.Workspace) func() (session.Domain, error) {
			return func() (session.Domain, error) {
				d, err := workspaceDomain(sb, base, ws)
				if err != nil {
					return nil, err
				}
				return d, nil
			}
		}
	}
	if lspMgr != nil {
		o.StopLSP = lspMgr.StopUnder
	}
	return workspacetool.New(o)
}

// workspaceEnv makes the environment of a workspace's sessions: the file
// tools confined to it, its own checkpoints.
func workspaceEnv(cfg *config.Config, repo workspace.Repo, getenv func(string) string, logger *slog.Logger) func(*workspace.Workspace, *tool.Env) (*tool.Env, func(bool), error) {
	return func(ws *workspace.Workspace, base *tool.Env) (*tool.Env, func(bool), error) {
		pol, err := workspacePolicy(cfg, repo, ws)
		if err != nil {
			return nil, nil, err
		}
		e := *base
		e.Workdir = ws.Root
		e.Policy = pol
		e.Files = files.New(files.Options{Policy: pol, MaxFileSize: cfg.MaxFileSize, RequireViewBeforeEdit: cfg.RequireViewBeforeEdit})
		e.Checkpoints = nil
		var sv *checkpoint.Service
		if cfg.Checkpoints && cfg.CheckpointDir != "" {
			sv, err = checkpoint.Open(checkpointOptions(cfg, []string{ws.Dir}, pol, getenv, logger.With("workspace", ws.Name)))
			if err != nil {
				logger.Warn("checkpoints: the store of a workspace could not be opened; its calls are not checkpointed", "workspace", ws.Name, "err", err)
			} else {
				e.Checkpoints = sv
			}
		}
		return &e, func(removed bool) {
			if sv == nil {
				return
			}
			store := sv.StoreDir()
			sv.Close()
			if removed {
				// The workspace is gone: what was recorded of it goes too.
				_ = os.RemoveAll(store)
			}
		}, nil
	}
}

// workspacePolicy is the file tools' scope in a workspace: the allowed
// directories inside the repository at the same place in the workspace
// (the whole workspace without --allow-dir), those outside it as they
// are; the deny rules likewise, relative ones anchored at the session's
// start.
func workspacePolicy(cfg *config.Config, repo workspace.Repo, ws *workspace.Workspace) (*scope.Policy, error) {
	into := func(p string) (string, bool) {
		if !scope.Within(p, repo.Toplevel) {
			return p, false
		}
		rel, err := filepath.Rel(repo.Toplevel, p)
		if err != nil {
			return p, false
		}
		return filepath.Join(ws.Dir, rel), true
	}
	var allow []string
	for _, a := range cfg.AllowDirs {
		if p, in := into(a); in || !scope.Within(repo.Toplevel, a) {
			allow = append(allow, p)
		}
	}
	if len(allow) == 0 {
		allow = []string{ws.Dir}
	}
	var deny []string
	for _, d := range append(slices.Clone(cfg.DenyPatterns), tokenFileDeny(cfg.TokenFile)...) {
		if filepath.IsAbs(d) && !strings.ContainsAny(d, "*?[{") {
			d, _ = into(filepath.Clean(d))
		} else if filepath.IsAbs(d) && strings.HasPrefix(d, repo.Toplevel+"/") {
			d = ws.Dir + d[len(repo.Toplevel):]
		}
		deny = append(deny, d)
	}
	return scope.New(allow, deny, ws.Root)
}
