package server

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/segmentio/encoding/json"
)

// stdioConn is boris's MCP connection over stdin and stdout: one JSON-RPC
// message (or, before protocol 2025-06-18, one batch) per line, as the
// specification frames stdio. It replaces the SDK's IOTransport for two
// reasons:
//
//   - A line that is not a valid message is answered with a JSON-RPC
//     error (-32700 parse error, -32600 invalid request) and the session
//     goes on; the SDK's transport ends the whole connection on one, and
//     boris with it.
//   - A message is decoded once, straight from its line. The SDK's
//     transport decodes each line three times (a stream decode, then as a
//     batch, then as a message), each through a decoder that allocates a
//     32 KB buffer: at thousands of calls a second that was a fifth of a
//     null call's cost, and most of the collector's work.
type stdioConn struct {
	lines *stdinReader
	w     io.Writer // whole messages, one Write each

	incoming  chan []jsonrpc.Message
	readErr   chan error
	queue     []jsonrpc.Message // the rest of a batch, handed out one by one
	closed    chan struct{}
	closeOnce sync.Once

	// pending counts the requests read and not yet answered; answered
	// is signalled (without blocking) whenever an answer is written.
	pending  atomic.Int64
	answered chan struct{}
	// broken is set when writing stdout failed: the client is gone, and
	// nothing more can be answered.
	broken atomic.Bool

	mu       sync.Mutex
	initSeen bool       // an initialize request has come (see needsInitialize)
	version  string     // the protocol version initialize settled on
	initID   jsonrpc.ID // the initialize request's id, until answered
	batches  map[jsonrpc.ID]*batchReply
}

// stdioTransport hands the SDK an already made stdioConn.
type stdioTransport struct{ conn *stdioConn }

func (t stdioTransport) Connect(context.Context) (mcp.Connection, error) { return t.conn, nil }

func newStdioConn(lines *stdinReader, w io.Writer) *stdioConn {
	c := &stdioConn{
		lines:    lines,
		w:        w,
		incoming: make(chan []jsonrpc.Message),
		readErr:  make(chan error, 1),
		closed:   make(chan struct{}),
		answered: make(chan struct{}, 1),
	}
	go c.readLoop()
	return c
}

// readLoop decodes stdin a line at a time, answers lines that are not
// messages itself, and hands the messages to Read. It runs on its own so
// that Close can end a Read waiting for input; like any reader of stdin it
// stays blocked in its read until the input has more or ends.
func (c *stdioConn) readLoop() {
	for {
		line, err := c.lines.readLine()
		if err != nil {
			c.readErr <- err
			return
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if msgs := c.decodeLine(line); len(msgs) > 0 {
			// Counted before they are handed on: at the end of the input
			// every request read is counted.
			for _, m := range msgs {
				if r, ok := m.(*jsonrpc.Request); ok && r.IsCall() {
					c.pending.Add(1)
				}
			}
			select {
			case c.incoming <- msgs:
			case <-c.closed:
				return
			}
		}
	}
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case msgs := <-c.incoming:
		c.queue = msgs[1:]
		return msgs[0], nil
	case err := <-c.readErr:
		return nil, err
	case <-c.closed:
		return nil, io.EOF
	}
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := encode(msg)
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		defer c.answer()
		var done bool
		data, done = c.collect(resp, data)
		if !done {
			return nil // part of a batch still being answered
		}
	}
	if _, err = c.w.Write(append(data, '\n')); err != nil {
		c.broken.Store(true)
	}
	return err
}

// answer counts a request answered (its answer written, or its writing
// failed).
func (c *stdioConn) answer() {
	c.pending.Add(-1)
	select {
	case c.answered <- struct{}{}:
	default:
	}
}

// waitAnswered waits until every request read has been answered (or
// stdout failed: no answer can be written any more), or until limit; it
// reports whether they all were.
func (c *stdioConn) waitAnswered(limit time.Duration) bool {
	t := time.NewTimer(limit)
	defer t.Stop()
	for c.pending.Load() > 0 && !c.broken.Load() {
		select {
		case <-c.answered:
		case <-t.C:
			return c.pending.Load() <= 0 || c.broken.Load()
		}
	}
	return true
}

func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		_ = c.lines.Close()
	})
	return nil
}

func (c *stdioConn) SessionID() string { return "" }

