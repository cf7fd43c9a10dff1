package lsp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/boris-mcp/boris/internal/shell"
)

// maxOpenDocs bounds the documents a server holds open for boris; the
// least recently used is closed beyond it.
const maxOpenDocs = 200

// client is one running language server: its process, its connection, the
// documents it holds open and what it has published about them.
type client struct {
	lang   *Language
	root   string
	argv   []string
	logger *slog.Logger

	proc   *shell.Server
	conn   *jsonrpc2.Conn
	stderr *tail
	errs   *errLog // the errors it reported, on stderr and in messages

	// Set by initialize, read-only afterwards.
	name     string // what the server calls itself, else argv[0]
	caps     serverCapabilities
	utf8     bool
	save     bool
	saveText bool
	// pull: the server answers textDocument/diagnostic, asked after every
	// text sent; wantDiags: it takes clangd's wantDiagnostics.
	pull      bool
	wantDiags bool

	dead     chan struct{} // closed when the connection ends (the process died or was stopped)
	stopping chan struct{} // closed when boris stops it on purpose

	reqSeq int64
	// docMu orders what is sent about documents (didOpen, didChange,
	// didClose, watched files) with the requests that depend on it: a
	// call that finds a document open knows its didOpen was written.
	// The connection's reader never takes it.
	docMu    sync.Mutex
	mu       sync.Mutex
	docs     map[string]*doc // open documents by absolute path
	useClock int64
	diags    map[string][]diagState // by absolute path: the last few versions', oldest first
	pubBell  chan struct{}          // closed and replaced on every publish
	holdBell chan struct{}          // closed and replaced when an edit lets go of a document
	progress map[string]string
	watchReg map[string][]watchPattern // workspace/didChangeWatchedFiles registrations by id
	watch    *watcher
	lastUse  time.Time
	busy     int // calls using the server now
}

// doc is an open document: what the server holds.
type doc struct {
	version int
	langID  string
	sum     [32]byte
	stamp   stamp
	used    int64
	// held counts the edits that will send the document's next text
	// themselves: until they have, it is not refreshed from the disk.
	held int
}

// diagState is what the server last published for a file.
type diagState struct {
	// version is the text the list is about: the document version the
	// server gave, or — from a server that gives none — the version boris
	// had last sent when the list arrived; -1 for a file not open.
	version int
	list    []diagnostic
}

// Whether the diagnostics of a document version are known (see
// diagnosticsAt).
const (
	diagsNone    = iota // not yet
	diagsCurrent        // published for that version
	diagsNewer          // only for a later version: that one's are past
)

// stamp identifies a version of a file on disk cheaply.
type stamp struct {
	ino, size, mod int64
}

func stampOf(fi os.FileInfo) stamp {
	st := stamp{size: fi.Size(), mod: fi.ModTime().UnixNano()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = int64(sys.Ino)
	}
	return st
}

// tail keeps the end of a server's stderr for error messages and logs
// each line at debug.
type tail struct {
	mu     sync.Mutex
	buf    []byte
	line   []byte
	logger *slog.Logger
	errs   *errLog // told of every line (nil: not kept)
}

const tailBytes = 2048

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*tailBytes {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailBytes:]...)
	}
	t.line = append(t.line, p...)
	for {
		i := bytes.IndexByte(t.line, '\n')
		if i < 0 {
			break
		}
		if l := strings.TrimSpace(string(t.line[:i])); l != "" {
			t.logger.Debug("language server stderr", "line", l)
			if t.errs != nil {
				t.errs.stderrLine(l)
			}
		}
		t.line = t.line[i+1:]
	}
	if len(t.line) > 64<<10 {
		t.line = t.line[:0]
	}
	return len(p), nil
}

// String returns the last lines written, at most about tailBytes.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > tailBytes {
		b = b[len(b)-tailBytes:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	return strings.TrimSpace(string(b))
}

// pipe joins a server's stdout and stdin into the stream jsonrpc2 reads
// and writes.
type pipe struct {
	r io.ReadCloser
	w io.WriteCloser
}

func (p pipe) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p pipe) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p pipe) Close() error                { return errors.Join(p.w.Close(), p.r.Close()) }

