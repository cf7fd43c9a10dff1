package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Some servers lack operations the tool offers: pylsp has no call
// hierarchy, no implementations and no workspace symbols; clangd before 20
// has no outgoing calls. Those are derived here from what every server
// answers — definitions, references and document outlines — and the answer
// says so:
//
//   - the function at a position: the function symbol whose name is there,
//     or the one the name there is defined as;
//   - incoming calls: the references to the function that are calls (the
//     name followed by a parenthesis), grouped by the function holding
//     each;
//   - outgoing calls: the calls in the function's body (a name followed by
//     a parenthesis), each resolved with goToDefinition;
//   - implementations: the classes whose header names the class of the
//     method (its subclasses, and theirs), and their method of the same
//     name;
//   - workspace symbols: the outline of each file of the language under the
//     root that contains the query's text.

// Bounds of the derived operations.
const (
	maxDerivedSites  = 100
	maxDerivedFiles  = 200
	maxScannedFiles  = 5000
	maxSubclassDepth = 3
)

// flatSym is a document symbol with its full range and the position of its
// name.
type flatSym struct {
	name, container string
	kind            int
	full            lspRange
	name0           position // where the name starts
}

func isFunctionKind(k int) bool { return k == 6 || k == 9 || k == 12 }  // method, constructor, function
func isClassKind(k int) bool    { return k == 5 || k == 11 || k == 23 } // class, interface, struct

// deriver runs derived operations on one server, caching outlines.
type deriver struct {
	m     *Manager
	c     *client
	ctx   context.Context
	lines *lineCache
	syms  map[string][]flatSym
	res   *Result
}

// outline returns the flattened symbols of a file, opening it in the
// server first.
func (d *deriver) outline(path string) ([]flatSym, error) {
	if s, ok := d.syms[path]; ok {
		return s, nil
	}
	t := d.lines.text(path)
	if t == nil {
		d.syms[path] = nil
		return nil, nil
	}
	content := t.content
	if _, id := languageOf(path); id != "" {
		if _, _, err := d.c.open(path, content, t.st, id, false); err != nil {
			return nil, d.m.serverErr(d.c, "didOpen", err)
		}
	}
	var raw []documentSymbol
	if err := d.m.request(d.ctx, d.c, "textDocument/documentSymbol", map[string]any{"textDocument": textDocumentIdentifier{URI: fileURI(path)}}, &raw); err != nil {
		return nil, err
	}
	var out []flatSym
	var walk func([]documentSymbol, string)
	walk = func(ss []documentSymbol, container string) {
		for _, s := range ss {
			f := flatSym{name: s.Name, container: container, kind: s.Kind, full: s.Range, name0: s.SelectionRange.Start}
			if s.Location != nil {
				f.full, f.container = s.Location.Range, s.ContainerName
				f.name0 = d.nameIn(content, s.Location.Range.Start, s.Name)
			}
			out = append(out, f)
			walk(s.Children, s.Name)
		}
	}
	walk(raw, "")
	d.syms[path] = out
	return out, nil
}

// nameIn finds where name starts on the line of start, at or after it (a
// SymbolInformation's range starts at "def", not at the name).
func (d *deriver) nameIn(content []byte, start position, name string) position {
	line, _ := lineAt(content, start.Line)
	from := fromUnits(line, start.Character, d.c.utf8)
	runes := []rune(string(line))
	short := name
	if i := strings.LastIndexByte(short, '.'); i >= 0 {
		short = short[i+1:]
	}
	if from <= len(runes) {
		if i := strings.Index(string(runes[from:]), short); i >= 0 {
			ch := from + utf8.RuneCountInString(string(runes[from:])[:i])
			return position{Line: start.Line, Character: toUnits(line, ch, d.c.utf8)}
		}
	}
	return start
}

func contains(r lspRange, line int) bool { return line >= r.Start.Line && line <= r.End.Line }

// innermost returns the innermost symbol of a kind holding line.
func innermost(syms []flatSym, line int, kind func(int) bool) *flatSym {
	var best *flatSym
	for i := range syms {
		s := &syms[i]
		if !kind(s.kind) || !contains(s.full, line) {
			continue
		}
		if best == nil || s.full.Start.Line >= best.full.Start.Line && s.full.End.Line <= best.full.End.Line {
			best = s
		}
	}
	return best
}

// symbolAt returns the symbol of a kind whose name is at p.
func symbolAt(syms []flatSym, p position, kind func(int) bool) *flatSym {
	for i := range syms {
		s := &syms[i]
		if kind(s.kind) && s.name0.Line == p.Line && p.Character >= s.name0.Character && p.Character <= s.name0.Character+len(s.name)+1 {
			return s
		}
	}
	// A server may place the name elsewhere on the line (a decorator, a
	// receiver): the one symbol of the kind starting on that line will do.
	var only *flatSym
	for i := range syms {
		s := &syms[i]
		if kind(s.kind) && s.name0.Line == p.Line {
			if only != nil {
				return nil
			}
			only = s
		}
	}
	return only
}