// encode is jsonrpc.EncodeMessage, except that a successful response is
// put together around its result as it is: the SDK has just marshalled
// the result, and encoding.json would check and copy every byte of it
// once more as part of the message (for a view of a 40-line file, 8 µs of
// a call's CPU). A result that is not one line (never seen: the SDK's
// encoder writes compact JSON) goes the long way.
func encode(msg jsonrpc.Message) ([]byte, error) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error != nil || !resp.ID.IsValid() || len(resp.Result) == 0 || bytes.IndexByte(resp.Result, '\n') >= 0 {
		return jsonrpc.EncodeMessage(msg)
	}
	id, err := stdjson.Marshal(resp.ID.Raw())
	if err != nil {
		return nil, err
	}
	data := make([]byte, 0, len(resp.Result)+len(id)+34)
	data = append(data, `{"jsonrpc":"2.0","id":`...)
	data = append(data, id...)
	data = append(data, `,"result":`...)
	data = append(data, resp.Result...)
	return append(data, '}'), nil
}

// wireMessage is every field a JSON-RPC message may have. Method is a
// pointer so that a request whose method is "" is still a request.
type wireMessage struct {
	Version string          `json:"jsonrpc"`
	ID      any             `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *jsonrpc.Error  `json:"error"`
}

// parseFlags decode field names exactly ("ID" is not "id"), as the SDK
// does; the line is a fresh copy, so raw values may point into it.
const parseFlags = json.DontMatchCaseInsensitiveStructFields | json.DontCopyRawMessage | json.DontCopyString

// decodeLine turns one line into the messages it holds. A line that holds
// none is answered here (a batch's bad members are answered within the
// batch's reply) and yields nothing.
func (c *stdioConn) decodeLine(line []byte) []jsonrpc.Message {
	line = bytes.Clone(line) // the reader reuses its buffer; raw values point into this
	trimmed := bytes.TrimSpace(line)
	if trimmed[0] != '[' {
		msg, werr := c.decodeMessage(trimmed)
		if werr != nil {
			c.reply(werr.response())
			return nil
		}
		return []jsonrpc.Message{msg}
	}
	var raws []json.RawMessage
	if rest, err := json.Parse(trimmed, &raws, parseFlags); err != nil || len(bytes.TrimSpace(rest)) > 0 {
		c.reply(parseError(trimmed).response())
		return nil
	}
	if v := c.protocolVersion(); v >= "2025-06-18" {
		c.reply((&wireError{code: jsonrpc.CodeInvalidRequest, msg: fmt.Sprintf("JSON-RPC batches are not part of protocol %s (the session's version); send one message per line", v)}).response())
		return nil
	}
	if len(raws) == 0 {
		c.reply((&wireError{code: jsonrpc.CodeInvalidRequest, msg: "an empty batch"}).response())
		return nil
	}
	var msgs []jsonrpc.Message
	batch := &batchReply{pending: map[jsonrpc.ID]int{}}
	for _, raw := range raws {
		msg, werr := c.decodeMessage(raw)
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			if _, dup := batch.pending[req.ID]; dup {
				werr, msg = &wireError{code: jsonrpc.CodeInvalidRequest, msg: fmt.Sprintf("the batch uses id %v twice", req.ID.Raw()), id: req.ID}, nil
			} else {
				batch.pending[req.ID] = len(batch.replies)
				batch.replies = append(batch.replies, nil)
			}
		}
		if werr != nil {
			batch.replies = append(batch.replies, werr.response())
			continue
		}
		msgs = append(msgs, msg)
	}
	switch {
	case len(batch.pending) > 0:
		c.mu.Lock()
		if c.batches == nil {
			c.batches = map[jsonrpc.ID]*batchReply{}
		}
		for id := range batch.pending {
			if _, taken := c.batches[id]; taken {
				c.mu.Unlock()
				c.reply((&wireError{code: jsonrpc.CodeInvalidRequest, msg: fmt.Sprintf("id %v is already in use by a request being answered", id.Raw())}).response())
				return nil
			}
		}
		for id := range batch.pending {
			c.batches[id] = batch
		}
		c.mu.Unlock()
	case len(batch.replies) > 0:
		c.reply(batch.encode()) // only bad members: their errors are the whole reply
	}
	return msgs
}

// decodeMessage decodes one JSON-RPC message, as the SDK's DecodeMessage
// does, or says why it is not one.
func (c *stdioConn) decodeMessage(raw []byte) (jsonrpc.Message, *wireError) {
	var w wireMessage
	rest, err := json.Parse(raw, &w, parseFlags)
	if err != nil || len(bytes.TrimSpace(rest)) > 0 {
		if json.Valid(raw) {
			return nil, &wireError{code: jsonrpc.CodeInvalidRequest, msg: "a JSON-RPC message is a JSON object with \"jsonrpc\": \"2.0\""}
		}
		return nil, parseError(raw)
	}
	id, err := jsonrpc.MakeID(w.ID)
	if err != nil {
		return nil, &wireError{code: jsonrpc.CodeInvalidRequest, msg: "an id is a string or a number"}
	}
	if w.Version != "2.0" {
		return nil, &wireError{code: jsonrpc.CodeInvalidRequest, msg: fmt.Sprintf("\"jsonrpc\" is %q; it must be \"2.0\"", w.Version), id: id}
	}
	if w.Method != nil {
		c.mu.Lock()
		if *w.Method == "initialize" {
			c.initSeen = true
			if id.IsValid() {
				c.initID = id
			}
		}
		early := !c.initSeen
		c.mu.Unlock()
		if early && needsInitialize(*w.Method, id.IsValid(), w.Params) {
			return nil, &wireError{code: jsonrpc.CodeInvalidRequest, msg: beforeInitialize(*w.Method), id: id}
		}
		return &jsonrpc.Request{ID: id, Method: *w.Method, Params: w.Params}, nil
	}
	if !id.IsValid() {
		return nil, &wireError{code: jsonrpc.CodeInvalidRequest, msg: "a message with no method is a response, and a response has an id"}
	}
	resp := &jsonrpc.Response{ID: id, Result: w.Result}
	if w.Error != nil {
		resp.Error = w.Error
	}
	return resp, nil
}

// collect notes an answer on its way out: to initialize (the session's
// protocol version decides whether batches are allowed), or to a member of
// a batch. It returns what to write now, and false while the answer's
// batch still waits for others.
func (c *stdioConn) collect(resp *jsonrpc.Response, data []byte) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.initID.IsValid() && resp.ID == c.initID {
		c.initID = jsonrpc.ID{}
		var result struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if resp.Error == nil && stdjson.Unmarshal(resp.Result, &result) == nil {
			c.version = result.ProtocolVersion
		}
	}
	batch, ok := c.batches[resp.ID]
	if !ok {
		return data, true
	}
	delete(c.batches, resp.ID)
	batch.replies[batch.pending[resp.ID]] = data
	delete(batch.pending, resp.ID)
	if len(batch.pending) > 0 {
		return nil, false
	}
	return batch.encode(), true
}

func (c *stdioConn) protocolVersion() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// reply writes an answer boris makes itself (to a line that is not a
// message), serialised with the SDK's writes.
func (c *stdioConn) reply(data []byte) { _, _ = c.w.Write(append(data, '\n')) }

// batchReply collects the answers to one batch's requests, in the batch's
// order, to be written together.
type batchReply struct {
	pending map[jsonrpc.ID]int // requests not answered yet → their place
	replies [][]byte
}

func (b *batchReply) encode() []byte {
	return append(append([]byte{'['}, bytes.Join(b.replies, []byte{','})...), ']')
}

// wireError is a JSON-RPC error boris answers a line with.
type wireError struct {
	code int64
	msg  string
	id   jsonrpc.ID // the zero ID answers with "id": null
}

func parseError(raw []byte) *wireError {
	msg := "text after the end of the value"
	if err := stdjson.Unmarshal(raw, new(any)); err != nil {
		msg = err.Error()
		var se *stdjson.SyntaxError
		if errors.As(err, &se) {
			msg = fmt.Sprintf("%s (at byte %d)", msg, se.Offset)
		}
	}
	return &wireError{code: jsonrpc.CodeParseError, msg: "the line is not JSON: " + msg}
}

// response is the error as a JSON-RPC response; without an id it says
// "id": null, as JSON-RPC asks of an answer to a message whose id could
// not be read.
func (e *wireError) response() []byte {
	var id any
	if e.id.IsValid() {
		id = e.id.Raw()
	}
	data, err := stdjson.Marshal(struct {
		Version string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", id, &jsonrpc.Error{Code: e.code, Message: e.msg}})
	if err != nil { // cannot happen: every part is a plain value
		panic(err)
	}
	return data
}