// startClient starts argv for lang in root and initializes it.
func startClient(ctx context.Context, m *Manager, lang *Language, root string, argv []string) (*client, error) {
	logger := m.opts.Logger.With("language", lang.Name, "root", root, "server", argv[0])
	errs := &errLog{}
	c := &client{
		lang: lang, root: root, argv: argv, logger: logger, name: filepath.Base(argv[0]),
		stderr:   &tail{logger: logger, errs: errs},
		errs:     errs,
		dead:     make(chan struct{}),
		stopping: make(chan struct{}),
		docs:     map[string]*doc{},
		diags:    map[string][]diagState{},
		pubBell:  make(chan struct{}),
		holdBell: make(chan struct{}),
		progress: map[string]string{},
		watchReg: map[string][]watchPattern{},
		lastUse:  time.Now(),
	}
	// Watching starts before the server reads anything, so no change
	// made by a command while it starts is missed.
	c.startWatching()
	run := argv
	if lang.Launch != nil {
		if p, err := m.opts.Runner.LookPath(argv[0], m.opts.Workdir); err == nil {
			run = lang.Launch(append([]string{p}, argv[1:]...))
		}
	}
	runner := m.opts.Runner
	if m.opts.Confine != nil {
		start, done, err := m.opts.Confine(root)
		if err != nil {
			if c.watch != nil {
				c.watch.close()
			}
			return nil, &StartError{Lang: lang.Name, Argv: argv, Err: fmt.Errorf("confine it to %s: %w", root, err)}
		}
		if start != nil {
			runner = runner.WithStart(start)
			defer done()
		}
	}
	proc, err := runner.StartServer(shell.ServerSpec{Argv: run, Dir: root, Env: m.opts.Env, Stderr: c.stderr})
	if err != nil {
		if c.watch != nil {
			c.watch.close()
		}
		return nil, &StartError{Lang: lang.Name, Argv: argv, Err: err}
	}
	c.proc = proc
	logger.Info("language server started", "pid", proc.Pid())
	stream := jsonrpc2.NewBufferedStream(pipe{proc.Stdout(), proc.Stdin()}, jsonrpc2.VSCodeObjectCodec{})
	c.conn = jsonrpc2.NewConn(context.Background(), stream, handler{c}, jsonrpc2.SetLogger(discardLogger{}))
	go func() {
		select {
		case <-c.conn.DisconnectNotify():
		case <-proc.Exited():
			_ = c.conn.Close()
		}
		close(c.dead)
	}()
	if err := c.initialize(ctx); err != nil {
		c.stop()
		// What it wrote before it died is the reason: wait for the last
		// of it (not for long: a process that escaped its group may hold
		// stderr open).
		flushed := make(chan struct{})
		go func() { proc.WaitStderr(); close(flushed) }()
		select {
		case <-flushed:
		case <-time.After(500 * time.Millisecond):
		}
		tailText := c.stderr.String()
		if ctx.Err() != nil && !errors.Is(err, errDied) {
			return nil, err
		}
		return nil, &StartError{Lang: lang.Name, Argv: argv, Err: err, Stderr: tailText, Exit: c.exitText()}
	}
	return c, nil
}

// errDied is returned for a request when the server's process ended.
var errDied = errors.New("the language server exited")

// discardLogger silences jsonrpc2's own log (its protocol errors surface
// as errors of the calls).
type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}

// awaitExit waits up to d, or until ctx ends, for the process to be
// reaped: its connection may close a moment before.
func (c *client) awaitExit(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.proc.Exited():
	case <-t.C:
	case <-ctx.Done():
	}
}

// exitText describes how the process ended ("" while it runs).
func (c *client) exitText() string {
	select {
	case <-c.proc.Exited():
		code := c.proc.ExitCode()
		if code > 128 {
			return fmt.Sprintf("killed by signal %d", code-128)
		}
		return fmt.Sprintf("exit status %d", code)
	default:
		return ""
	}
}

