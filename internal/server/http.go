package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Handler returns the HTTP handler: /mcp behind the Origin check and auth,
// and beside it, on a mux no auth wraps, /health and (when given) /metrics.
//
// /mcp serves both protocol eras with the one mcp.Server: requests at the
// stateless revision (2026-07-28 or later) and server/discover go to the
// SDK's stateless handler, which sets and reads no Mcp-Session-Id and
// answers GET and DELETE with 405; everything else — initialize, then
// requests naming their Mcp-Session-Id — goes to the stateful handler, as
// handshake-era clients expect.
func (s *Server) Handler(metrics http.Handler) http.Handler {
	side := http.NewServeMux()
	side.HandleFunc("GET /health", s.health)
	if metrics != nil {
		side.Handle("GET /metrics", metrics)
	}

	maxBody := s.maxBody()
	getServer := func(*http.Request) *mcp.Server { return s.mcp }
	stateful := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		SessionTimeout:      s.deps.Options.SessionIdleTimeout,
		Logger:              s.sdkLogger,
		MaxRequestBodyBytes: maxBody,
	})
	stateless := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		Logger:                       s.sdkLogger,
		MaxRequestBodyBytes:          maxBody,
		PropagateRequestCancellation: true,
	})

	root := http.NewServeMux()
	root.Handle("/mcp", s.origins(s.auth(s.bodyDeadline(s.route(stateless, s.closeOnDelete(s.trackPost(stateful)))))))
	root.Handle("/health", side)
	root.Handle("/metrics", side)
	return root
}

// maxBody bounds a request body: a create_file of the largest file,
// JSON-escaped.
func (s *Server) maxBody() int64 { return 2*s.deps.Options.MaxFileSize + 1<<20 }

// MCP-Protocol-Version, and the _meta key that carries the version in
// every request of the stateless revision.
const (
	protocolVersionHeader = "Mcp-Protocol-Version"
	metaProtocolVersion   = "io.modelcontextprotocol/protocolVersion"
)

// route sends a request to the stateless handler when it belongs to the
// stateless revision: its MCP-Protocol-Version header says 2026-07-28 or
// later, or (no header) its body is server/discover or carries the
// revision's _meta protocol version. A POST's body is read here, for two
// answers the SDK would give in plain text or with no valid JSON-RPC code:
// a body that is not JSON (400, a JSON-RPC parse error) and, in the
// handshake era, a call before initialize (400, -32600 saying to send
// initialize first; see needsInitialize).
func (s *Server) route(stateless, stateful http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := r.Header.Get(protocolVersionHeader)
		if r.Method != http.MethodPost || r.Body == nil {
			if v != "" && v >= statelessVersion {
				stateless.ServeHTTP(w, r)
			} else {
				stateful.ServeHTTP(w, r)
			}
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody()))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "failed to read body", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if !json.Valid(body) {
			writeRPCError(w, nil, jsonrpc.CodeParseError, "the request body is not JSON: "+jsonProblem(body))
			return
		}
		if v != "" && v >= statelessVersion || v == "" && statelessBody(body) {
			stateless.ServeHTTP(w, r)
			return
		}
		if r.Header.Get("Mcp-Session-Id") == "" {
			var call struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if json.Unmarshal(body, &call) == nil && call.Method != "" && needsInitialize(call.Method, len(call.ID) > 0 && string(call.ID) != "null", call.Params) {
				writeRPCError(w, call.ID, jsonrpc.CodeInvalidRequest, beforeInitialize(call.Method))
				return
			}
		}
		stateful.ServeHTTP(w, r)
	})
}

