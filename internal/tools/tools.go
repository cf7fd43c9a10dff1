// Package tools is the MCP edge of boris: one thin file per tool that turns
// decoded arguments into a call on the domain packages and the answer into
// a CallToolResult. This file holds what they share: the tool set, the
// registration wrapper (decoding, required parameters, panics, logging,
// metrics) and the result helpers.
//
// Tools are registered with the low-level Server.AddTool and schemas built
// here, not with the SDK's schema validation: a wrong value for an enum-like
// parameter or a mistyped argument must come back as an IsError result
// ("[CODE] message" naming the valid values), never as a protocol error.
package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/audit"
	"github.com/boris-mcp/boris/internal/checkpoint"
	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/config"
	"github.com/boris-mcp/boris/internal/files"
	"github.com/boris-mcp/boris/internal/lsp"
	"github.com/boris-mcp/boris/internal/results"
	"github.com/boris-mcp/boris/internal/scope"
	"github.com/boris-mcp/boris/internal/session"
	"github.com/boris-mcp/boris/internal/shell"
	"github.com/boris-mcp/boris/internal/telemetry"
)

// Outcomes of a tool call, for metrics.
const (
	OutcomeOK            = "ok"
	OutcomeToolError     = "tool_error"
	OutcomeProtocolError = "protocol_error"
)

// Observer sees every tool call; the metrics package implements it.
type Observer interface {
	ToolCall(tool, outcome string, d time.Duration)
	BashTimeout()
}

// Deps are the process-wide dependencies of the tools.
type Deps struct {
	Config   *config.Config
	Policy   *scope.Policy
	Files    *files.Service
	Logger   *slog.Logger
	Observer Observer // may be nil
	// Audit writes a record of every call (nil: --audit off).
	Audit *audit.Logger
	// Tracing makes the spans of tool calls and commands (nil: off).
	Tracing *telemetry.Tracing
	// LSP runs the language servers of the lsp tool and of the edits'
	// diagnostics (nil: --lsp off).
	LSP *lsp.Manager
	// Checkpoints records the workspace before calls that can change it
	// (nil: off, or unavailable — Config says why).
	Checkpoints *checkpoint.Service
}

// Sessions finds the session a tool call runs in: the one its session
// argument names (handle is "" when there is none, "new" for a new one),
// else the caller's implicit session. The server implements it, since only
// it knows the connection and the credential.
type Sessions interface {
	Resolve(ctx context.Context, req *mcp.CallToolRequest, handle string) (*session.Call, error)
}

// Set is the tool set of a server: definitions and schemas are built once
// and registered once; each call finds its session through Sessions.
type Set struct {
	deps Deps
	defs []*def
}

// call is what a handler gets besides its arguments.
type call struct {
	sess *session.Session
	req  *mcp.CallToolRequest
	deps *Deps
	// rec is the call's audit record: the handler adds the essentials of
	// what it was asked (command, paths, pattern, …) and what came of it.
	rec *audit.Record
}

// fctx is the session side of a file operation. The edit history is kept
// where undo_edit is offered (the Claude dialect).
func (c *call) fctx() files.Ctx {
	fc := files.Ctx{Cwd: c.sess.Cwd(), Viewed: c.sess}
	if c.deps.Config.AnthropicCompat {
		fc.History = c.sess
	}
	return fc
}

// startCommand starts the span of a command's run; env (TRACEPARENT)
// makes the command join the trace. All nil when tracing is off.
func (c *call) startCommand(ctx context.Context) (context.Context, *telemetry.Span, []string) {
	return c.deps.Tracing.StartCommand(ctx, filepath.Base(c.deps.Config.Shell))
}

// ran records how a command ended, in the audit record and its span.
func (c *call) ran(span *telemetry.Span, res shell.Result) {
	c.rec.SetExit(res.ExitCode)
	c.rec.TimedOut = res.TimedOut
	span.SetInt("process.exit.code", int64(res.ExitCode))
	if res.TimedOut {
		span.Fail("timeout", "the command timed out")
	}
}

