package results

import (
	"github.com/boris-mcp/boris/internal/lsp"
)

// LSP is an lsp call's answer. Trees (an outline, a call hierarchy) come
// flat, in the order the text shows them, each item with its depth.
type LSP struct {
	Operation string     `json:"operation" jsonschema:"The operation asked for."`
	Path      string     `json:"path" jsonschema:"The file asked about (absolute)."`
	Server    string     `json:"server" jsonschema:"The language server that answered (gopls, clangd, pylsp, …)."`
	Symbol    string     `json:"symbol,omitempty" jsonschema:"The identifier at the position asked about."`
	Locations []Location `json:"locations,omitempty" jsonschema:"goToDefinition, findReferences, goToImplementation: the places, in order (at most 100 shown)."`
	Total     int        `json:"total,omitempty" jsonschema:"How many locations there are in all (more than locations holds when cut)."`
	Hidden    int        `json:"hidden,omitempty" jsonschema:"Locations left out because the scope rules deny their paths."`
	Files     int        `json:"files,omitempty" jsonschema:"How many files the locations are in."`
	Hover     string     `json:"hover,omitempty" jsonschema:"hover: the type and documentation, as the server gives them."`
	Symbols   []Symbol   `json:"symbols,omitempty" jsonschema:"documentSymbol (an outline, depth 0 at the top) and workspaceSymbol (depth 0, with container)."`
	Calls     []Call     `json:"calls,omitempty" jsonschema:"prepareCallHierarchy: the items at the position (depth 0); incomingCalls and outgoingCalls: the function at the position (depth 0), then its callers or callees (depth 1) with the call sites."`
	// Diagnostics holds the diagnostics operation's answer.
	Diagnostics []Diagnostic `json:"diagnostics,omitempty" jsonschema:"diagnostics: what the server reports for the file now."`
	Derived     string       `json:"derived,omitempty" jsonschema:"The server lacks the operation: how the answer was worked out from others instead."`
	Indexing    string       `json:"indexing,omitempty" jsonschema:"The work the server said it was busy with: the answer may be incomplete."`
	Note        string       `json:"note,omitempty" jsonschema:"What happened to the server (a restart)."`
	Stale       bool         `json:"stale,omitempty" jsonschema:"diagnostics: the server had not reported on the file's latest text within the wait; these are the last it reported."`
	Common
}

// Location is a place in a file.
type Location struct {
	Path string `json:"path" jsonschema:"The file (absolute)."`
	Line int    `json:"line" jsonschema:"1-based."`
	Col  int    `json:"col" jsonschema:"1-based, in characters."`
	Text string `json:"text,omitempty" jsonschema:"The source line."`
}

// Symbol is a symbol of an outline or a workspace search.
type Symbol struct {
	Name      string `json:"name" jsonschema:"Its name."`
	Kind      string `json:"kind" jsonschema:"function, method, struct, class, field, variable, …"`
	Detail    string `json:"detail,omitempty" jsonschema:"What the server adds (a signature, a type)."`
	Path      string `json:"path" jsonschema:"Its file (absolute)."`
	Line      int    `json:"line" jsonschema:"Where it starts, 1-based."`
	Col       int    `json:"col" jsonschema:"1-based."`
	EndLine   int    `json:"end_line,omitempty" jsonschema:"Where it ends."`
	Container string `json:"container,omitempty" jsonschema:"workspaceSymbol: what it is in (a package, a class)."`
	Depth     int    `json:"depth" jsonschema:"Its depth in the outline, 0 at the top."`
}

// Call is a function of a call hierarchy.
type Call struct {
	Name   string     `json:"name" jsonschema:"The function."`
	Kind   string     `json:"kind" jsonschema:"function, method, constructor, …"`
	Detail string     `json:"detail,omitempty" jsonschema:"What the server adds."`
	Path   string     `json:"path" jsonschema:"Where it is defined (absolute)."`
	Line   int        `json:"line" jsonschema:"1-based."`
	Col    int        `json:"col" jsonschema:"1-based."`
	Depth  int        `json:"depth" jsonschema:"0: the function at the position; 1: a caller (incomingCalls) or callee (outgoingCalls)."`
	Sites  []Location `json:"sites,omitempty" jsonschema:"The calls: in the caller (incomingCalls) or in the function at the position (outgoingCalls)."`
}

// Diagnostic is an error or warning a language server reports.
type Diagnostic struct {
	Path     string `json:"path" jsonschema:"The file (absolute)."`
	Line     int    `json:"line" jsonschema:"1-based."`
	Col      int    `json:"col" jsonschema:"1-based."`
	Severity string `json:"severity" jsonschema:"error, warning, information or hint."`
	Message  string `json:"message" jsonschema:"The server's message."`
	Source   string `json:"source,omitempty" jsonschema:"What reported it (compiler, a linter)."`
	Code     string `json:"code,omitempty" jsonschema:"The server's code for it."`
	Text     string `json:"text,omitempty" jsonschema:"The source line."`
}

