package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/boris-mcp/boris/internal/ignore"
)

// Changes made by commands (sed -i, git checkout, a code generator) reach a
// server two ways: open documents are compared with the disk before every
// request (see client.refresh), and files the server asked to watch
// (workspace/didChangeWatchedFiles registrations) are reported from the
// kernel's own change notifications on the workspace's directories (see
// watcher), collected since the previous request.

// Watch kinds of a FileSystemWatcher.
const (
	watchCreate = 1
	watchChange = 2
	watchDelete = 4
)

// watchPattern is one registered watcher: a glob relative to base ("" for
// a pattern matched against the whole path) and the kinds of change.
type watchPattern struct {
	base string
	glob string
	kind int
}

// compileWatchers turns registered FileSystemWatchers into patterns.
func compileWatchers(ws []fileSystemWatcher, root string) []watchPattern {
	var out []watchPattern
	for _, w := range ws {
		kind := watchCreate | watchChange | watchDelete
		if w.Kind != nil {
			kind = *w.Kind
		}
		var s string
		if json.Unmarshal(w.GlobPattern, &s) == nil {
			out = append(out, watchPattern{glob: strings.TrimPrefix(s, "/"), kind: kind})
			continue
		}
		var rel struct {
			BaseURI json.RawMessage `json:"baseUri"`
			Pattern string          `json:"pattern"`
		}
		if json.Unmarshal(w.GlobPattern, &rel) != nil {
			continue
		}
		// baseUri is a URI or a WorkspaceFolder {uri, name}.
		var base string
		var u uri
		if json.Unmarshal(rel.BaseURI, &u) == nil {
			base = u.path()
		} else {
			var wf struct {
				URI uri `json:"uri"`
			}
			if json.Unmarshal(rel.BaseURI, &wf) == nil {
				base = wf.URI.path()
			}
		}
		if base == "" {
			base = root
		}
		out = append(out, watchPattern{base: base, glob: rel.Pattern, kind: kind})
	}
	return out
}

// matches reports whether a change of type typ to path is watched.
func (p watchPattern) matches(path string, typ int) bool {
	mask := map[int]int{fileCreated: watchCreate, fileChanged: watchChange, fileDeleted: watchDelete}[typ]
	if p.kind&mask == 0 {
		return false
	}
	if p.base == "" {
		ok, _ := doublestar.Match(p.glob, strings.TrimPrefix(filepath.ToSlash(path), "/"))
		return ok
	}
	if !within(path, p.base) || path == p.base {
		return false
	}
	rel, err := filepath.Rel(p.base, path)
	if err != nil {
		return false
	}
	ok, _ := doublestar.Match(p.glob, filepath.ToSlash(rel))
	return ok
}

// watchPatterns returns every registered pattern.
func (c *client) watchPatterns() []watchPattern {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []watchPattern
	for _, ps := range c.watchReg {
		out = append(out, ps...)
	}
	return out
}

// maxWatchedEvents bounds one didChangeWatchedFiles notification after the
// kernel's queue overflowed and the whole tree is reported changed.
const maxWatchedEvents = 50000

// flushWatched sends the changes seen since the last call that the server
// watches.
func (c *client) flushWatched() error {
	c.mu.Lock()
	w := c.watch
	c.mu.Unlock()
	if w == nil {
		return nil
	}
	changes, overflow := w.drain()
	pats := c.watchPatterns()
	if len(pats) == 0 {
		return nil
	}
	if overflow {
		// The kernel dropped events: everything watched may have changed.
		changes = map[string]int{}
		for _, f := range w.files(maxWatchedEvents) {
			changes[f] = fileChanged
		}
	}
	var events []fileEvent
	for path, typ := range changes {
		for _, p := range pats {
			if p.matches(path, typ) {
				events = append(events, fileEvent{URI: fileURI(path), Type: typ})
				break
			}
		}
	}
	if len(events) == 0 {
		return nil
	}
	sort.Slice(events, func(i, j int) bool { return events[i].URI < events[j].URI })
	return c.notify("workspace/didChangeWatchedFiles", didChangeWatchedFilesParams{Changes: events})
}

// startWatching watches the server's root for changes (a no-op where the
// kernel offers no notifications, or when they cannot be had).
func (c *client) startWatching() {
	w, err := newWatcher(c.root)
	if err != nil {
		c.logger.Warn("cannot watch the workspace for changes made by commands; open files are still compared with the disk before each request", "err", err)
		return
	}
	c.mu.Lock()
	c.watch = w
	c.mu.Unlock()
}

// coalesce merges a new change of path into the pending ones.
func coalesce(pending map[string]int, path string, typ int) {
	prev, ok := pending[path]
	switch {
	case !ok:
		pending[path] = typ
	case prev == fileCreated && typ == fileDeleted:
		delete(pending, path) // came and went
	case prev == fileCreated:
		// still a new file
	case prev == fileDeleted && typ == fileCreated:
		pending[path] = fileChanged
	default:
		pending[path] = typ
	}
}

// Directories not watched: .git, node_modules and what .gitignore files
// exclude (build output, virtual environments), where a server has
// nothing to learn and a watch per directory would be wasted.

// skipDir reports whether a directory name is never watched.
func skipDir(name string) bool {
	return name == ".git" || name == "node_modules"
}

// gitignoreOf parses dir's .gitignore (nil when there is none).
func gitignoreOf(dir string) *ignore.File {
	data, err := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if err != nil {
		return nil
	}
	return ignore.Parse(data)
}

// stackFor builds the ignore stack that applies inside dir, relative to
// root: the .gitignore files of root's ancestors up to the repository's
// top, and of every directory from root down to dir.
func stackFor(root, dir string) *ignore.Stack {
	var st *ignore.Stack
	// Above the root, up to the directory holding .git.
	var above []string
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		for d := filepath.Dir(root); ; d = filepath.Dir(d) {
			above = append(above, d)
			if _, err := os.Stat(filepath.Join(d, ".git")); err == nil || filepath.Dir(d) == d {
				break
			}
		}
	}
	for i := len(above) - 1; i >= 0; i-- {
		rel, err := filepath.Rel(above[i], root)
		if err == nil {
			st = st.PushAbove(gitignoreOf(above[i]), filepath.ToSlash(rel))
		}
	}
	st = st.Push(gitignoreOf(root), "")
	if dir == root {
		return st
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return st
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i := range parts {
		r := strings.Join(parts[:i+1], "/")
		st = st.Push(gitignoreOf(filepath.Join(root, filepath.FromSlash(r))), r)
	}
	return st
}
