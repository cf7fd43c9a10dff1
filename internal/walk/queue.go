package walk

import (
	"sync"
	"unsafe"
)

// queue is the shared stack of pending jobs. Last in, first out: the walk
// goes depth first, which keeps few directories open at a time.
type queue struct {
	mu      sync.Mutex
	cond    sync.Cond
	jobs    []job
	pending int // pushed and not yet finished
	done    bool
}

func (q *queue) init() { q.cond.L = &q.mu }

func (q *queue) push(js []job) {
	q.mu.Lock()
	q.jobs = append(q.jobs, js...)
	q.pending += len(js)
	q.mu.Unlock()
	if len(js) == 1 {
		q.cond.Signal()
	} else {
		q.cond.Broadcast()
	}
}

// pop returns the next job, waiting while others may still push; ok is
// false when the walk is over.
func (q *queue) pop() (j job, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.jobs) == 0 {
		if q.done {
			return job{}, false
		}
		q.cond.Wait()
	}
	last := len(q.jobs) - 1
	j = q.jobs[last]
	q.jobs[last] = job{}
	q.jobs = q.jobs[:last]
	return j, true
}

// finish marks a popped job as done (after it pushed its children).
func (q *queue) finish() {
	q.mu.Lock()
	q.pending--
	if q.pending == 0 {
		q.done = true
		q.cond.Broadcast()
	}
	q.mu.Unlock()
}

// unsafeString views b as a string for a lookup that does not keep it.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
