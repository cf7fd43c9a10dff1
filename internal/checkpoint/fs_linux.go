package checkpoint

import (
	"runtime"
	"strconv"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noOpenat2 is set once the kernel has said it lacks openat2.
var noOpenat2 atomic.Bool

// openBeneath opens rel (slash-separated, "" for the directory itself)
// below the directory dirfd without following a symlink in any component,
// so that a symlink swapped into the tree cannot lead a read or a write
// anywhere else.
func openBeneath(dirfd int, rel string, flags int) (int, error) {
	if rel == "" {
		rel = "."
	}
	if !noOpenat2.Load() {
		for {
			fd, err := unix.Openat2(dirfd, rel, &unix.OpenHow{
				Flags:   uint64(flags | unix.O_CLOEXEC | unix.O_NOFOLLOW),
				Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
			})
			switch err {
			case unix.EINTR, unix.EAGAIN:
				continue
			case unix.ENOSYS, unix.EPERM:
				noOpenat2.Store(true)
			default:
				return fd, err
			}
			break
		}
	}
	return openComponents(dirfd, rel, flags)
}

func mtimeOf(st *unix.Stat_t) int64 { return st.Mtim.Nano() }
func ctimeOf(st *unix.Stat_t) int64 { return st.Ctim.Nano() }

// fchmodat changes the mode of name in dirfd without following a symlink
// (fchmodat2, Linux 6.6; before it, through an O_PATH descriptor).
func fchmodat(dirfd int, name string, mode uint32) error {
	err := unix.Fchmodat(dirfd, name, mode, unix.AT_SYMLINK_NOFOLLOW)
	if err != unix.EOPNOTSUPP && err != unix.ENOSYS {
		return err
	}
	fd, err := openat(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return unix.ELOOP
	}
	return unix.Fchmodat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), mode, 0)
}

// lowerPriority runs the calling goroutine, to its end, on a thread of its
// own at nice 10 (or the process's, if lower) and the lowest best-effort
// I/O priority: the thread is never handed back (no UnlockOSThread), so
// it ends with the goroutine and no other goroutine inherits it.
func lowerPriority() {
	runtime.LockOSThread()
	tid := unix.Gettid()
	// The raw getpriority answers 20 - nice.
	if p, err := unix.Getpriority(unix.PRIO_PROCESS, tid); err == nil && 20-p < 10 {
		_ = unix.Setpriority(unix.PRIO_PROCESS, tid, 10)
	}
	const ioprioWhoProcess, ioprioClassBE = 1, 2
	_, _, _ = unix.Syscall(unix.SYS_IOPRIO_SET, ioprioWhoProcess, uintptr(tid), ioprioClassBE<<13|7)
}
