package execcheck

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The system calls the filter holds, per architecture: execve and
// execveat, native and in each compat ABI the kernel may offer (a 32-bit
// program must not be a way around the check).
type execCalls struct {
	arch             uint32
	execve, execveat uint32
	// x32 (amd64 only): the native arch with bit 30 set in the number.
	x32Execve, x32Execveat uint32
	compat                 uint32
	compatExecve           uint32
	compatExecveat         uint32
}

const noCall = 0xffffffff

func callsOf(goarch string) (execCalls, error) {
	switch goarch {
	case "amd64":
		return execCalls{arch: unix.AUDIT_ARCH_X86_64, execve: 59, execveat: 322,
			x32Execve: 0x40000000 | 520, x32Execveat: 0x40000000 | 545,
			compat: unix.AUDIT_ARCH_I386, compatExecve: 11, compatExecveat: 358}, nil
	case "arm64":
		return execCalls{arch: unix.AUDIT_ARCH_AARCH64, execve: 221, execveat: 281,
			x32Execve: noCall, x32Execveat: noCall,
			compat: unix.AUDIT_ARCH_ARM, compatExecve: 11, compatExecveat: 387}, nil
	}
	return execCalls{}, fmt.Errorf("checking every exec needs amd64 or arm64, not %s", goarch)
}

// filterProgram is the filter: the exec calls → USER_NOTIF, all else →
// ALLOW. A native execve or execveat made from ip (the instruction of
// boris's own exec in a child it has just forked; 0: none) is allowed
// without a notification: the Go runtime forks with vfork, and the thread
// that forked holds its scheduler slot until the child has exec'd, so a
// held exec there could stall boris (see ownExecIP).
func filterProgram(c execCalls, ip uint64) []unix.SockFilter {
	const (
		ld     = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret    = unix.BPF_RET | unix.BPF_K
		allow  = unix.SECCOMP_RET_ALLOW
		notify = unix.SECCOMP_RET_USER_NOTIF
		// seccomp_data: nr at 0, arch at 4, instruction_pointer at 8
		// (its low half first: amd64 and arm64 are little-endian).
		offNr, offArch, offIPLo, offIPHi = 0, 4, 8, 12
	)
	return []unix.SockFilter{
		/* 0 */ {Code: ld, K: offArch},
		/* 1 */ {Code: jeq, K: c.arch, Jt: 0, Jf: 11}, // → 13
		/* 2 */ {Code: ld, K: offNr},
		/* 3 */ {Code: jeq, K: c.execve, Jt: 4}, // → 8
		/* 4 */ {Code: jeq, K: c.execveat, Jt: 3}, // → 8
		/* 5 */ {Code: jeq, K: c.x32Execve, Jt: 12}, // → 18
		/* 6 */ {Code: jeq, K: c.x32Execveat, Jt: 11}, // → 18
		/* 7 */ {Code: ret, K: allow},
		/* 8 */ {Code: ld, K: offIPLo},
		/* 9 */ {Code: jeq, K: uint32(ip), Jt: 0, Jf: 8}, // → 18
		/* 10 */ {Code: ld, K: offIPHi},
		/* 11 */ {Code: jeq, K: uint32(ip >> 32), Jt: 0, Jf: 6}, // → 18
		/* 12 */ {Code: ret, K: allow},
		/* 13 */ {Code: jeq, K: c.compat, Jt: 0, Jf: 3}, // → 17
		/* 14 */ {Code: ld, K: offNr},
		/* 15 */ {Code: jeq, K: c.compatExecve, Jt: 2}, // → 18
		/* 16 */ {Code: jeq, K: c.compatExecveat, Jt: 1}, // → 18
		/* 17 */ {Code: ret, K: allow},
		/* 18 */ {Code: ret, K: notify},
	}
}

const (
	flagNewListener      = unix.SECCOMP_FILTER_FLAG_NEW_LISTENER
	flagWaitKillableRecv = 1 << 5 // SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, Linux 5.19
)

// Install installs the exec filter on the calling thread (which must be
// locked to it for good: a Thread, or a sandbox domain's thread through
// its Do) and returns the listener's descriptor. Without CAP_SYS_ADMIN the
// kernel wants no_new_privs first, which Install then sets on the thread:
// set-user-ID programs (sudo) no longer gain privileges in its commands.
//
// Once a notification has been received, a held exec waits for boris's
// answer through any signal but a fatal one (WAIT_KILLABLE_RECV), so a
// signal does not restart the exec and ask the judge twice.
func Install() (fd int, err error) {
	ip, err := ownExecIP()
	if err != nil {
		return -1, err
	}
	return install(ip)
}

func install(ip uint64) (fd int, err error) {
	calls, err := callsOf(runtime.GOARCH)
	if err != nil {
		return -1, err
	}
	prog := filterProgram(calls, ip)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	try := func(flags uintptr) (int, unix.Errno) {
		r, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
		return int(r), e
	}
	flags := uintptr(flagNewListener | flagWaitKillableRecv)
	r, e := try(flags)
	if e == unix.EINVAL { // a kernel before 5.19
		flags = flagNewListener
		r, e = try(flags)
	}
	if e == unix.EACCES {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return -1, fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
		}
		r, e = try(flags)
	}
	runtime.KeepAlive(prog)
	if e != 0 {
		if errors.Is(e, unix.EINVAL) || errors.Is(e, unix.ENOSYS) {
			return -1, fmt.Errorf("seccomp user notification (Linux 5.0 or later) is not available: %w", e)
		}
		return -1, fmt.Errorf("installing the exec filter: %w", e)
	}
	return r, nil
}
