package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/audit"
	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/dialect"
	"github.com/boris-mcp/boris/internal/results"
	"github.com/boris-mcp/boris/internal/session"
)

// Set is the tool set of a server: the tools the declarations give in the
// dialect, built and registered once; each call finds its session through
// Sessions.
type Set struct {
	env      Env
	defs     []*Def
	disabled map[string]bool
}

// NewSet builds the tools of specs that env's dialect serves, leaving out
// those --disable-tools turns off (env.Disabled) and those the process
// cannot serve.
func NewSet(env Env, specs []Spec) (*Set, error) {
	disabled, err := NamingOf(specs).Disabled(env.Disabled)
	if err != nil {
		return nil, err
	}
	s := &Set{env: env, disabled: disabled}
	var errs []error
	for i := range specs {
		sp := &specs[i]
		if !sp.served(env.Mode, disabled, &env) {
			continue
		}
		d, err := sp.Build(env.Mode)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		d.spec = sp
		if !env.Structured {
			// Declaring a schema promises the content.
			d.tool.OutputSchema = nil
		}
		s.defs = append(s.defs, d)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

// Names returns the registered tool names in registration order.
func (s *Set) Names() []string {
	var out []string
	for _, d := range s.defs {
		out = append(out, d.tool.Name)
	}
	return out
}

// Mode is the dialect of the set.
func (s *Set) Mode() dialect.Mode { return s.env.Mode }

// Instructions is the text a server sends clients in its initialize and
// server/discover results: the working directory and what moves it, the
// file tools' scope, and the hints of the tools served.
func (s *Set) Instructions(allowDirs, deny []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "boris serves coding tools for the working directory %s. Relative paths in every tool resolve against the session's current directory", s.env.Workdir)
	moves := ""
	var hints []string
	for _, d := range s.defs {
		if m := d.spec.Moves[s.env.Mode]; m != "" && moves == "" {
			moves = m
		}
		if h := d.spec.Hint[s.env.Mode]; h != "" && !slices.Contains(hints, h) {
			hints = append(hints, h)
		}
	}
	if moves != "" {
		fmt.Fprintf(&b, ", which %s changes", moves)
	}
	b.WriteString(".")
	if len(allowDirs) > 0 {
		fmt.Fprintf(&b, " The file tools may only access these directories: %s.", strings.Join(allowDirs, ", "))
	}
	if len(deny) > 0 {
		fmt.Fprintf(&b, " These paths are denied to the file tools: %s.", strings.Join(deny, ", "))
	}
	for _, h := range hints {
		b.WriteString(" " + h)
	}
	return b.String()
}

// Register adds every tool to srv; each call runs in the session that
// sessions resolves for it.
func (s *Set) Register(srv *mcp.Server, sessions Sessions) {
	for _, d := range s.defs {
		srv.AddTool(d.tool, s.wrap(d, sessions))
	}
}

// wrap turns a def into an SDK handler: the session, required parameters,
// panics, the audit record, the tool's span and metrics are handled here
// for every tool.
func (s *Set) wrap(d *Def, sessions Sessions) mcp.ToolHandler {
	name := d.tool.Name
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, perr error) {
		start := time.Now()
		who := callerOf(ctx)
		rec := &audit.Record{Tool: name, Session: "-", Credential: who.Credential, Era: who.Era, Transport: who.Transport, Client: who.Client}
		ctx, span := s.env.Tracing.StartTool(ctx, name)
		rec.TraceID = span.TraceID()
		var gate *Gate // the call's command rules, once it has them
		defer func() {
			if r := recover(); r != nil {
				s.env.Logger.Error("tool panicked", "tool", name, "session", rec.Session, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				res, perr = nil, fmt.Errorf("internal error in tool %s: %v", name, r)
				rec.Panicked = true
			}
			rec.Outcome = OutcomeOK
			switch {
			case perr != nil:
				rec.Outcome = OutcomeProtocolError
				span.Fail("_OTHER", perr.Error())
			case res != nil && res.IsError:
				rec.Outcome = OutcomeToolError
				if rec.ErrorCode == "" {
					rec.ErrorCode = "tool_error"
				}
				span.Fail(rec.ErrorCode, "the tool call failed")
			}
			rec.Canceled = ctx.Err() != nil
			rec.Duration = time.Since(start)
			span.SetString("boris.session.id", rec.Session)
			span.End()
			// One outcome for the metrics and the audit trail.
			if s.env.Observer != nil {
				s.env.Observer.ToolCall(name, rec.Outcome, rec.Duration)
			}
			gate.seal() // no decision writes rec from here on
			s.env.Audit.Log(ctx, rec)
		}()
		structured := d.tool.OutputSchema != nil
		withText := structured && replacesText(who.Client)
		args := req.Params.Arguments
		if err := checkRequired(args, d.required); err != nil {
			return finish(s.failed(rec, err, d), structured, withText, nil), nil
		}
		handle, err := sessionArg(args)
		if err != nil {
			return finish(s.failed(rec, err, d), structured, withText, nil), nil
		}
		sc, err := sessions.Resolve(ctx, req, handle)
		if err != nil {
			return finish(s.failed(rec, err, d), structured, withText, nil), nil
		}
		defer sc.Done()
		rec.Session = sc.Session.ID()
		env, where := &s.env, ""
		if s.env.Isolation != nil {
			if env, where, err = s.env.Isolation.Enter(ctx, sc.Session, name, rec.Credential, &s.env); err != nil {
				return finish(s.sessionNotes(s.failed(rec, err, d), sc, s.env.Workdir), structured, withText, sc), nil
			}
		}
		// One sender for all of the call's progress, with its heartbeat,
		// stopped before the answer goes out.
		prog := startProgress(ctx, req)
		defer prog.end()
		gate = newGate(env, req, rec)
		c := &Call{Sess: sc.Session, Req: req, Env: env, Rec: rec, Progress: prog, gate: gate}
		if c.gate != nil && d.spec.Acts != nil {
			// Judged before anything of the call happens, its checkpoint
			// included: a forbidden command runs no part of itself.
			ask, err := c.gate.check(ctx, d.spec.Acts(args, sc.Session.Cwd()))
			if err != nil {
				return finish(s.sessionNotes(s.failed(rec, err, d), sc, env.Workdir), structured, withText, sc), nil
			}
			if ask != nil {
				// The client asks its human and calls again with the
				// answer; an input request carries nothing else.
				return ask, nil
			}
		}
		note := ""
		if d.spec.Changes != nil && env.Checkpoints != nil && d.spec.Changes(args) {
			note, err = s.autoCheckpoint(ctx, prog, env, sc.Session, d, args)
		}
		var r *mcp.CallToolResult
		var done []mcp.Content // what a call the server ended had done
		if err == nil {
			r, err = d.handle(ctx, c, args)
			if cause := endedBy(ctx); cause != nil {
				if r != nil {
					done = r.Content
				}
				r, err = nil, cause
			}
		}
		if err != nil {
			r = s.failed(rec, err, d)
			r.Content = append(r.Content, done...)
		}
		if note != "" {
			r.Content = append(r.Content, &mcp.TextContent{Text: note})
		}
		if where != "" {
			r.Content = append(r.Content, &mcp.TextContent{Text: where})
		}
		for _, after := range s.env.After {
			after(c, r)
		}
		for _, f := range c.deferred {
			f()
		}
		capAnswer(r, s.env.MaxAnswer)
		return finish(s.sessionNotes(r, sc, env.Workdir), structured, withText, sc), nil
	}
}

// endedBy is the reason the server gave for ending a call (stdin's end
// over stdio, shutdown), or nil when ctx is not done or was cancelled by
// its client. The server's reasons are coded errors.
func endedBy(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	cause := context.Cause(ctx)
	if _, ok := codes.As(cause); !ok {
		return nil
	}
	return cause
}

// failed is the result of an operational error, in the tool's dialect
// (errText; nil for boris's "[CODE] message"), with its code recorded and
// its data (errData; nil for results.Error).
func (s *Set) failed(rec *audit.Record, err error, d *Def) *mcp.CallToolResult {
	rec.ErrorCode = string(codes.IOError)
	if e, ok := codes.As(err); ok {
		rec.ErrorCode = string(e.Code)
	}
	var r *mcp.CallToolResult
	if d.errText == nil {
		r = ErrorResult(err)
	} else {
		r = Text(d.errText(err))
		r.IsError = true
	}
	if d.errData != nil {
		r.StructuredContent = d.errData(err, TextOf(r))
	} else {
		r.StructuredContent = results.ErrorOf(err)
	}
	return r
}

// replacingHosts are MCP clients that give the model a result's
// structuredContent in place of its text when it has both: Claude Code
// (anthropics/claude-code#79944) and Codex CLI (codex-rs
// CallToolResult::as_function_call_output_payload).
var replacingHosts = []string{"claude-code", "codex-mcp-client"}

// replacesText reports whether a client gives its model the structured
// content instead of the text; such a client gets the text inside the data
// too (results.Common.Text), so its model still reads every word of it.
func replacesText(client string) bool {
	name, _, _ := strings.Cut(client, " ")
	return slices.Contains(replacingHosts, name)
}

// finish leaves the answer's data as its structuredContent, with what
// happened to the call's session (sc; nil when the call failed before it
// had one) and, for a client that shows its model the data instead of the
// text (withText), the text; or drops it when the tool declares no output
// schema.
func finish(r *mcp.CallToolResult, structured, withText bool, sc *session.Call) *mcp.CallToolResult {
	data := r.StructuredContent
	r.StructuredContent = nil
	if !structured || data == nil {
		return r
	}
	if sc != nil {
		if c, ok := data.(interface {
			SetSession(newSession, ended string)
		}); ok {
			c.SetSession(sc.Minted, sc.Restarted)
		}
	}
	if withText {
		if c, ok := data.(interface{ SetText(string) }); ok {
			c.SetText(TextOf(r))
		}
	}
	// The value itself, not its encoding: the SDK encodes the result with
	// encoding/json, which would check and copy pre-encoded bytes once more.
	r.StructuredContent = data
	return r
}

// TextOf is the text of a result's content.
func TextOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// sessionArgDesc says what the session argument does; every tool has it.
const sessionArgDesc = `Session to run in. Omit it to use your default session (its working directory, viewed files and background tasks persist between calls); pass "new" to start a separate session — the result then gives its handle (s_...) to pass in later calls.`

// sessionArg returns the session argument, trimmed ("" when absent).
func sessionArg(args json.RawMessage) (string, error) {
	if !bytes.Contains(args, []byte(`"session"`)) {
		return "", nil // the common case, without a second decode
	}
	var in struct {
		Session *json.RawMessage `json:"session"`
	}
	if err := json.Unmarshal(args, &in); err != nil || in.Session == nil || string(*in.Session) == "null" {
		return "", nil // malformed arguments are reported by the tool's own decoding
	}
	var h string
	if err := json.Unmarshal(*in.Session, &h); err != nil {
		return "", codes.Errorf(codes.InvalidInput, `parameter "session" must be a string: a handle (s_...) or "new"`)
	}
	h = strings.TrimSpace(h)
	if strings.EqualFold(h, "new") {
		h = "new"
	}
	return h, nil
}

// sessionNotes tells the model what happened to its session: the handle of
// one just minted, or that its implicit session had expired and this call
// started afresh, in workdir.
func (s *Set) sessionNotes(r *mcp.CallToolResult, sc *session.Call, workdir string) *mcp.CallToolResult {
	switch {
	case sc.Minted != "":
		r.Content = append(r.Content, &mcp.TextContent{Text: fmt.Sprintf("session: %s\n(a new session: pass session: %q in later calls to keep its working directory, viewed files and background tasks)\n", sc.Minted, sc.Minted)})
	case sc.Restarted == session.EndedIdle:
		r.Content = append(r.Content, &mcp.TextContent{Text: fmt.Sprintf("note: your previous session was closed after %s without calls, and its processes were terminated; this call started a new session in %s\n", s.env.SessionIdleTimeout, workdir)})
	case sc.Restarted == session.EndedLimit:
		r.Content = append(r.Content, &mcp.TextContent{Text: fmt.Sprintf("note: your previous session was closed to make room for others (--max-sessions), and its processes were terminated; this call started a new session in %s\n", workdir)})
	}
	return r
}
