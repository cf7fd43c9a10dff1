package shell

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// EnableReaping makes this process a child subreaper and starts the one
// goroutine that waits for children. From then on, descendants orphaned by
// user commands (a daemon whose shell exited, a child of a killed process)
// become our children and are reaped, so they never linger as zombies that
// keep a process group looking alive — whether or not PID 1 reaps, and when
// boris is PID 1 itself. Only the server enables it: it takes over waiting
// for every child of the process, so code that waits for its own children
// with os/exec must not run in the same process.
func EnableReaping() error {
	children.mu.Lock()
	defer children.mu.Unlock()
	if children.enabled {
		return nil
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil && os.Getpid() != 1 {
		return fmt.Errorf("become child subreaper: %w", err)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGCHLD)
	go reapLoop(sig)
	children.enabled = true
	return nil
}

func reapLoop(sig <-chan os.Signal) {
	// The ticker covers a SIGCHLD coalesced away while a sweep ran.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-sig:
		case <-tick.C:
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if err == syscall.EINTR {
				continue
			}
			if pid <= 0 || err != nil {
				break
			}
			children.deliver(pid, ws)
		}
	}
}
