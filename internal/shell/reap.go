package shell

import (
	"os/exec"
	"strconv"
	"sync"
	"syscall"
)

// children is the process-wide table of shells waiting for their exit
// status when reaping is enabled. It is package state because reaping is
// process state: a process has one set of children and one SIGCHLD, so two
// reapers would steal each other's statuses.
var children = childTable{waiters: map[int]chan syscall.WaitStatus{}}

type childTable struct {
	// startMu is held shared while a shell is forked and registered, and
	// exclusively by the reaper before it decides a reaped pid is an
	// orphan, so a child that exits at once is never mistaken for one.
	startMu sync.RWMutex
	mu      sync.Mutex
	enabled bool
	waiters map[int]chan syscall.WaitStatus
}

// Reaping reports whether EnableReaping succeeded.
func Reaping() bool {
	children.mu.Lock()
	defer children.mu.Unlock()
	return children.enabled
}

// register makes the reaper deliver pid's status on the returned channel.
// Call it with startMu held shared.
func (t *childTable) register(pid int) chan syscall.WaitStatus {
	ch := make(chan syscall.WaitStatus, 1)
	t.mu.Lock()
	t.waiters[pid] = ch
	t.mu.Unlock()
	return ch
}

// deliver hands a reaped status to its waiter; orphans are dropped.
func (t *childTable) deliver(pid int, ws syscall.WaitStatus) {
	t.startMu.Lock()
	t.mu.Lock()
	ch := t.waiters[pid]
	delete(t.waiters, pid)
	t.mu.Unlock()
	t.startMu.Unlock()
	if ch != nil {
		ch <- ws
	}
}

// WaitStatusError is a child that did not exit 0, as the reaper saw it.
type WaitStatusError struct{ Status syscall.WaitStatus }

func (e *WaitStatusError) Error() string {
	if e.Status.Signaled() {
		return "killed by signal " + e.Status.Signal().String()
	}
	return "exit status " + strconv.Itoa(e.Status.ExitStatus())
}

// StartWaited starts cmd with start (cmd.Start when nil) and returns how
// to wait for it, as cmd.Wait would. With reaping enabled the reaper
// collects every child's exit status, so os/exec's own Wait would find
// none (and could race it): the status is handed over by the reaper, and
// cmd.Wait then only finishes copying the command's output.
func StartWaited(cmd *exec.Cmd, start func(*exec.Cmd) error) (wait func() error, err error) {
	if start == nil {
		start = (*exec.Cmd).Start
	}
	children.startMu.RLock()
	err = start(cmd)
	var status chan syscall.WaitStatus
	if err == nil && Reaping() {
		status = children.register(cmd.Process.Pid)
	}
	children.startMu.RUnlock()
	if err != nil {
		return nil, err
	}
	if status == nil {
		return cmd.Wait, nil
	}
	return func() error {
		ws := <-status
		_ = cmd.Wait() // the status is gone (ECHILD); this waits for the output
		if ws.Exited() && ws.ExitStatus() == 0 {
			return nil
		}
		return &WaitStatusError{Status: ws}
	}, nil
}
