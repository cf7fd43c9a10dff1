// Package lsp runs language servers for boris and asks them about code: one
// server per language and workspace root, started on demand, shared by every
// session, kept in step with the files (edits made by the tools are sent as
// they happen; changes made by commands are found before the next request),
// restarted when it dies, stopped when idle and at shutdown. It speaks the
// Language Server Protocol over the server's stdin and stdout
// (github.com/sourcegraph/jsonrpc2 frames the messages) and returns plain
// values: locations with their source lines, symbol outlines, call trees,
// and the diagnostics an edit introduced. It knows nothing about MCP.
package lsp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/scope"
	"github.com/boris-mcp/boris/internal/shell"
)

// Defaults.
const (
	DefaultIdleTimeout = 10 * time.Minute
	// startTimeout bounds starting and initializing a server.
	startTimeout = 60 * time.Second
	// crashWindow and maxCrashes: a server that died this often within
	// the window is not restarted until the window has passed.
	crashWindow = 5 * time.Minute
	maxCrashes  = 5
	// retryFailedStart is how long a failed start is reported again
	// before the next call tries anew.
	retryFailedStart = 10 * time.Second
	// exitGrace is how long a call waits for the exit status of a server
	// whose connection closed, to say how it ended.
	exitGrace = time.Second
)

// Options configure a Manager.
type Options struct {
	// Servers replace the command of a language (canonical name, see
	// LanguageNamed) or add one; a nil command disables the language.
	Servers map[string][]string
	// IdleTimeout stops a server nobody used for this long (0: the
	// default).
	IdleTimeout time.Duration
	// RequestTimeout bounds one request (0: DefaultRequestTimeout).
	RequestTimeout time.Duration
	// Runner starts the servers (through its Start hook: the sandbox).
	Runner *shell.Runner
	// Env are variables added to the servers' environment.
	Env []string
	// Workdir is the root of files outside any project.
	Workdir string
	// MaxFileSize is the largest file read for a server or an answer
	// (0: no limit).
	MaxFileSize int64
	// Policy decides which paths may be read and shown.
	Policy *scope.Policy
	// Confine, if set, gives the start of a server for a root in place of
	// the Runner's: one confined like the commands of the workspace that
	// holds root (a language server runs the workspace's code: build
	// scripts, macros). start nil means the Runner's; done is called once
	// the server has started.
	Confine func(root string) (start func(*exec.Cmd) error, done func(), err error)
	Logger  *slog.Logger
}

// Manager owns the language servers of a boris process.
type Manager struct {
	opts Options

	texts textCache

	mu      sync.Mutex
	servers map[key]*entry
	// edits counts the edits begun per file (see Warm).
	edits map[string]uint64
	// chain holds, per file, the last edit whose report is not known yet.
	chain  map[string]*editFile
	closed bool
	wg     sync.WaitGroup // stops and edits' background work in flight
	// bg is the context of background work, cancelled by Close.
	bg     context.Context
	bgStop context.CancelFunc
}

type key struct{ lang, root string }

// entry is the server of one language and root, across restarts.
type entry struct {
	c        *client
	starting chan struct{} // closed when the start in progress ends
	startErr error
	failedAt time.Time // when the last start failed
	crashes  []time.Time
	idle     *time.Timer
}

// New returns a Manager; nothing starts until a file needs a server.
func New(opts Options) *Manager {
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	bg, stop := context.WithCancel(context.Background())
	return &Manager{opts: opts, servers: map[key]*entry{}, bg: bg, bgStop: stop}
}

// StartError is a server that could not be started or initialized.
type StartError struct {
	Lang   string
	Argv   []string
	Err    error
	Stderr string // the end of what it wrote to stderr
	Exit   string // how it ended, when it did
}

func (e *StartError) Error() string {
	msg := fmt.Sprintf("the %s language server (%s) failed to start: %v", e.Lang, strings.Join(e.Argv, " "), e.Err)
	if e.Exit != "" {
		msg += " (" + e.Exit + ")"
	}
	if e.Stderr != "" {
		msg += "; the end of its stderr:\n" + e.Stderr
	}
	return msg
}

func (e *StartError) Unwrap() error { return e.Err }