func (c *client) initialize(ctx context.Context) error {
	params := map[string]any{
		"processId":  os.Getpid(),
		"clientInfo": map[string]any{"name": "boris"},
		"rootUri":    fileURI(c.root),
		"rootPath":   c.root,
		"workspaceFolders": []map[string]any{
			{"uri": fileURI(c.root), "name": filepath.Base(c.root)},
		},
		"capabilities": clientCapabilities,
	}
	var res initializeResult
	if err := c.call(ctx, "initialize", params, &res); err != nil {
		return err
	}
	c.caps = res.Capabilities
	if res.ServerInfo != nil && res.ServerInfo.Name != "" {
		c.name = res.ServerInfo.Name
	}
	enc := res.Capabilities.PositionEncoding
	if enc == "" {
		enc = res.OffsetEncoding
	}
	c.utf8 = enc == "utf-8"
	c.save, c.saveText = syncOptions(res.Capabilities.TextDocumentSync)
	c.pull = supported(res.Capabilities.DiagnosticProvider)
	c.wantDiags = c.name == "clangd"
	if err := c.notify("initialized", map[string]any{}); err != nil {
		return err
	}
	if c.lang.Settings != nil {
		return c.notify("workspace/didChangeConfiguration", map[string]any{"settings": c.lang.Settings})
	}
	return nil
}

var symbolKindSet = func() []int {
	var s []int
	for k := 1; k <= 26; k++ {
		s = append(s, k)
	}
	return s
}()

// clientCapabilities is what boris tells servers it handles.
var clientCapabilities = map[string]any{
	"general": map[string]any{"positionEncodings": []string{"utf-8", "utf-16"}},
	// clangd before LSP 3.17 negotiates the encoding here.
	"offsetEncoding": []string{"utf-8", "utf-16"},
	"workspace": map[string]any{
		"workspaceFolders":       true,
		"configuration":          true,
		"didChangeWatchedFiles":  map[string]any{"dynamicRegistration": true, "relativePatternSupport": true},
		"symbol":                 map[string]any{"symbolKind": map[string]any{"valueSet": symbolKindSet}},
		"didChangeConfiguration": map[string]any{"dynamicRegistration": false},
	},
	"textDocument": map[string]any{
		"synchronization":    map[string]any{"didSave": true},
		"publishDiagnostics": map[string]any{"versionSupport": true},
		// Pull diagnostics: asked for after every text sent, where the
		// server has them (no debounce to wait out).
		"diagnostic":     map[string]any{"dynamicRegistration": false, "relatedDocumentSupport": false},
		"definition":     map[string]any{"linkSupport": true},
		"implementation": map[string]any{"linkSupport": true},
		"references":     map[string]any{},
		"hover":          map[string]any{"contentFormat": []string{"markdown", "plaintext"}},
		"documentSymbol": map[string]any{
			"hierarchicalDocumentSymbolSupport": true,
			"symbolKind":                        map[string]any{"valueSet": symbolKindSet},
		},
		"callHierarchy": map[string]any{},
	},
	"window": map[string]any{"workDoneProgress": true},
}

// call sends a request and waits for its answer, or for ctx (then the
// server is told to cancel), or for the server's death.
func (c *client) call(ctx context.Context, method string, params, result any) error {
	w, err := c.dispatch(method, params)
	if err != nil {
		return err
	}
	return c.await(ctx, w, result)
}

// sent is a request written to the server, its answer awaited.
type sent struct {
	id jsonrpc2.ID
	w  jsonrpc2.Waiter
}

// dispatch writes a request (it is on the connection when dispatch
// returns).
func (c *client) dispatch(method string, params any) (sent, error) {
	c.mu.Lock()
	c.reqSeq++
	id := jsonrpc2.ID{Str: fmt.Sprintf("b%d", c.reqSeq), IsString: true}
	c.mu.Unlock()
	w, err := c.conn.DispatchCall(context.Background(), method, params, jsonrpc2.PickID(id))
	if err != nil {
		return sent{}, c.connErr(err)
	}
	return sent{id, w}, nil
}

// await waits for the answer of a dispatched request (see call).
func (c *client) await(ctx context.Context, s sent, result any) error {
	id, w := s.id, s.w
	done := make(chan error, 1)
	wctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { done <- w.Wait(wctx, result) }()
	select {
	case err := <-done:
		return c.connErr(err)
	case <-c.dead:
		// The connection is closed by now, so the wait ends at once:
		// with the answer, when it came before the end.
		return c.connErr(<-done)
	case <-ctx.Done():
		_ = c.conn.Notify(context.Background(), "$/cancelRequest", map[string]any{"id": id.Str})
		return ctx.Err()
	}
}

