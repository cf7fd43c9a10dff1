package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boris-mcp/boris/internal/codes"
)

// Bounds of what an inspection lists.
const (
	maxListedChanges = 200
	maxListedCommits = 20
)

// Info is what a workspace holds, as inspected.
type Info struct {
	Name, Dir, Root, Branch, Base string
	Created                       time.Time
	Owner                         Owner
	// Live is set while a session works in it.
	Live bool
	// Head is the commit checked out in the workspace, HeadBranch its
	// branch there ("" when detached).
	Head, HeadBranch string
	// Changes are the uncommitted changes (at most 200; ChangeCount is
	// how many there are).
	Changes     []Change
	ChangeCount int
	// Commits are the commits from Base to Head, newest first (at most
	// 20; CommitCount is how many there are).
	Commits     []Commit
	CommitCount int
	// Unmerged is set when the workspace has commits (on its HEAD, its
	// other branches) that are neither in Base nor in the repository's
	// HEAD: work a removal would leave only in the branch.
	Unmerged bool
	// Stashes counts the entries of the workspace's git stash.
	Stashes int
	// Exported is the commit Branch points at in the repository;
	// ExportNote says why it is not Head, when it is not.
	Exported, ExportNote string
	// Size is the disk it takes, in bytes (-1: not measured yet).
	Size int64
	// MainChanges is Workspace.MainChanges.
	MainChanges int
	// Err says why it could not be inspected.
	Err string
}

// HasWork reports whether the workspace holds anything that removing it
// would lose: uncommitted changes, stashed ones, or commits not in the
// repository's HEAD. One that could not be inspected counts as holding
// work.
func (i *Info) HasWork() bool {
	return i.ChangeCount > 0 || i.Stashes > 0 || i.Unmerged || i.Err != ""
}

// Change is one uncommitted change: git status's two-letter code (" M",
// "A ", "??", …) and the path, relative to the workspace's top.
type Change struct {
	Code, Path string
}

// Commit is one commit of the workspace.
type Commit struct {
	ID, Subject string
}

// info is what is known of a workspace without asking git.
func (ws *Workspace) info() Info {
	ws.m.mu.Lock()
	live, size := ws.live, ws.size
	ws.m.mu.Unlock()
	return Info{Name: ws.Name, Dir: ws.Dir, Root: ws.Root, Branch: ws.Branch, Base: ws.Base, Created: ws.Created,
		Owner: ws.Owner, Live: live, Size: size, MainChanges: ws.MainChanges, Exported: ws.exported}
}

// Inspect reads what the workspace holds.
func (ws *Workspace) Inspect(ctx context.Context) (Info, error) {
	ws.op.Lock()
	defer ws.op.Unlock()
	return ws.inspectLocked(ctx)
}

func (ws *Workspace) inspectLocked(ctx context.Context) (Info, error) {
	m := ws.m
	info := ws.info()
	st, err := ws.confine()
	if err != nil {
		return info, err
	}
	defer st.done()
	in := func(args ...string) ([]byte, error) {
		return m.run(ctx, gitCmd{dir: ws.Dir, args: args, confined: ws, starter: st})
	}
	out, err := in("rev-parse", "--verify", "-q", "HEAD")
	if err != nil || len(lines(out)) != 1 {
		return info, fmt.Errorf("read the HEAD of workspace %s: %v", ws.Name, err)
	}
	info.Head = lines(out)[0]
	if out, err := in("symbolic-ref", "-q", "--short", "HEAD"); err == nil && len(lines(out)) == 1 {
		info.HeadBranch = lines(out)[0]
	}
	out, err = in("status", "--porcelain=v1", "-z", "--untracked-files=normal", "--ignore-submodules=dirty")
	if err != nil {
		return info, fmt.Errorf("read the status of workspace %s: %v", ws.Name, err)
	}
	all := parseStatus(out)
	info.ChangeCount = len(all)
	info.Changes = all[:min(len(all), maxListedChanges)]
	if out, err := in("rev-list", "--count", ws.Base+"..HEAD"); err == nil && len(lines(out)) == 1 {
		info.CommitCount, _ = strconv.Atoi(lines(out)[0])
	}
	if info.CommitCount > 0 {
		out, err := in("log", "--no-decorate", "-n", strconv.Itoa(maxListedCommits), "--format=%H%x00%s", ws.Base+"..HEAD")
		if err == nil {
			for _, l := range lines(out) {
				id, subj, _ := strings.Cut(l, "\x00")
				info.Commits = append(info.Commits, Commit{ID: id, Subject: subj})
			}
		}
	}
	// Work on HEAD or any local branch that is neither in the base nor in
	// the repository's HEAD (merged already), nor in the branches the
	// clone was made with.
	args := []string{"rev-list", "-n", "1", "HEAD", "--branches", "--not", ws.Base, "--remotes"}
	if mh, err := m.head(ctx); err == nil {
		args = append(args, mh)
	}
	out, err = in(args...)
	if err != nil {
		return info, fmt.Errorf("read the commits of workspace %s: %v", ws.Name, err)
	}
	info.Unmerged = len(lines(out)) > 0
	if out, err := in("rev-list", "--walk-reflogs", "--count", "refs/stash"); err == nil && len(lines(out)) == 1 {
		info.Stashes, _ = strconv.Atoi(lines(out)[0])
	}
	return info, nil
}

