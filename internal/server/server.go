// Package server runs boris over its transports: streamable HTTP (with
// /health and /metrics beside /mcp, bearer auth and the Origin check) or
// stdio. One mcp.Server carries the tool set for every caller and both
// protocol eras: the stateless revision 2026-07-28 and the handshake-era
// revisions before it. Each tool call finds its session — what boris
// remembers between calls — from its session argument, its connection and
// its credential (see Resolve). Ending a session — DELETE, idle timeout,
// stdio EOF, shutdown — terminates every process it started.
package server

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/session"
	"github.com/boris-mcp/boris/internal/telemetry"
	"github.com/boris-mcp/boris/internal/tokens"
	"github.com/boris-mcp/boris/internal/tool"
)

// Metrics is what the server reports; the metrics package implements it.
type Metrics interface {
	SessionOpened()
	SessionClosed()
	// Request counts one MCP request by method and protocol era
	// ("stateless" for 2026-07-28 and later, "handshake" before).
	Request(method, era string)
}

// Deps are what a Server is built from.
type Deps struct {
	Options  Options
	Version  string
	Logger   *slog.Logger
	Tools    *tool.Set
	Sessions session.Options
	Metrics  Metrics // may be nil
	// Tracing makes the spans of MCP requests (nil: tracing is off).
	Tracing *telemetry.Tracing
	// Sandbox is what /health reports under "sandbox" (nil: omitted).
	Sandbox map[string]any
	// TLS, when set, makes ServeHTTP serve HTTPS with it (HTTP/2 and
	// HTTP/1.1) instead of plain HTTP.
	TLS *tls.Config
	// Tokens are the bearer tokens /mcp accepts, each its own credential.
	// Nil means Options.Tokens, fixed; none at all, no auth. ServeHTTP
	// watches its token file, and closes the sessions of a token removed
	// from it.
	Tokens *tokens.Set

	// OnLastSessionClosed, if set, is called when a session closes and no
	// other is left.
	OnLastSessionClosed func()

	// HeaderTimeout bounds reading a request's headers and BodyTimeout its
	// body, so a slow or stalled client cannot hold a connection open
	// forever; zero means the defaults (10 s and 60 s).
	HeaderTimeout, BodyTimeout time.Duration
}

// Options are the server's own settings.
type Options struct {
	// SessionIdleTimeout closes sessions idle that long (0: never), and
	// MaxSessions bounds how many live at once.
	SessionIdleTimeout time.Duration
	MaxSessions        int
	// ShutdownTimeout is how long, at stdin's end, the calls already read
	// may run to finish before they are cancelled (stdio; 0: at once).
	ShutdownTimeout time.Duration
	// MaxFileSize is the largest file the tools read or write: a request
	// may carry twice that (an edit's old and new text) and a little more.
	MaxFileSize int64
	// AllowOrigins are the browser origins /mcp accepts.
	AllowOrigins []string
	// Tokens are fixed bearer tokens, used when Deps.Tokens is nil.
	Tokens []string
	// LogLevel is the level of the log; the SDK's own messages go there
	// from warnings up.
	LogLevel slog.Level
	// AllowDirs and DenyPatterns are the file tools' scope, which the
	// server's instructions state.
	AllowDirs, DenyPatterns []string
}

// Server owns the MCP server and the sessions of one boris process.
type Server struct {
	deps      Deps
	sdkLogger *slog.Logger
	mcp       *mcp.Server
	sessions  *session.Manager
	stdio     atomic.Bool // serving stdio: the process has one implicit session

	// stdioCalls ends the tool calls of the stdio session (set before it
	// is served): cancelled, with the reason as its cause, at stdin's end
	// after --shutdown-timeout and at shutdown.
	stdioCalls context.Context

	// transports are the live handshake-era connections (Mcp-Session-Id),
	// by id: their sessions close when they end.
	transportsMu sync.Mutex
	transports   map[string]transport

	// posts maps a private per-POST tag to that HTTP request's context, so
	// a handshake-era tool call ends when its HTTP client goes away (see
	// trackPost).
	postsMu sync.Mutex
	posts   map[string]context.Context

	shutdownOnce sync.Once
	shutdownDone chan struct{}
}

// transport is a live handshake-era connection and the credential it was
// opened with.
type transport struct {
	ss   *mcp.ServerSession
	cred string
}

