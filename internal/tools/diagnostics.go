package tools

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/config"
	"github.com/boris-mcp/boris/internal/dialect"
	"github.com/boris-mcp/boris/internal/lsp"
	"github.com/boris-mcp/boris/internal/session"
)

// The errors an edit introduced: the edit tools call beginEdit before they
// write and withDiagnostics on their answer. Files no language server
// handles, and --diagnostics off, cost nothing.

// beginEdit tells the language servers of the files an edit is about to
// write (as the tool names them) what they hold now; nil when none has a
// server.
func (c *call) beginEdit(paths ...string) *lsp.Edit {
	if c.deps.LSP == nil || !c.deps.Config.Diagnostics {
		return nil
	}
	var resolved []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		if t, err := c.deps.Policy.Locate(c.sess.Cwd(), p); err == nil {
			resolved = append(resolved, t.Resolved)
		}
	}
	return c.deps.LSP.BeginEdit(resolved...)
}

// withDiagnostics appends to an edit's answer, as a block of its own, the
// errors the servers report after the edit that they did not before,
// waiting at most --diagnostics-wait; what is not known by then is named
// as pending, and kept in the session (after this answer has taken what
// earlier edits came to) for its next answers (see lateDiagnostics).
func (c *call) withDiagnostics(ctx context.Context, e *lsp.Edit, r *mcp.CallToolResult) *mcp.CallToolResult {
	if e == nil {
		return r
	}
	rep := e.Finish(ctx, c.deps.Config.DiagnosticsWait)
	c.late = rep.Late
	cwd, wait := c.sess.Cwd(), c.deps.Config.DiagnosticsWait
	text := dialect.BorisDiagnostics(rep, cwd, wait)
	if c.deps.Config.AnthropicCompat {
		text = dialect.ClaudeDiagnostics(rep, cwd, wait)
	}
	if text != "" {
		r.Content = append(r.Content, &mcp.TextContent{Text: text})
	}
	if d, ok := r.StructuredContent.(interface{ SetDiagnostics(*lsp.Report) }); ok && rep != nil {
		d.SetDiagnostics(rep)
	}
	return r
}

// warm opens a viewed source file in its language server in the
// background, so the edit that usually follows finds the server ready and
// the file's state before it known.
func (c *call) warm(path string) {
	if c.deps.LSP == nil || !c.deps.Config.Diagnostics {
		return
	}
	if t, err := c.deps.Policy.Locate(c.sess.Cwd(), path); err == nil && t.Exists {
		c.deps.LSP.Warm(t.Resolved)
	}
}

// lateDiagnostics appends to any answer of a session what the diagnostics
// its earlier edits left pending have come to since, each once: the
// errors those edits introduced, or that they introduced none.
func lateDiagnostics(cfg *config.Config, sess *session.Session, r *mcp.CallToolResult) {
	rep := sess.LateDiagnostics().Take()
	if rep == nil {
		return
	}
	text := dialect.BorisDiagnostics(rep, sess.Cwd(), cfg.DiagnosticsWait)
	if cfg.AnthropicCompat {
		text = dialect.ClaudeDiagnostics(rep, sess.Cwd(), cfg.DiagnosticsWait)
	}
	r.Content = append(r.Content, &mcp.TextContent{Text: text})
	if d, ok := r.StructuredContent.(interface{ SetLateDiagnostics(*lsp.Report) }); ok {
		d.SetLateDiagnostics(rep)
	}
}
