package shell

import (
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