// parseStatus reads git status --porcelain=v1 -z.
func parseStatus(out []byte) []Change {
	var cs []Change
	fields := bytes.Split(out, []byte{0})
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) < 4 {
			continue
		}
		c := Change{Code: string(f[:2]), Path: string(f[3:])}
		if f[0] == 'R' || f[0] == 'C' {
			i++ // the source of a rename or copy
		}
		cs = append(cs, c)
	}
	return cs
}

// starter is a confinement held for a sequence of git commands.
type starter struct {
	s Starter
}

func (s *starter) done() {
	if s != nil && s.s.Done != nil {
		s.s.Done()
	}
}

// confine gets the workspace's confinement for the git commands of one
// operation.
func (ws *Workspace) confine() (*starter, error) {
	if ws.m.opts.Confine == nil {
		return &starter{}, nil
	}
	s, err := ws.m.opts.Confine(ws)
	if err != nil {
		return nil, fmt.Errorf("confine git in workspace %s: %w", ws.Name, err)
	}
	return &starter{s: s}, nil
}

// Export moves the workspace's branch in the repository to its HEAD,
// copying the commits it needs into the repository; info, when given, is
// updated. It never moves a branch someone else moved since (it says so
// instead), nor one checked out in the main checkout or another worktree
// of the repository.
func (ws *Workspace) Export(ctx context.Context) (Info, error) {
	ws.op.Lock()
	defer ws.op.Unlock()
	info, err := ws.inspectLocked(ctx)
	if err != nil {
		return info, err
	}
	if err := ws.exportLocked(ctx, &info); err != nil {
		info.ExportNote = err.Error()
	}
	return info, nil
}

// exportLocked is Export with the operation lock held and the workspace
// inspected.
func (ws *Workspace) exportLocked(ctx context.Context, info *Info) error {
	m := ws.m
	head := info.Head
	ref := "refs/heads/" + ws.Branch
	main := func(args ...string) ([]byte, error) {
		return m.run(ctx, gitCmd{dir: m.repo.Toplevel, args: args})
	}
	cur := ""
	if out, err := main("rev-parse", "--verify", "-q", ref); err == nil && len(lines(out)) == 1 {
		cur = lines(out)[0]
	}
	info.Exported = cur
	if cur == head {
		ws.exported = head
		return nil
	}
	if cur != ws.exported {
		if cur == "" {
			return fmt.Errorf("the branch %s was deleted from the repository; boris does not make it again (the work is in %s)", ws.Branch, ws.Dir)
		}
		return fmt.Errorf("the branch %s in the repository was moved by someone else (to %s); boris leaves it there: the workspace's HEAD is %s in %s", ws.Branch, short(cur), short(head), ws.Dir)
	}
	if out, err := main("worktree", "list", "--porcelain"); err == nil {
		for _, l := range lines(out) {
			if l == "branch "+ref {
				return fmt.Errorf("the branch %s is checked out in a worktree of the repository, and boris never changes a checkout: it stays at %s (the workspace's HEAD is %s)", ws.Branch, short(cur), short(head))
			}
		}
	}
	if _, err := main("cat-file", "-e", head+"^{commit}"); err != nil {
		if err := ws.copyCommits(ctx, head); err != nil {
			return err
		}
	}
	if _, err := main("update-ref", "-m", "boris: workspace "+ws.Name, ref, head, cur); err != nil {
		return fmt.Errorf("move %s to %s: %v", ws.Branch, short(head), err)
	}
	ws.exported, info.Exported = head, head
	if err := ws.save(stateReady); err != nil {
		m.log.Warn("workspaces: could not record an export", "workspace", ws.Name, "err", err)
	}
	return nil
}

