package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// watchMask is every change to a directory's entries, their content and
// their metadata. IN_CLOSE_WRITE covers files written through a shared
// mapping, which report no IN_MODIFY, when they are closed.
const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_EXCL_UNLINK

// maxPending bounds the events held between scans; beyond it they are
// dropped and the next scan is a full one, as after a kernel overflow.
const maxPending = 1 << 17

// inotify is the Linux watcher. A goroutine reads the kernel's queue as
// events come, so that a burst between two calls (a build) does not
// overflow it; the reads and drain both hold mu while they read, so a
// drain returns every event queued before it began.
type inotify struct {
	fd   int
	file *os.File

	mu       sync.Mutex
	pending  []event
	overflow bool
	buf      []byte

	nmu   sync.Mutex
	nodes map[int32]*dirNode

	done chan struct{}
}

func newWatcher() (watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	w := &inotify{fd: fd, file: os.NewFile(uintptr(fd), "inotify"), nodes: map[int32]*dirNode{}, done: make(chan struct{}), buf: make([]byte, 64<<10)}
	rc, err := w.file.SyscallConn()
	if err != nil {
		w.file.Close()
		return nil, err
	}
	go func() {
		defer close(w.done)
		// The callback runs whenever the descriptor is readable and
		// returns false to wait again; Read returns when the file is
		// closed.
		_ = rc.Read(func(uintptr) bool {
			w.mu.Lock()
			w.readLocked()
			w.mu.Unlock()
			return false
		})
	}()
	return w, nil
}

// readLocked reads the kernel's queue until it is empty.
func (w *inotify) readLocked() {
	for {
		n, err := unix.Read(w.fd, w.buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		b := w.buf[:n]
		for len(b) >= unix.SizeofInotifyEvent {
			wd := int32(binary.NativeEndian.Uint32(b[0:]))
			mask := binary.NativeEndian.Uint32(b[4:])
			nameLen := int(binary.NativeEndian.Uint32(b[12:]))
			end := unix.SizeofInotifyEvent + nameLen
			if end > len(b) {
				break
			}
			name := b[unix.SizeofInotifyEvent:end]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			b = b[end:]
			if mask&unix.IN_Q_OVERFLOW != 0 || len(w.pending) >= maxPending {
				w.overflow = true
				w.pending = w.pending[:0]
				continue
			}
			if w.overflow {
				continue // a full scan follows anyway
			}
			w.pending = append(w.pending, event{wd: wd, name: string(name),
				gone: mask&unix.IN_IGNORED != 0,
				self: mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0,
				dir:  mask&unix.IN_ISDIR != 0})
		}
	}
}

func (w *inotify) drain() ([]event, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.readLocked()
	evs, over := w.pending, w.overflow
	w.pending, w.overflow = nil, false
	return evs, over
}

// errWatchLimit says the kernel refused more watches.
var errWatchLimit = errors.New("the inotify watch limit (fs.inotify.max_user_watches) is reached")

func (w *inotify) add(dirfd int, abs string, n *dirNode) error {
	wd, err := unix.InotifyAddWatch(w.fd, "/proc/self/fd/"+strconv.Itoa(dirfd), watchMask)
	if err == unix.ENOENT {
		// No /proc: the path, without following a final symlink.
		wd, err = unix.InotifyAddWatch(w.fd, abs, watchMask|unix.IN_DONT_FOLLOW)
	}
	if err == unix.ENOSPC {
		return errWatchLimit
	}
	if err != nil {
		return err
	}
	w.nmu.Lock()
	w.nodes[int32(wd)] = n
	w.nmu.Unlock()
	n.wd = int32(wd)
	return nil
}

func (w *inotify) forget(n *dirNode) {
	if n.wd < 0 {
		return
	}
	w.nmu.Lock()
	owned := w.nodes[n.wd] == n
	if owned {
		delete(w.nodes, n.wd)
	}
	w.nmu.Unlock()
	if owned {
		_, _ = unix.InotifyRmWatch(w.fd, uint32(n.wd))
	}
	n.wd = -1
}

func (w *inotify) node(wd int32) *dirNode {
	w.nmu.Lock()
	defer w.nmu.Unlock()
	return w.nodes[wd]
}

func (w *inotify) close() {
	w.file.Close()
	<-w.done
}
