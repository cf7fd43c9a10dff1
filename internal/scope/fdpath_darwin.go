package scope

import (
	"bytes"
	"os"
	"syscall"
	"unsafe"
)

// fdPath asks the kernel where an open descriptor is (fcntl F_GETPATH).
func fdPath(f *os.File) (string, error) {
	var buf [1024]byte // MAXPATHLEN
	var errno syscall.Errno
	rc, err := f.SyscallConn()
	if err != nil {
		return "", err
	}
	err = rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETPATH, uintptr(unsafe.Pointer(&buf[0])))
	})
	if err != nil {
		return "", err
	}
	if errno != 0 {
		return "", errno
	}
	if i := bytes.IndexByte(buf[:], 0); i >= 0 {
		return string(buf[:i]), nil
	}
	return string(buf[:]), nil
}
