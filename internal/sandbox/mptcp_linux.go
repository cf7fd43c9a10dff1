package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock's TCP rules govern IPPROTO_TCP sockets only, and an MPTCP socket
// (IPPROTO_MPTCP) talks to any plain TCP server: measured on Linux 6.18, an
// MPTCP connect and bind pass a ruleset that refuses TCP. So whenever the
// network is restricted, a seccomp filter on the restricted thread (and so
// on every command) makes socket(…, IPPROTO_MPTCP) fail with
// EPROTONOSUPPORT, the answer of a kernel without MPTCP, on which programs
// fall back to plain TCP — which the ruleset governs.

const ipprotoMPTCP = 262

// Seccomp's view of a system call: nr at 0, arch at 4, args from 16.
const (
	offNr   = 0
	offArch = 4
	offArg2 = 16 + 2*8 // the low half on little-endian machines
)

// sysArch is what the filter knows about this machine: the native audit
// arch and socket number, and a compat (32-bit) one.
type sysArch struct {
	arch, socket, x32Socket          uint32
	compat, compatSocket, socketcall uint32
}

const never = 0xffffffff // a value no syscall number or arch takes here

func mptcpArch() (sysArch, error) {
	switch runtime.GOARCH {
	case "amd64":
		return sysArch{arch: 0xC000003E, socket: 41, x32Socket: 0x40000000 | 41,
			compat: 0x40000003, compatSocket: 359, socketcall: 102}, nil
	case "arm64":
		return sysArch{arch: 0xC00000B7, socket: 198, x32Socket: never,
			compat: 0x40000028, compatSocket: 281, socketcall: never}, nil
	}
	return sysArch{}, fmt.Errorf("--sandbox-net: MPTCP sockets escape Landlock's TCP rules and boris filters them only on amd64 and arm64, not %s: use --sandbox-net allow", runtime.GOARCH)
}

// mptcpFilter returns the seccomp program refusing MPTCP sockets. 32-bit
// processes on a 64-bit kernel get ENOSYS from socketcall, whose arguments
// the filter cannot see.
func mptcpFilter(a sysArch) []unix.SockFilter {
	const (
		ld    = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
		allow = unix.SECCOMP_RET_ALLOW
	)
	errno := func(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }
	return []unix.SockFilter{
		/* 0 */ {Code: ld, K: offArch},
		/* 1 */ {Code: jeq, K: a.arch, Jt: 0, Jf: 4}, // → 6
		/* 2 */ {Code: ld, K: offNr},
		/* 3 */ {Code: jeq, K: a.socket, Jt: 7, Jf: 0}, // → 11
		/* 4 */ {Code: jeq, K: a.x32Socket, Jt: 6, Jf: 0}, // → 11
		/* 5 */ {Code: ret, K: allow},
		/* 6 */ {Code: jeq, K: a.compat, Jt: 0, Jf: 3}, // → 10
		/* 7 */ {Code: ld, K: offNr},
		/* 8 */ {Code: jeq, K: a.compatSocket, Jt: 2, Jf: 0}, // → 11
		/* 9 */ {Code: jeq, K: a.socketcall, Jt: 5, Jf: 0}, // → 15
		/* 10 */ {Code: ret, K: allow},
		/* 11 */ {Code: ld, K: offArg2},
		/* 12 */ {Code: jeq, K: ipprotoMPTCP, Jt: 0, Jf: 1}, // → 13 or 14
		/* 13 */ {Code: ret, K: errno(unix.EPROTONOSUPPORT)},
		/* 14 */ {Code: ret, K: allow},
		/* 15 */ {Code: ret, K: errno(unix.ENOSYS)},
	}
}

// installFilter installs prog on the calling thread only (no TSYNC); it
// needs no_new_privs set first.
func installFilter(prog []unix.SockFilter) error {
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("seccomp filter against MPTCP sockets: %w", err)
	}
	runtime.KeepAlive(prog)
	return nil
}
