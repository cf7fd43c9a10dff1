//go:build !linux

package shell

import (
	"errors"
	"syscall"
	"time"
)

// EnableReaping is only implemented on Linux, where boris runs as PID 1 in
// containers; elsewhere os/exec waits for each shell.
func EnableReaping() error { return errors.New("reaping is only supported on Linux") }

// SignalOrphans does nothing without reaping.
func SignalOrphans(syscall.Signal) int { return 0 }

// KillOrphans does nothing without reaping.
func KillOrphans(time.Duration) {}
