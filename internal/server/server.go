// Package server runs boris over its transports: streamable HTTP (with
// /health and /metrics beside /mcp, bearer auth and CORS) or stdio. Every
// MCP session gets its own mcp.Server bound to its own session state; the
// tool set, scope and limits are shared. Ending a session — DELETE, idle
// timeout, stdio EOF, shutdown — terminates every process it started.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/config"
	"github.com/boris-mcp/boris/internal/session"
	"github.com/boris-mcp/boris/internal/tools"
)

// Metrics is what the server reports about sessions; the metrics package
// implements it.
type Metrics interface {
	SessionOpened()
	SessionClosed()
}

// Deps are what a Server is built from.
type Deps struct {
	Config   *config.Config
	Version  string
	Logger   *slog.Logger
	Tools    *tools.Set
	Sessions session.Options
	Metrics  Metrics // may be nil

	// HeaderTimeout bounds reading a request's headers and BodyTimeout its
	// body, so a slow or stalled client cannot hold a connection open
	// forever; zero means the defaults (10 s and 60 s).
	HeaderTimeout, BodyTimeout time.Duration
}

// Server owns the live sessions of one boris process. One mcp.Server
// serves them all (the tool set is the same); each MCP session is bound to
// its own session state on its first request.
type Server struct {
	deps         Deps
	instructions string
	sdkLogger    *slog.Logger
	mcp          *mcp.Server

	mu       sync.Mutex
	sessions map[string]*live // by session id
	bySS     map[*mcp.ServerSession]*live
	closing  bool
	wg       sync.WaitGroup // session watchers

	// posts maps a private per-POST tag to that HTTP request's context, so
	// a tool call ends when its HTTP client goes away (see trackPost).
	postsMu sync.Mutex
	posts   map[string]context.Context
}

// live is a session that has received at least one request.
type live struct {
	sess *session.Session
	ss   *mcp.ServerSession
}

// New returns a Server.
func New(deps Deps) *Server {
	if deps.HeaderTimeout <= 0 {
		deps.HeaderTimeout = 10 * time.Second
	}
	if deps.BodyTimeout <= 0 {
		deps.BodyTimeout = 60 * time.Second
	}
	s := &Server{
		deps:         deps,
		instructions: Instructions(deps.Config),
		sdkLogger:    slog.New(minLevel{deps.Logger.Handler(), max(slog.LevelWarn, deps.Config.LogLevel)}).With("component", "mcp"),
		sessions:     map[string]*live{},
		bySS:         map[*mcp.ServerSession]*live{},
		posts:        map[string]context.Context{},
	}
	s.mcp = s.newMCPServer()
	return s
}

// Instructions is the text sent to clients in the initialize result.
func Instructions(cfg *config.Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "boris serves coding tools for the working directory %s. Relative paths in every tool resolve against the session's current directory, which cd in bash changes.", cfg.Workdir)
	if len(cfg.AllowDirs) > 0 {
		fmt.Fprintf(&b, " The file tools may only access these directories: %s.", strings.Join(cfg.AllowDirs, ", "))
	}
	if len(cfg.DenyPatterns) > 0 {
		fmt.Fprintf(&b, " These paths are denied to the file tools: %s.", strings.Join(cfg.DenyPatterns, ", "))
	}
	if cfg.ToolEnabled(config.ToolView) || cfg.ToolEnabled(config.ToolStrReplace) {
		b.WriteString(" View a file before editing it.")
	}
	return b.String()
}

func newID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return hex.EncodeToString(b[:])
}

// newMCPServer builds the mcp.Server that serves every session.
func (s *Server) newMCPServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "boris", Version: s.deps.Version}, &mcp.ServerOptions{
		Instructions: s.instructions,
		Logger:       s.sdkLogger,
		GetSessionID: newID,
		Capabilities: &mcp.ServerCapabilities{},
	})
	s.deps.Tools.Register(srv, func(req *mcp.CallToolRequest) *session.Session { return s.sessionOf(req.Session) })
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
				s.attach(ss)
			}
			if method == "tools/call" {
				if httpCtx := s.postContext(req.GetExtra()); httpCtx != nil {
					var stop func() bool
					ctx, stop = withCancelFrom(ctx, httpCtx)
					defer stop()
				}
			}
			return next(ctx, method, req)
		}
	})
	return srv
}

// attach binds a session's state to it on its first request and watches
// for its end, whatever ends it. Later requests find it bound.
func (s *Server) attach(ss *mcp.ServerSession) {
	s.mu.Lock()
	if s.bySS[ss] != nil {
		s.mu.Unlock()
		return
	}
	id := ss.ID()
	if id == "" {
		id = "stdio"
	}
	sess := session.New(id, s.deps.Sessions)
	l := &live{sess: sess, ss: ss}
	s.bySS[ss] = l
	if s.closing {
		s.mu.Unlock()
		go func() { sess.Close(); ss.Close() }()
		return
	}
	s.sessions[id] = l
	s.wg.Add(1)
	s.mu.Unlock()
	if s.deps.Metrics != nil {
		s.deps.Metrics.SessionOpened()
	}
	s.deps.Logger.Debug("session started", "session", id)
	go func() {
		defer s.wg.Done()
		_ = ss.Wait()
		sess.Close()
		s.mu.Lock()
		delete(s.sessions, id)
		delete(s.bySS, ss)
		s.mu.Unlock()
		if s.deps.Metrics != nil {
			s.deps.Metrics.SessionClosed()
		}
		s.deps.Logger.Debug("session ended", "session", id)
	}()
}

// sessionOf returns the state bound to ss, or nil before its first request.
func (s *Server) sessionOf(ss *mcp.ServerSession) *session.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.bySS[ss]; l != nil {
		return l.sess
	}
	return nil
}

// withCancelFrom returns ctx, additionally cancelled when other is done.
func withCancelFrom(ctx, other context.Context) (context.Context, func() bool) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(other, func() { cancel(context.Cause(other)) })
	return ctx, func() bool { cancel(nil); return stop() }
}

// closeSession ends a live session's processes (used before the SDK closes
// the session on DELETE, since the SDK waits for in-flight calls).
func (s *Server) closeSession(id string) {
	s.mu.Lock()
	l := s.sessions[id]
	s.mu.Unlock()
	if l != nil {
		l.sess.Close()
	}
}

// Shutdown closes every session — terminating every process group they
// started — and waits for them, or until ctx is done.
func (s *Server) Shutdown(ctx context.Context) {
	s.mu.Lock()
	s.closing = true
	all := make([]*live, 0, len(s.sessions))
	for _, l := range s.sessions {
		all = append(all, l)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, l := range all {
		wg.Go(func() {
			l.sess.Close()
			l.ss.Close()
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		s.deps.Logger.Warn("shutdown: sessions did not close in time")
	}
}

// ActiveSessions returns the number of live sessions.
func (s *Server) ActiveSessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// minLevel raises a handler's minimum level (the SDK logs every session at
// info; that belongs at debug for boris).
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}
func (h minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(a), h.min}
}
func (h minLevel) WithGroup(n string) slog.Handler { return minLevel{h.Handler.WithGroup(n), h.min} }

// shutdownBudget bounds shutdown: the 5 s kill grace plus a margin.
const shutdownBudget = 7 * time.Second