// writeRPCError answers a POST with 400 and a JSON-RPC error object (id
// null when the request's is unknown), as Streamable HTTP allows for a
// request the server will not take.
func writeRPCError(w http.ResponseWriter, id any, code int64, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(struct {
		Version string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", id, &jsonrpc.Error{Code: code, Message: msg}})
}

// jsonProblem says where a body stops being JSON.
func jsonProblem(body []byte) string {
	err := json.Unmarshal(body, new(any))
	if err == nil {
		return "text after the end of the value"
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v (at byte %d)", err, se.Offset)
	}
	return err.Error()
}

// statelessBody reports whether a single JSON-RPC message is a
// server/discover or carries the stateless revision's _meta version (the
// SDK then checks it against the header, which such a request must send).
func statelessBody(body []byte) bool {
	var probe struct {
		Method string `json:"method"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &probe) != nil {
		return false // a batch, or not JSON: handshake-era handling says what is wrong
	}
	_, meta := probe.Params.Meta[metaProtocolVersion]
	return probe.Method == "server/discover" || meta
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	body := map[string]any{"status": "ok", "version": s.deps.Version}
	if s.deps.Sandbox != nil {
		body["sandbox"] = s.deps.Sandbox
	}
	_ = json.NewEncoder(w).Encode(body)
}

// closeOnDelete ends a handshake-era session's processes before the SDK
// closes it: the SDK waits for in-flight calls, which end only when their
// processes do.
func (s *Server) closeOnDelete(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			if id := r.Header.Get("Mcp-Session-Id"); id != "" {
				s.closeTransport(id, credentialOf(r))
			}
		}
		next.ServeHTTP(w, r)
	})
}

// postTagHeader carries the tag that links a tool call to its HTTP POST.
const postTagHeader = "X-Boris-Post"

// trackPost tags each handshake-era POST so the tool call it carries can
// see the HTTP request's context: for protocol versions before 2026-07-28
// the SDK runs handlers detached from the request, and a client that drops
// the connection would otherwise leave its command running. (At the
// stateless revision the SDK ties the call to the request itself.)
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
// configured (see tokens.Set.Match: every token compared in constant time).
// The token that matched is the caller's credential: it is passed on in
// the request's SDK token info (the SDK binds Mcp-Session-Id connections
// to it, and tool calls find their sessions by it) and in the context.
// The set is consulted on every request, so a token removed from the token
// file is refused from the next request on.
func (s *Server) auth(next http.Handler) http.Handler {
	toks := s.deps.Tokens
	if toks == nil || toks.Len() == 0 {
		return next
	}
	// The SDK's middleware puts the token info where the SDK reads it;
	// the token has been checked already, so its verifier only names the
	// credential.
	withInfo := sdkauth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*sdkauth.TokenInfo, error) {
		cred, _ := ctx.Value(credentialKey{}).(string)
		return &sdkauth.TokenInfo{UserID: cred}, nil
	}, &sdkauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The scheme is case-insensitive (RFC 9110 §11.1); the token is not.
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		cred, ok := toks.Match(strings.TrimSpace(got))
		if !strings.EqualFold(scheme, "Bearer") || !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="boris"`)
			writeJSONError(w, http.StatusUnauthorized, "unauthorized", "")
			return
		}
		withInfo.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), credentialKey{}, cred)))
	})
}

// credentialKey is the context key of the caller's credential: which
// token it sent ("token-1", "token-2", …; see package tokens).
type credentialKey struct{}

// credentialOf returns the credential of an authenticated request, "" on a
// server without tokens.
func credentialOf(r *http.Request) string {
	cred, _ := r.Context().Value(credentialKey{}).(string)
	return cred
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
	for _, o := range s.deps.Options.AllowOrigins {
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

// serverLog takes net/http's own error lines to the logger: at warn, except
// failed TLS handshakes, at debug — port scanners, TCP probes and clients
// that do not trust the certificate would otherwise fill the log, and the
// client sees its own error anyway.
type serverLog struct{ logger *slog.Logger }

func (l serverLog) Write(p []byte) (int, error) {
	msg := strings.TrimSuffix(string(p), "\n")
	level := slog.LevelWarn
	if strings.HasPrefix(msg, "http: TLS handshake error") {
		level = slog.LevelDebug
	}
	l.logger.Log(context.Background(), level, msg)
	return len(p), nil
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
		ErrorLog:          log.New(serverLog{s.deps.Logger}, "", 0),
		TLSConfig:         s.deps.TLS,
		// No ReadTimeout or WriteTimeout: tool calls and their SSE streams
		// may legitimately last as long as the longest bash timeout. The
		// body alone has a deadline (bodyDeadline).
	}
	if s.deps.Tokens != nil {
		watchCtx, stopWatch := context.WithCancel(ctx)
		defer stopWatch()
		go s.deps.Tokens.Watch(watchCtx, 0, s.revoke)
	}
	errc := make(chan error, 1)
	go func() {
		if hs.TLSConfig != nil {
			// The certificate comes from TLSConfig.GetCertificate. A plain
			// HTTP request on this port is answered by net/http with 400
			// "Client sent an HTTP request to an HTTPS server".
			errc <- hs.ServeTLS(ln, "", "")
			return
		}
		errc <- hs.Serve(ln)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownBudget)
	defer cancel()
	// Stop accepting and close sessions at the same time; Shutdown waits
	// for in-flight requests, which end when their processes are killed.
	// The goroutine is waited for, so nothing it logs comes after
	// ServeHTTP has returned.
	sessionsClosed := make(chan struct{})
	go func() {
		defer close(sessionsClosed)
		s.Shutdown(sctx)
	}()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	s.Shutdown(sctx) // returns at once if already done
	<-sessionsClosed
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