// New returns a Server with its tool set registered.
func New(deps Deps) *Server {
	if deps.HeaderTimeout <= 0 {
		deps.HeaderTimeout = 10 * time.Second
	}
	if deps.BodyTimeout <= 0 {
		deps.BodyTimeout = 60 * time.Second
	}
	if deps.Tokens == nil && len(deps.Options.Tokens) > 0 {
		// Tokens without a file: nothing to read, nothing that can fail.
		deps.Tokens, _ = tokens.New(tokens.Options{Static: deps.Options.Tokens})
	}
	s := &Server{
		deps:       deps,
		sdkLogger:  slog.New(minLevel{deps.Logger.Handler(), max(slog.LevelWarn, deps.Options.LogLevel)}).With("component", "mcp"),
		transports: map[string]transport{},
		posts:      map[string]context.Context{},
	}
	s.sessions = session.NewManager(session.ManagerOptions{
		Session:     deps.Sessions,
		IdleTimeout: deps.Options.SessionIdleTimeout,
		MaxSessions: deps.Options.MaxSessions,
		OnOpen: func(id, kind string) {
			if deps.Metrics != nil {
				deps.Metrics.SessionOpened()
			}
			deps.Logger.Debug("session started", "session", id, "kind", kind)
		},
		OnClose: func(id, kind string) {
			if deps.Metrics != nil {
				deps.Metrics.SessionClosed()
			}
			deps.Logger.Debug("session ended", "session", id, "kind", kind)
			if deps.OnLastSessionClosed != nil && s.sessions.Len() == 0 {
				deps.OnLastSessionClosed()
			}
		},
	})
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "boris", Version: deps.Version}, &mcp.ServerOptions{
		Instructions: deps.Tools.Instructions(deps.Options.AllowDirs, deps.Options.DenyPatterns),
		Logger:       s.sdkLogger,
		Capabilities: &mcp.ServerCapabilities{},
	})
	deps.Tools.Register(s.mcp, s)
	s.mcp.AddReceivingMiddleware(s.middleware)
	return s
}

func newID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return hex.EncodeToString(b[:])
}

// middleware sees every MCP request: it counts them (by era), watches
// handshake-era connections so their sessions close with them, and ties a
// handshake-era tool call to its HTTP request and a stdio one to the
// stdio session's end.
func (s *Server) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if s.deps.Metrics != nil {
			s.deps.Metrics.Request(method, eraOf(req))
		}
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss.ID() != "" {
			s.watchTransport(ss, credential(req.GetExtra()))
		}
		call, isCall := req.(*mcp.CallToolRequest)
		if isCall {
			if httpCtx := s.postContext(req.GetExtra()); httpCtx != nil {
				var stop func() bool
				ctx, stop = withCancelFrom(ctx, httpCtx)
				defer stop()
			}
			if s.stdio.Load() && s.stdioCalls != nil {
				var stop func() bool
				ctx, stop = withCancelFrom(ctx, s.stdioCalls)
				defer stop()
			}
			ctx = tool.WithCaller(ctx, s.caller(req))
		}
		if s.deps.Tracing == nil {
			return next(ctx, method, req)
		}
		r := telemetry.Request{Method: method, Transport: s.transportName()}
		if v, ok := req.(interface{ ProtocolVersion() string }); ok {
			r.ProtocolVersion = v.ProtocolVersion()
		}
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
			r.SessionID = ss.ID()
		}
		r.Meta = metaOf(req)
		if extra := req.GetExtra(); extra != nil {
			r.Header = extra.Header
		}
		if isCall && call.Params != nil {
			r.Target = call.Params.Name
		}
		ctx, span := s.deps.Tracing.StartRequest(ctx, r)
		defer span.End()
		res, err := next(ctx, method, req)
		var werr *jsonrpc.Error
		switch {
		case errors.As(err, &werr):
			code := strconv.FormatInt(werr.Code, 10)
			span.SetString("rpc.response.status_code", code)
			span.Fail(code, werr.Message)
		case err != nil:
			span.Fail("_OTHER", err.Error())
		default:
			if ctr, ok := res.(*mcp.CallToolResult); ok && ctr.IsError {
				span.Fail("tool_error", "the tool call failed")
			}
		}
		return res, err
	}
}

// metaOf is a request's params._meta; nil when it has no params (a
// notification without params holds a nil pointer in the interface).
func metaOf(req mcp.Request) map[string]any {
	p := req.GetParams()
	if p == nil {
		return nil
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return p.GetMeta()
}

// transportName is "stdio" or "http".
func (s *Server) transportName() string {
	if s.stdio.Load() {
		return "stdio"
	}
	return "http"
}

// caller says who makes a tool call, for its audit record.
func (s *Server) caller(req mcp.Request) tool.Caller {
	c := tool.Caller{Credential: credential(req.GetExtra()), Era: eraOf(req), Transport: s.transportName()}
	if meta := metaOf(req); meta != nil {
		if info, ok := meta[mcp.MetaKeyClientInfo].(map[string]any); ok {
			name, _ := info["name"].(string)
			version, _ := info["version"].(string)
			c.Client = strings.TrimSpace(name + " " + version)
		}
	}
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && c.Client == "" {
		if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
			c.Client = strings.TrimSpace(ip.ClientInfo.Name + " " + ip.ClientInfo.Version)
		}
	}
	return c
}

