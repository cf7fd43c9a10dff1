package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/scope"
)

// The operations, named as Claude Code's LSP tool names them, plus
// diagnostics.
const (
	OpDefinition           = "goToDefinition"
	OpReferences           = "findReferences"
	OpHover                = "hover"
	OpDocumentSymbol       = "documentSymbol"
	OpWorkspaceSymbol      = "workspaceSymbol"
	OpImplementation       = "goToImplementation"
	OpPrepareCallHierarchy = "prepareCallHierarchy"
	OpIncomingCalls        = "incomingCalls"
	OpOutgoingCalls        = "outgoingCalls"
	OpDiagnostics          = "diagnostics"
)

// Operations lists the valid operations.
var Operations = []string{OpDefinition, OpReferences, OpHover, OpDocumentSymbol, OpWorkspaceSymbol,
	OpImplementation, OpPrepareCallHierarchy, OpIncomingCalls, OpOutgoingCalls, OpDiagnostics}

// needsPosition reports whether an operation works at a position.
func needsPosition(op string) bool {
	switch op {
	case OpDocumentSymbol, OpDiagnostics, OpWorkspaceSymbol:
		return false
	}
	return true
}

// Limits of an answer.
const (
	// MaxLocations is how many locations an answer carries with their
	// source lines; Total says how many there were.
	MaxLocations = 100
	// DefaultRequestTimeout bounds one request to a server.
	DefaultRequestTimeout = 30 * time.Second
	// diagnosticsTimeout bounds the wait of the diagnostics operation.
	diagnosticsTimeout = 10 * time.Second
)

// Query is one call of the lsp tool.
type Query struct {
	Op string
	// Cwd is where a relative Path starts.
	Cwd  string
	Path string
	// Line and Character are 1-based (characters, as editors count
	// them); 0 when not given.
	Line, Character int
	// Query is the workspaceSymbol search text.
	Query string
	// Policy, when set, decides instead of the manager's which paths the
	// query may name and its answer show: the caller's own (a session
	// confined to its workspace).
	Policy *scope.Policy
}

// Loc is a place in a file: 1-based line and character, and the line's
// text.
type Loc struct {
	Path      string
	Line, Col int
	Text      string
}

// Symbol is a symbol of a document outline (with children) or of a
// workspace search (with Container).
type Symbol struct {
	Name, Detail, Kind string
	Loc                Loc
	EndLine            int
	Container          string
	Children           []Symbol
}

// CallItem is a function in a call hierarchy: where it is defined, where
// the calls are (Sites) and, below the root, the functions calling it or
// called by it.
type CallItem struct {
	Name, Detail, Kind string
	Loc                Loc
	Sites              []Loc
	Children           []CallItem
}

// Diag is one diagnostic.
type Diag struct {
	Loc      Loc
	Severity int
	Message  string
	Source   string
	Code     string
}

// Result is the answer of a Query, as plain values for a dialect to
// render.
type Result struct {
	Op string
	// File is the file asked about; Pos the position (with its line).
	File string
	Pos  Loc
	// Word is the identifier at the position ("" when none).
	Word string
	// Server is the language server's name.
	Server string
	// Note says what happened to the server (a restart), "" mostly.
	Note string
	// Indexing is the work the server reported in progress when it
	// answered: the answer may be incomplete.
	Indexing string
	// Locations (definition, references, implementation) in order, at
	// most MaxLocations; Total counts them all, Hidden those in paths
	// the scope rules deny (not in Locations).
	Locations     []Loc
	Total, Hidden int
	// Files is the number of files the Total locations are in.
	Files   int
	Hover   string
	Symbols []Symbol
	// Calls is the call hierarchy: the items at the position
	// (prepareCallHierarchy), or one root whose children are its callers
	// or callees.
	Calls       []CallItem
	Diagnostics []Diag
	// Derived says the answer was derived from other requests, the
	// server lacking the operation ("" for the server's own answer).
	Derived string
	// Waited is set for diagnostics the server had not published within
	// the wait (those shown are the last it had).
	Waited time.Duration
	Stale  bool
}

// Do runs a query. A server that dies under it is started again and asked
// once more.
func (m *Manager) Do(ctx context.Context, q Query) (*Result, error) {
	res, err := m.do(ctx, q)
	if e, ok := codes.As(err); ok && e.Fact == errDied && ctx.Err() == nil {
		return m.do(ctx, q)
	}
	return res, err
}