// commandFor returns the command that serves lang, or a coded error
// saying why there is none.
func (m *Manager) commandFor(l *Language, file string) ([]string, error) {
	if argv, ok := m.opts.Servers[l.Name]; ok {
		if argv == nil {
			return nil, codes.Errorf(codes.LSPNoServer, "the %s language server is disabled (--lsp %s=off); no code intelligence for %s", l.Name, l.Name, file)
		}
		if _, err := m.opts.Runner.LookPath(argv[0], m.opts.Workdir); err != nil {
			return nil, codes.Errorf(codes.LSPStartFailed, "the %s language server given with --lsp %s=%s cannot be run: %v; fix the command (an absolute path, or a program on PATH)", l.Name, l.Name, strings.Join(argv, " "), err)
		}
		return argv, nil
	}
	for _, c := range l.Candidates {
		if _, err := m.opts.Runner.LookPath(c[0], m.opts.Workdir); err == nil {
			return c, nil
		}
	}
	var tried []string
	for _, c := range l.Candidates {
		tried = append(tried, c[0])
	}
	return nil, codes.Errorf(codes.LSPNoServer, "no %s language server for %s: %s not found on PATH. %s. Install one (%s) or name one with --lsp %s=COMMAND (env BORIS_LSP)",
		l.Name, file, strings.Join(tried, " or "), m.configured(), l.Install, l.Name)
}

// configured lists the languages and what serves each now.
func (m *Manager) configured() string {
	var parts []string
	for _, l := range Languages {
		parts = append(parts, l.Name+": "+m.describe(l))
	}
	return "Language servers: " + strings.Join(parts, "; ")
}

// describe says what would serve l.
func (m *Manager) describe(l *Language) string {
	if argv, ok := m.opts.Servers[l.Name]; ok {
		if argv == nil {
			return "off"
		}
		return strings.Join(argv, " ") + " (--lsp)"
	}
	for _, c := range l.Candidates {
		if p, err := m.opts.Runner.LookPath(c[0], m.opts.Workdir); err == nil {
			return p
		}
	}
	var names []string
	for _, c := range l.Candidates {
		names = append(names, c[0])
	}
	return strings.Join(names, " or ") + " not found"
}

// Status lists, for each language, what serves it and the servers
// running, for the log.
func (m *Manager) Status() string {
	var parts []string
	for _, l := range Languages {
		parts = append(parts, l.Name+"="+m.describe(l))
	}
	return strings.Join(parts, ", ")
}

// Handles reports whether a file's language has a server boris would use
// (configured and found), without starting anything.
func (m *Manager) Handles(path string) bool {
	l, _ := languageOf(path)
	if l == nil {
		return false
	}
	_, err := m.commandFor(l, path)
	return err == nil
}

// noLanguage is the error for a file no language server handles.
func (m *Manager) noLanguage(path string) error {
	var exts []string
	for _, l := range Languages {
		var e []string
		for x := range l.IDs {
			e = append(e, x)
		}
		sort.Strings(e)
		exts = append(exts, l.Name+" ("+strings.Join(e, " ")+")")
	}
	return codes.Errorf(codes.LSPNoServer, "no language server handles %s: boris knows servers for %s. %s", path, strings.Join(exts, ", "), m.configured())
}