// def is one tool: its MCP description and a handler for raw arguments.
type def struct {
	tool     *mcp.Tool
	required []string
	handle   func(ctx context.Context, c *call, args json.RawMessage) (*mcp.CallToolResult, error)
	// errText words an operational error in the tool's dialect (nil:
	// boris's "[CODE] message").
	errText func(error) string
	// errData is the structured content of a failed call, given the error
	// and its text (results.Error, or Codex's shape for its tools).
	errData func(err error, text string) any
	// changes says whether a call can change the workspace (nil: never),
	// so that a checkpoint is taken before it.
	changes func(args json.RawMessage) bool
}

// NewSet builds the tools enabled by the configuration, in the dialect of
// its mode: boris's own, Claude's (--anthropic-compat) or OpenAI's
// (--openai-compat).
func NewSet(deps Deps) (*Set, error) {
	s := &Set{deps: deps}
	cfg := deps.Config
	on := cfg.ToolEnabled
	add := func(d *def, err error) error {
		if err != nil || d == nil {
			return err
		}
		s.defs = append(s.defs, d)
		return nil
	}
	var err error
	if cfg.OpenAICompat {
		// OpenAI's coding models read with the shell, drive long and
		// interactive commands with Codex's unified exec, and edit with
		// apply_patch; that is their whole tool set, plus checkpoints.
		if on(config.ToolBash) {
			err = errors.Join(err, add(shellTool(cfg)))
		}
		if on(config.ToolTaskInput) {
			err = errors.Join(err, add(execCommandTool(cfg)), add(writeStdinTool()))
		}
		if on(config.ToolApplyPatch) {
			err = errors.Join(err, add(applyPatchTool()))
		}
		if on(config.ToolCheckpoint) {
			err = errors.Join(err, add(checkpointTool()))
		}
		if err != nil {
			return nil, err
		}
		s.structured(cfg.StructuredContent)
		s.markChanges()
		return s, nil
	}
	if on(config.ToolBash) {
		err = errors.Join(err, add(bashTool(cfg)))
	}
	if on(config.ToolTaskOutput) {
		err = errors.Join(err, add(taskOutputTool()))
	}
	if on(config.ToolTaskInput) {
		err = errors.Join(err, add(taskInputTool()))
	}
	if on(config.ToolTaskKill) {
		err = errors.Join(err, add(taskKillTool()))
	}
	if cfg.AnthropicCompat {
		if on(config.ToolView) && on(config.ToolStrReplace) && on(config.ToolCreateFile) {
			err = errors.Join(err, add(editorTool()))
		}
	} else {
		if on(config.ToolView) {
			err = errors.Join(err, add(viewTool()))
		}
		if on(config.ToolStrReplace) {
			err = errors.Join(err, add(strReplaceTool()))
		}
		if on(config.ToolCreateFile) {
			err = errors.Join(err, add(createFileTool()))
		}
	}
	if on(config.ToolApplyPatch) {
		err = errors.Join(err, add(applyPatchTool()))
	}
	if on(config.ToolGrep) {
		err = errors.Join(err, add(grepTool(cfg.AnthropicCompat)))
	}
	if on(config.ToolFind) {
		err = errors.Join(err, add(findTool(cfg.AnthropicCompat)))
	}
	if on(config.ToolLSP) && deps.LSP != nil {
		err = errors.Join(err, add(lspTool(cfg.AnthropicCompat)))
	}
	if on(config.ToolCheckpoint) {
		err = errors.Join(err, add(checkpointTool()))
	}
	if err != nil {
		return nil, err
	}
	s.structured(cfg.StructuredContent)
	s.markChanges()
	return s, nil
}

// structured drops the output schemas when answers are to carry no
// structured content (--structured-content off, and its auto in
// --anthropic-compat): declaring a schema promises the content.
func (s *Set) structured(on bool) {
	if on {
		return
	}
	for _, d := range s.defs {
		d.tool.OutputSchema = nil
	}
}

// markChanges flags the tools whose calls can change the workspace: a
// checkpoint is taken before each of their calls. Commands (and input to
// a running one) can change anything; the editor only when it writes.
func (s *Set) markChanges() {
	for _, d := range s.defs {
		switch d.tool.Name {
		case "bash", "shell", "exec_command", "task_input", "write_stdin", "str_replace", "create_file", "apply_patch":
			d.changes = always
		case "str_replace_editor":
			d.changes = editorChanges
		}
	}
}

