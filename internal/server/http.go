package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/session"
)

// Handler returns the HTTP handler: /mcp behind auth and CORS, and beside
// it, on a mux no auth wraps, /health and (when given) /metrics.
func (s *Server) Handler(metrics http.Handler) http.Handler {
	side := http.NewServeMux()
	side.HandleFunc("GET /health", s.health)
	if metrics != nil {
		side.Handle("GET /metrics", metrics)
	}

	maxBody := 2*s.deps.Config.MaxFileSize + 1<<20 // a create_file of the largest file, JSON-escaped
	mcpHandler := mcp.NewStreamableHTTPHandler(s.serverFor, &mcp.StreamableHTTPOptions{
		SessionTimeout:               s.deps.Config.SessionIdleTimeout,
		Logger:                       s.sdkLogger,
		MaxRequestBodyBytes:          maxBody,
		PropagateRequestCancellation: true,
	})

	root := http.NewServeMux()
	root.Handle("/mcp", s.origins(s.auth(s.bodyDeadline(s.closeOnDelete(s.trackPost(mcpHandler))))))
	root.Handle("/health", side)
	root.Handle("/metrics", side)
	return root
}

// serverFor returns the mcp.Server for an HTTP request. The SDK asks on
// every request, not only for new sessions (it reads the server's protocol
// versions first, then asks again to start a session), so: a request that
// names a session gets that session's own server, or none if the session
// is unknown (the SDK then answers 404); a POST without one gets a new
// server and session state, built once per request. During shutdown no
// session is started.
func (s *Server) serverFor(r *http.Request) *mcp.Server {
	id := r.Header.Get("Mcp-Session-Id")
	s.mu.Lock()
	closing := s.closing
	var existing *mcp.Server
	if l := s.sessions[id]; l != nil {
		existing = l.srv
	}
	s.mu.Unlock()
	if closing || id != "" || r.Method != http.MethodPost {
		return existing // only a POST can start a session
	}
	tag := r.Header.Get(postTagHeader) // the same for both asks, which come one after the other
	s.postsMu.Lock()
	srv := s.pending[tag]
	s.postsMu.Unlock()
	if srv != nil {
		return srv
	}
	srv = s.newMCPServer(session.New(newID(), s.deps.Sessions), nil)
	if tag != "" {
		s.postsMu.Lock()
		s.pending[tag] = srv
		s.postsMu.Unlock()
	}
	return srv
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"status": "ok", "version": s.deps.Version})
}

// closeOnDelete ends a session's processes before the SDK closes it: the
// SDK waits for in-flight calls, which end only when their processes do.
func (s *Server) closeOnDelete(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			if id := r.Header.Get("Mcp-Session-Id"); id != "" {
				s.closeSession(id)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// postTagHeader carries the tag that links a tool call to its HTTP POST.
const postTagHeader = "X-Boris-Post"

// trackPost tags each POST so the tool call it carries can see the HTTP
// request's context: for protocol versions before 2026-07-28 the SDK runs
// handlers detached from the request, and a client that drops the
// connection would otherwise leave its command running.
func (s *Server) trackPost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(postTagHeader) // only ours counts
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		tag := newID()
		r.Header.Set(postTagHeader, tag)
		s.postsMu.Lock()
		s.posts[tag] = r.Context()
		s.postsMu.Unlock()
		defer func() {
			s.postsMu.Lock()
			delete(s.posts, tag)
			delete(s.pending, tag)
			s.postsMu.Unlock()
		}()
		next.ServeHTTP(w, r)
	})
}

// postContext returns the HTTP request context of a tool call's POST.
func (s *Server) postContext(extra *mcp.RequestExtra) context.Context {
	if extra == nil || extra.Header == nil {
		return nil
	}
	tag := extra.Header.Get(postTagHeader)
	if tag == "" {
		return nil
	}
	s.postsMu.Lock()
	defer s.postsMu.Unlock()
	return s.posts[tag]
}

// bodyDeadline gives reading a request body BodyTimeout: a client that
// trickles its body, or stops sending it, is cut off instead of holding a
// connection and a goroutine. net/http lifts the deadline when the body
// has been read in full (it starts watching for the client going away
// then), so a long tool call and its stream are not affected.
func (s *Server) bodyDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.deps.BodyTimeout))
		}
		next.ServeHTTP(w, r)
	})
}

// auth requires one of the bearer tokens on every request when any is
// configured. Every token is compared, in constant time, whichever matches.
func (s *Server) auth(next http.Handler) http.Handler {
	if len(s.deps.Config.Tokens) == 0 {
		return next
	}
	wants := make([][sha256.Size]byte, len(s.deps.Config.Tokens))
	for i, t := range s.deps.Config.Tokens {
		wants[i] = sha256.Sum256([]byte(t))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The scheme is case-insensitive (RFC 9110 §11.1); the token is not.
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
		match := 0
		for i := range wants {
			match |= subtle.ConstantTimeCompare(sum[:], wants[i][:])
		}
		if !strings.EqualFold(scheme, "Bearer") || match != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="boris"`)
			writeJSONError(w, http.StatusUnauthorized, "unauthorized", "")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// writeJSONError answers with a JSON body {"error": code[, "message": msg]}.
func writeJSONError(w http.ResponseWriter, status int, code, msg string) {
	body := map[string]string{"error": code}
	if msg != "" {
		body["message"] = msg
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// Header lists for browser clients: what a preflight may ask to send, and
// what a page may read from a response.
const (
	corsAllowHeaders  = "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID"
	corsExposeHeaders = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate"
)

// origins refuses browser requests from origins the operator did not list.
// A request with an Origin header comes from a web page; unless that exact
// origin is in --allow-origin it gets 403 (a preflight too, and without CORS
// headers), so no page the user happens to open can drive the tools. A
// request without Origin (every non-browser client) passes untouched. For a
// listed origin the CORS headers name it; "*" is sent only when "*" itself
// is listed.
func (s *Server) origins(next http.Handler) http.Handler {
	allowed := map[string]bool{}
	for _, o := range s.deps.Config.AllowOrigins {
		allowed[o] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Add("Vary", "Origin")
		allow := ""
		switch {
		case allowed[strings.ToLower(origin)]:
			allow = origin
		case allowed["*"]:
			allow = "*"
		default:
			s.deps.Logger.Warn("refused a request from a browser origin not in --allow-origin", "origin", origin, "method", r.Method)
			writeJSONError(w, http.StatusForbidden, "origin_not_allowed",
				"requests from origin "+strconv.Quote(origin)+" are refused; the operator can allow it with --allow-origin")
			return
		}
		h.Set("Access-Control-Allow-Origin", allow)
		h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		if r.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
			h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
			h.Set("Access-Control-Max-Age", "86400")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ServeHTTP serves on ln until ctx is done, then shuts down: sessions are
// closed (their processes terminated) and the listener stops, within the
// shutdown budget.
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener, metrics http.Handler) error {
	hs := &http.Server{
		Handler:           s.Handler(metrics),
		ReadHeaderTimeout: s.deps.HeaderTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.deps.Logger.Handler(), slog.LevelWarn),
		// No ReadTimeout or WriteTimeout: tool calls and their SSE streams
		// may legitimately last as long as the longest bash timeout. The
		// body alone has a deadline (bodyDeadline).
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownBudget)
	defer cancel()
	// Stop accepting and close sessions at the same time; Shutdown waits
	// for in-flight requests, which end when their processes are killed.
	go s.Shutdown(sctx)
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	s.Shutdown(sctx) // returns at once if already done
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