// connErr turns a closed connection into errDied.
func (c *client) connErr(err error) error {
	if errors.Is(err, jsonrpc2.ErrClosed) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errDied
	}
	select {
	case <-c.dead:
		if err != nil {
			return errDied
		}
	default:
	}
	return err
}

func (c *client) notify(method string, params any) error {
	return c.connErr(c.conn.Notify(context.Background(), method, params))
}

// handler answers the server's requests and takes its notifications. It
// runs on the connection's reading goroutine: notifications are handled in
// order and never write; requests are answered from a goroutine of their
// own, so a reply never waits on a server that waits on us.
type handler struct{ c *client }

func (h handler) Handle(_ context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	if req.Notif {
		h.c.notification(req)
		return
	}
	go func() {
		res, err := h.c.serverRequest(req)
		if err != nil {
			_ = conn.ReplyWithError(context.Background(), req.ID, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: err.Error()})
			return
		}
		_ = conn.Reply(context.Background(), req.ID, res)
	}()
}

func params(req *jsonrpc2.Request) json.RawMessage {
	if req.Params == nil {
		return nil
	}
	return *req.Params
}

func (c *client) notification(req *jsonrpc2.Request) {
	switch req.Method {
	case "textDocument/publishDiagnostics":
		var p publishDiagnosticsParams
		if json.Unmarshal(params(req), &p) != nil {
			return
		}
		path := p.URI.path()
		if path == "" {
			return
		}
		c.mu.Lock()
		v := -1
		if p.Version != nil && *p.Version > 0 {
			v = *p.Version
		} else if d := c.docs[path]; d != nil {
			v = d.version
		}
		c.storeDiagsLocked(path, v, p.Diagnostics)
		c.mu.Unlock()
	case "$/progress":
		var p progressParams
		if json.Unmarshal(params(req), &p) != nil {
			return
		}
		tok := string(p.Token)
		c.mu.Lock()
		switch p.Value.Kind {
		case "begin":
			c.progress[tok] = strings.TrimSpace(p.Value.Title + " " + p.Value.Message)
		case "report":
			if t, ok := c.progress[tok]; ok && p.Value.Percentage != nil {
				title, _, _ := strings.Cut(t, " (")
				c.progress[tok] = fmt.Sprintf("%s (%d%%)", title, *p.Value.Percentage)
			}
		case "end":
			delete(c.progress, tok)
		}
		c.mu.Unlock()
	case "window/logMessage", "window/showMessage":
		var p showMessageParams
		if json.Unmarshal(params(req), &p) == nil {
			c.logger.Debug("language server message", "type", p.Type, "message", p.Message)
			c.errs.message(p.Type, p.Message)
		}
	}
}

func (c *client) serverRequest(req *jsonrpc2.Request) (any, error) {
	switch req.Method {
	case "workspace/configuration":
		var p struct {
			Items []struct {
				Section string `json:"section"`
			} `json:"items"`
		}
		_ = json.Unmarshal(params(req), &p)
		out := make([]any, len(p.Items))
		for i, it := range p.Items {
			if c.lang.Settings != nil {
				if v, ok := c.lang.Settings[it.Section]; ok {
					out[i] = v
				}
			}
		}
		return out, nil
	case "window/workDoneProgress/create", "window/showMessageRequest", "window/showDocument":
		return nil, nil
	case "workspace/workspaceFolders":
		return []map[string]any{{"uri": fileURI(c.root), "name": filepath.Base(c.root)}}, nil
	case "client/registerCapability":
		var p registrationParams
		_ = json.Unmarshal(params(req), &p)
		for _, r := range p.Registrations {
			if r.Method != "workspace/didChangeWatchedFiles" {
				continue
			}
			var o watchedFilesOptions
			_ = json.Unmarshal(r.RegisterOptions, &o)
			pats := compileWatchers(o.Watchers, c.root)
			c.mu.Lock()
			c.watchReg[r.ID] = pats
			c.mu.Unlock()
		}
		return nil, nil
	case "client/unregisterCapability":
		var p unregistrationParams
		_ = json.Unmarshal(params(req), &p)
		c.mu.Lock()
		for _, u := range p.Unregisterations {
			delete(c.watchReg, u.ID)
		}
		c.mu.Unlock()
		return nil, nil
	case "workspace/applyEdit":
		return map[string]any{"applied": false, "failureReason": "boris applies no edits from language servers"}, nil
	case "workspace/diagnostic/refresh":
		// What it answered before may be out of date (another file
		// changed): ask again about the open documents.
		go c.repull()
		return nil, nil
	case "workspace/semanticTokens/refresh", "workspace/inlayHint/refresh", "workspace/codeLens/refresh", "workspace/inlineValue/refresh":
		return nil, nil
	}
	return nil, fmt.Errorf("boris does not handle %s", req.Method)
}

