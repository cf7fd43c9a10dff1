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
	"sync/atomic"
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

// Server owns the live sessions of one boris process.
type Server struct {
	deps         Deps
	instructions string
	sdkLogger    *slog.Logger

	mu       sync.Mutex
	sessions map[string]*live
	closing  bool
	wg       sync.WaitGroup // session watchers

	// posts maps a private per-POST tag to that HTTP request's context, so
	// a tool call ends when its HTTP client goes away (see trackPost).
	postsMu sync.Mutex
	posts   map[string]context.Context
	// pending holds the server built for a POST that starts a session,
	// so the SDK asking twice for the same request builds it once.
	pending map[string]*mcp.Server

	servers atomic.Int64 // mcp.Servers built, for tests

	shutdownOnce sync.Once
	shutdownDone chan struct{}
}

// live is a session that has received at least one request.
type live struct {
	sess *session.Session
	ss   *mcp.ServerSession
	srv  *mcp.Server
}

// New returns a Server.
func New(deps Deps) *Server {
	if deps.HeaderTimeout <= 0 {
		deps.HeaderTimeout = 10 * time.Second
	}
	if deps.BodyTimeout <= 0 {
		deps.BodyTimeout = 60 * time.Second
	}
	return &Server{
		deps:         deps,
		instructions: Instructions(deps.Config),
		sdkLogger:    slog.New(minLevel{deps.Logger.Handler(), max(slog.LevelWarn, deps.Config.LogLevel)}).With("component", "mcp"),
		sessions:     map[string]*live{},
		posts:        map[string]context.Context{},
		pending:      map[string]*mcp.Server{},
	}
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

// newMCPServer builds the mcp.Server of one session; when inflight is not
// nil, it counts the requests being handled.
func (s *Server) newMCPServer(sess *session.Session, inflight *atomic.Int64) *mcp.Server {
	s.servers.Add(1)
	srv := mcp.NewServer(&mcp.Implementation{Name: "boris", Version: s.deps.Version}, &mcp.ServerOptions{
		Instructions: s.instructions,
		Logger:       s.sdkLogger,
		GetSessionID: sess.ID,
		Capabilities: &mcp.ServerCapabilities{},
	})
	s.deps.Tools.Register(srv, sess)
	var once sync.Once
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if inflight != nil {
				inflight.Add(1)
				defer inflight.Add(-1)
			}
			once.Do(func() {
				if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
					s.attach(sess, ss, srv)
				}
			})
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

// attach starts tracking a session on its first request and watches for
// its end, whatever ends it.
func (s *Server) attach(sess *session.Session, ss *mcp.ServerSession, srv *mcp.Server) {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		go func() { sess.Close(); ss.Close() }()
		return
	}
	s.sessions[sess.ID()] = &live{sess: sess, ss: ss, srv: srv}
	s.wg.Add(1)
	s.mu.Unlock()
	if s.deps.Metrics != nil {
		s.deps.Metrics.SessionOpened()
	}
	s.deps.Logger.Debug("session started", "session", sess.ID())
	go func() {
		defer s.wg.Done()
		_ = ss.Wait()
		sess.Close()
		s.mu.Lock()
		delete(s.sessions, sess.ID())
		s.mu.Unlock()
		if s.deps.Metrics != nil {
			s.deps.Metrics.SessionClosed()
		}
		s.deps.Logger.Debug("session ended", "session", sess.ID())
	}()
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
// started — and waits for them, or until ctx is done. Later calls wait for
// the same shutdown.
func (s *Server) Shutdown(ctx context.Context) {
	s.shutdownOnce.Do(func() {
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
		s.shutdownDone = make(chan struct{})
		go func() { wg.Wait(); s.wg.Wait(); close(s.shutdownDone) }()
	})
	select {
	case <-s.shutdownDone:
	case <-ctx.Done():
		select {
		case <-s.shutdownDone: // both were ready: it did finish
		default:
			s.deps.Logger.Warn("shutdown: sessions did not close in time")
		}
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