// acquire returns the running server for a file, starting (or restarting)
// it when needed; note says what happened to it, when the caller should
// know (a restart). release must be called when done.
func (m *Manager) acquire(ctx context.Context, path string) (c *client, langID, note string, err error) {
	l, id := languageOf(path)
	if l == nil {
		return nil, "", "", m.noLanguage(path)
	}
	argv, err := m.commandFor(l, path)
	if err != nil {
		return nil, "", "", err
	}
	k := key{l.Name, findRoot(l, path, m.opts.Workdir)}
	waited := false // for a dead server's exit status
	m.mu.Lock()
	for {
		if m.closed {
			m.mu.Unlock()
			return nil, "", "", codes.Errorf(codes.SessionClosed, "boris is shutting down; its language servers are stopped")
		}
		e := m.servers[k]
		if e == nil {
			e = &entry{}
			m.servers[k] = e
		}
		if e.c != nil && e.c.alive() {
			e.c.busy++
			c := e.c
			m.mu.Unlock()
			return c, id, note, nil
		}
		if e.starting != nil {
			ch := e.starting
			m.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return nil, "", "", m.ctxErr(ctx, l)
			}
			m.mu.Lock()
			if e.startErr != nil && m.servers[k] == e && e.c == nil {
				err := e.startErr
				m.mu.Unlock()
				return nil, "", "", err
			}
			continue
		}
		if e.startErr != nil && e.c == nil && time.Since(e.failedAt) < retryFailedStart {
			// It failed moments ago: say so again rather than spawn it
			// on every call.
			err := e.startErr
			m.mu.Unlock()
			return nil, "", "", err
		}
		// Start it, or start it again: a server that died on its own
		// is restarted after a pause that grows with its recent deaths.
		var delay time.Duration
		if e.c != nil {
			exit := e.c.exitText()
			if exit == "" && !waited {
				// The connection closes a moment before the process is
				// reaped: give its exit status that moment, unlocked,
				// then look again.
				c := e.c
				m.mu.Unlock()
				c.awaitExit(ctx, exitGrace)
				waited = true
				m.mu.Lock()
				continue
			}
			if exit == "" {
				exit = "its connection closed"
			}
			now := time.Now()
			e.crashes = append(e.crashes, now)
			var recent []time.Time
			for _, t := range e.crashes {
				if now.Sub(t) < crashWindow {
					recent = append(recent, t)
				}
			}
			e.crashes = recent
			tailText := e.c.stderr.String()
			m.opts.Logger.Warn("language server died", "language", l.Name, "root", k.root, "server", e.c.name, "exit", exit, "recent_deaths", len(recent))
			if len(recent) >= maxCrashes {
				m.mu.Unlock()
				return nil, "", "", codes.Errorf(codes.LSPStartFailed, "the %s language server (%s) died %d times in the last %s (last: %s) and is not restarted until %s have passed; the end of its stderr:\n%s",
					l.Name, e.c.name, len(recent), crashWindow, exit, crashWindow, orNone(tailText))
			}
			note = fmt.Sprintf("note: the %s language server (%s) had stopped (%s) and was restarted for this call", l.Name, e.c.name, exit)
			delay = min(time.Duration(1<<(len(recent)-1))*500*time.Millisecond, 8*time.Second)
			if len(recent) == 1 {
				delay = 0
			}
			e.c = nil
		}
		e.starting = make(chan struct{})
		e.startErr = nil
		m.wg.Add(1)
		go m.start(e, k, l, argv, delay)
	}
}

func orNone(s string) string {
	if s == "" {
		return "(nothing)"
	}
	return s
}

// start starts a server for an entry, after delay.
func (m *Manager) start(e *entry, k key, l *Language, argv []string, delay time.Duration) {
	defer m.wg.Done()
	if delay > 0 {
		time.Sleep(delay)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	c, err := startClient(ctx, m, l, k.root, argv)
	if errors.Is(err, context.DeadlineExceeded) {
		err = codes.Errorf(codes.LSPTimeout, "the %s language server (%s) did not finish starting within %s", l.Name, strings.Join(argv, " "), startTimeout)
	}
	var se *StartError
	if errors.As(err, &se) {
		err = codes.Errorf(codes.LSPStartFailed, "%s", se.Error())
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err == nil && m.closed {
		go c.stop()
		err = codes.Errorf(codes.SessionClosed, "boris is shutting down; its language servers are stopped")
	}
	if err == nil {
		e.c = c
		m.opts.Logger.Info("language server ready", "language", l.Name, "root", k.root, "server", c.name, "utf8_positions", c.utf8)
	} else {
		e.failedAt = time.Now()
		m.opts.Logger.Warn("language server failed to start", "language", l.Name, "root", k.root, "err", err)
	}
	e.startErr = err
	close(e.starting)
	e.starting = nil
}

// ctxErr words a call that ended while waiting for a server.
func (m *Manager) ctxErr(ctx context.Context, l *Language) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return codes.Errorf(codes.LSPTimeout, "the %s language server is still starting; try again in a moment", l.Name)
	}
	return ctx.Err()
}

// hold starts another use of c, if it is still the running server of its
// language and root.
func (m *Manager) hold(c *client) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.servers[key{c.lang.Name, c.root}]
	if e == nil || e.c != c || !c.alive() {
		return false
	}
	c.busy++
	return true
}

// release ends a use of c; an idle server is stopped after the idle
// timeout.
func (m *Manager) release(c *client) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c.busy--
	c.lastUse = time.Now()
	k := key{c.lang.Name, c.root}
	e := m.servers[k]
	if e == nil || e.c != c || c.busy > 0 {
		return
	}
	if e.idle != nil {
		e.idle.Stop()
	}
	e.idle = time.AfterFunc(m.opts.IdleTimeout, func() { m.stopIdle(k, c) })
}

