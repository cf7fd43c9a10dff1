package walk

import (
	"bytes"
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// readDir calls fn for each entry of the open directory fd (without "."
// and "..") with its type and inode number, reading raw linux_dirent64 records so that the entry type
// comes for free and no name is allocated here.
func readDir(fd int, buf []byte, fn func(name []byte, typ uint8, ino uint64)) error {
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		for off := 0; off+19 <= n; {
			// struct linux_dirent64 { u64 d_ino; s64 d_off; u16 d_reclen; u8 d_type; char d_name[]; }
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen < 19 || off+reclen > n {
				break
			}
			ino := binary.NativeEndian.Uint64(buf[off:])
			typ := buf[off+18]
			name := buf[off+19 : off+reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			off += reclen
			if ino == 0 || isDots(name) {
				continue
			}
			fn(name, typ, ino)
		}
	}
}
