package lsp

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/lsp"
	"github.com/boris-mcp/boris/internal/tool"
)

// The errors an edit introduced: the edit tools call BeginEdit before they
// write and WithDiagnostics on their answer. Files no language server
// handles, and --diagnostics off, cost nothing.

// BeginEdit tells the language servers of the files an edit is about to
// write (as the tool names them) what they hold now; nil when none has a
// server.
func BeginEdit(c *tool.Call, paths ...string) *lsp.Edit {
	if c.Env.LSP == nil || !c.Env.Diagnostics.On {
		return nil
	}
	var resolved []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		if t, err := c.Env.Policy.Locate(c.Sess.Cwd(), p); err == nil {
			resolved = append(resolved, t.Resolved)
		}
	}
	return c.Env.LSP.BeginEdit(resolved...)
}

// WithDiagnostics appends to an edit's answer, as a block of its own, the
// errors the servers report after the edit that they did not before,
// waiting at most --diagnostics-wait; what is not known by then is named
// as pending, and kept in the session for its next answers (DeliverLate).
func WithDiagnostics(ctx context.Context, c *tool.Call, e *lsp.Edit, r *mcp.CallToolResult) *mcp.CallToolResult {
	if e == nil {
		return r
	}
	wait := c.Env.Diagnostics.Wait
	rep := e.Finish(ctx, wait)
	// What is not known by now is kept for the session's next answers,
	// once this one has taken what earlier edits came to.
	c.Defer(func() { c.Sess.LateDiagnostics().Add(rep.Late) })
	text := diagnosticsText(c.Env.Mode, rep, c.Sess.Cwd(), wait)
	if text != "" {
		r.Content = append(r.Content, &mcp.TextContent{Text: text})
	}
	if d, ok := r.StructuredContent.(interface{ SetDiagnostics(*lsp.Report) }); ok && rep != nil {
		d.SetDiagnostics(rep)
	}
	return r
}

// Warm opens a viewed source file in its language server in the
// background, so the edit that usually follows finds the server ready and
// the file's state before it known.
func Warm(c *tool.Call, path string) {
	if c.Env.LSP == nil || !c.Env.Diagnostics.On {
		return
	}
	if t, err := c.Env.Policy.Locate(c.Sess.Cwd(), path); err == nil && t.Exists {
		c.Env.LSP.Warm(t.Resolved)
	}
}

// DeliverLate appends to any answer of a session what the diagnostics its
// earlier edits left pending have come to since, each once: the errors
// those edits introduced, or that they introduced none. It is a hook on
// every answer (tool.Env.After).
func DeliverLate(c *tool.Call, r *mcp.CallToolResult) {
	rep := c.Sess.LateDiagnostics().Take()
	if rep == nil {
		return
	}
	r.Content = append(r.Content, &mcp.TextContent{Text: diagnosticsText(c.Env.Mode, rep, c.Sess.Cwd(), c.Env.Diagnostics.Wait)})
	if d, ok := r.StructuredContent.(interface{ SetLateDiagnostics(*lsp.Report) }); ok {
		d.SetLateDiagnostics(rep)
	}
}
