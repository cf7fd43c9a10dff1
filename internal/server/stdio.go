package server

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves the process's session over in and out until in
// reaches EOF or ctx is done, in either protocol era (the SDK negotiates
// it). Calls that name no session share the process's one session. Either
// way, requests already received are answered before the connection
// closes: at EOF they get a short window to finish on their own (a client
// may pipe its requests in and close its end at once), then every session's
// processes are terminated, which ends the calls still running, and their
// answers are written too.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	s.stdio.Store(true)
	w := &lockedWriter{w: out}
	limit := max(mcp.DefaultMaxLineLength, int(2*s.deps.Options.MaxFileSize)+1<<20)
	r := newStdinReader(in, limit, func(head []byte, size int64) {
		s.deps.Logger.Warn("stdio message over the size limit refused", "bytes", size, "limit", limit)
		_, _ = w.Write(tooLongResponse(head, size, limit))
	})
	ss, err := s.mcp.Connect(ctx, stdioTransport{newStdioConn(r, w)}, nil)
	if err != nil {
		return err
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- ss.Wait() }()
	select {
	case <-ctx.Done():
	case <-r.eof:
		// The reader holds the EOF back: the SDK, once it sees EOF, drops
		// the answers to requests it has already read.
		drain(&s.inflight, stdioDrainWindow)
	case err := <-waitErr:
		s.sessions.CloseAll()
		return ignoreEOF(err)
	}
	s.sessions.CloseAll() // calls still running return once their processes are gone
	drain(&s.inflight, time.Second)
	r.releaseEOF()
	_ = ss.Close()
	return ignoreEOF(<-waitErr)
}

// stdioDrainWindow is how long requests received before stdin's EOF may
// run before the session is closed under them.
const stdioDrainWindow = 2 * time.Second

// drain waits until no request has been in flight for a moment (so that
// the last answers are written, and a request read just before is
// dispatched), or until limit.
func drain(inflight *atomic.Int64, limit time.Duration) {
	const settle = 50 * time.Millisecond
	deadline := time.Now().Add(limit)
	quiet := 0
	for time.Now().Before(deadline) && quiet < 2 {
		if inflight.Load() == 0 {
			quiet++
		} else {
			quiet = 0
		}
		time.Sleep(settle / 2)
	}
}

func ignoreEOF(err error) error {
	// The client's end of either pipe closing is how a session ends.
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, syscall.EPIPE) {
		return nil
	}
	return err
}
