package checkpoint

import (
	"strings"

	"golang.org/x/sys/unix"
)

// openComponents opens rel below dirfd one component at a time, each
// with O_NOFOLLOW, for kernels without openat2.
func openComponents(dirfd int, rel string, flags int) (int, error) {
	if rel == "." {
		return openat(dirfd, ".", flags|unix.O_NOFOLLOW)
	}
	cur := dirfd
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		if p == "" || p == "." || p == ".." {
			if cur != dirfd {
				unix.Close(cur)
			}
			return -1, unix.EINVAL
		}
		f := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW
		if i == len(parts)-1 {
			f = flags | unix.O_NOFOLLOW
		}
		fd, err := openat(cur, p, f)
		if cur != dirfd {
			unix.Close(cur)
		}
		if err != nil {
			return -1, err
		}
		cur = fd
	}
	return cur, nil
}

func openat(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// splitRel splits a slash-separated relative path into its directory
// ("" at the top) and base name.
func splitRel(rel string) (dir, name string) {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i], rel[i+1:]
	}
	return "", rel
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// readlinkat reads a symlink's target.
func readlinkat(dirfd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}