// alive reports whether the server's connection still stands.
func (c *client) alive() bool {
	select {
	case <-c.dead:
		return false
	default:
		return true
	}
}

// stop ends the server: the protocol's shutdown and exit, briefly, then
// the process group (TERM, then KILL).
func (c *client) stop() {
	select {
	case <-c.stopping:
		c.proc.Stop()
		return
	default:
		close(c.stopping)
	}
	if c.alive() {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		if c.call(ctx, "shutdown", nil, nil) == nil {
			_ = c.notify("exit", nil)
			select {
			case <-c.proc.Exited():
			case <-time.After(500 * time.Millisecond):
			}
		}
		cancel()
	}
	_ = c.conn.Close()
	c.proc.Stop()
	c.mu.Lock()
	if c.watch != nil {
		c.watch.close()
		c.watch = nil
	}
	c.mu.Unlock()
	c.logger.Info("language server stopped", "pid", c.proc.Pid(), "exit", c.exitText())
}

// indexing describes the work the server reports in progress ("" when
// none).
func (c *client) indexing() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.progress) == 0 {
		return ""
	}
	var titles []string
	for _, t := range c.progress {
		titles = append(titles, t)
	}
	sort.Strings(titles)
	return strings.Join(titles, "; ")
}

// readFile reads a file for the server and stamps it.
func readFile(path string) ([]byte, stamp, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, stamp{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, stamp{}, err
	}
	if fi.IsDir() {
		return nil, stamp{}, fmt.Errorf("%s is a directory", path)
	}
	data, err := io.ReadAll(f)
	return data, stampOf(fi), err
}

// open makes sure the server holds path with content (read from disk when
// nil): didOpen the first time, didChange (and didSave) when it differs.
// It returns the document's version and whether anything was sent.
func (c *client) open(path string, content []byte, st stamp, langID string, saved bool) (int, bool, error) {
	c.docMu.Lock()
	defer c.docMu.Unlock()
	return c.openLocked(path, content, st, langID, saved)
}

// openLocked is open with docMu held.
func (c *client) openLocked(path string, content []byte, st stamp, langID string, saved bool) (int, bool, error) {
	c.mu.Lock()
	c.useClock++
	d := c.docs[path]
	if d != nil && st != (stamp{}) && d.stamp == st {
		// The file as the server holds it, by its stamp: no need to
		// compare the text.
		d.used = c.useClock
		v := d.version
		c.mu.Unlock()
		return v, false, nil
	}
	c.mu.Unlock()
	sum := sha256.Sum256(content)
	c.mu.Lock()
	c.useClock++
	d = c.docs[path]
	if d != nil {
		d.used = c.useClock
		d.stamp = st
		if d.sum == sum {
			v := d.version
			c.mu.Unlock()
			return v, false, nil
		}
		d.version++
		d.sum = sum
		v := d.version
		c.mu.Unlock()
		p := didChangeParams{
			TextDocument:   versionedTextDocumentIdentifier{URI: fileURI(path), Version: v},
			ContentChanges: []contentChange{{Text: string(content)}},
		}
		if c.wantDiags {
			yes := true
			p.WantDiagnostics = &yes
		}
		if err := c.notify("textDocument/didChange", p); err != nil {
			return 0, false, err
		}
		c.pullDiagnostics(path, v)
		if saved && c.save {
			p := didSaveParams{TextDocument: textDocumentIdentifier{URI: fileURI(path)}}
			if c.saveText {
				s := string(content)
				p.Text = &s
			}
			if err := c.notify("textDocument/didSave", p); err != nil {
				return 0, false, err
			}
		}
		return v, true, nil
	}
	d = &doc{version: 1, langID: langID, sum: sum, stamp: st, used: c.useClock}
	c.docs[path] = d
	var evict []string
	if len(c.docs) > maxOpenDocs {
		evict = c.lruLocked(len(c.docs) - maxOpenDocs)
	}
	c.mu.Unlock()
	for _, p := range evict {
		_ = c.notify("textDocument/didClose", didCloseParams{TextDocument: textDocumentIdentifier{URI: fileURI(p)}})
	}
	err := c.notify("textDocument/didOpen", didOpenParams{TextDocument: textDocumentItem{URI: fileURI(path), LanguageID: langID, Version: 1, Text: string(content)}})
	if err == nil {
		c.pullDiagnostics(path, 1)
	}
	return 1, true, err
}

