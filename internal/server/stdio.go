package server

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/session"
)

// ServeStdio serves one session over in and out until in reaches EOF or
// ctx is done; either way the session's processes are terminated first,
// then the connection is closed.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	sess := session.New("stdio", s.deps.Sessions)
	srv := s.newMCPServer(sess)
	eof := make(chan struct{})
	maxLine := max(mcp.DefaultMaxLineLength, int(2*s.deps.Config.MaxFileSize)+1<<20)
	ss, err := srv.Connect(ctx, &mcp.IOTransport{
		Reader:        &eofReader{r: in, eof: eof},
		Writer:        nopCloser{out},
		MaxLineLength: maxLine,
	}, nil)
	if err != nil {
		return err
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- ss.Wait() }()
	select {
	case <-ctx.Done():
	case <-eof:
	case err := <-waitErr:
		sess.Close()
		return ignoreEOF(err)
	}
	sess.Close() // in-flight calls return once their processes are gone
	_ = ss.Close()
	return ignoreEOF(<-waitErr)
}

func ignoreEOF(err error) error {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
		return nil
	}
	return err
}

// eofReader reports the end of its input (EOF or an error) on a channel.
type eofReader struct {
	r    io.Reader
	eof  chan struct{}
	once sync.Once
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		e.once.Do(func() { close(e.eof) })
	}
	return n, err
}

func (e *eofReader) Close() error {
	e.once.Do(func() { close(e.eof) })
	if c, ok := e.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
