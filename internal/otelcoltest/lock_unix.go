//go:build linux || darwin

package otelcoltest

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on path, waiting for it; the kernel
// drops it if the process dies holding it.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