// pullDiagnostics asks a server that has pull diagnostics for those of a
// document version just sent, and keeps the answer as if published. It is
// called with docMu held, so the request follows that text and no other
// on the connection: the answer is about that version. A server that
// cancels the request asking for it again is asked again, a few times.
func (c *client) pullDiagnostics(path string, version int) {
	if !c.pull {
		return
	}
	params := documentDiagnosticParams{TextDocument: textDocumentIdentifier{URI: fileURI(path)}}
	w, err := c.dispatch("textDocument/diagnostic", params)
	if err != nil {
		c.logger.Debug("pull diagnostics", "path", path, "err", err)
		return
	}
	go func() {
		for try := 0; ; try++ {
			var rep documentDiagnosticReport
			err := c.await(context.Background(), w, &rep)
			if err == nil {
				if rep.Kind == "" || rep.Kind == "full" {
					c.mu.Lock()
					c.storeDiagsLocked(path, version, rep.Items)
					c.mu.Unlock()
				}
				return
			}
			var rpcErr *jsonrpc2.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != codeServerCancelled || try >= 3 {
				c.logger.Debug("pull diagnostics", "path", path, "err", err)
				return
			}
			// Asked again with docMu held, so that the answer is about
			// this version still, or is not taken as such.
			c.docMu.Lock()
			c.mu.Lock()
			d := c.docs[path]
			still := d != nil && d.version == version
			c.mu.Unlock()
			if still {
				w, err = c.dispatch("textDocument/diagnostic", params)
			}
			c.docMu.Unlock()
			if !still || err != nil {
				return
			}
		}
	}()
}

// repull asks a pull server again about every open document.
func (c *client) repull() {
	c.docMu.Lock()
	defer c.docMu.Unlock()
	c.mu.Lock()
	versions := map[string]int{}
	for p, d := range c.docs {
		versions[p] = d.version
	}
	c.mu.Unlock()
	for p, v := range versions {
		c.pullDiagnostics(p, v)
	}
}

// codeServerCancelled is the LSP error of a request the server gave up
// (pull diagnostics: to be asked again).
const codeServerCancelled = -32802

// keptVersions is how many versions' diagnostics are kept per file: an
// edit waiting for its version's finds them though a later one came.
const keptVersions = 4

// storeDiagsLocked keeps a list published (or pulled) for a version of
// path, in order of versions (the latest report for a version wins), and
// rings the bell. c.mu is held.
func (c *client) storeDiagsLocked(path string, version int, list []diagnostic) {
	hist := c.diags[path]
	st := diagState{version: version, list: list}
	i := len(hist)
	for i > 0 && hist[i-1].version > version {
		i--
	}
	switch {
	case version < 0:
		hist = []diagState{st}
	case i > 0 && hist[i-1].version == version:
		hist[i-1] = st
	default:
		hist = append(hist[:i], append([]diagState{st}, hist[i:]...)...)
		if len(hist) > keptVersions {
			hist = hist[len(hist)-keptVersions:]
		}
	}
	c.diags[path] = hist
	close(c.pubBell)
	c.pubBell = make(chan struct{})
}

// latestDiags returns the last list reported for path (nil when none).
func (c *client) latestDiags(path string) []diagnostic {
	c.mu.Lock()
	defer c.mu.Unlock()
	if hist := c.diags[path]; len(hist) > 0 {
		return hist[len(hist)-1].list
	}
	return nil
}

// lruLocked removes and returns the n least recently used documents.
func (c *client) lruLocked(n int) []string {
	type e struct {
		p    string
		used int64
	}
	var all []e
	for p, d := range c.docs {
		if d.held == 0 {
			all = append(all, e{p, d.used})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].used < all[j].used })
	var out []string
	for _, x := range all[:min(n, len(all))] {
		delete(c.docs, x.p)
		delete(c.diags, x.p)
		out = append(out, x.p)
	}
	return out
}