func (m *Manager) do(ctx context.Context, q Query) (*Result, error) {
	if !validOp(q.Op) {
		return nil, codes.Errorf(codes.InvalidInput, "unknown operation %q: valid operations are %s", q.Op, strings.Join(Operations, ", "))
	}
	path, err := m.resolve(q.policy(m), q.Cwd, q.Path)
	if err != nil {
		return nil, err
	}
	txt, err := m.readText(path)
	var big *tooLargeError
	switch {
	case errors.As(err, &big):
		return nil, codes.Errorf(codes.FileTooLarge, "%v; no language server is asked about it", big)
	case err != nil:
		return nil, codes.Errorf(codes.IOError, "read %s: %v", path, err)
	}
	content, st := txt.content, txt.st
	res := &Result{Op: q.Op, File: path}
	var pos position
	if needsPosition(q.Op) || (q.Op == OpWorkspaceSymbol && strings.TrimSpace(q.Query) == "") {
		if q.Line <= 0 || q.Character <= 0 {
			if q.Op == OpWorkspaceSymbol {
				return nil, codes.Errorf(codes.InvalidInput, "workspaceSymbol needs query (the symbol name or part of it), or line and character on a symbol whose name to search")
			}
			return nil, codes.Errorf(codes.InvalidInput, "%s needs line and character (1-based) of the symbol in %s", q.Op, path)
		}
		n := lineCount(content)
		if q.Line > n {
			return nil, codes.Errorf(codes.InvalidInput, "line %d is outside %s, which has %d line%s", q.Line, path, n, plural(n))
		}
		text, _ := txt.line(q.Line - 1)
		if chars := charCount(text); q.Character > chars+1 {
			return nil, codes.Errorf(codes.InvalidInput, "character %d is past the end of line %d of %s, which has %d character%s", q.Character, q.Line, path, chars, plural(chars))
		}
		res.Pos = Loc{Path: path, Line: q.Line, Col: q.Character, Text: string(text)}
		res.Word = wordAt(text, q.Character-1)
	}
	c, langID, note, err := m.acquire(ctx, path)
	if err != nil {
		return nil, err
	}
	defer m.release(c)
	errMark := c.errs.mark()
	res.Server, res.Note = c.name, note
	// An edit of the file whose text the server has not been sent yet
	// (it waits for the server's report on the text before) sends it
	// first: the question is about the edited text.
	wctx, cancel := context.WithTimeout(ctx, m.opts.RequestTimeout)
	err = c.waitUnheld(wctx, path)
	cancel()
	switch {
	case errors.Is(err, errDied):
		return nil, m.serverErr(c, "sync", err)
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		return nil, codes.Errorf(codes.LSPTimeout, "the %s language server (%s) has not reported on %s as it was before an edit within %s, and the edited text waits for that; try again in a moment", c.lang.Name, c.name, path, m.opts.RequestTimeout)
	}
	if err := c.refresh(); err != nil {
		return nil, m.serverErr(c, "sync", err)
	}
	version, _, err := c.open(path, content, st, langID, false)
	if err != nil {
		return nil, m.serverErr(c, "didOpen", err)
	}
	if needsPosition(q.Op) || q.Op == OpWorkspaceSymbol {
		line, _ := txt.line(res.Pos.Line - 1)
		pos = position{Line: res.Pos.Line - 1, Character: toUnits(line, res.Pos.Col-1, c.utf8)}
	}
	doc := textDocumentIdentifier{URI: fileURI(path)}
	tdp := textDocumentPositionParams{TextDocument: doc, Position: pos}
	lines := &lineCache{m: m, policy: q.policy(m), files: map[string]*text{path: txt}}

	switch q.Op {
	case OpDefinition, OpImplementation:
		method, capab := "textDocument/definition", c.caps.DefinitionProvider
		if q.Op == OpImplementation {
			method, capab = "textDocument/implementation", c.caps.ImplementationProvider
		}
		if q.Op == OpImplementation && !supported(capab) && c.canDerive() {
			locs, err := m.newDeriver(ctx, c, lines, res).derivedImplementation(path, pos)
			if err != nil {
				return nil, err
			}
			res.Derived = derivedNote(c, method)
			m.locations(res, locs, lines, c.utf8)
			break
		}
		if err := m.supports(c, q.Op, capab, method); err != nil {
			return nil, err
		}
		var raw json.RawMessage
		if err := m.request(ctx, c, method, tdp, &raw); err != nil {
			return nil, err
		}
		m.locations(res, parseLocations(raw), lines, c.utf8)
	case OpReferences:
		if err := m.supports(c, q.Op, c.caps.ReferencesProvider, "textDocument/references"); err != nil {
			return nil, err
		}
		p := referenceParams{textDocumentPositionParams: tdp}
		p.Context.IncludeDeclaration = true
		var locs []location
		if err := m.request(ctx, c, "textDocument/references", p, &locs); err != nil {
			return nil, err
		}
		m.locations(res, locs, lines, c.utf8)
	case OpHover:
		if err := m.supports(c, q.Op, c.caps.HoverProvider, "textDocument/hover"); err != nil {
			return nil, err
		}
		var h *hoverResult
		if err := m.request(ctx, c, "textDocument/hover", tdp, &h); err != nil {
			return nil, err
		}
		if h != nil {
			res.Hover = hoverText(h.Contents)
		}
	case OpDocumentSymbol:
		if err := m.supports(c, q.Op, c.caps.DocumentSymbolProvider, "textDocument/documentSymbol"); err != nil {
			return nil, err
		}
		var syms []documentSymbol
		if err := m.request(ctx, c, "textDocument/documentSymbol", map[string]any{"textDocument": doc}, &syms); err != nil {
			return nil, err
		}
		res.Symbols = nest(m.symbols(syms, path, lines, c.utf8, res))
	case OpWorkspaceSymbol:
		query := strings.TrimSpace(q.Query)
		if query == "" {
			if res.Word == "" {
				return nil, codes.Errorf(codes.InvalidInput, "workspaceSymbol needs query (the symbol name or part of it): there is no symbol at line %d, character %d of %s to search for", q.Line, q.Character, path)
			}
			query = res.Word
		}
		res.Word = query
		if !supported(c.caps.WorkspaceSymbolProvider) && c.canDerive() {
			syms, err := m.newDeriver(ctx, c, lines, res).derivedWorkspaceSymbols(query)
			if err != nil {
				return nil, err
			}
			res.Symbols, res.Derived = syms, derivedNote(c, "workspace/symbol")
			break
		}
		if err := m.supports(c, q.Op, c.caps.WorkspaceSymbolProvider, "workspace/symbol"); err != nil {
			return nil, err
		}
		var syms []documentSymbol
		if err := m.request(ctx, c, "workspace/symbol", workspaceSymbolParams{Query: query}, &syms); err != nil {
			return nil, err
		}
		res.Symbols = m.symbols(syms, "", lines, c.utf8, res)
	case OpPrepareCallHierarchy, OpIncomingCalls, OpOutgoingCalls:
		calls, derived, err := m.callHierarchy(ctx, c, q.Op, path, pos, tdp, lines, res)
		if err != nil {
			return nil, err
		}
		res.Calls = calls
		if derived != "" {
			res.Derived = derivedNote(c, derived)
		}
	case OpDiagnostics:
		if v := c.docVersion(path); v != 0 {
			version = v
		}
		list, st := c.diagnosticsAt(path, version)
		if st == diagsNone {
			// Not reported for this version yet: wait for it.
			start := time.Now()
			list, st = c.waitDiagnostics(ctx, path, version, start.Add(diagnosticsTimeout))
			if st == diagsNone {
				list = c.latestDiags(path)
				res.Stale, res.Waited = true, time.Since(start)
			}
		}
		res.Diagnostics = diags(list, content, c.utf8, path)
	}
	if resultEmpty(res) || (q.Op == OpDiagnostics && len(res.Diagnostics) == 0) {
		if lines, failed := c.errorsSince(errMark); failed {
			return nil, failedEmpty(c, q.Op, lines)
		}
	}
	res.Indexing = c.indexing()
	if res.Indexing != "" && resultEmpty(res) {
		return nil, codes.Errorf(codes.LSPIndexing, "the %s language server (%s) is still indexing (%s) and found nothing yet for %s; try again in a few seconds", c.lang.Name, c.name, res.Indexing, q.Op)
	}
	return res, nil
}