func (m *Manager) stopIdle(k key, c *client) {
	m.mu.Lock()
	e := m.servers[k]
	if e == nil || e.c != c || c.busy > 0 || time.Since(c.lastUse) < m.opts.IdleTimeout {
		m.mu.Unlock()
		return
	}
	e.c = nil
	m.wg.Add(1)
	m.mu.Unlock()
	defer m.wg.Done()
	m.opts.Logger.Info("stopping an idle language server", "language", c.lang.Name, "root", c.root, "idle", m.opts.IdleTimeout)
	c.stop()
}

// StopAll stops every running server (they start again on demand), and
// returns once they are gone.
func (m *Manager) StopAll() {
	m.mu.Lock()
	var cs []*client
	for _, e := range m.servers {
		if e.c != nil {
			cs = append(cs, e.c)
			e.c = nil
		}
		if e.idle != nil {
			e.idle.Stop()
		}
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() { defer wg.Done(); c.stop() }()
	}
	wg.Wait()
}

// StopUnder stops the servers whose workspace root is dir or lies under
// it (a session's workspace, removed or left): they start again if asked.
func (m *Manager) StopUnder(dir string) {
	m.mu.Lock()
	var cs []*client
	for k, e := range m.servers {
		if !within(k.root, dir) {
			continue
		}
		if e.c != nil {
			cs = append(cs, e.c)
			e.c = nil
		}
		if e.idle != nil {
			e.idle.Stop()
		}
		if e.starting == nil {
			delete(m.servers, k)
		}
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(c.stop)
	}
	wg.Wait()
}

// Close stops every server and refuses new work; it returns when the
// servers are gone. It is idempotent.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.bgStop()
	m.StopAll()
	m.wg.Wait()
}

// Running returns the process ids of the servers running now.
func (m *Manager) Running() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	var pids []int
	for _, e := range m.servers {
		if e.c != nil && e.c.alive() {
			pids = append(pids, e.c.proc.Pid())
		}
	}
	sort.Ints(pids)
	return pids
}

// resolve locates a tool's path argument and checks it may be read.
func (m *Manager) resolve(policy *scope.Policy, cwd, path string) (string, error) {
	if strings.TrimSpace(path) == "" {
		return "", codes.Errorf(codes.InvalidInput, "filePath is required")
	}
	t, err := policy.Locate(cwd, path)
	if err != nil {
		var denied *scope.DeniedError
		if errors.As(err, &denied) {
			return "", codes.Errorf(codes.AccessDenied, "access to %s is denied: %s", denied.Path, denied.Reason)
		}
		return "", codes.Errorf(codes.PathNotFound, "%s: %v", path, err)
	}
	if !t.Exists {
		return "", codes.Errorf(codes.PathNotFound, "%s does not exist", t.Path)
	}
	fi, err := os.Stat(t.Resolved)
	if err != nil {
		return "", codes.Errorf(codes.PathNotFound, "%s: %v", t.Path, err)
	}
	if fi.IsDir() {
		return "", codes.Errorf(codes.InvalidInput, "%s is a directory; give a source file", t.Path)
	}
	return filepath.Clean(t.Resolved), nil
}

// readText returns a file's text, from the cache while the file is
// unchanged, else read through the scope policy.
func (m *Manager) readText(path string) (*text, error) {
	if t := m.texts.get(path); t != nil {
		return t, nil
	}
	data, st, err := m.readChecked(path)
	if err != nil {
		return nil, err
	}
	t := newText(data, st)
	m.texts.put(path, t)
	return t, nil
}

// readChecked reads a file through the scope policy (so a symlink swapped
// in cannot lead the read elsewhere).
func (m *Manager) readChecked(path string) ([]byte, stamp, error) {
	t, err := m.opts.Policy.Locate("/", path)
	if err != nil {
		return nil, stamp{}, err
	}
	f, _, err := m.opts.Policy.Open(t)
	if err != nil {
		return nil, stamp{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, stamp{}, err
	}
	if m.opts.MaxFileSize > 0 && fi.Size() > m.opts.MaxFileSize {
		return nil, stamp{}, &tooLargeError{path: path, size: fi.Size(), limit: m.opts.MaxFileSize}
	}
	data, err := readAll(f, fi.Size())
	return data, stampOf(fi), err
}

// tooLargeError is a file over Options.MaxFileSize.
type tooLargeError struct {
	path        string
	size, limit int64
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, over the %d-byte limit (--max-file-size)", e.path, e.size, e.limit)
}
