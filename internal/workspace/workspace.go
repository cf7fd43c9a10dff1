// Package workspace gives each agent a git working tree and a branch of its
// own, so that several agents can work on one repository at once without
// stepping on each other: one's edits, builds, `git checkout -b` and
// `git stash` never touch another's, and the main checkout is never
// changed.
//
// A workspace is a clone of the repository that borrows its objects (git
// clone --shared: nothing is copied but the files checked out), kept in
// the repository's git directory under boris/worktrees/NAME, checked out
// at the main checkout's HEAD on the branch boris/NAME. It is a clone
// rather than a linked worktree (git worktree add) on purpose: linked
// worktrees share one set of refs, one stash, one configuration and one
// object store that every worktree's git must write, so two agents
// collide on `git stash` (one stack for all) and on branch names, and a
// sandbox cannot keep one agent's git from rewriting what the others'
// depend on. A clone has all of that to itself; the repository is only
// read (its objects), and only boris writes to it: the branch boris/NAME,
// which boris moves to the workspace's HEAD (Export) when the agent asks
// for its work to be brought back, when its session ends and at start-up.
// Merging stays with people.
//
// Uncommitted changes of the main checkout are not carried into a new
// workspace: it starts from the commit at HEAD, so that its branch holds
// exactly the agent's work; Workspace.MainChanges says how many there were.
//
// Lifecycle: a workspace is made at its session's first call (Create),
// and when the session ends (Release) it is removed if it holds no work —
// nothing uncommitted, no stash, no commit that is not in the repository's
// HEAD — and kept otherwise. Kept workspaces, and those left by a crash,
// are found at the next start (Open), listed, and never removed without
// being inspected: one with work stays until removed on request (Remove).
// Count and disk are bounded (Options.MaxCount, Options.MaxBytes).
//
// Every git command boris runs inside a workspace — whose files and
// configuration the agent controls — runs through Options.Confine (the
// agent's own sandbox, when there is one) with hooks, the file system
// monitor and external drivers turned off. The package knows nothing of
// MCP: it takes and returns plain values.
package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/boris-mcp/boris/internal/codes"
)

// Defaults.
const (
	// DefaultMaxCount bounds the workspaces of a repository, live and
	// kept.
	DefaultMaxCount = 20
	// BranchPrefix starts the name of every workspace's branch.
	BranchPrefix = "boris/"
	// createTimeout bounds making a workspace (a clone and a checkout).
	createTimeout = 30 * time.Minute
	// maxNameLen bounds a workspace's name.
	maxNameLen = 48
)

// The states of a workspace's record.
const (
	stateCreating = "creating"
	stateReady    = "ready"
)

// Options configure a Manager.
type Options struct {
	// Workdir is boris's working directory (absolute, symlink-free),
	// inside the git work tree whose workspaces the Manager keeps.
	Workdir string
	// Git is the git program ("" finds git on PATH).
	Git string
	// Env is the environment git commands start from: the commands'
	// environment (boris's own settings left out); GIT_ variables that
	// would point git elsewhere are dropped.
	Env []string
	// MaxCount bounds the workspaces, live and kept (0: DefaultMaxCount).
	MaxCount int
	// MaxBytes bounds the disk they take together (0: no bound but the
	// free space).
	MaxBytes int64
	// Confine, if set, gives the starter of git commands run inside a
	// workspace (see Starter): its agent's confinement.
	Confine func(*Workspace) (Starter, error)
	Logger  *slog.Logger
}

// Repo is the repository the workspaces are made from.
type Repo struct {
	// Toplevel is the main checkout's top directory.
	Toplevel string
	// GitDir is its git directory (shared by its linked worktrees).
	GitDir string
	// Rel is the workdir below Toplevel ("" at the top): a workspace's
	// sessions start at the same place in it.
	Rel string
}