// Names returns the registered tool names in registration order.
func (s *Set) Names() []string {
	var out []string
	for _, d := range s.defs {
		out = append(out, d.tool.Name)
	}
	return out
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
func (s *Set) wrap(d *def, sessions Sessions) mcp.ToolHandler {
	name := d.tool.Name
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, perr error) {
		start := time.Now()
		who := callerOf(ctx)
		rec := &audit.Record{Tool: name, Session: "-", Credential: who.Credential, Era: who.Era, Transport: who.Transport, Client: who.Client}
		ctx, span := s.deps.Tracing.StartTool(ctx, name)
		rec.TraceID = span.TraceID()
		defer func() {
			if r := recover(); r != nil {
				s.deps.Logger.Error("tool panicked", "tool", name, "session", rec.Session, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
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
			if s.deps.Observer != nil {
				s.deps.Observer.ToolCall(name, rec.Outcome, rec.Duration)
			}
			s.deps.Audit.Log(ctx, rec)
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
		note := ""
		if d.changes != nil && s.deps.Checkpoints != nil && d.changes(args) {
			note = s.autoCheckpoint(ctx, req, sc.Session, name, args)
		}
		r, err := d.handle(ctx, &call{sess: sc.Session, req: req, deps: &s.deps, rec: rec}, args)
		if err != nil {
			r = s.failed(rec, err, d)
		}
		if note != "" {
			r.Content = append(r.Content, &mcp.TextContent{Text: note})
		}
		return finish(s.sessionNotes(r, sc), structured, withText, sc), nil
	}
}

// failed is the result of an operational error, in the tool's dialect
// (errText; nil for boris's "[CODE] message"), with its code recorded and
// its data (errData; nil for results.Error).
func (s *Set) failed(rec *audit.Record, err error, d *def) *mcp.CallToolResult {
	rec.ErrorCode = string(codes.IOError)
	if e, ok := codes.As(err); ok {
		rec.ErrorCode = string(e.Code)
	}
	var r *mcp.CallToolResult
	if d.errText == nil {
		r = errorResult(err)
	} else {
		r = textResult(d.errText(err))
		r.IsError = true
	}
	if d.errData != nil {
		r.StructuredContent = d.errData(err, resultTextOf(r))
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
			c.SetText(resultTextOf(r))
		}
	}
	// The value itself, not its encoding: the SDK encodes the result with
	// encoding/json, which would check and copy pre-encoded bytes once more.
	r.StructuredContent = data
	return r
}

// resultTextOf is the text of a result's content.
func resultTextOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// Caller is who makes a tool call, as the server knows it: the audit
// record's credential, protocol era, transport and client.
type Caller struct {
	Credential, Era, Transport, Client string
}

type callerKey struct{}

// WithCaller returns ctx carrying the caller of a tool call.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

func callerOf(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
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
// started afresh.
func (s *Set) sessionNotes(r *mcp.CallToolResult, sc *session.Call) *mcp.CallToolResult {
	switch {
	case sc.Minted != "":
		r.Content = append(r.Content, &mcp.TextContent{Text: fmt.Sprintf("session: %s\n(a new session: pass session: %q in later calls to keep its working directory, viewed files and background tasks)\n", sc.Minted, sc.Minted)})
	case sc.Restarted == session.EndedIdle:
		r.Content = append(r.Content, &mcp.TextContent{Text: fmt.Sprintf("note: your previous session was closed after %s without calls, and its processes were terminated; this call started a new session in %s\n", s.deps.Config.SessionIdleTimeout, s.deps.Config.Workdir)})
	case sc.Restarted == session.EndedLimit:
		r.Content = append(r.Content, &mcp.TextContent{Text: fmt.Sprintf("note: your previous session was closed to make room for others (--max-sessions), and its processes were terminated; this call started a new session in %s\n", s.deps.Config.Workdir)})
	}
	return r
}

// checkRequired reports a missing required parameter, or arguments that
// are not a JSON object.
func checkRequired(args json.RawMessage, required []string) error {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		if len(required) > 0 {
			return codes.Errorf(codes.InvalidInput, "missing required parameter %q", required[0])
		}
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &m); err != nil {
		return codes.Errorf(codes.InvalidInput, "arguments must be a JSON object")
	}
	for _, r := range required {
		if v, ok := m[r]; !ok || string(v) == "null" {
			return codes.Errorf(codes.InvalidInput, "missing required parameter %q", r)
		}
	}
	return nil
}

// decode unmarshals arguments into in, wording type mistakes for a model.
func decode(args json.RawMessage, in any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		return nil
	}
	err := json.Unmarshal(args, in)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return codes.Errorf(codes.InvalidInput, "arguments must be a JSON object")
		}
		return codes.Errorf(codes.InvalidInput, "parameter %q must be %s, not %s", te.Field, jsonKind(te.Type), te.Value)
	}
	var ce *conversionError
	if errors.As(err, &ce) {
		if name := failingField(args, in); name != "" {
			return codes.Errorf(codes.InvalidInput, "parameter %q: %s", name, ce.msg)
		}
		return codes.Errorf(codes.InvalidInput, "%s", ce.msg)
	}
	return codes.Errorf(codes.InvalidInput, "invalid arguments: %v", err)
}

