package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// stdinReader splits stdin into lines for stdioConn (Read passes them on
// as a stream), so that it can
//
//   - refuse a message longer than the limit without reading it into
//     memory whole: the line is dropped, tooLong answers it, and the
//     session goes on with the next line;
//   - hold the end of input back until releaseEOF: the SDK, once its
//     connection reads EOF, drops the answers to requests it has read. eof
//     is closed when the reader asks past the last line, so every line
//     before the end has been taken by then.
type stdinReader struct {
	src     *bufio.Reader
	limit   int
	tooLong func(head []byte, size int64)

	line []byte // the rest of the line being handed out
	buf  []byte // reused between lines
	err  error  // the input's end, returned after the release

	eof      chan struct{}
	release  chan struct{}
	eofOnce  sync.Once
	released sync.Once
}

// headSize is how much of an over-long line is kept to find its id.
const headSize = 4 << 10

func newStdinReader(r io.Reader, limit int, tooLong func(head []byte, size int64)) *stdinReader {
	return &stdinReader{
		src:     bufio.NewReaderSize(r, 64<<10),
		limit:   limit,
		tooLong: tooLong,
		eof:     make(chan struct{}),
		release: make(chan struct{}),
	}
}

func (s *stdinReader) Read(p []byte) (int, error) {
	if len(s.line) == 0 {
		line, err := s.readLine()
		if err != nil {
			return 0, err
		}
		s.line = line
	}
	n := copy(p, s.line)
	s.line = s.line[n:]
	return n, nil
}

// readLine returns the next line that is not empty, with its newline if it
// has one; the line is valid until the next call. After the last line it
// waits for the release, then returns the input's end.
func (s *stdinReader) readLine() ([]byte, error) {
	for {
		if s.err != nil {
			s.eofOnce.Do(func() { close(s.eof) })
			<-s.release
			return nil, s.err
		}
		if line := s.next(); len(line) > 0 {
			return line, nil
		}
	}
}

// next reads the next line (with its newline, if it has one). A line over
// the limit is reported and skipped: next returns nil for it. At the end
// of the input it records the end and returns what is left, if anything.
func (s *stdinReader) next() []byte {
	s.buf = s.buf[:0]
	var skipped int64 // bytes of an over-long line dropped so far
	var head []byte
	for {
		chunk, err := s.src.ReadSlice('\n')
		switch {
		case skipped > 0:
			skipped += int64(len(chunk))
		case len(s.buf)+len(chunk) > s.limit:
			head = append([]byte(nil), s.buf[:min(len(s.buf), headSize)]...)
			if len(head) < headSize {
				head = append(head, chunk[:min(len(chunk), headSize-len(head))]...)
			}
			skipped = int64(len(s.buf) + len(chunk))
			s.buf = s.buf[:0]
			if cap(s.buf) > 1<<20 {
				s.buf = nil // do not keep a huge buffer for small lines
			}
		default:
			s.buf = append(s.buf, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if skipped > 0 {
			s.tooLong(head, skipped)
			if err != nil {
				s.end(err)
			}
			return nil
		}
		if err != nil {
			s.end(err)
		}
		return s.buf
	}
}

func (s *stdinReader) end(err error) { s.err = err }

// releaseEOF lets the held-back end of input through.
func (s *stdinReader) releaseEOF() { s.released.Do(func() { close(s.release) }) }

// Close is called by the SDK when the connection closes.
func (s *stdinReader) Close() error {
	s.eofOnce.Do(func() { close(s.eof) })
	s.releaseEOF()
	return nil
}

// requestID finds the "id" of a JSON-RPC request from the start of its
// text, or returns null when the start does not show it.
func requestID(head []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return json.RawMessage("null")
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			break
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			break
		}
		if key == "id" {
			var id any
			if json.Unmarshal(v, &id) == nil {
				switch id.(type) {
				case string, float64:
					return v
				}
			}
			break
		}
	}
	return json.RawMessage("null")
}

// tooLongResponse is the JSON-RPC error answering an over-long message.
func tooLongResponse(head []byte, size int64, limit int) []byte {
	msg := fmt.Sprintf("the message is %d bytes, over the %d-byte limit for one stdio message (twice --max-file-size plus 1 MB, at least 16 MB); it was not processed", size, limit)
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      requestID(head),
		"error":   map[string]any{"code": -32600, "message": msg},
	})
	return append(b, '\n')
}

// lockedWriter serialises writes to stdout: the SDK writes each message
// with one Write, and so does tooLong.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }
