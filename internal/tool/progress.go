package tool

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HeartbeatInterval is the longest a call whose client gave a progress
// token goes without a progress notification while it runs. Clients end a
// call that sends nothing for a while (the TypeScript SDK after 60 s unless
// progress resets its timer), so a quiet command — a test run that prints
// at the end, a sleep, a wait for a task — still says every few seconds
// that it is working, and for how long.
const HeartbeatInterval = 5 * time.Second

// Progress sends a call's progress notifications, when its client gave a
// progress token: what the tool reports (a command's output, the wait for
// the start-up checkpoint) and, when nothing was sent for
// HeartbeatInterval, a heartbeat with the time the call has run. Every
// notification of a call goes through it, so that their progress values
// increase, as the protocol requires, whoever sends them. A nil Progress
// (no token) sends nothing.
type Progress struct {
	ctx   context.Context
	sess  *mcp.ServerSession
	token any
	start time.Time

	mu       sync.Mutex
	last     float64   // the last progress value sent
	sent     bool      // whether anything was sent yet
	lastSent time.Time // when the last notification went out
	ended    bool      // the call answered: nothing more may be sent

	stop chan struct{}
	done chan struct{}
}

// startProgress returns the progress of a call (nil when its client gave
// no progress token), its heartbeat running.
func startProgress(ctx context.Context, req *mcp.CallToolRequest) *Progress {
	if req == nil || req.Params == nil || req.Session == nil {
		return nil
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return nil
	}
	now := time.Now()
	p := &Progress{ctx: ctx, sess: req.Session, token: token, start: now, lastSent: now, stop: make(chan struct{}), done: make(chan struct{})}
	go p.heartbeat(HeartbeatInterval)
	return p
}

// Notify sends msg with progress value v, raised just above the last one
// sent when it is not above it.
func (p *Progress) Notify(msg string, v float64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sendLocked(msg, v)
}

func (p *Progress) sendLocked(msg string, v float64) {
	if p.ended {
		return
	}
	if p.sent && v <= p.last {
		v = p.last + 1e-3
	}
	p.last, p.sent, p.lastSent = v, true, time.Now()
	_ = p.sess.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Message: msg, Progress: v})
}

// heartbeat sends a notification naming the time the call has run
// whenever nothing was sent for interval, until the call ends.
func (p *Progress) heartbeat(interval time.Duration) {
	defer close(p.done)
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-p.ctx.Done():
			return
		case <-t.C:
		}
		p.mu.Lock()
		next := interval - time.Since(p.lastSent)
		if next <= 0 {
			elapsed := time.Since(p.start).Round(time.Second)
			p.sendLocked(fmt.Sprintf("still running: %d s elapsed", int64(elapsed/time.Second)), p.last)
			next = interval
		}
		p.mu.Unlock()
		t.Reset(next)
	}
}

// end stops the heartbeat and any later notification: the call's answer
// follows, and nothing may come after it.
func (p *Progress) end() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.ended = true
	p.mu.Unlock()
	close(p.stop)
	<-p.done
}