// Owner is who a workspace was made for.
type Owner struct {
	// Credential is the bearer token's name ("" without auth, stdio).
	Credential string `json:"credential,omitempty"`
	// Session names the session that made it (for people: logs, lists).
	Session string `json:"session,omitempty"`
}

// Manager makes, finds, inspects and removes the workspaces of one
// repository. It is safe for concurrent use.
type Manager struct {
	opts Options
	git  string
	env  []string
	repo Repo
	// dir holds the workspaces (NAME/) and their records (NAME.json).
	dir string
	log *slog.Logger

	mu     sync.Mutex
	all    map[string]*Workspace // on disk or being made
	closed bool
}

// Workspace is one agent's working tree and branch.
type Workspace struct {
	// Name names the workspace and its branch (BranchPrefix + Name).
	Name string
	// Dir is the workspace's top directory; Root is where its sessions
	// start (Dir, or the workdir's place below the top in it).
	Dir, Root string
	// Branch is the branch in the repository that boris moves to the
	// workspace's HEAD; the workspace starts on a branch of that name too.
	Branch string
	// Base is the commit it was made from.
	Base    string
	Created time.Time
	Owner   Owner
	// MainChanges is how many uncommitted changes the main checkout had
	// when the workspace was made (not carried into it); -1 when unknown.
	MainChanges int

	m *Manager
	// op serialises git operations on the workspace.
	op sync.Mutex
	// Guarded by op: what boris last set Branch to in the repository.
	exported string
	// Guarded by m.mu.
	live bool
	size int64 // bytes on disk, last measured (-1: not yet)
}

// record is a workspace's record beside its directory: what boris must
// know of it after a restart.
type record struct {
	Name     string    `json:"name"`
	Branch   string    `json:"branch"`
	Base     string    `json:"base"`
	Created  time.Time `json:"created"`
	Owner    Owner     `json:"owner"`
	State    string    `json:"state"`
	Exported string    `json:"exported,omitempty"`
	// MainChanges is Workspace.MainChanges.
	MainChanges int `json:"main_changes"`
}

