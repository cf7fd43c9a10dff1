// Package tool is the kernel the tool families share: the MCP edge of
// boris. A tool is declared once, as a Spec (its name in each dialect, the
// --disable-tools names that turn it off, whether a call can change the
// workspace, how it is built), by the package of its family under
// internal/tool/ (exec, edit, patch, search, lsp, checkpoint), and
// everything that lists tools derives from those declarations: the set a
// server registers, the checkpoint taken before a changing call, the names
// --disable-tools accepts, the server's instructions, the reference pages
// and the tests' expectations.
//
// The kernel holds what every call goes through — decoding, required
// parameters, the session, the automatic checkpoint, panics, the audit
// record, the span, metrics — and the result helpers. It knows no tool by
// name.
//
// Tools are registered with the low-level Server.AddTool and schemas built
// here, not with the SDK's schema validation: a wrong value for an enum-like
// parameter or a mistyped argument must come back as an IsError result
// ("[CODE] message" naming the valid values), never as a protocol error.
package tool

import (
	"context"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/audit"
	"github.com/boris-mcp/boris/internal/checkpoint"
	"github.com/boris-mcp/boris/internal/dialect"
	"github.com/boris-mcp/boris/internal/files"
	"github.com/boris-mcp/boris/internal/lsp"
	"github.com/boris-mcp/boris/internal/scope"
	"github.com/boris-mcp/boris/internal/session"
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

// Env is what every tool shares, process-wide: the dialect, the services
// of the domain packages and the settings that are not one family's own.
type Env struct {
	// Mode is the dialect the tools speak.
	Mode dialect.Mode
	// Workdir is the initial working directory of every session.
	Workdir string
	Policy  *scope.Policy
	Files   *files.Service
	Logger  *slog.Logger
	// Observer may be nil.
	Observer Observer
	// Audit writes a record of every call (nil: --audit off).
	Audit *audit.Logger
	// Tracing makes the spans of tool calls and commands (nil: off).
	Tracing *telemetry.Tracing
	// LSP runs the language servers of the lsp tool and of the edits'
	// diagnostics (nil: --lsp off).
	LSP *lsp.Manager
	// Diagnostics says whether an edit's answer ends with the errors it
	// introduced, and how long it waits for them.
	Diagnostics Diagnostics
	// Checkpoints records the workspace before calls that can change it
	// (nil: off, or unavailable).
	Checkpoints *checkpoint.Service
	// Structured is whether tools declare an output schema and answer with
	// structuredContent.
	Structured bool
	// MaxAnswer is the most characters an answer's text holds (0: no
	// bound). Tools stop short of it and say how to get the rest; the
	// kernel cuts whatever still passes it.
	MaxAnswer int
	// SessionIdleTimeout is when an idle session is closed (for the note
	// a call gets when its session had been).
	SessionIdleTimeout time.Duration
	// Disabled are the --disable-tools names as given; NewSet checks them
	// against the declarations.
	Disabled []string
	// After run, in order, on every call's answer once its handler is done
	// (the families' additions to any answer, such as the errors earlier
	// edits turned out to have introduced).
	After []func(c *Call, r *mcp.CallToolResult)
	// Rules, when set, are the command rules (--rules) every call is
	// judged by before it runs (its Spec's Acts), and that a call's
	// commands can apply to each program they start (Call.Gate).
	Rules *Rules
	// Isolation, when set, gives the sessions that work in a directory of
	// their own (a workspace: --isolation worktree, the workspace tool)
	// the environment of that directory.
	Isolation Isolation
}

// Isolation finds the environment a call runs in when its session works
// in a directory of its own: the scope, file service and checkpoints of
// that directory in place of the process's. The workspace family
// implements it.
type Isolation interface {
	// Enter returns the environment of a call of tool by credential in
	// sess: env itself, or its session's own, made at the session's first
	// call when every session gets one. note, when set, is said once after
	// the answer: where the session works.
	Enter(ctx context.Context, sess *session.Session, tool, credential string, env *Env) (e *Env, note string, err error)
}

// Diagnostics are the settings of the errors an edit's answer reports.
type Diagnostics struct {
	On   bool
	Wait time.Duration
}

// Sessions finds the session a tool call runs in: the one its session
// argument names (handle is "" when there is none, "new" for a new one),
// else the caller's implicit session. The server implements it, since only
// it knows the connection and the credential.
type Sessions interface {
	Resolve(ctx context.Context, req *mcp.CallToolRequest, handle string) (*session.Call, error)
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
