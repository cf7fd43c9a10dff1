package execcheck

import (
	"errors"
	"os/exec"
	"runtime"
	"sync"
)

// Thread is a locked OS thread of its own that runs functions handed to Do
// and forks the commands handed to Start: where the exec filter goes when
// no sandbox domain has a thread for it. Like a sandbox domain's thread it
// is never given back to the Go scheduler (the filter stays with it) and
// ends with Close.
type Thread struct {
	reqs      chan func()
	done      chan struct{}
	closeOnce sync.Once
}

// NewThread starts a Thread.
func NewThread() *Thread {
	t := &Thread{reqs: make(chan func()), done: make(chan struct{})}
	ready := make(chan struct{})
	go t.serve(ready, true)
	<-ready
	return t
}

// serve runs on the locked thread until Close. The process's main thread
// is never used: the runtime does not end it when a locked goroutine
// returns (it would keep the filter), so serve moves to another one.
func (t *Thread) serve(ready chan struct{}, retry bool) {
	runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
	if retry && onMainThread() {
		moved := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			close(moved)
			t.serve(ready, false)
		}()
		<-moved
		runtime.UnlockOSThread() // nothing was installed here
		return
	}
	close(ready)
	for {
		select {
		case fn := <-t.reqs:
			fn()
		case <-t.done:
			return
		}
	}
}

var errThreadClosed = errors.New("the exec check's thread is closed")

// Do runs fn on the thread and returns when it has.
func (t *Thread) Do(fn func()) error {
	finished := make(chan struct{})
	select {
	case t.reqs <- func() { fn(); close(finished) }:
	case <-t.done:
		return errThreadClosed
	}
	<-finished
	return nil
}

// Start starts cmd (as cmd.Start does) from the thread.
func (t *Thread) Start(cmd *exec.Cmd) error {
	var err error
	if derr := t.Do(func() { err = cmd.Start() }); derr != nil {
		return derr
	}
	return err
}

// Close ends the thread; Do and Start fail afterwards.
func (t *Thread) Close() { t.closeOnce.Do(func() { close(t.done) }) }