// Open finds the repository of opts.Workdir and the workspaces boris left
// in it (a crash included): those being made when boris stopped are
// removed (nothing ran in them), those without work are removed, and those
// with work are kept, their branches brought up to date, and returned. It
// fails when the workdir is not in a git work tree with a commit, or git
// cannot be run.
func Open(ctx context.Context, opts Options) (*Manager, []Info, error) {
	if opts.MaxCount <= 0 {
		opts.MaxCount = DefaultMaxCount
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	git := opts.Git
	if git == "" {
		git = "git"
	}
	path, err := exec.LookPath(git)
	if err != nil {
		return nil, nil, fmt.Errorf("git is needed for workspaces and cannot be run (%v): install git, or start boris with --isolation off", err)
	}
	m := &Manager{opts: opts, git: path, env: gitEnviron(opts.Env), log: opts.Logger, all: map[string]*Workspace{}}
	if err := m.findRepo(ctx); err != nil {
		return nil, nil, err
	}
	m.dir = filepath.Join(m.repo.GitDir, "boris", "worktrees")
	if _, err := os.Stat(m.dir); errors.Is(err, fs.ErrNotExist) {
		return m, nil, nil // none made yet: made with the first
	}
	kept, err := m.recover(ctx)
	if err != nil {
		return nil, nil, err
	}
	return m, kept, nil
}

// FindRepo finds the repository of opts.Workdir (and checks that git can
// run and HEAD is a commit) without touching anything in it.
func FindRepo(ctx context.Context, opts Options) (Repo, error) {
	git := opts.Git
	if git == "" {
		git = "git"
	}
	path, err := exec.LookPath(git)
	if err != nil {
		return Repo{}, fmt.Errorf("git is needed for workspaces and cannot be run (%v): install git, or start boris with --isolation off", err)
	}
	m := &Manager{opts: opts, git: path, env: gitEnviron(opts.Env)}
	if err := m.findRepo(ctx); err != nil {
		return Repo{}, err
	}
	return m.repo, nil
}

// findRepo asks git where the workdir's repository is.
func (m *Manager) findRepo(ctx context.Context) error {
	wd := m.opts.Workdir
	out, err := m.run(ctx, gitCmd{dir: wd, args: []string{"rev-parse", "--is-bare-repository", "--is-inside-work-tree"}})
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "not a git repository") {
			return fmt.Errorf("%s is not in a git repository, and each session's workspace is a git working tree of its own: run boris in a git work tree (git init && git add -A && git commit -m start makes one), or start it with --isolation off", wd)
		}
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "dubious ownership") {
			return fmt.Errorf("git refuses the repository of %s: it belongs to another user than boris's (dubious ownership). Trust it in git's configuration (git config --global --add safe.directory DIR, or in boris's environment GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0=DIR), or start boris with --isolation off", wd)
		}
		return fmt.Errorf("find the git repository of %s: %w", wd, err)
	}
	if l := lines(out); len(l) != 2 || l[0] == "true" || l[1] != "true" {
		return fmt.Errorf("%s is not inside a git work tree (a bare repository or a .git directory has no files to work on): give --workdir a directory of a checkout, or start boris with --isolation off", wd)
	}
	out, err = m.run(ctx, gitCmd{dir: wd, args: []string{"rev-parse", "--show-toplevel", "--path-format=absolute", "--git-common-dir"}})
	if err != nil {
		return fmt.Errorf("find the git repository of %s: %w", wd, err)
	}
	l := lines(out)
	if len(l) != 2 {
		return fmt.Errorf("find the git repository of %s: git rev-parse said %q", wd, out)
	}
	top, err := filepath.EvalSymlinks(l[0])
	if err != nil {
		return fmt.Errorf("the top of the work tree of %s: %w", wd, err)
	}
	gitDir, err := filepath.EvalSymlinks(l[1])
	if err != nil {
		return fmt.Errorf("the git directory of %s: %w", wd, err)
	}
	rel, err := filepath.Rel(top, wd)
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("%s is not below the top of its work tree %s", wd, top)
	}
	if rel == "." {
		rel = ""
	}
	if top == "/" {
		return fmt.Errorf("the git work tree of %s is the whole file system (/): workspaces need a repository in a directory of its own; start boris with --isolation off", wd)
	}
	m.repo = Repo{Toplevel: top, GitDir: gitDir, Rel: rel}
	if _, err := m.head(ctx); err != nil {
		return err
	}
	return nil
}

// head is the commit at the main checkout's HEAD.
func (m *Manager) head(ctx context.Context) (string, error) {
	out, err := m.run(ctx, gitCmd{dir: m.repo.Toplevel, args: []string{"rev-parse", "--verify", "-q", "HEAD^{commit}"}})
	if err != nil || len(lines(out)) != 1 {
		return "", fmt.Errorf("the repository at %s has no commit at HEAD yet, and workspaces start from HEAD: make a first commit (git add -A && git commit -m start), or start boris with --isolation off", m.repo.Toplevel)
	}
	return lines(out)[0], nil
}

// Repo is the repository the workspaces are made from.
func (m *Manager) Repo() Repo { return m.repo }

// RepoTop is the main checkout's top directory: the repository the
// workspace's branch is in.
func (ws *Workspace) RepoTop() string { return ws.m.repo.Toplevel }

// Dir is the directory that holds the workspaces.
func (m *Manager) Dir() string { return m.dir }

// MaxCount is the bound on workspaces.
func (m *Manager) MaxCount() int { return m.opts.MaxCount }