// closeDoc tells the server a document is gone.
func (c *client) closeDoc(path string) {
	c.docMu.Lock()
	defer c.docMu.Unlock()
	c.closeDocLocked(path)
}

func (c *client) closeDocLocked(path string) {
	c.mu.Lock()
	_, ok := c.docs[path]
	delete(c.docs, path)
	delete(c.diags, path)
	c.mu.Unlock()
	if ok {
		_ = c.notify("textDocument/didClose", didCloseParams{TextDocument: textDocumentIdentifier{URI: fileURI(path)}})
	}
}

// refresh brings the server up to date with the disk before a request:
// open documents a command changed are sent again (or closed when gone),
// and files created, changed or deleted where the server watches are
// reported to it.
func (c *client) refresh() error { return c.refreshExcept("") }

// refreshExcept is refresh leaving one document alone.
func (c *client) refreshExcept(skip string) error {
	c.docMu.Lock()
	defer c.docMu.Unlock()
	c.mu.Lock()
	type check struct {
		path string
		st   stamp
		id   string
	}
	var checks []check
	for p, d := range c.docs {
		if p != skip && d.held == 0 {
			checks = append(checks, check{p, d.stamp, d.langID})
		}
	}
	c.mu.Unlock()
	for _, ch := range checks {
		fi, err := os.Stat(ch.path)
		if err != nil {
			c.closeDocLocked(ch.path)
			continue
		}
		if stampOf(fi) == ch.st {
			continue
		}
		data, st, err := readFile(ch.path)
		if err != nil {
			c.closeDocLocked(ch.path)
			continue
		}
		if _, _, err := c.openLocked(ch.path, data, st, ch.id, true); err != nil {
			return err
		}
	}
	return c.flushWatched()
}

// diagnosticsAt returns what the server last reported for path and
// whether that is about version (diagsCurrent), a later one (diagsNewer),
// or neither yet (diagsNone).
func (c *client) diagnosticsAt(path string, version int) ([]diagnostic, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	hist := c.diags[path]
	for _, st := range hist {
		if st.version == version {
			return st.list, diagsCurrent
		}
	}
	if len(hist) > 0 && hist[len(hist)-1].version > version {
		return hist[len(hist)-1].list, diagsNewer
	}
	return nil, diagsNone
}

// bell returns the channel closed at the next publish.
func (c *client) bell() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pubBell
}

// waitDiagnostics waits until the server has reported on path at version
// or later (see diagnosticsAt), or until deadline.
func (c *client) waitDiagnostics(ctx context.Context, path string, version int, deadline time.Time) ([]diagnostic, int) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		bell := c.bell()
		if list, st := c.diagnosticsAt(path, version); st != diagsNone {
			return list, st
		}
		select {
		case <-bell:
		case <-timer.C:
			return nil, diagsNone
		case <-ctx.Done():
			return nil, diagsNone
		case <-c.dead:
			return nil, diagsNone
		}
	}
}

// hold marks an open document as one whose next text an edit sends (not
// the refresh from the disk); unhold ends that.
func (c *client) hold(path string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.docs[path]
	if d == nil {
		return false
	}
	d.held++
	return true
}

func (c *client) unhold(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.docs[path]; d != nil && d.held > 0 {
		d.held--
	}
	close(c.holdBell)
	c.holdBell = make(chan struct{})
}

// waitUnheld waits until no edit holds path (a request about it is then
// about the edited text), or until ctx ends.
func (c *client) waitUnheld(ctx context.Context, path string) error {
	for {
		c.mu.Lock()
		d, bell := c.docs[path], c.holdBell
		c.mu.Unlock()
		if d == nil || d.held == 0 {
			return nil
		}
		select {
		case <-bell:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.dead:
			return errDied
		}
	}
}

// docVersion returns the version of an open document (0 when not open).
func (c *client) docVersion(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.docs[path]; d != nil {
		return d.version
	}
	return 0
}

// errorsSince returns the error lines the server reported after mark,
// once everything it wrote to stderr before now has been read.
func (c *client) errorsSince(mark uint64) ([]string, bool) {
	c.proc.SettleStderr()
	return c.errs.since(mark)
}
