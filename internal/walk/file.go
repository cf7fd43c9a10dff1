package walk

import (
	"errors"
	"io"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// File is a file opened for reading by the walk. It reads with plain
// system calls on the descriptor: no runtime poller, no allocation.
type File struct {
	fd   int
	os   *os.File     // set instead of fd when the descriptor had to be verified through *os.File
	stop *atomic.Bool // the walk's cancellation flag
}

// ErrCanceled is returned by File.Read once the walk is canceled, so that
// a search through a large file stops too.
var ErrCanceled = errors.New("walk canceled")

// Read implements io.Reader.
func (f *File) Read(p []byte) (int, error) {
	if f.stop != nil && f.stop.Load() {
		return 0, ErrCanceled
	}
	if f.os != nil {
		return f.os.Read(p)
	}
	for {
		n, err := unix.Read(f.fd, p)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// ModTime returns the file's modification time in Unix nanoseconds.
func (f *File) ModTime() (int64, error) {
	var st unix.Stat_t
	fd := f.fd
	if f.os != nil {
		fd = int(f.os.Fd())
	}
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, err
	}
	return st.Mtim.Nano(), nil
}

// Close closes the file.
func (f *File) Close() error {
	if f.os != nil {
		return f.os.Close()
	}
	return unix.Close(f.fd)
}

// isRegular reports whether an open descriptor is a regular file.
func isRegular(fd int) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG
}
