package config

import "strings"

// Isolation modes (Isolation.Mode).
const (
	IsolationOff      = "off"
	IsolationWorktree = "worktree"
)

// Isolation is how sessions are kept apart on one repository.
type Isolation struct {
	// Mode is IsolationOff (sessions share the workdir, and a session may
	// ask for a workspace of its own) or IsolationWorktree (every session
	// works in a git workspace of its own, made at its first call).
	Mode string
	// MaxWorktrees bounds the workspaces of the repository, live and kept;
	// MaxBytes the disk they take together (0: only the free space).
	MaxWorktrees int
	MaxBytes     int64
}

// Worktree reports whether every session gets a workspace of its own.
func (i Isolation) Worktree() bool { return i.Mode == IsolationWorktree }

// resolveIsolation checks the isolation settings; the repository is looked
// at later, when the workspaces are opened.
func (c *cli) resolveIsolation(cfg *Config, fail func(string, ...any)) {
	switch mode := strings.ToLower(strings.TrimSpace(c.Isolation)); mode {
	case IsolationOff, "":
		cfg.Isolation.Mode = IsolationOff
	case IsolationWorktree:
		cfg.Isolation.Mode = mode
	default:
		fail("invalid --isolation %q: valid values are off and worktree", c.Isolation)
	}
	if c.MaxWorktrees < 1 {
		fail("invalid --max-worktrees %d: at least 1", c.MaxWorktrees)
	}
	cfg.Isolation.MaxWorktrees = c.MaxWorktrees
	n, err := ParseSize(c.WorktreeMaxBytes)
	if err != nil {
		fail("invalid --worktree-max-bytes: %v", err)
	}
	cfg.Isolation.MaxBytes = n
}