// failedEmpty is the error for an empty answer the server gave while it
// reported errors: its failure, not a fact about the code.
func failedEmpty(c *client, op string, lines []string) error {
	shown := "(see boris's log at --log-level debug for its stderr)"
	if len(lines) > 0 {
		shown = "\n  " + strings.Join(lines, "\n  ")
	}
	return codes.Errorf(codes.LSPServerError, "the %s language server (%s) reported errors while answering %s and found nothing, so the empty answer is its failure, not a fact about the code:%s\nFix what the errors name — a server that cannot write its cache needs a writable HOME, which boris's start-up log names — or use grep and view instead", c.lang.Name, c.name, op, shown)
}

// callHierarchy answers the call-hierarchy operations: with the server's
// own requests where it has them, else derived (derived then names what
// the server lacks).
func (m *Manager) callHierarchy(ctx context.Context, c *client, op, path string, pos position, tdp textDocumentPositionParams, lines *lineCache, res *Result) (calls []CallItem, derived string, err error) {
	d := m.newDeriver(ctx, c, lines, res)
	if !supported(c.caps.CallHierarchyProvider) {
		if !c.canDerive() {
			return nil, "", m.supports(c, op, c.caps.CallHierarchyProvider, "textDocument/prepareCallHierarchy")
		}
		switch op {
		case OpPrepareCallHierarchy:
			calls, err = d.derivedPrepare(path, pos)
		case OpIncomingCalls:
			calls, err = d.derivedIncoming(path, pos)
		default:
			calls, err = d.derivedOutgoing(path, pos)
		}
		return calls, "call hierarchy", err
	}
	var items []callHierarchyItem
	if err := m.request(ctx, c, "textDocument/prepareCallHierarchy", tdp, &items); err != nil {
		return nil, "", err
	}
	if op == OpPrepareCallHierarchy || len(items) == 0 {
		for _, it := range items {
			if ci, ok := m.callItem(it, nil, lines, c.utf8, res); ok {
				calls = append(calls, ci)
			}
		}
		return calls, "", nil
	}
	root, ok := m.callItem(items[0], nil, lines, c.utf8, res)
	if !ok {
		return nil, "", nil
	}
	if op == OpIncomingCalls {
		var in []callHierarchyIncomingCall
		if err := m.request(ctx, c, "callHierarchy/incomingCalls", callHierarchyCallsParams{Item: items[0]}, &in); err != nil {
			return nil, "", err
		}
		for _, call := range in {
			// The call sites are in the caller.
			if ci, ok := m.callItem(call.From, rangesIn(call.From.URI, call.FromRanges), lines, c.utf8, res); ok {
				root.Children = append(root.Children, ci)
			}
		}
	} else {
		var out []callHierarchyOutgoingCall
		err := m.request(ctx, c, "callHierarchy/outgoingCalls", callHierarchyCallsParams{Item: items[0]}, &out)
		if methodNotFound(err) && c.canDerive() {
			// Servers that announce a call hierarchy without outgoing
			// calls (clangd before 20).
			calls, err = d.derivedOutgoing(path, pos)
			return calls, "callHierarchy/outgoingCalls", err
		}
		if err != nil {
			return nil, "", err
		}
		for _, call := range out {
			// The call sites are in the root function.
			if ci, ok := m.callItem(call.To, rangesIn(items[0].URI, call.FromRanges), lines, c.utf8, res); ok {
				root.Children = append(root.Children, ci)
			}
		}
	}
	sort.SliceStable(root.Children, func(i, j int) bool { return locLess(root.Children[i].Loc, root.Children[j].Loc) })
	return []CallItem{root}, "", nil
}

