package lsp

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/boris-mcp/boris/internal/ignore"
)

// watcher collects changes under a root from inotify: one watch per
// directory that is not skipped, events read (without blocking) when a
// request is about to be sent. Kernel events are queued as the change
// happens, so a command that has finished before the request is always
// seen.
type watcher struct {
	fd   int
	root string

	mu       sync.Mutex
	dirs     map[int]*watchedDir
	pending  map[string]int
	overflow bool
	buf      []byte
}

type watchedDir struct {
	path, rel string
	ign       *ignore.Stack
}

const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_CLOSE_WRITE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK

// errWatchLimit is returned when the kernel's per-user watch limit
// (fs.inotify.max_user_watches) is reached.
var errWatchLimit = errors.New("the inotify watch limit (fs.inotify.max_user_watches) is reached")

func newWatcher(root string) (*watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	w := &watcher{fd: fd, root: root, dirs: map[int]*watchedDir{}, pending: map[string]int{}, buf: make([]byte, 64<<10)}
	w.mu.Lock()
	err = w.addTree(root, "", stackFor(root, root), false)
	w.mu.Unlock()
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return w, nil
}

// addTree watches dir and the directories below it; with report, the
// files found are pending as created (a directory that appeared).
func (w *watcher) addTree(dir, rel string, ign *ignore.Stack, report bool) error {
	wd, err := unix.InotifyAddWatch(w.fd, dir, watchMask)
	if err != nil {
		if errors.Is(err, unix.ENOSPC) {
			return errWatchLimit
		}
		return nil // gone, or unreadable: nothing to watch
	}
	w.dirs[wd] = &watchedDir{path: dir, rel: rel, ign: ign}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(dir, name)
		childRel := name
		if rel != "" {
			childRel = rel + "/" + name
		}
		switch {
		case e.IsDir():
			if skipDir(name) || ign.Ignored(childRel, name, true) {
				continue
			}
			if err := w.addTree(path, childRel, ign.Push(gitignoreOf(path), childRel), report); err != nil {
				return err
			}
		case report && e.Type().IsRegular():
			coalesce(w.pending, path, fileCreated)
		}
	}
	return nil
}

// drain returns the changes pending since the last drain, and whether the
// kernel's queue overflowed (then changes are unknown).
func (w *watcher) drain() (map[string]int, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for {
		n, err := unix.Read(w.fd, w.buf)
		if err == unix.EINTR {
			continue
		}
		if n <= 0 || err != nil {
			break
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			wd := int(int32(binary.NativeEndian.Uint32(w.buf[off:])))
			mask := binary.NativeEndian.Uint32(w.buf[off+4:])
			nameLen := int(binary.NativeEndian.Uint32(w.buf[off+12:]))
			end := off + unix.SizeofInotifyEvent + nameLen
			if end > n {
				break
			}
			name := strings.TrimRight(string(w.buf[off+unix.SizeofInotifyEvent:end]), "\x00")
			off = end
			w.event(wd, mask, name)
		}
	}
	out, overflow := w.pending, w.overflow
	w.pending, w.overflow = map[string]int{}, false
	return out, overflow
}

func (w *watcher) event(wd int, mask uint32, name string) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		w.overflow = true
		return
	}
	if mask&unix.IN_IGNORED != 0 {
		delete(w.dirs, wd)
		return
	}
	d := w.dirs[wd]
	if d == nil || name == "" {
		return
	}
	path := filepath.Join(d.path, name)
	rel := name
	if d.rel != "" {
		rel = d.rel + "/" + name
	}
	created := mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0
	deleted := mask&(unix.IN_DELETE|unix.IN_MOVED_FROM) != 0
	if mask&unix.IN_ISDIR != 0 {
		switch {
		case created:
			if skipDir(name) || d.ign.Ignored(rel, name, true) {
				return
			}
			if err := w.addTree(path, rel, d.ign.Push(gitignoreOf(path), rel), true); err != nil {
				w.overflow = true // the limit: changes below can no longer be seen
			}
		case deleted:
			coalesce(w.pending, path, fileDeleted)
			if mask&unix.IN_MOVED_FROM != 0 {
				// Moved away: its watches would report under the old name.
				for id, sub := range w.dirs {
					if within(sub.path, path) {
						_, _ = unix.InotifyRmWatch(w.fd, uint32(id))
						delete(w.dirs, id)
					}
				}
			}
		}
		return
	}
	switch {
	case created:
		coalesce(w.pending, path, fileCreated)
	case deleted:
		coalesce(w.pending, path, fileDeleted)
	case mask&(unix.IN_MODIFY|unix.IN_CLOSE_WRITE) != 0:
		coalesce(w.pending, path, fileChanged)
	}
}

// files lists up to limit regular files in the watched directories.
func (w *watcher) files(limit int) []string {
	w.mu.Lock()
	dirs := make([]string, 0, len(w.dirs))
	for _, d := range w.dirs {
		dirs = append(dirs, d.path)
	}
	w.mu.Unlock()
	var out []string
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.Type().IsRegular() {
				out = append(out, filepath.Join(d, e.Name()))
				if len(out) >= limit {
					return out
				}
			}
		}
	}
	return out
}

func (w *watcher) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd >= 0 {
		unix.Close(w.fd)
		w.fd = -1
	}
}