// Create makes a workspace for owner: a clone of the repository at its
// HEAD, checked out on the branch boris/NAME, where NAME is want made safe
// for a branch name and unique. It fails with WORKSPACE_LIMIT past the
// bounds. The workspace is live until Release.
func (m *Manager) Create(ctx context.Context, owner Owner, want string) (*Workspace, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, codes.Errorf(codes.SessionClosed, "boris is shutting down; no workspace can be made")
	}
	if err := m.boundsLocked(); err != nil {
		m.mu.Unlock()
		return nil, err
	}
	if err := os.MkdirAll(m.dir, 0o700); err != nil {
		m.mu.Unlock()
		return nil, codes.Errorf(codes.WorkspaceFailed, "make the workspaces directory %s: %v", m.dir, err)
	}
	name := m.uniqueLocked(ctx, Sanitize(want))
	ws := &Workspace{
		Name: name, Dir: filepath.Join(m.dir, name), Branch: BranchPrefix + name,
		Created: time.Now().UTC().Truncate(time.Second), Owner: owner, MainChanges: -1,
		m: m, live: true, size: -1,
	}
	ws.Root = filepath.Join(ws.Dir, m.repo.Rel)
	m.all[name] = ws
	m.mu.Unlock()

	// Made to the end even when the caller stops waiting (its call was
	// cancelled): a session's next call then finds it ready.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), createTimeout)
	defer cancel()
	if err := ws.create(ctx); err != nil {
		m.discard(ws)
		return nil, err
	}
	go m.measure(ws)
	m.log.Info("workspace made", "workspace", name, "dir", ws.Dir, "branch", ws.Branch, "base", short(ws.Base), "session", owner.Session)
	return ws, nil
}

// create clones and checks out a new workspace, recording each step so
// that a crash in between is recognised at the next start.
func (ws *Workspace) create(ctx context.Context) error {
	m := ws.m
	base, err := m.head(ctx)
	if err != nil {
		return codes.Errorf(codes.WorkspaceFailed, "%v", err)
	}
	ws.Base = base
	if err := ws.save(stateCreating); err != nil {
		return codes.Errorf(codes.WorkspaceFailed, "record workspace %s: %v", ws.Name, err)
	}
	// The main checkout's uncommitted changes, counted beside the clone.
	counted := make(chan int, 1)
	go func() { counted <- m.mainChanges(ctx) }()
	defer func() { ws.MainChanges = <-counted }()

	if _, err := m.run(ctx, gitCmd{dir: m.dir, args: []string{"clone", "--quiet", "--shared", "--no-checkout", "--single-branch", "--", m.repo.Toplevel, ws.Dir}}); err != nil {
		return codes.Errorf(codes.WorkspaceFailed, "make workspace %s: %v", ws.Name, err)
	}
	// The clone is fresh (nothing of the agent's is in it yet): its
	// checkout runs as git would for a person.
	if _, err := m.run(ctx, gitCmd{dir: ws.Dir, args: []string{"-c", "advice.detachedHead=false", "checkout", "--quiet", "-f", "-B", ws.Branch, base}}); err != nil {
		return codes.Errorf(codes.WorkspaceFailed, "check out workspace %s at %s: %v", ws.Name, short(base), err)
	}
	// The branch in the repository: where the work comes back, and what
	// keeps the commits the workspace borrows reachable (a gc of the
	// repository never prunes them).
	if _, err := m.run(ctx, gitCmd{dir: m.repo.Toplevel, args: []string{"update-ref", "-m", "boris: workspace " + ws.Name, "refs/heads/" + ws.Branch, base, ""}}); err != nil {
		return codes.Errorf(codes.WorkspaceFailed, "make the branch %s for workspace %s: %v", ws.Branch, ws.Name, err)
	}
	ws.exported = base
	if err := ws.save(stateReady); err != nil {
		return codes.Errorf(codes.WorkspaceFailed, "record workspace %s: %v", ws.Name, err)
	}
	return nil
}

// mainChanges counts the main checkout's uncommitted changes (untracked
// files included), -1 when they cannot be read. It takes no lock and
// writes nothing in the main checkout.
func (m *Manager) mainChanges(ctx context.Context) int {
	out, err := m.run(ctx, gitCmd{dir: m.repo.Toplevel, args: []string{"--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=normal"}})
	if err != nil {
		return -1
	}
	return len(parseStatus(out))
}

