package scope

import (
	"os"
	"strconv"
)

// fdPath asks the kernel where an open descriptor is.
func fdPath(f *os.File) (string, error) {
	var p string
	var err error
	rc, cerr := f.SyscallConn()
	if cerr != nil {
		return "", cerr
	}
	cerr = rc.Control(func(fd uintptr) {
		p, err = os.Readlink("/proc/self/fd/" + strconv.FormatUint(uint64(fd), 10))
	})
	if cerr != nil {
		return "", cerr
	}
	return p, err
}
