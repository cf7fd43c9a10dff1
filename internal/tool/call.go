package tool

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/audit"
	"github.com/boris-mcp/boris/internal/dialect"
	"github.com/boris-mcp/boris/internal/files"
	"github.com/boris-mcp/boris/internal/session"
)

// Call is what a handler gets besides its arguments: the session it runs
// in, the request, the process-wide environment and its audit record.
type Call struct {
	Sess *session.Session
	Req  *mcp.CallToolRequest
	Env  *Env
	// Rec is the call's audit record: the handler adds the essentials of
	// what it was asked (command, paths, pattern, …) and what came of it.
	Rec *audit.Record
	// Progress sends the call's progress notifications (nil when the
	// client gave no progress token; its methods then do nothing).
	Progress *Progress
	// deferred run once the answer is complete (see Defer).
	deferred []func()
	// gate applies the command rules to the call (nil: no rules).
	gate *Gate
}

// Defer has f run once the call's answer is complete, after every After
// hook has added to it: what a call leaves for the session's later
// answers must not reach its own.
func (c *Call) Defer(f func()) { c.deferred = append(c.deferred, f) }

// FileCtx is the session side of a file operation. The edit history is kept
// where undo_edit is offered (Claude's dialect), so that it can undo any
// edit, a patch's included.
func (c *Call) FileCtx() files.Ctx {
	fc := files.Ctx{Cwd: c.Sess.Cwd(), Viewed: c.Sess}
	if c.Env.Mode == dialect.Claude {
		fc.History = c.Sess
	}
	return fc
}