// definition asks where the name at p in path is defined (the first
// answer).
func (d *deriver) definition(path string, p position) (string, position, bool) {
	if !supported(d.c.caps.DefinitionProvider) {
		return "", position{}, false
	}
	var raw json.RawMessage
	if err := d.m.request(d.ctx, d.c, "textDocument/definition", textDocumentPositionParams{TextDocument: textDocumentIdentifier{URI: fileURI(path)}, Position: p}, &raw); err != nil {
		return "", position{}, false
	}
	locs := parseLocations(raw)
	if len(locs) == 0 || locs[0].URI.path() == "" {
		return "", position{}, false
	}
	return locs[0].URI.path(), locs[0].Range.Start, true
}

// target is the symbol a position means: the one named there, or the one
// the name there is defined as.
func (d *deriver) target(path string, p position, kind func(int) bool) (string, *flatSym, error) {
	syms, err := d.outline(path)
	if err != nil {
		return "", nil, err
	}
	if s := symbolAt(syms, p, kind); s != nil {
		return path, s, nil
	}
	tp, tpos, ok := d.definition(path, p)
	if !ok {
		return "", nil, nil
	}
	tsyms, err := d.outline(tp)
	if err != nil {
		return "", nil, err
	}
	return tp, symbolAt(tsyms, tpos, kind), nil
}

func (d *deriver) item(path string, s *flatSym) (CallItem, bool) {
	loc, ok := d.lines.loc(path, s.name0, d.c.utf8)
	if !ok {
		d.res.Hidden++
		return CallItem{}, false
	}
	name := s.name
	if s.container != "" && !strings.Contains(name, ".") {
		name = s.container + "." + name
	}
	return CallItem{Name: name, Kind: KindName(s.kind), Loc: loc}, true
}

// isCall reports whether the identifier at character ch of line is called
// (followed by an opening parenthesis).
func isCall(line []byte, ch int) bool {
	runes := []rune(string(line))
	i := ch
	for i < len(runes) && isIdent(runes[i]) {
		i++
	}
	for i < len(runes) && (runes[i] == ' ' || runes[i] == '\t') {
		i++
	}
	return i < len(runes) && runes[i] == '('
}