// failingField finds the parameter whose value does not decode, by trying
// each one alone (only on the error path).
func failingField(args json.RawMessage, in any) string {
	var raw map[string]json.RawMessage
	if json.Unmarshal(args, &raw) != nil {
		return ""
	}
	return failingFieldOf(raw, reflect.TypeOf(in).Elem())
}

func failingFieldOf(raw map[string]json.RawMessage, t reflect.Type) string {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if name := failingFieldOf(raw, f.Type); name != "" {
				return name
			}
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if v, ok := raw[name]; ok && json.Unmarshal(v, reflect.New(f.Type).Interface()) != nil {
			return name
		}
	}
	return ""
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "an array"
	}
	return "a " + t.String()
}

// returns lists the shapes of a tool's successful results (zero values
// of package results' types); a failed call's is results.Error. It is the
// one place a tool declares its structured results: define builds the
// outputSchema from it, and the handler answers with answer(text, data)
// where data is one of the shapes.
func returns(shapes ...any) []any { return shapes }

// define makes a def for a typed handler. The input schema is inferred
// from In (lenient Int and Bool types become integer and boolean), then
// adjusted by tune (enums, defaults); the output schema is that of out
// (see returns).
func define[In any](name, title, desc string, readOnly bool, out []any, tune func(*jsonschema.Schema), h func(ctx context.Context, c *call, in *In) (*mcp.CallToolResult, error)) (*def, error) {
	return defineAs[In](name, title, desc, readOnly, out, tune, h)
}

// defineAs is define with the schema inferred from S while arguments are
// decoded into In: one handler that accepts several parameter spellings
// can show each mode only its own.
func defineAs[S, In any](name, title, desc string, readOnly bool, out []any, tune func(*jsonschema.Schema), h func(ctx context.Context, c *call, in *In) (*mcp.CallToolResult, error)) (*def, error) {
	schema, err := jsonschema.For[S](&jsonschema.ForOptions{TypeSchemas: leniencySchemas})
	if err != nil {
		return nil, fmt.Errorf("schema for %s: %w", name, err)
	}
	schema.AdditionalProperties = nil // unknown parameters are ignored, not refused
	for _, prop := range schema.Properties {
		// Optional pointer and slice fields infer as ["null", T]; models are
		// trained on plain types, and omitting the field is how to say null.
		if len(prop.Types) == 2 && prop.Types[0] == "null" {
			prop.Type, prop.Types = prop.Types[1], nil
		}
	}
	if p := schema.Properties["view_range"]; p != nil {
		p.MinItems, p.MaxItems = new(2), new(2)
	}
	if schema.Properties == nil {
		schema.Properties = map[string]*jsonschema.Schema{}
	}
	schema.Properties["session"] = &jsonschema.Schema{Type: "string", Description: sessionArgDesc}
	desc += "\n\nsession: optional; omit it to keep working in your default session, or pass \"new\" for a separate one and then the handle the result gives."
	if tune != nil {
		tune(schema)
	}
	// The schema goes to the SDK as JSON: it marshals a tool's schema on
	// every stateless tools/call (to look for header annotations) and on
	// every tools/list, and raw JSON costs a copy where a *Schema costs a
	// reflective walk.
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("schema for %s: %w", name, err)
	}
	tool := &mcp.Tool{
		Name:        name,
		Title:       title,
		Description: desc,
		InputSchema: json.RawMessage(raw),
		Annotations: &mcp.ToolAnnotations{Title: title, ReadOnlyHint: readOnly, OpenWorldHint: new(false)},
	}
	if readOnly {
		tool.Annotations.IdempotentHint = true
	}
	d := &def{
		tool:     tool,
		required: slices.Clone(schema.Required),
		handle: func(ctx context.Context, c *call, args json.RawMessage) (*mcp.CallToolResult, error) {
			in := new(In)
			if err := decode(args, in); err != nil {
				return nil, err
			}
			return h(ctx, c, in)
		},
	}
	if err := d.declare(out); err != nil {
		return nil, fmt.Errorf("output schema for %s: %w", name, err)
	}
	return d, nil
}