// copyCommits copies into the repository the objects of head that it
// lacks: packed inside the workspace's confinement (its git reads what
// the agent controls), indexed and checked (--strict) by the repository's
// git.
func (ws *Workspace) copyCommits(ctx context.Context, head string) error {
	m := ws.m
	st, err := ws.confine()
	if err != nil {
		return err
	}
	defer st.done()
	pr, pw := io.Pipe()
	packed := make(chan error, 1)
	go func() {
		_, err := m.run(ctx, gitCmd{dir: ws.Dir, args: []string{"pack-objects", "--revs", "--stdout", "--quiet"},
			stdin: strings.NewReader(head + "\n^" + ws.Base + "\n"), stdout: pw, confined: ws, starter: st})
		pw.CloseWithError(err)
		packed <- err
	}()
	_, ierr := m.run(ctx, gitCmd{dir: m.repo.Toplevel, args: []string{"index-pack", "--strict", "--stdin"}, stdin: pr})
	pr.CloseWithError(errors.New("index-pack ended"))
	perr := <-packed
	if perr != nil {
		return fmt.Errorf("pack the commits of workspace %s: %v", ws.Name, perr)
	}
	if ierr != nil {
		return fmt.Errorf("copy the commits of workspace %s into the repository: %v", ws.Name, ierr)
	}
	return nil
}

// CommitResult is what Commit did.
type CommitResult struct {
	// ID is the new commit, Files how many files it changed.
	ID    string
	Files int
	Info  Info
}

// Commit commits every change of the workspace (untracked files included,
// ignored ones not) on the branch checked out in it, with message, and
// brings the repository's branch up to date. The workspace's own hooks
// are not run. An author identity missing from git's configuration is
// filled in (boris, with the session's name).
func (ws *Workspace) Commit(ctx context.Context, message string) (*CommitResult, error) {
	if strings.TrimSpace(message) == "" {
		return nil, codes.Errorf(codes.InvalidInput, "commit needs message: what the work does, as a commit message")
	}
	ws.op.Lock()
	defer ws.op.Unlock()
	m := ws.m
	st, err := ws.confine()
	if err != nil {
		return nil, err
	}
	in := func(args ...string) ([]byte, error) {
		return m.run(ctx, gitCmd{dir: ws.Dir, args: args, confined: ws, starter: st})
	}
	if _, err := in("add", "-A"); err != nil {
		st.done()
		return nil, codes.Errorf(codes.WorkspaceFailed, "stage the changes of workspace %s: %v", ws.Name, err)
	}
	out, err := in("diff", "--cached", "--name-only", "-z")
	if err != nil {
		st.done()
		return nil, codes.Errorf(codes.WorkspaceFailed, "read the staged changes of workspace %s: %v", ws.Name, err)
	}
	files := 0
	for _, f := range bytes.Split(out, []byte{0}) {
		if len(f) > 0 {
			files++
		}
	}
	if files == 0 {
		st.done()
		return nil, codes.Errorf(codes.InvalidInput, "nothing to commit in workspace %s: no file differs from its HEAD (action \"status\" shows its commits)", ws.Name)
	}
	args := []string{"commit", "--quiet", "--no-verify", "-m", message}
	if _, err := in("var", "GIT_AUTHOR_IDENT"); err != nil {
		who := "boris"
		if ws.Owner.Session != "" {
			who += " (" + ws.Owner.Session + ")"
		}
		args = append([]string{"-c", "user.name=" + who, "-c", "user.email=boris@localhost"}, args...)
	}
	if _, err := in(args...); err != nil {
		st.done()
		return nil, codes.Errorf(codes.WorkspaceFailed, "commit in workspace %s: %v", ws.Name, err)
	}
	st.done()
	info, err := ws.inspectLocked(ctx)
	if err != nil {
		return nil, codes.Errorf(codes.WorkspaceFailed, "%v", err)
	}
	if err := ws.exportLocked(ctx, &info); err != nil {
		info.ExportNote = err.Error()
	}
	go m.measure(ws)
	return &CommitResult{ID: info.Head, Files: files, Info: info}, nil
}