// discard forgets a workspace whose making failed, and removes what of it
// was made.
func (m *Manager) discard(ws *Workspace) {
	_ = removeAll(ws.Dir)
	if ws.Base != "" {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = m.run(ctx, gitCmd{dir: m.repo.Toplevel, args: []string{"update-ref", "-d", "refs/heads/" + ws.Branch, ws.Base}})
	}
	_ = os.Remove(ws.recordPath())
	m.mu.Lock()
	delete(m.all, ws.Name)
	m.mu.Unlock()
}

// boundsLocked refuses a new workspace past the count or disk bound.
func (m *Manager) boundsLocked() error {
	if len(m.all) >= m.opts.MaxCount {
		live, kept := 0, []string{}
		for _, w := range m.all {
			if w.live {
				live++
			} else {
				kept = append(kept, w.Name)
			}
		}
		sort.Strings(kept)
		fix := "end sessions you no longer need"
		if len(kept) > 0 {
			fix = fmt.Sprintf("remove kept workspaces whose work is merged or no longer wanted (workspace action \"remove\"; kept: %s)", joinMax(kept, 8))
		}
		return codes.Errorf(codes.WorkspaceLimit, "%d workspaces exist (%d in use by sessions, %d kept with work), the most this server keeps (--max-worktrees %d): %s, or start boris with a higher --max-worktrees", len(m.all), live, len(kept), m.opts.MaxCount, fix)
	}
	var total, largest int64
	for _, w := range m.all {
		if w.size > 0 {
			total += w.size
			largest = max(largest, w.size)
		}
	}
	if m.opts.MaxBytes > 0 && total+largest > m.opts.MaxBytes {
		return codes.Errorf(codes.WorkspaceLimit, "the workspaces take %s on disk, and another would take about %s more, past --worktree-max-bytes %s: remove kept workspaces you no longer need (workspace action \"remove\"), or raise --worktree-max-bytes", humanBytes(total), humanBytes(largest), humanBytes(m.opts.MaxBytes))
	}
	if free, err := freeBytes(m.dir); err == nil && largest > 0 && free < largest {
		return codes.Errorf(codes.WorkspaceLimit, "the file system of %s has %s free, and a workspace takes about %s: free some space, or remove kept workspaces (workspace action \"remove\")", m.dir, humanBytes(free), humanBytes(largest))
	}
	return nil
}

// uniqueLocked returns name, or name-2, name-3, … : the first that no
// workspace, record or branch of the repository uses.
func (m *Manager) uniqueLocked(ctx context.Context, name string) string {
	for i := 1; ; i++ {
		cand := name
		if i > 1 {
			suffix := "-" + strconv.Itoa(i)
			cand = strings.TrimRight(name[:min(len(name), maxNameLen-len(suffix))], ".-") + suffix
		}
		if _, ok := m.all[cand]; ok {
			continue
		}
		if _, err := os.Lstat(filepath.Join(m.dir, cand)); err == nil {
			continue
		}
		if _, err := os.Lstat(filepath.Join(m.dir, cand+".json")); err == nil {
			continue
		}
		if _, err := m.run(ctx, gitCmd{dir: m.repo.Toplevel, args: []string{"rev-parse", "--verify", "-q", "refs/heads/" + BranchPrefix + cand}}); err == nil {
			continue
		}
		return cand
	}
}

// Sanitize makes a name safe for a directory and a git branch: letters,
// digits, '.', '_' and '-' kept, anything else a '-', no "..", no leading
// '.' or '-', no ".lock" ending, at most 48 characters; "workspace" when
// nothing is left.
func Sanitize(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		ok := r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
		if !ok {
			r = '-'
		}
		if r == '-' {
			if dash {
				continue
			}
			dash = true
		} else {
			dash = false
		}
		b.WriteRune(r)
	}
	out := b.String()
	for strings.Contains(out, "..") {
		out = strings.ReplaceAll(out, "..", ".")
	}
	if len(out) > maxNameLen {
		out = out[:maxNameLen]
	}
	for {
		before := out
		out = strings.TrimLeft(out, ".-")
		out = strings.TrimRight(out, ".-")
		out = strings.TrimSuffix(out, ".lock")
		if out == before {
			break
		}
	}
	if out == "" {
		return "workspace"
	}
	return out
}