// declare sets a def's output schema from the shapes of its results. A
// tool answering in Codex's exec shape declares Codex's schema as it is,
// and its failed calls fit it too: output holds the error text.
func (d *def) declare(shapes []any) error {
	if len(shapes) == 0 {
		return nil
	}
	if len(shapes) == 1 {
		if _, ok := shapes[0].(results.Exec); ok {
			d.tool.OutputSchema = results.ExecSchema
			d.errData = func(_ error, text string) any { return &results.Exec{Output: text} }
			return nil
		}
	}
	raw, err := results.Schema(shapes...)
	if err != nil {
		return err
	}
	d.tool.OutputSchema = raw
	return nil
}

// Int is an integer argument that also accepts integral floats (5000.0)
// and numeric strings ("5000"), as models sometimes send them.
type Int int

// UnmarshalJSON implements json.Unmarshaler.
func (n *Int) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		return nil
	}
	if unq, err := strconv.Unquote(s); err == nil {
		s = strings.TrimSpace(unq)
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		*n = Int(i)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return &conversionError{msg: fmt.Sprintf("expected an integer, got %s", string(b))}
	case f > 9.2e18 || f < -9.2e18:
		return &conversionError{msg: fmt.Sprintf("%s is out of range", string(b))}
	case f != float64(int64(f)):
		return &conversionError{msg: fmt.Sprintf("expected an integer, got %s", string(b))}
	}
	*n = Int(f)
	return nil
}

// Bool is a boolean argument that also accepts "true" and "false" strings.
type Bool bool

// UnmarshalJSON implements json.Unmarshaler.
func (v *Bool) UnmarshalJSON(b []byte) error {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(string(b)), `"`)) {
	case "true":
		*v = true
	case "false", "null", "":
		*v = false
	default:
		return &conversionError{msg: fmt.Sprintf("expected true or false, got %s", string(b))}
	}
	return nil
}

type conversionError struct{ msg string }

func (e *conversionError) Error() string { return e.msg }

var leniencySchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[Int]():  {Type: "integer"},
	reflect.TypeFor[Bool](): {Type: "boolean"},
}

// setEnum lists the valid values of a parameter in the schema, for the
// model's benefit; the handler checks them itself.
func setEnum(s *jsonschema.Schema, prop string, values ...string) {
	if p := s.Properties[prop]; p != nil {
		for _, v := range values {
			p.Enum = append(p.Enum, v)
		}
	}
}

// setDefault documents a parameter's default in the schema.
func setDefault(s *jsonschema.Schema, prop string, v any) {
	if p := s.Properties[prop]; p != nil {
		if b, err := json.Marshal(v); err == nil {
			p.Default = b
		}
	}
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// answer is a successful result: the text the model reads, and the same
// result as data (one of the tool's shapes, see returns), which wrap
// encodes as the structuredContent.
func answer(text string, data any) *mcp.CallToolResult {
	r := textResult(text)
	r.StructuredContent = data
	return r
}

// errorResult renders an error as "[CODE] message" with IsError set.
func errorResult(err error) *mcp.CallToolResult {
	msg := ""
	if e, ok := codes.As(err); ok {
		msg = e.Error()
	} else {
		msg = "[" + string(codes.IOError) + "] " + err.Error()
	}
	r := textResult(msg)
	r.IsError = true
	return r
}
