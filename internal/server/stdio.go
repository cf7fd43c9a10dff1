package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/codes"
)

// ServeStdio serves the process's session over in and out until in
// reaches EOF or ctx is done, in either protocol era (the SDK negotiates
// it). Calls that name no session share the process's one session.
//
// Every request read is answered before the connection closes. At stdin's
// end (a client may pipe its requests in and close its end at once) the
// calls still running get Options.ShutdownTimeout to finish on their own;
// then — or at once when ctx is done (SIGTERM, SIGINT) — they are
// cancelled and answered with a SESSION_CLOSED error that says why,
// followed by what they had done, and the session's processes are
// terminated. Only a call that does not end within stdioCancelGrace of
// its cancellation goes unanswered; that is the one case ServeStdio
// returns an error for.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	s.stdio.Store(true)
	calls, endCalls := context.WithCancelCause(context.Background())
	defer endCalls(nil)
	s.stdioCalls = calls
	w := &lockedWriter{w: out}
	limit := max(mcp.DefaultMaxLineLength, int(2*s.deps.Options.MaxFileSize)+1<<20)
	r := newStdinReader(in, limit, func(head []byte, size int64) {
		s.deps.Logger.Warn("stdio message over the size limit refused", "bytes", size, "limit", limit)
		_, _ = w.Write(tooLongResponse(head, size, limit))
	})
	conn := newStdioConn(r, w)
	ss, err := s.mcp.Connect(ctx, stdioTransport{conn}, nil)
	if err != nil {
		return err
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- ss.Wait() }()
	select {
	case <-ctx.Done():
		endCalls(codes.Errorf(codes.SessionClosed, "boris is shutting down (SIGTERM or SIGINT): this call was cancelled"))
	case <-r.eof:
		// The reader holds the EOF back: the SDK, once it sees EOF, drops
		// the answers to requests it has already read.
		if wait := s.deps.Options.ShutdownTimeout; !conn.waitAnswered(wait) {
			s.deps.Logger.Info("stdin ended: cancelling the calls still running", "calls", conn.pending.Load(), "shutdown_timeout", wait)
			endCalls(codes.Errorf(codes.SessionClosed, "stdin ended and this call was still running %s later (--shutdown-timeout): it was cancelled", wait))
		}
	case err := <-waitErr:
		endCalls(codes.Errorf(codes.SessionClosed, "the stdio connection ended"))
		s.sessions.CloseAll()
		return ignoreEOF(err)
	}
	// Calls cancelled end their commands (SIGTERM, SIGKILL 5 s later) and
	// answer; closing the sessions alongside ends what they left running.
	closed := make(chan struct{})
	go func() {
		s.sessions.CloseAll()
		close(closed)
	}()
	answered := conn.waitAnswered(stdioCancelGrace)
	left := conn.pending.Load()
	r.releaseEOF()
	select {
	case <-closed:
	case <-time.After(stdioCancelGrace):
	}
	// Close waits for the handlers still running: not past the bound.
	closeDone := make(chan struct{})
	go func() {
		_ = ss.Close()
		close(closeDone)
	}()
	select {
	case <-closeDone:
	case <-time.After(time.Second):
	}
	if !answered {
		return fmt.Errorf("stdio: %d requests read were not answered: they did not end within %s of being cancelled", left, stdioCancelGrace)
	}
	select {
	case err := <-waitErr:
		return ignoreEOF(err)
	case <-time.After(time.Second):
		return nil
	}
}

// stdioCancelGrace bounds the wait for the answers of cancelled calls: a
// command's process group gets SIGKILL 5 s after SIGTERM, plus a margin.
const stdioCancelGrace = 7 * time.Second

func ignoreEOF(err error) error {
	// The client's end of either pipe closing is how a session ends.
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, syscall.EPIPE) {
		return nil
	}
	return err
}