// Diagnosed is in the shapes of the edits: the errors the edit introduced,
// as the files' language servers report them.
type Diagnosed struct {
	NewDiagnostics []Diagnostic `json:"new_diagnostics,omitempty" jsonschema:"Errors the files' language servers report after the edit that they did not before (nothing: the edit broke nothing they see)."`
	// DiagnosticsPending names files whose server had not reported when
	// the answer went out.
	DiagnosticsPending []string `json:"diagnostics_pending,omitempty" jsonschema:"Files whose language server had not reported when this answer went out: the errors this edit introduced in them come with the session's next answer (late_diagnostics), or ask the lsp tool's diagnostics operation."`
	// DiagnosticsLate names files whose server had not reported in time.
	DiagnosticsLate []string `json:"diagnostics_late,omitempty" jsonschema:"Files whose language server did not report at all in time (ask the lsp tool's diagnostics operation)."`
}

// SetDiagnostics records what an edit's diagnostics report says.
func (d *Diagnosed) SetDiagnostics(rep *lsp.Report) {
	for _, f := range rep.Files {
		for _, x := range f.Introduced {
			d.NewDiagnostics = append(d.NewDiagnostics, diagnosticOf(x))
		}
		switch {
		case f.Pending:
			d.DiagnosticsPending = append(d.DiagnosticsPending, f.Path)
		case f.Late:
			d.DiagnosticsLate = append(d.DiagnosticsLate, f.Path)
		}
	}
}

// LateDiagnostics is what earlier edits' pending diagnostics came to,
// in whichever answer of the session came next.
type LateDiagnostics struct {
	Files  []string     `json:"files" jsonschema:"Files of earlier edits whose language server has now reported (or will not: see the text)."`
	Errors []Diagnostic `json:"errors,omitempty" jsonschema:"The errors those edits introduced (nothing: they broke nothing the servers see)."`
}

// SetLateDiagnostics records a delayed report (see lsp.Inbox).
func (c *Common) SetLateDiagnostics(rep *lsp.Report) {
	l := &LateDiagnostics{}
	for _, f := range rep.Files {
		l.Files = append(l.Files, f.Path)
		for _, x := range f.Introduced {
			l.Errors = append(l.Errors, diagnosticOf(x))
		}
	}
	c.LateDiagnostics = l
}

// FromLSP is an lsp answer's data.
func FromLSP(r *lsp.Result) *LSP {
	out := &LSP{Operation: r.Op, Path: r.File, Server: r.Server, Symbol: r.Word, Total: r.Total, Hidden: r.Hidden, Files: r.Files,
		Hover: r.Hover, Derived: r.Derived, Indexing: r.Indexing, Note: r.Note, Stale: r.Stale}
	for _, l := range r.Locations {
		out.Locations = append(out.Locations, locationOf(l))
	}
	var symbols func(list []lsp.Symbol, depth int)
	symbols = func(list []lsp.Symbol, depth int) {
		for _, s := range list {
			out.Symbols = append(out.Symbols, Symbol{Name: s.Name, Kind: s.Kind, Detail: s.Detail, Path: s.Loc.Path, Line: s.Loc.Line, Col: s.Loc.Col, EndLine: s.EndLine, Container: s.Container, Depth: depth})
			symbols(s.Children, depth+1)
		}
	}
	symbols(r.Symbols, 0)
	var calls func(list []lsp.CallItem, depth int)
	calls = func(list []lsp.CallItem, depth int) {
		for _, c := range list {
			call := Call{Name: c.Name, Kind: c.Kind, Detail: c.Detail, Path: c.Loc.Path, Line: c.Loc.Line, Col: c.Loc.Col, Depth: depth}
			for _, s := range c.Sites {
				call.Sites = append(call.Sites, locationOf(s))
			}
			out.Calls = append(out.Calls, call)
			calls(c.Children, depth+1)
		}
	}
	calls(r.Calls, 0)
	for _, d := range r.Diagnostics {
		out.Diagnostics = append(out.Diagnostics, diagnosticOf(d))
	}
	return out
}

func locationOf(l lsp.Loc) Location {
	return Location{Path: l.Path, Line: l.Line, Col: l.Col, Text: l.Text}
}

func diagnosticOf(d lsp.Diag) Diagnostic {
	return Diagnostic{Path: d.Loc.Path, Line: d.Loc.Line, Col: d.Loc.Col, Severity: lsp.SeverityName(d.Severity), Message: d.Message, Source: d.Source, Code: d.Code, Text: d.Loc.Text}
}