// DiffResult is the workspace's changes against its base.
type DiffResult struct {
	Base string
	// Files are the changed paths with git's status letter (A, M, D, T).
	Files []Change
	// Patch is the unified diff, cut at the bound given to Diff
	// (Truncated, and Total the size it had).
	Patch     string
	Truncated bool
	Total     int
}

// Diff compares the workspace as it is now — its commits, staged and
// unstaged changes and untracked files (not ignored ones) — with the
// commit it started from; paths (relative to the workspace's top)
// narrow it. The workspace's index is left as it is: the comparison
// stages everything in a copy of it.
func (ws *Workspace) Diff(ctx context.Context, paths []string, maxChars int) (*DiffResult, error) {
	ws.op.Lock()
	defer ws.op.Unlock()
	m := ws.m
	st, err := ws.confine()
	if err != nil {
		return nil, err
	}
	defer st.done()
	tmp := ".git/boris-diff.index"
	if err := ws.copyIndex(tmp); err != nil {
		return nil, codes.Errorf(codes.WorkspaceFailed, "copy the index of workspace %s: %v", ws.Name, err)
	}
	defer ws.removeInside(tmp)
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(ws.Dir, tmp)}
	in := func(stdout io.Writer, args ...string) ([]byte, error) {
		return m.run(ctx, gitCmd{dir: ws.Dir, args: args, env: env, confined: ws, starter: st, stdout: stdout})
	}
	if _, err := in(nil, "add", "-A"); err != nil {
		return nil, codes.Errorf(codes.WorkspaceFailed, "read the changes of workspace %s: %v", ws.Name, err)
	}
	spec := append([]string{"--"}, paths...)
	out, err := in(nil, append([]string{"diff", "--cached", "--no-ext-diff", "--no-textconv", "--no-renames", "--name-status", "-z", ws.Base}, spec...)...)
	if err != nil {
		return nil, codes.Errorf(codes.WorkspaceFailed, "compare workspace %s with %s: %v", ws.Name, short(ws.Base), err)
	}
	res := &DiffResult{Base: ws.Base}
	f := bytes.Split(out, []byte{0})
	for i := 0; i+1 < len(f); i += 2 {
		res.Files = append(res.Files, Change{Code: string(f[i]), Path: string(f[i+1])})
	}
	capw := &capWriter{max: maxChars}
	if _, err := in(capw, append([]string{"diff", "--cached", "--no-ext-diff", "--no-textconv", "--no-renames", "--no-color", ws.Base}, spec...)...); err != nil {
		return nil, codes.Errorf(codes.WorkspaceFailed, "diff workspace %s against %s: %v", ws.Name, short(ws.Base), err)
	}
	res.Patch, res.Truncated, res.Total = capw.String(), capw.total > maxChars, capw.total
	return res, nil
}

// copyIndex copies the workspace's index to rel (inside its top), opening
// both through an os.Root on the workspace: a symlink the agent put in
// their place cannot lead boris elsewhere. No index (nothing staged ever)
// leaves nothing to copy: git then starts from an empty index and reads
// HEAD's tree itself.
func (ws *Workspace) copyIndex(rel string) error {
	r, err := os.OpenRoot(ws.Dir)
	if err != nil {
		return err
	}
	defer r.Close()
	_ = r.Remove(rel)
	src, err := r.Open(".git/index")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer src.Close()
	if fi, err := src.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf(".git/index is not a regular file")
	}
	dst, err := r.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// removeInside removes a file inside the workspace, through an os.Root.
func (ws *Workspace) removeInside(rel string) {
	if r, err := os.OpenRoot(ws.Dir); err == nil {
		_ = r.Remove(rel)
		r.Close()
	}
}

// capWriter keeps the first max bytes written and counts the rest.
type capWriter struct {
	max   int
	buf   []byte
	total int
}

func (c *capWriter) Write(p []byte) (int, error) {
	c.total += len(p)
	if room := c.max - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// String is what was kept, cut back to the last whole line.
func (c *capWriter) String() string {
	b := c.buf
	if c.total > len(b) {
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			b = b[:i+1]
		}
	}
	return string(b)
}