func isIdent(r rune) bool { return r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// derivedPrepare is prepareCallHierarchy without the server's.
func (d *deriver) derivedPrepare(path string, p position) ([]CallItem, error) {
	tp, s, err := d.target(path, p, isFunctionKind)
	if err != nil || s == nil {
		return nil, err
	}
	it, ok := d.item(tp, s)
	if !ok {
		return nil, nil
	}
	return []CallItem{it}, nil
}

// derivedIncoming is incomingCalls without the server's call hierarchy.
func (d *deriver) derivedIncoming(path string, p position) ([]CallItem, error) {
	tp, s, err := d.target(path, p, isFunctionKind)
	if err != nil || s == nil {
		return nil, err
	}
	root, ok := d.item(tp, s)
	if !ok {
		return nil, nil
	}
	rp := referenceParams{textDocumentPositionParams: textDocumentPositionParams{TextDocument: textDocumentIdentifier{URI: fileURI(tp)}, Position: s.name0}}
	var locs []location
	if err := d.m.request(d.ctx, d.c, "textDocument/references", rp, &locs); err != nil {
		return nil, err
	}
	type callerKey struct {
		path string
		line int
		name string
	}
	callers := map[callerKey]*CallItem{}
	var order []callerKey
	for _, l := range locs {
		rpath := l.URI.path()
		if rpath == "" || (rpath == tp && l.Range.Start.Line == s.name0.Line) {
			continue // the definition itself
		}
		content, ok := d.lines.get(rpath)
		if !ok {
			d.res.Hidden++
			continue
		}
		line, _ := lineAt(content, l.Range.Start.Line)
		if !isCall(line, fromUnits(line, l.Range.Start.Character, d.c.utf8)) {
			continue // an import or a mention, not a call
		}
		site, _ := d.lines.loc(rpath, l.Range.Start, d.c.utf8)
		syms, err := d.outline(rpath)
		if err != nil {
			return nil, err
		}
		var k callerKey
		var it CallItem
		if fs := innermost(syms, l.Range.Start.Line, isFunctionKind); fs != nil {
			if it, ok = d.item(rpath, fs); !ok {
				continue
			}
			k = callerKey{rpath, it.Loc.Line, it.Name}
		} else {
			// At the top level of the file.
			k = callerKey{rpath, 0, "(top level)"}
			it = CallItem{Name: "(top level of " + filepath.Base(rpath) + ")", Kind: "module", Loc: Loc{Path: rpath, Line: 1, Col: 1}}
		}
		if callers[k] == nil {
			callers[k] = &it
			order = append(order, k)
		}
		if len(callers[k].Sites) < maxDerivedSites {
			callers[k].Sites = append(callers[k].Sites, site)
		}
	}
	for _, k := range order {
		root.Children = append(root.Children, *callers[k])
	}
	sort.SliceStable(root.Children, func(i, j int) bool { return locLess(root.Children[i].Loc, root.Children[j].Loc) })
	return []CallItem{root}, nil
}

// keywords that look like calls in the languages whose servers lack a
// call hierarchy.
var notCalls = map[string]bool{
	"if": true, "for": true, "while": true, "switch": true, "return": true, "sizeof": true, "elif": true,
	"and": true, "or": true, "not": true, "in": true, "is": true, "lambda": true, "def": true, "class": true,
	"catch": true, "func": true, "function": true, "assert": true, "with": true, "yield": true, "await": true,
	"typeof": true, "alignof": true, "_Alignof": true, "decltype": true, "defined": true, "print": false,
}

// derivedOutgoing is outgoingCalls without the server's.
func (d *deriver) derivedOutgoing(path string, p position) ([]CallItem, error) {
	tp, s, err := d.target(path, p, isFunctionKind)
	if err != nil || s == nil {
		return nil, err
	}
	root, ok := d.item(tp, s)
	if !ok {
		return nil, nil
	}
	content, _ := d.lines.get(tp)
	type calleeKey struct {
		path string
		line int
		name string
	}
	callees := map[calleeKey]*CallItem{}
	var order []calleeKey
	sites := 0
	for ln := s.full.Start.Line; ln <= s.full.End.Line && sites < maxDerivedSites; ln++ {
		line, ok := lineAt(content, ln)
		if !ok {
			break
		}
		runes := []rune(string(line))
		for i := 0; i < len(runes) && sites < maxDerivedSites; {
			if !isIdent(runes[i]) || (i > 0 && isIdent(runes[i-1])) || unicode.IsDigit(runes[i]) {
				i++
				continue
			}
			j := i
			for j < len(runes) && isIdent(runes[j]) {
				j++
			}
			word := string(runes[i:j])
			if ln == s.name0.Line && toUnits(line, i, d.c.utf8) == s.name0.Character || notCalls[word] || !isCall(line, i) || inStringOrComment(runes, i) {
				i = j
				continue
			}
			pos := position{Line: ln, Character: toUnits(line, i, d.c.utf8)}
			i = j
			sites++
			dp, dpos, ok := d.definition(tp, pos)
			if !ok {
				continue
			}
			site, _ := d.lines.loc(tp, pos, d.c.utf8)
			var it CallItem
			dsyms, err := d.outline(dp)
			if err != nil {
				return nil, err
			}
			if fs := symbolAt(dsyms, dpos, func(k int) bool { return isFunctionKind(k) || isClassKind(k) }); fs != nil {
				if it, ok = d.item(dp, fs); !ok {
					continue
				}
			} else {
				loc, ok := d.lines.loc(dp, dpos, d.c.utf8)
				if !ok {
					d.res.Hidden++
					continue
				}
				it = CallItem{Name: word, Kind: "function", Loc: loc}
			}
			k := calleeKey{it.Loc.Path, it.Loc.Line, it.Name}
			if callees[k] == nil {
				callees[k] = &it
				order = append(order, k)
			}
			callees[k].Sites = append(callees[k].Sites, site)
		}
	}
	for _, k := range order {
		root.Children = append(root.Children, *callees[k])
	}
	sort.SliceStable(root.Children, func(i, j int) bool { return locLess(root.Children[i].Loc, root.Children[j].Loc) })
	return []CallItem{root}, nil
}

// inStringOrComment reports, roughly, whether character i of a line is
// inside a string literal or after a line comment.
func inStringOrComment(runes []rune, i int) bool {
	var quote rune
	for k := 0; k < i; k++ {
		r := runes[k]
		switch {
		case quote != 0:
			if r == '\\' {
				k++
			} else if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'' || r == '`':
			quote = r
		case r == '#':
			return true
		case r == '/' && k+1 < len(runes) && runes[k+1] == '/':
			return true
		}
	}
	return quote != 0
}

// derivedImplementation is goToImplementation without the server's: the
// subclasses of a class, or the methods of the same name in the subclasses
// of a method's class.
func (d *deriver) derivedImplementation(path string, p position) ([]location, error) {
	isSym := func(k int) bool { return isFunctionKind(k) || isClassKind(k) }
	tp, s, err := d.target(path, p, isSym)
	if err != nil || s == nil {
		return nil, err
	}
	class, method := s, ""
	tsyms, _ := d.outline(tp)
	if isFunctionKind(s.kind) {
		method = s.name
		class = innermost(tsyms, s.name0.Line, isClassKind)
		if class == nil && s.container != "" {
			for i := range tsyms {
				if isClassKind(tsyms[i].kind) && tsyms[i].name == s.container {
					class = &tsyms[i]
				}
			}
		}
		if class == nil {
			return nil, nil
		}
	}
	var out []location
	seen := map[string]bool{}
	var visit func(path string, cls *flatSym, depth int) error
	visit = func(path string, cls *flatSym, depth int) error {
		if depth > maxSubclassDepth {
			return nil
		}
		rp := referenceParams{textDocumentPositionParams: textDocumentPositionParams{TextDocument: textDocumentIdentifier{URI: fileURI(path)}, Position: cls.name0}}
		var refs []location
		if err := d.m.request(d.ctx, d.c, "textDocument/references", rp, &refs); err != nil {
			return err
		}
		for _, r := range refs {
			rpath := r.URI.path()
			if rpath == "" {
				continue
			}
			syms, err := d.outline(rpath)
			if err != nil {
				return err
			}
			// A class whose header line holds the reference names it as
			// a base.
			var sub *flatSym
			for i := range syms {
				if isClassKind(syms[i].kind) && syms[i].name0.Line == r.Range.Start.Line && syms[i].name != cls.name {
					sub = &syms[i]
				}
			}
			if sub == nil {
				continue
			}
			k := rpath + ":" + sub.name
			if seen[k] {
				continue
			}
			seen[k] = true
			if method == "" {
				out = append(out, location{URI: fileURI(rpath), Range: lspRange{Start: sub.name0}})
			} else {
				for i := range syms {
					m := &syms[i]
					if isFunctionKind(m.kind) && m.name == method && contains(sub.full, m.name0.Line) {
						out = append(out, location{URI: fileURI(rpath), Range: lspRange{Start: m.name0}})
					}
				}
			}
			if err := visit(rpath, sub, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit(tp, class, 1); err != nil {
		return nil, err
	}
	return out, nil
}

// derivedWorkspaceSymbols searches the outlines of the root's files of the
// language that contain the query's text.
func (d *deriver) derivedWorkspaceSymbols(query string) ([]Symbol, error) {
	needle := []byte(strings.ToLower(query))
	var files []string
	scanned := 0
	var walk func(dir, rel string, depth int)
	walk = func(dir, rel string, depth int) {
		if depth > 20 || len(files) >= maxDerivedFiles || scanned >= maxScannedFiles {
			return
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		st := stackFor(d.c.root, dir)
		for _, e := range entries {
			name := e.Name()
			p := filepath.Join(dir, name)
			childRel := name
			if rel != "" {
				childRel = rel + "/" + name
			}
			if e.IsDir() {
				if skipDir(name) || strings.HasPrefix(name, ".") || st.Ignored(childRel, name, true) {
					continue
				}
				walk(p, childRel, depth+1)
				continue
			}
			if l, _ := languageOf(p); l != d.c.lang || !e.Type().IsRegular() {
				continue
			}
			scanned++
			if d.m.opts.Policy.Check(p) != nil {
				continue
			}
			data, err := os.ReadFile(p)
			if err == nil && bytes.Contains(bytes.ToLower(data), needle) {
				files = append(files, p)
				if len(files) >= maxDerivedFiles || scanned >= maxScannedFiles {
					return
				}
			}
		}
	}
	walk(d.c.root, "", 0)
	sort.Strings(files)
	var out []Symbol
	q := strings.ToLower(query)
	for _, f := range files {
		syms, err := d.outline(f)
		if err != nil {
			return nil, err
		}
		for _, s := range syms {
			if s.kind == 2 || !strings.Contains(strings.ToLower(s.name), q) { // 2: module (an import)
				continue
			}
			loc, ok := d.lines.loc(f, s.name0, d.c.utf8)
			if !ok {
				continue
			}
			out = append(out, Symbol{Name: s.name, Kind: KindName(s.kind), Loc: loc, Container: s.container})
		}
	}
	return out, nil
}

// newDeriver returns a deriver for one call.
func (m *Manager) newDeriver(ctx context.Context, c *client, lines *lineCache, res *Result) *deriver {
	return &deriver{m: m, c: c, ctx: ctx, lines: lines, syms: map[string][]flatSym{}, res: res}
}

// canDerive reports whether the server answers what derivation needs.
func (c *client) canDerive() bool {
	return supported(c.caps.DocumentSymbolProvider) && supported(c.caps.ReferencesProvider) && supported(c.caps.DefinitionProvider)
}

// derivedNote says an answer was derived, and from what.
func derivedNote(c *client, op string) string {
	return c.name + " has no " + op + "; derived from its definitions, references and document outlines"
}