// statelessVersion is the first protocol revision without a handshake or
// protocol sessions.
const statelessVersion = "2026-07-28"

// eraOf names a request's protocol era.
func eraOf(req mcp.Request) string {
	if v, ok := req.(interface{ ProtocolVersion() string }); ok && v.ProtocolVersion() >= statelessVersion {
		return "stateless"
	}
	return "handshake"
}

// watchTransport remembers a handshake-era connection the first time it
// is seen, and closes its session when the connection ends (DELETE, the
// SDK's idle timeout, shutdown).
func (s *Server) watchTransport(ss *mcp.ServerSession, cred string) {
	id := ss.ID()
	s.transportsMu.Lock()
	if _, ok := s.transports[id]; ok {
		s.transportsMu.Unlock()
		return
	}
	s.transports[id] = transport{ss: ss, cred: cred}
	s.transportsMu.Unlock()
	go func() {
		_ = ss.Wait()
		s.transportsMu.Lock()
		delete(s.transports, id)
		s.transportsMu.Unlock()
		s.sessions.CloseTransport(cred, id)
	}()
}

// Resolve finds the session of a tool call (tool.Sessions): the session
// its handle names under the caller's credential, a new one for "new",
// else the caller's implicit session — over stdio the process's one, for
// a handshake-era HTTP connection the one of its Mcp-Session-Id, and over
// the stateless revision the credential's default session.
func (s *Server) Resolve(_ context.Context, req *mcp.CallToolRequest, handle string) (*session.Call, error) {
	cred := credential(req.Extra)
	switch {
	case handle == "new":
		return s.sessions.New(cred)
	case handle != "":
		return s.sessions.Handle(cred, handle)
	case s.stdio.Load():
		return s.sessions.Implicit(cred, session.KindTransport, "stdio", true)
	}
	if req.Session != nil && req.Session.ID() != "" {
		return s.sessions.Implicit(cred, session.KindTransport, req.Session.ID(), false)
	}
	return s.sessions.Implicit(cred, session.KindDefault, "", false)
}

// credential names the caller's credential: which bearer token it sent
// (the auth middleware puts it in the request's token info), "" when the
// server has none (and over stdio).
func credential(extra *mcp.RequestExtra) string {
	if extra == nil || extra.TokenInfo == nil {
		return ""
	}
	return extra.TokenInfo.UserID
}

// withCancelFrom returns ctx, additionally cancelled when other is done.
func withCancelFrom(ctx, other context.Context) (context.Context, func() bool) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(other, func() { cancel(context.Cause(other)) })
	return ctx, func() bool { cancel(nil); return stop() }
}

// closeTransport ends a handshake-era connection's session (on DELETE,
// before the SDK closes the connection, since the SDK waits for in-flight
// calls, which end only when their processes do). Only the credential
// that opened it may.
func (s *Server) closeTransport(id, cred string) {
	s.transportsMu.Lock()
	t, ok := s.transports[id]
	s.transportsMu.Unlock()
	if ok && t.cred == cred {
		s.sessions.CloseTransport(cred, id)
	}
}

// revoke ends what the credentials of removed tokens hold: their sessions
// (their processes terminated) and their handshake-era connections. The
// tokens are refused already; this ends what they opened before.
func (s *Server) revoke(creds []string) {
	for _, cred := range creds {
		n := s.sessions.CloseCredential(cred)
		s.transportsMu.Lock()
		var conns []*mcp.ServerSession
		for _, t := range s.transports {
			if t.cred == cred {
				conns = append(conns, t.ss)
			}
		}
		s.transportsMu.Unlock()
		for _, ss := range conns {
			_ = ss.Close()
		}
		s.deps.Logger.Info("token removed: its sessions are closed and its requests refused", "credential", cred, "sessions", n, "connections", len(conns))
	}
}

// Shutdown closes every session — terminating every process group they
// started — and every handshake-era connection, and waits for them, or
// until ctx is done. Later calls wait for the same shutdown.
func (s *Server) Shutdown(ctx context.Context) {
	s.shutdownOnce.Do(func() {
		s.shutdownDone = make(chan struct{})
		go func() {
			s.sessions.CloseAll()
			s.transportsMu.Lock()
			var conns []*mcp.ServerSession
			for _, t := range s.transports {
				conns = append(conns, t.ss)
			}
			s.transportsMu.Unlock()
			for _, ss := range conns {
				_ = ss.Close()
			}
			close(s.shutdownDone)
		}()
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
func (s *Server) ActiveSessions() int { return s.sessions.Len() }

// MinLevel returns h with its minimum level raised to min.
func MinLevel(h slog.Handler, min slog.Level) slog.Handler { return minLevel{h, min} }

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