// Release ends a session's use of the workspace: with no work in it, it is
// removed (and its branch, which then holds nothing of it); with work it
// is kept, its branch brought up to date. removed says which.
func (m *Manager) Release(ctx context.Context, ws *Workspace) (info Info, removed bool, err error) {
	ws.op.Lock()
	defer ws.op.Unlock()
	m.mu.Lock()
	ws.live = false
	m.mu.Unlock()
	info, err = ws.inspectLocked(ctx)
	if err != nil {
		info.Err = err.Error()
		m.log.Warn("workspaces: kept a workspace that could not be inspected at its session's end", "workspace", ws.Name, "err", err)
		return info, false, nil
	}
	if !info.HasWork() {
		if err := ws.remove(ctx, info); err != nil {
			return info, false, err
		}
		m.log.Info("workspace removed at its session's end: it held no work", "workspace", ws.Name)
		return info, true, nil
	}
	if err := ws.exportLocked(ctx, &info); err != nil {
		info.ExportNote = err.Error()
	}
	go m.measure(ws)
	m.log.Info("workspace kept at its session's end: it holds work", "workspace", ws.Name, "dir", ws.Dir, "branch", ws.Branch,
		"uncommitted", info.ChangeCount, "commits", info.CommitCount, "stashes", info.Stashes, "exported", short(info.Exported))
	return info, false, nil
}

// remove deletes a workspace's directory and record, and its branch when
// that holds nothing the repository's HEAD lacks (its base, or work merged
// since). The caller holds ws.op.
func (ws *Workspace) remove(ctx context.Context, info Info) error {
	m := ws.m
	if err := removeAll(ws.Dir); err != nil {
		return codes.Errorf(codes.WorkspaceFailed, "remove workspace %s (%s): %v", ws.Name, ws.Dir, err)
	}
	_ = os.Remove(ws.recordPath())
	m.mu.Lock()
	delete(m.all, ws.Name)
	m.mu.Unlock()
	ref := "refs/heads/" + ws.Branch
	out, err := m.run(ctx, gitCmd{dir: m.repo.Toplevel, args: []string{"rev-parse", "--verify", "-q", ref}})
	if err != nil || len(lines(out)) != 1 {
		return nil
	}
	tip := lines(out)[0]
	if tip != ws.Base {
		if _, err := m.run(ctx, gitCmd{dir: m.repo.Toplevel, args: []string{"merge-base", "--is-ancestor", tip, "HEAD"}}); err != nil {
			return nil // it holds commits: the branch stays
		}
	}
	if wt, err := m.run(ctx, gitCmd{dir: m.repo.Toplevel, args: []string{"worktree", "list", "--porcelain"}}); err == nil && bytes.Contains(wt, []byte("branch "+ref+"\n")) {
		return nil
	}
	_, _ = m.run(ctx, gitCmd{dir: m.repo.Toplevel, args: []string{"update-ref", "-d", ref, tip}})
	return nil
}

// Removed is what Remove did.
type Removed struct {
	Info Info
	// BranchKept is set when the branch stays in the repository: it holds
	// commits the repository's HEAD lacks.
	BranchKept bool
}

// Remove deletes a kept workspace at someone's request: only one no
// session works in, made under the same credential. One with uncommitted
// or stashed changes is removed only with force (they are lost); its
// commits stay in its branch.
func (m *Manager) Remove(ctx context.Context, name, credential string, force bool) (*Removed, error) {
	ws, err := m.find(name, credential)
	if err != nil {
		return nil, err
	}
	ws.op.Lock()
	defer ws.op.Unlock()
	m.mu.Lock()
	live, gone := ws.live, m.all[name] != ws
	m.mu.Unlock()
	if gone {
		return nil, m.notFound(name)
	}
	if live {
		return nil, codes.Errorf(codes.InvalidInput, "workspace %s is in use by a session (%s); it is removed or kept when that session ends", name, ws.Owner.Session)
	}
	info, err := ws.inspectLocked(ctx)
	if err != nil && !force {
		return nil, codes.Errorf(codes.WorkspaceFailed, "%v; remove it with force: true to delete it anyway", err)
	}
	if err == nil && (info.ChangeCount > 0 || info.Stashes > 0) && !force {
		return nil, codes.Errorf(codes.InvalidInput, "workspace %s has %d uncommitted change(s) and %d stash entr(ies), which removing it would lose: commit them first (workspace action \"open\", then \"commit\"), or pass force: true to delete them", name, info.ChangeCount, info.Stashes)
	}
	if err == nil {
		if xerr := ws.exportLocked(ctx, &info); xerr != nil {
			info.ExportNote = xerr.Error()
		}
	}
	if err := ws.remove(ctx, info); err != nil {
		return nil, err
	}
	kept := false
	if out, err := m.run(ctx, gitCmd{dir: m.repo.Toplevel, args: []string{"rev-parse", "--verify", "-q", "refs/heads/" + ws.Branch}}); err == nil && len(lines(out)) == 1 {
		kept = true
	}
	m.log.Info("workspace removed on request", "workspace", name, "branch_kept", kept)
	return &Removed{Info: info, BranchKept: kept}, nil
}

