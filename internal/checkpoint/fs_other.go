//go:build !linux

package checkpoint

import "golang.org/x/sys/unix"

// openBeneath opens rel (slash-separated, "" for the directory itself)
// below the directory dirfd without following a symlink in any component.
func openBeneath(dirfd int, rel string, flags int) (int, error) {
	if rel == "" {
		rel = "."
	}
	return openComponents(dirfd, rel, flags)
}

func mtimeOf(st *unix.Stat_t) int64 { return st.Mtim.Nano() }
func ctimeOf(st *unix.Stat_t) int64 { return st.Ctim.Nano() }

// fchmodat changes the mode of name in dirfd without following a symlink.
func fchmodat(dirfd int, name string, mode uint32) error {
	return unix.Fchmodat(dirfd, name, mode, unix.AT_SYMLINK_NOFOLLOW)
}

// lowerPriority does nothing here.
func lowerPriority() {}
