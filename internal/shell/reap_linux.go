package shell

import (
	"bytes"
	"fmt"
	"os"
	"os/signal"
	"strconv"
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

// SignalOrphans sends sig to every live child of this process that is not
// one of the shells a Runner started: with reaping enabled these can only
// be descendants of user commands that left their process group (setsid,
// daemons) and were reparented to us. It returns how many it signalled.
func SignalOrphans(sig syscall.Signal) int {
	if !Reaping() {
		return 0
	}
	n := 0
	for _, pid := range liveChildren() {
		children.mu.Lock()
		_, ours := children.waiters[pid]
		children.mu.Unlock()
		if !ours && syscall.Kill(pid, sig) == nil {
			n++
		}
	}
	return n
}

// KillOrphans terminates the orphans that SignalOrphans would reach —
// SIGTERM, then SIGKILL after grace — repeating as their own children are
// reparented to us, until none is left or a final second has passed.
func KillOrphans(grace time.Duration) {
	if !Reaping() {
		return
	}
	start := time.Now()
	for {
		sig := syscall.SIGTERM
		if time.Since(start) >= grace {
			sig = syscall.SIGKILL
		}
		if SignalOrphans(sig) == 0 || time.Since(start) > grace+time.Second {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// liveChildren lists this process's children that are not zombies.
func liveChildren() []int {
	self := os.Getpid()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The fields after the command name (in parentheses, which may
		// contain anything) are: state, ppid, ...
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 2 || string(f[0]) == "Z" {
			continue
		}
		if ppid, err := strconv.Atoi(string(f[1])); err == nil && ppid == self {
			out = append(out, pid)
		}
	}
	return out
}
