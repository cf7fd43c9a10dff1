package hostenv

import "golang.org/x/sys/unix"

// readOnly reports whether the filesystem holding path is mounted read-only.
func readOnly(path string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return false
	}
	return st.Flags&unix.ST_RDONLY != 0
}
