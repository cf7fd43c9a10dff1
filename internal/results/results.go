// Package results holds the structured results of boris's tools: the
// shapes a tool call returns as MCP structuredContent beside the text the
// model reads, their JSON Schemas (the tools' outputSchema), and the
// conversions from the domain packages' values. The shapes are a stable
// format, documented field by field in docs/results.md: fields may be
// added, none renamed or removed.
//
// The same names mean the same things in every shape (path, paths,
// task_id, status, exit_code, timed_out, truncated, total, …) and agree
// with the audit record where the two overlap. Like package dialect it
// renders what the operations return and knows nothing about MCP.
package results

import (
	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/files"
)

// Common is in every boris shape: what happened to the caller's session,
// and for hosts that show their model the structured content instead of
// the text, the text.
type Common struct {
	Text         string `json:"text,omitempty" jsonschema:"The answer's text, word for word: present only for clients that give their model the structured content in place of the text (Claude Code, Codex CLI), so the model still reads it."`
	NewSession   string `json:"new_session,omitempty" jsonschema:"The handle of the session this call started (session: \"new\"); pass it as session in later calls."`
	SessionEnded string `json:"session_ended,omitempty" jsonschema:"Set when the caller's previous default session had been closed (idle: after --session-idle-timeout without calls; limit: to make room under --max-sessions) and this call ran in a new one."`
	// LateDiagnostics: see SetLateDiagnostics.
	LateDiagnostics *LateDiagnostics `json:"late_diagnostics,omitempty" jsonschema:"What the diagnostics of earlier edits of this session, pending in their answers, came to: the errors they introduced, reported after those answers."`
}

// SetText puts the answer's text in the data.
func (c *Common) SetText(text string) { c.Text = text }

// SetSession records what happened to the call's session.
func (c *Common) SetSession(newSession, ended string) {
	c.NewSession, c.SessionEnded = newSession, ended
}

// Error is the structured content of every failed call (isError): the
// code and message of "[CODE] message", and what the error is about.
type Error struct {
	Code       string   `json:"code" jsonschema:"The error code, as in the text's [CODE]."`
	Message    string   `json:"message" jsonschema:"What happened, the value at fault and how to fix the call (boris's wording, without the [CODE] prefix)."`
	Path       string   `json:"path,omitempty" jsonschema:"The file or directory the error is about."`
	Param      string   `json:"param,omitempty" jsonschema:"The parameter whose value was refused."`
	Valid      []string `json:"valid,omitempty" jsonschema:"The values that parameter may take."`
	Count      int      `json:"count,omitempty" jsonschema:"STR_REPLACE_AMBIGUOUS: how many times old_str occurs."`
	Lines      []int    `json:"lines,omitempty" jsonschema:"STR_REPLACE_AMBIGUOUS: the lines that hold old_str whole."`
	TotalLines int      `json:"total_lines,omitempty" jsonschema:"A view_range past the end: the lines the file has."`
	Hunk       int      `json:"hunk,omitempty" jsonschema:"PATCH_CONTEXT_NOT_FOUND: the failing hunk of the file's section, 1-based."`
	PatchLine  int      `json:"patch_line,omitempty" jsonschema:"PATCH_CONTEXT_NOT_FOUND: that hunk's line in the patch."`
	Common
}

// ErrorOf is the structured content of a failed call: err's code (IO_ERROR
// for an error without one), boris's message and the facts the error
// carries.
func ErrorOf(err error) *Error {
	e, ok := codes.As(err)
	if !ok {
		return &Error{Code: string(codes.IOError), Message: err.Error()}
	}
	out := &Error{Code: string(e.Code), Message: e.Message, Param: e.Param, Valid: e.Valid}
	switch f := e.Fact.(type) {
	case files.FactMissing:
		out.Path = f.Path
	case files.FactIsDir:
		out.Path = f.Path
	case files.FactNoMatch:
		out.Path = f.Path
	case files.FactAmbiguous:
		out.Path, out.Count, out.Lines = f.Path, f.Count, f.SameLine
	case files.FactOverwriteUnviewed:
		out.Path = f.Path
	case files.FactInsertLine:
		out.Path, out.TotalLines = f.Path, f.Max
	case files.FactRange:
		out.Path, out.TotalLines = f.Path, f.Lines
	case files.FactRangeOnDir:
		out.Path = f.Path
	case files.FactNoHistory:
		out.Path = f.Path
	case files.FactChangedSinceEdit:
		out.Path = f.Path
	case files.FactPatchContext:
		out.Path = f.File
		if f.Err != nil {
			out.Hunk, out.PatchLine = f.Err.Hunk, f.Err.Line
		}
	}
	return out
}
