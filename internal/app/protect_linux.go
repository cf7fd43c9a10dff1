package app

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// protectProcess makes boris non-dumpable. The kernel then refuses every
// process of the same user — the agents' commands among them — that asks
// for boris's environment (/proc/<pid>/environ, where BORIS_TOKEN is),
// memory (/proc/<pid>/mem) or other private /proc files, or to ptrace it:
// only a process with CAP_SYS_PTRACE (root, usually) gets through. It also
// means no core dump. Commands are unaffected: execve makes a new program
// dumpable again.
func protectProcess() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE, 0): %w", err)
	}
	return nil
}
