package scope

import (
	"os"

	"golang.org/x/sys/unix"
)

// openNoSymlinks opens an absolute path for reading, failing with ELOOP if
// any component is a symlink, in one openat2 call. errUnsupported means the
// kernel is older than 5.6.
func openNoSymlinks(path string) (*os.File, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	// ENOSYS: a kernel before 5.6. EPERM: a seccomp profile that refuses
	// syscalls it does not know instead of answering ENOSYS.
	if err == unix.ENOSYS || err == unix.EPERM {
		return nil, errUnsupported
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}