// methodNotFound reports whether a request failed because the server does
// not implement its method.
func methodNotFound(err error) bool {
	var e *codes.Error
	if !errors.As(err, &e) {
		return false
	}
	re, ok := e.Fact.(*jsonrpc2.Error)
	return ok && re.Code == jsonrpc2.CodeMethodNotFound
}

func validOp(op string) bool {
	for _, o := range Operations {
		if o == op {
			return true
		}
	}
	return false
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// resultEmpty reports whether an answer found nothing.
func resultEmpty(r *Result) bool {
	switch r.Op {
	case OpDefinition, OpImplementation, OpReferences:
		return r.Total == 0
	case OpHover:
		return strings.TrimSpace(r.Hover) == ""
	case OpDocumentSymbol, OpWorkspaceSymbol:
		return len(r.Symbols) == 0
	case OpPrepareCallHierarchy:
		return len(r.Calls) == 0
	case OpIncomingCalls, OpOutgoingCalls:
		return len(r.Calls) == 0 || len(r.Calls[0].Children) == 0
	}
	return false
}

// supports refuses an operation the server does not offer.
func (m *Manager) supports(c *client, op string, capab json.RawMessage, method string) error {
	if supported(capab) {
		return nil
	}
	alt := "use grep to search the text instead"
	switch op {
	case OpImplementation:
		alt = "try findReferences on the interface method, or goToDefinition"
	case OpIncomingCalls:
		alt = "try findReferences on the function: each reference in a call is a caller"
	case OpOutgoingCalls:
		alt = "view the function's body and use goToDefinition on the calls in it"
	case OpWorkspaceSymbol:
		alt = "use documentSymbol on a file, or grep for the name"
	}
	return codes.Errorf(codes.LSPUnsupported, "the %s language server (%s) does not support %s (%s); %s", c.lang.Name, c.name, op, method, alt)
}

// request sends a request with the per-request timeout, wording failures.
func (m *Manager) request(ctx context.Context, c *client, method string, params, result any) error {
	rctx, cancel := context.WithTimeout(ctx, m.opts.RequestTimeout)
	defer cancel()
	err := c.call(rctx, method, params, result)
	if err == nil {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		msg := fmt.Sprintf("the %s language server (%s) did not answer %s within %s", c.lang.Name, c.name, method, m.opts.RequestTimeout)
		if ix := c.indexing(); ix != "" {
			msg += " while indexing (" + ix + ")"
		}
		return codes.Errorf(codes.LSPTimeout, "%s; try again, or narrow the question", msg)
	}
	return m.serverErr(c, method, err)
}

// serverErr words a failed exchange with a server.
func (m *Manager) serverErr(c *client, method string, err error) error {
	if errors.Is(err, errDied) {
		// Let the end be seen (the process reaped, the connection
		// closed), so the next call restarts it.
		c.awaitExit(context.Background(), exitGrace)
		select {
		case <-c.dead:
		case <-time.After(time.Second):
		}
		tailText := c.stderr.String()
		return codes.Errorf(codes.LSPServerError, "the %s language server (%s) exited during %s (%s); it is restarted on the next call. The end of its stderr:\n%s", c.lang.Name, c.name, method, c.exitText(), orNone(tailText)).WithFact(errDied)
	}
	var re *jsonrpc2.Error
	if errors.As(err, &re) {
		return codes.Errorf(codes.LSPServerError, "the %s language server (%s) answered %s with an error: %s", c.lang.Name, c.name, method, re.Message).WithFact(re)
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return codes.Errorf(codes.LSPServerError, "%s with the %s language server (%s): %v", method, c.lang.Name, c.name, err)
}

// parseLocations reads a definition-like answer: a location, a list of
// locations or of location links, or null.
func parseLocations(raw json.RawMessage) []location {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '{' {
		raw = append(append([]byte{'['}, raw...), ']')
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	var out []location
	for _, it := range items {
		var l struct {
			location
			locationLink
		}
		if json.Unmarshal(it, &l) != nil {
			continue
		}
		if l.TargetURI != "" {
			out = append(out, location{URI: l.TargetURI, Range: l.TargetSelectionRange})
		} else if l.URI != "" {
			out = append(out, l.location)
		}
	}
	return out
}

// lineCache reads the files of an answer once each, through the scope
// policy (and the manager's text cache).
type lineCache struct {
	m      *Manager
	policy *scope.Policy
	files  map[string]*text
}

// policy is the policy a query is judged by.
func (q *Query) policy(m *Manager) *scope.Policy {
	if q.Policy != nil {
		return q.Policy
	}
	return m.opts.Policy
}

// text returns a file's text, or nil when it is denied or unreadable.
func (lc *lineCache) text(path string) *text {
	if t, ok := lc.files[path]; ok {
		return t
	}
	var t *text
	if lc.policy.Check(path) == nil {
		var err error
		t, err = lc.m.readText(path)
		var big *tooLargeError
		if errors.As(err, &big) {
			t = newText(nil, stamp{}) // shown without its source lines
		}
	}
	lc.files[path] = t
	return t
}

// get returns a file's content, or nil (and false) when it is denied or
// unreadable.
func (lc *lineCache) get(path string) ([]byte, bool) {
	if t := lc.text(path); t != nil {
		return t.content, true
	}
	return nil, false
}

// allowed reports whether a path may be shown, without reading it.
func (lc *lineCache) allowed(path string) bool {
	if t, ok := lc.files[path]; ok {
		return t != nil
	}
	return lc.policy.Check(path) == nil
}

// loc converts a protocol position in path to a Loc with its line's text;
// ok is false when the path may not be shown.
func (lc *lineCache) loc(path string, p position, utf8Units bool) (Loc, bool) {
	t := lc.text(path)
	if t == nil {
		return Loc{}, false
	}
	line, _ := t.line(p.Line)
	return Loc{Path: path, Line: p.Line + 1, Col: fromUnits(line, p.Character, utf8Units) + 1, Text: string(line)}, true
}

// locations fills res with the locations of an answer, sorted, those in
// denied paths counted but not shown.
func (m *Manager) locations(res *Result, locs []location, lines *lineCache, utf8Units bool) {
	seen := map[location]bool{}
	var kept []location
	for _, l := range locs {
		l.Range.End = position{}
		if seen[l] || l.URI.path() == "" {
			continue
		}
		seen[l] = true
		kept = append(kept, l)
	}
	sort.SliceStable(kept, func(i, j int) bool {
		a, b := kept[i], kept[j]
		if a.URI != b.URI {
			return a.URI.path() < b.URI.path()
		}
		if a.Range.Start.Line != b.Range.Start.Line {
			return a.Range.Start.Line < b.Range.Start.Line
		}
		return a.Range.Start.Character < b.Range.Start.Character
	})
	files := map[string]bool{}
	for _, l := range kept {
		p := l.URI.path()
		if len(res.Locations) < MaxLocations {
			loc, ok := lines.loc(p, l.Range.Start, utf8Units)
			if !ok {
				res.Hidden++
				continue
			}
			res.Locations = append(res.Locations, loc)
		} else if !lines.allowed(p) {
			// Beyond those shown, counted without reading the files.
			res.Hidden++
			continue
		}
		res.Total++
		files[p] = true
	}
	res.Files = len(files)
}

// lastLine is the last line (0-based) a range covers. Its end is
// exclusive: a range that ends at the start of a line (a whole file ends
// after its last newline) covers nothing of that line.
func lastLine(r lspRange) int {
	if r.End.Character == 0 && r.End.Line > r.Start.Line {
		return r.End.Line - 1
	}
	return r.End.Line
}

// symbols converts document or workspace symbols; file is the document's
// path ("" for workspace symbols, whose locations say).
func (m *Manager) symbols(syms []documentSymbol, file string, lines *lineCache, utf8Units bool, res *Result) []Symbol {
	var out []Symbol
	for _, s := range syms {
		path, start, end := file, s.SelectionRange.Start, lastLine(s.Range)
		if s.Location != nil {
			path, start, end = s.Location.URI.path(), s.Location.Range.Start, lastLine(s.Location.Range)
		}
		if path == "" {
			continue
		}
		loc, ok := lines.loc(path, start, utf8Units)
		if !ok {
			res.Hidden++
			continue
		}
		sym := Symbol{Name: s.Name, Detail: s.Detail, Kind: KindName(s.Kind), Loc: loc, EndLine: end + 1, Container: s.ContainerName}
		sym.Children = m.symbols(s.Children, path, lines, utf8Units, res)
		out = append(out, sym)
	}
	return out
}

// nest turns a flat outline (servers answering with SymbolInformation, as
// pylsp does) into a tree by the lines each symbol spans; an outline that
// is a tree already is returned as it is.
func nest(ss []Symbol) []Symbol {
	for _, s := range ss {
		if len(s.Children) > 0 {
			return ss
		}
	}
	sorted := append([]Symbol(nil), ss...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].Loc.Line != sorted[j].Loc.Line {
			return sorted[i].Loc.Line < sorted[j].Loc.Line
		}
		return sorted[i].EndLine > sorted[j].EndLine
	})
	var roots []Symbol
	// insert places s under the last symbol of list that spans it.
	var insert func(list []Symbol, s Symbol) []Symbol
	insert = func(list []Symbol, s Symbol) []Symbol {
		if n := len(list); n > 0 {
			p := &list[n-1]
			if s.Loc.Line >= p.Loc.Line && s.EndLine <= p.EndLine && p.EndLine > p.Loc.Line {
				p.Children = insert(p.Children, s)
				return list
			}
		}
		return append(list, s)
	}
	for _, s := range sorted {
		s.Container = ""
		roots = insert(roots, s)
	}
	return roots
}

func locLess(a, b Loc) bool {
	if a.Path != b.Path {
		return a.Path < b.Path
	}
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Col < b.Col
}

// rangeIn is a range in a file.
type rangeIn struct {
	path string
	r    lspRange
}

func rangesIn(u uri, rs []lspRange) []rangeIn {
	out := make([]rangeIn, len(rs))
	for i, r := range rs {
		out[i] = rangeIn{u.path(), r}
	}
	return out
}

// callItem converts a call hierarchy item with its call sites.
func (m *Manager) callItem(it callHierarchyItem, sites []rangeIn, lines *lineCache, utf8Units bool, res *Result) (CallItem, bool) {
	loc, ok := lines.loc(it.URI.path(), it.SelectionRange.Start, utf8Units)
	if !ok {
		res.Hidden++
		return CallItem{}, false
	}
	ci := CallItem{Name: it.Name, Detail: it.Detail, Kind: KindName(it.Kind), Loc: loc}
	for _, s := range sites {
		if l, ok := lines.loc(s.path, s.r.Start, utf8Units); ok {
			ci.Sites = append(ci.Sites, l)
		}
	}
	sort.SliceStable(ci.Sites, func(i, j int) bool { return locLess(ci.Sites[i], ci.Sites[j]) })
	return ci, true
}

// hoverText renders hover contents: markup as given, marked strings of a
// language as fenced code.
func hoverText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var mc struct {
		Kind     string `json:"kind"`
		Language string `json:"language"`
		Value    string `json:"value"`
	}
	if raw[0] == '{' && json.Unmarshal(raw, &mc) == nil {
		if mc.Language != "" {
			return "```" + mc.Language + "\n" + strings.TrimSpace(mc.Value) + "\n```"
		}
		return strings.TrimSpace(mc.Value)
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		var parts []string
		for _, it := range list {
			if t := hoverText(it); t != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n\n")
	}
	return ""
}

// diags converts a file's diagnostics, sorted by position.
func diags(list []diagnostic, content []byte, utf8Units bool, path string) []Diag {
	out := make([]Diag, 0, len(list))
	for _, d := range list {
		line, _ := lineAt(content, d.Range.Start.Line)
		sev := d.Severity
		if sev == 0 {
			sev = SeverityError
		}
		out = append(out, Diag{
			Loc:      Loc{Path: path, Line: d.Range.Start.Line + 1, Col: fromUnits(line, d.Range.Start.Character, utf8Units) + 1, Text: string(line)},
			Severity: sev, Message: strings.TrimSpace(d.Message), Source: d.Source, Code: d.codeString(),
		})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Loc.Line != out[j].Loc.Line {
			return out[i].Loc.Line < out[j].Loc.Line
		}
		return out[i].Loc.Col < out[j].Loc.Col
	})
	return out
}

// wordAt returns the identifier around character index i of line.
func wordAt(line []byte, i int) string {
	runes := []rune(string(line))
	if i < 0 || i > len(runes) {
		return ""
	}
	isWord := func(r rune) bool { return r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r) }
	if i == len(runes) || !isWord(runes[i]) {
		if i > 0 && isWord(runes[i-1]) {
			i--
		} else {
			return ""
		}
	}
	s, e := i, i
	for s > 0 && isWord(runes[s-1]) {
		s--
	}
	for e < len(runes) && isWord(runes[e]) {
		e++
	}
	return string(runes[s:e])
}

func readAll(r io.Reader, size int64) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, max(size, 0)+512))
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}