// Attach hands a kept workspace to a session again: one no session works
// in, made under the same credential.
func (m *Manager) Attach(name, credential, session string) (*Workspace, error) {
	ws, err := m.find(name, credential)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.all[name] != ws {
		return nil, m.notFound(name)
	}
	if ws.live {
		return nil, codes.Errorf(codes.InvalidInput, "workspace %s is in use by another session (%s)", name, ws.Owner.Session)
	}
	ws.live = true
	ws.Owner.Session = session
	return ws, nil
}

// find returns the workspace of that name made under credential.
func (m *Manager) find(name, credential string) (*Workspace, error) {
	m.mu.Lock()
	ws := m.all[name]
	m.mu.Unlock()
	if ws == nil {
		return nil, m.notFound(name)
	}
	if ws.Owner.Credential != credential {
		return nil, codes.Errorf(codes.AccessDenied, "workspace %s belongs to another credential; only its own agent (the same bearer token) can open or remove it", name)
	}
	return ws, nil
}

func (m *Manager) notFound(name string) error {
	names := m.names()
	known := "there are none"
	if len(names) > 0 {
		known = "there are: " + joinMax(names, 20)
	}
	return codes.Errorf(codes.WorkspaceNotFound, "no workspace %q: %s (action \"list\" shows them)", name, known)
}

// List inspects every workspace, in the order they were made.
func (m *Manager) List(ctx context.Context) []Info {
	m.mu.Lock()
	all := make([]*Workspace, 0, len(m.all))
	for _, ws := range m.all {
		all = append(all, ws)
	}
	m.mu.Unlock()
	sort.Slice(all, func(i, j int) bool {
		if !all[i].Created.Equal(all[j].Created) {
			return all[i].Created.Before(all[j].Created)
		}
		return all[i].Name < all[j].Name
	})
	out := make([]Info, 0, len(all))
	for _, ws := range all {
		info, err := ws.Inspect(ctx)
		if err != nil {
			info.Err = err.Error()
		}
		out = append(out, info)
	}
	return out
}

// Confinement is what a workspace's commands may reach: its directory,
// and nothing of the main checkout's files (its git directory excepted,
// whose objects the workspace borrows) nor of the other workspaces.
type Confinement struct {
	// Writable is the workspace's directory.
	Writable []string
	// Hidden are the paths its commands may not read: every entry of the
	// main checkout's top but its .git, and every entry of the workspaces'
	// directory but the workspace's own. Entries made later are not
	// readable either (a sandbox grants what exists when it is built).
	Hidden []string
}

// Confinement says what the workspace's commands may reach.
func (ws *Workspace) Confinement() (Confinement, error) {
	m := ws.m
	c := Confinement{Writable: []string{ws.Dir}}
	hide := func(dir string, keep func(string) bool) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !keep(e.Name()) {
				c.Hidden = append(c.Hidden, filepath.Join(dir, e.Name()))
			}
		}
		return nil
	}
	if err := hide(m.repo.Toplevel, func(n string) bool { return n == ".git" }); err != nil {
		return c, err
	}
	if err := hide(m.dir, func(n string) bool { return n == ws.Name }); err != nil {
		return c, err
	}
	return c, nil
}

// measure records the disk a workspace takes.
func (m *Manager) measure(ws *Workspace) {
	n := sizeOf(ws.Dir)
	m.mu.Lock()
	ws.size = n
	m.mu.Unlock()
}

// sizeOf is the disk a tree takes (allocated blocks), symlinks not
// followed.
func sizeOf(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		var st unix.Stat_t
		if unix.Lstat(p, &st) == nil {
			n += st.Blocks * 512
		}
		return nil
	})
	return n
}

// freeBytes is the space left for an unprivileged user on dir's file
// system.
func freeBytes(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// Holding returns the workspace whose directory holds path, nil when none
// does.
func (m *Manager) Holding(path string) *Workspace {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ws := range m.all {
		if path == ws.Dir || strings.HasPrefix(path, ws.Dir+"/") {
			return ws
		}
	}
	return nil
}

// Close makes the manager refuse new workspaces (shutdown).
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
}
