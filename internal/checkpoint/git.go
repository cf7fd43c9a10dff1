package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/boris-mcp/boris/internal/gitrepo"
	"github.com/boris-mcp/boris/internal/walk"
)

// Borrowing from git. A file of a git work tree that git's index vouches
// for (tracked, its stat data as the index recorded it, not racy) is
// recorded by the name of the blob git holds (gitHash) instead of being
// read, hashed and copied: on a clean checkout the start-up checkpoint
// costs what `git status` costs. When such a file changes or goes, the
// checkpoint that notices copies the blob into the store (adopt), where it
// keeps its name, so that a later `git gc` cannot take it away. Whatever
// is in doubt — no git directory, a repository gitrepo refuses, an
// attributes file that converts working files, an index that does not
// read, a blob the object store lacks — is read and copied as without git.

// gitRepo is a repository the scanner met, with what the work tree's own
// .gitattributes said.
type gitRepo struct {
	r *gitrepo.Repo // nil: refused (files are copied)
	// converts is set once a .gitattributes of the work tree was seen
	// to convert working files: nothing of the repository is borrowed
	// from then on.
	converts atomic.Bool
	// warned says an unreadable index was logged (once per repository).
	warned bool
}

// usable says whether the repository's blobs can stand for its files.
func (g *gitRepo) usable() bool { return g != nil && g.r != nil && !g.converts.Load() }

// gitState is what the scanner knows of the repositories of the
// workspace.
type gitState struct {
	home string
	// off disables borrowing (Options.NoGit); home is the user's home
	// directory (Options.Home).
	off bool

	mu    sync.Mutex
	repos map[string]*gitRepo // by work tree top
	// idx is each repository's index as read for the current scan.
	idx  map[*gitRepo]*gitrepo.Index
	logf func(string, ...any)
}

func newGitState(logf func(string, ...any)) *gitState {
	return &gitState{repos: map[string]*gitRepo{}, idx: map[*gitRepo]*gitrepo.Index{}, logf: logf}
}

// repoAt returns the repository whose work tree top is dir.
func (g *gitState) repoAt(dir string) *gitRepo {
	if g.off {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if r, ok := g.repos[dir]; ok {
		return r
	}
	gr := &gitRepo{}
	r, err := gitrepo.Open(dir, g.home)
	if err == nil {
		gr.r = r
	} else if !errors.Is(err, os.ErrNotExist) {
		g.logf("checkpoint: files of the git work tree %s are copied, not borrowed from git (%v)", dir, err)
	}
	g.repos[dir] = gr
	return gr
}

// repoAbove finds the repository a workspace root is in (its own .git or
// one above it) and the root's path in its work tree.
func (g *gitState) repoAbove(root string) (*gitRepo, string) {
	for d := root; ; {
		var st unix.Stat_t
		if unix.Lstat(filepath.Join(d, walk.GitDir), &st) == nil {
			rel, err := filepath.Rel(d, root)
			if err != nil {
				return nil, ""
			}
			if rel == "." {
				rel = ""
			}
			return g.repoAt(d), filepath.ToSlash(rel)
		}
		if d == "/" {
			return nil, ""
		}
		d = filepath.Dir(d)
	}
}

// newScan forgets the indexes read for the last scan: each scan reads an
// index again only if it changed (gitrepo keeps it by stat).
func (g *gitState) newScan() {
	g.mu.Lock()
	clear(g.idx)
	g.mu.Unlock()
}

// index returns a repository's index for this scan (nil when it cannot
// be read: nothing is borrowed).
func (g *gitState) index(gr *gitRepo) *gitrepo.Index {
	if !gr.usable() {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if x, ok := g.idx[gr]; ok {
		return x
	}
	x, err := gr.r.Index()
	if err != nil {
		if !gr.warned {
			gr.warned = true
			g.logf("checkpoint: the index of %s does not read (%v); its files are copied", gr.r.Top, err)
		}
		x = nil
	}
	g.idx[gr] = x
	return x
}

// open lists the repositories that opened, taken under the lock.
func (g *gitState) open() []*gitrepo.Repo {
	g.mu.Lock()
	repos := make([]*gitrepo.Repo, 0, len(g.repos))
	for _, r := range g.repos {
		if r.r != nil {
			repos = append(repos, r.r)
		}
	}
	g.mu.Unlock()
	return repos
}

// blob reads a git blob from whichever repository holds it.
func (g *gitState) blob(id gitrepo.ID) ([]byte, error) {
	repos := g.open()
	var first error
	for _, r := range repos {
		b, err := r.Blob(id)
		if err == nil {
			return b, nil
		}
		if first == nil || !errors.Is(err, gitrepo.ErrNotFound) {
			first = err
		}
	}
	if first == nil {
		first = gitrepo.ErrNotFound
	}
	return nil, first
}

// has says whether a repository holds a blob.
func (g *gitState) has(id gitrepo.ID) bool {
	repos := g.open()
	for _, r := range repos {
		if r.Has(id) {
			return true
		}
	}
	return false
}

func (g *gitState) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range g.repos {
		if r.r != nil {
			r.r.Close()
		}
	}
}

// attributesFile holds git attributes; one that converts working files
// stops borrowing from its repository.
const attributesFile = ".gitattributes"

// readAttributes judges a .gitattributes file of the work tree.
func readAttributes(dirfd int) bool {
	fd, err := openat(dirfd, attributesFile, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK)
	if err != nil {
		return false
	}
	f := os.NewFile(uintptr(fd), attributesFile)
	defer f.Close()
	b := make([]byte, 1<<20)
	n, _ := f.Read(b)
	return gitrepo.AttributesConvert(b[:n])
}