// recordPath is where the workspace's record is kept.
func (ws *Workspace) recordPath() string { return filepath.Join(ws.m.dir, ws.Name+".json") }

// save writes the workspace's record (atomically: a crash leaves the old
// record or the new one).
func (ws *Workspace) save(state string) error {
	r := record{Name: ws.Name, Branch: ws.Branch, Base: ws.Base, Created: ws.Created, Owner: ws.Owner, State: state, Exported: ws.exported, MainChanges: ws.MainChanges}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp := ws.recordPath() + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, ws.recordPath())
}

// recover finds the workspaces of an earlier run.
func (m *Manager) recover(ctx context.Context) ([]Info, error) {
	entries, err := os.ReadDir(m.dir)
	if err != nil {
		return nil, fmt.Errorf("list the workspaces in %s: %w", m.dir, err)
	}
	var kept []Info
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(m.dir, e.Name()))
		var r record
		if err == nil {
			err = json.Unmarshal(b, &r)
		}
		if err != nil || r.Name != name || Sanitize(name) != name {
			m.log.Warn("workspaces: an unreadable workspace record was left alone", "record", filepath.Join(m.dir, e.Name()), "err", err)
			continue
		}
		ws := &Workspace{
			Name: name, Dir: filepath.Join(m.dir, name), Branch: r.Branch, Base: r.Base, Created: r.Created,
			Owner: r.Owner, MainChanges: r.MainChanges, m: m, exported: r.Exported, size: -1,
		}
		ws.Root = filepath.Join(ws.Dir, m.repo.Rel)
		if _, err := os.Lstat(ws.Dir); err != nil {
			m.log.Warn("workspaces: a workspace's directory is gone (removed by hand?); its record is dropped, its branch left as it is", "workspace", name, "dir", ws.Dir, "branch", r.Branch)
			_ = os.Remove(ws.recordPath())
			continue
		}
		if r.State != stateReady {
			// Boris stopped while making it: no call ran in it.
			m.discard(ws)
			m.log.Info("workspaces: removed a workspace boris was making when it stopped (nothing had run in it)", "workspace", name)
			continue
		}
		m.mu.Lock()
		m.all[name] = ws
		m.mu.Unlock()
		info, err := ws.Inspect(ctx)
		if err != nil {
			// Never removed unseen: kept, and said.
			m.log.Warn("workspaces: kept a workspace from an earlier run that could not be inspected", "workspace", name, "dir", ws.Dir, "err", err)
			info.Err = err.Error()
			kept = append(kept, info)
			continue
		}
		if !info.HasWork() {
			if err := ws.remove(ctx, info); err != nil {
				m.log.Warn("workspaces: could not remove an empty workspace of an earlier run", "workspace", name, "err", err)
			} else {
				m.log.Info("workspaces: removed an empty workspace of an earlier run", "workspace", name)
			}
			continue
		}
		if err := ws.exportLocked(ctx, &info); err != nil {
			info.ExportNote = err.Error()
		}
		go m.measure(ws)
		kept = append(kept, info)
	}
	return kept, nil
}

// joinMax joins at most n items, saying how many more there are.
func joinMax(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(", … (%d more)", len(items)-n)
}

// short is a commit's abbreviation.
func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// humanBytes renders a size for people.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// walkDirs calls fn on every directory of a tree, symlinks not followed.
func walkDirs(root string, fn func(string)) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			fn(p)
		}
		return nil
	})
}

// names returns the names of the workspaces, sorted.
func (m *Manager) names() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for n := range m.all {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
