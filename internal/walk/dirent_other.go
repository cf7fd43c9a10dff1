//go:build !linux

package walk

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// readDir calls fn for each entry of the open directory fd (without "."
// and ".."); the inode number is left 0 (unknown). It goes through os.File.ReadDir on a duplicate of the descriptor.
func readDir(fd int, _ []byte, fn func(name []byte, typ uint8, ino uint64)) error {
	dup, err := unix.Dup(fd)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(dup), "")
	defer f.Close()
	entries, err := f.ReadDir(-1)
	for _, e := range entries {
		name := []byte(e.Name())
		if isDots(name) {
			continue
		}
		fn(name, direntType(e.Type()), 0)
	}
	return err
}

func direntType(m fs.FileMode) uint8 {
	switch {
	case m.IsRegular():
		return unix.DT_REG
	case m&fs.ModeDir != 0:
		return unix.DT_DIR
	case m&fs.ModeSymlink != 0:
		return unix.DT_LNK
	case m&fs.ModeType != 0:
		return unix.DT_FIFO // anything else is skipped
	}
	return unix.DT_UNKNOWN
}
