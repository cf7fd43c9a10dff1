package lsp

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/boris-mcp/boris/internal/dialect"
	"github.com/boris-mcp/boris/internal/lsp"
	"github.com/boris-mcp/boris/internal/tool"
)

// The lsp tool's answers (the same in every dialect: Claude Code's own
// renderings of its LSP tool are not documented) and the block of new
// errors an edit's answer ends with (boris's form, and the form of Claude
// Code's diagnostics after an edit).

// Bounds of an lsp answer.
const (
	MaxLSPReferences = 100
	MaxLSPSymbols    = 100
	maxCodeLine      = 200
)

// shownPath is a path as an answer shows it: relative to the session's
// directory when inside it (so it can be passed back as is), else
// absolute.
func shownPath(p, cwd string) string {
	if cwd != "" {
		if rel, err := filepath.Rel(cwd, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return rel
		}
	}
	return p
}

// codeLine trims a source line for an answer.
func codeLine(s string) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > maxCodeLine {
		return string(r[:maxCodeLine]) + "…"
	}
	return s
}

func locText(l lsp.Loc, cwd string) string {
	return fmt.Sprintf("%s:%d:%d: %s", shownPath(l.Path, cwd), l.Line, l.Col, codeLine(l.Text))
}

// answerText renders an lsp tool answer.
func answerText(r *lsp.Result, cwd string) string {
	var b strings.Builder
	if r.Note != "" {
		b.WriteString(r.Note + "\n")
	}
	at := ""
	if r.Pos.Path != "" {
		at = fmt.Sprintf("%s:%d:%d", shownPath(r.Pos.Path, cwd), r.Pos.Line, r.Pos.Col)
	}
	subject := "the symbol at " + at
	if r.Word != "" {
		subject = r.Word
	}
	switch r.Op {
	case lsp.OpDefinition, lsp.OpImplementation:
		what := "definition"
		if r.Op == lsp.OpImplementation {
			what = "implementation"
		}
		switch r.Total {
		case 0:
			fmt.Fprintf(&b, "No %s found for %s at %s: the position may not be on a symbol, or the %s is outside what %s indexes.\n", what, subject, at, what, r.Server)
		case 1:
			fmt.Fprintf(&b, "%s of %s:\n", capitalize(what), subject)
		default:
			fmt.Fprintf(&b, "%d %ss of %s:\n", r.Total, what, subject)
		}
		for _, l := range r.Locations {
			b.WriteString(locText(l, cwd) + "\n")
		}
	case lsp.OpReferences:
		references(&b, r, subject, at, cwd)
	case lsp.OpHover:
		if strings.TrimSpace(r.Hover) == "" {
			fmt.Fprintf(&b, "No hover information for %s at %s.\n", subject, at)
		} else {
			b.WriteString(strings.TrimSpace(r.Hover) + "\n")
		}
	case lsp.OpDocumentSymbol:
		if len(r.Symbols) == 0 {
			fmt.Fprintf(&b, "%s reports no symbols in %s.\n", r.Server, shownPath(r.File, cwd))
			break
		}
		fmt.Fprintf(&b, "Outline of %s (%s):\n", shownPath(r.File, cwd), countOf(countSymbols(r.Symbols), "symbol"))
		outline(&b, r.Symbols, "")
	case lsp.OpWorkspaceSymbol:
		workspaceSymbols(&b, r, cwd)
	case lsp.OpPrepareCallHierarchy:
		if len(r.Calls) == 0 {
			fmt.Fprintf(&b, "No function or method at %s to build a call hierarchy from.\n", at)
			break
		}
		fmt.Fprintf(&b, "Call hierarchy item%s at %s:\n", pluralS(len(r.Calls)), at)
		for _, it := range r.Calls {
			fmt.Fprintf(&b, "%s %s%s — %s\n", it.Kind, it.Name, detail(it.Detail), locText(it.Loc, cwd))
		}
	case lsp.OpIncomingCalls, lsp.OpOutgoingCalls:
		calls(&b, r, at, cwd)
	case lsp.OpDiagnostics:
		diagnosticsAnswer(&b, r, cwd)
	}
	if r.Derived != "" {
		fmt.Fprintf(&b, "(%s)\n", r.Derived)
	}
	if r.Hidden > 0 {
		fmt.Fprintf(&b, "(%s in paths outside the allowed scope not shown)\n", countOf(r.Hidden, "result"))
	}
	if r.Indexing != "" {
		fmt.Fprintf(&b, "(%s is still indexing — %s — so this answer may be incomplete)\n", r.Server, r.Indexing)
	}
	return b.String()
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func pluralS(n int) string { return tool.Plural(n) }

func countOf(n int, what string) string { return fmt.Sprintf("%d %s%s", n, what, tool.Plural(n)) }

func detail(d string) string {
	d = strings.TrimSpace(d)
	if d == "" {
		return ""
	}
	return " " + d
}

// references groups the locations by file, at most MaxLSPReferences, and
// says how many were left out.
func references(b *strings.Builder, r *lsp.Result, subject, at, cwd string) {
	if r.Total == 0 {
		fmt.Fprintf(b, "No references found for %s at %s.\n", subject, at)
		return
	}
	var files []string
	byFile := map[string][]lsp.Loc{}
	for _, l := range r.Locations {
		if _, ok := byFile[l.Path]; !ok {
			files = append(files, l.Path)
		}
		byFile[l.Path] = append(byFile[l.Path], l)
	}
	nfiles := r.Files
	if nfiles < len(files) {
		nfiles = len(files)
	}
	fmt.Fprintf(b, "%s to %s in %s:\n", countOf(r.Total, "reference"), subject, countOf(nfiles, "file"))
	shown, shownFiles := 0, 0
	for _, f := range files {
		if shown >= MaxLSPReferences {
			break
		}
		locs := byFile[f]
		n := len(locs)
		if f == files[len(files)-1] && r.Total > len(r.Locations) {
			// The last file listed may have more beyond those carried.
			fmt.Fprintf(b, "%s:\n", shownPath(f, cwd))
		} else {
			fmt.Fprintf(b, "%s (%d):\n", shownPath(f, cwd), n)
		}
		shownFiles++
		for _, l := range locs {
			if shown >= MaxLSPReferences {
				break
			}
			fmt.Fprintf(b, "  %d:%d: %s\n", l.Line, l.Col, codeLine(l.Text))
			shown++
		}
	}
	if left := r.Total - shown; left > 0 {
		fmt.Fprintf(b, "… %s not shown", countOf(left, "more reference"))
		if more := nfiles - shownFiles; more > 0 {
			fmt.Fprintf(b, " (%s not listed)", countOf(more, "more file"))
		}
		b.WriteString("; ask about a narrower symbol, or grep within a directory.\n")
	}
}

func countSymbols(ss []lsp.Symbol) int {
	n := 0
	for _, s := range ss {
		n += 1 + countSymbols(s.Children)
	}
	return n
}

func lines(s lsp.Symbol) string {
	if s.EndLine > s.Loc.Line {
		return fmt.Sprintf("lines %d-%d", s.Loc.Line, s.EndLine)
	}
	return fmt.Sprintf("line %d", s.Loc.Line)
}

// outline writes symbols as an indented outline with line numbers.
func outline(b *strings.Builder, ss []lsp.Symbol, indent string) {
	for _, s := range ss {
		name := s.Name
		if s.Container != "" && !strings.Contains(name, s.Container) {
			name = s.Container + "." + name
		}
		fmt.Fprintf(b, "%s%s %s%s — %s\n", indent, s.Kind, name, detail(s.Detail), lines(s))
		outline(b, s.Children, indent+"  ")
	}
}

func workspaceSymbols(b *strings.Builder, r *lsp.Result, cwd string) {
	if len(r.Symbols) == 0 {
		fmt.Fprintf(b, "No symbols matching %q in the workspace.\n", r.Word)
		return
	}
	fmt.Fprintf(b, "%s matching %q:\n", countOf(len(r.Symbols), "symbol"), r.Word)
	for i, s := range r.Symbols {
		if i == MaxLSPSymbols {
			fmt.Fprintf(b, "… %d more not shown; make the query more specific.\n", len(r.Symbols)-i)
			break
		}
		in := ""
		if s.Container != "" {
			in = " (in " + s.Container + ")"
		}
		fmt.Fprintf(b, "%s %s%s — %s\n", s.Kind, s.Name, in, locText(s.Loc, cwd))
	}
}

// calls renders a call hierarchy as a tree: the function, its callers (or
// callees), and under each the call sites.
func calls(b *strings.Builder, r *lsp.Result, at, cwd string) {
	if len(r.Calls) == 0 {
		fmt.Fprintf(b, "No function or method at %s to find calls of.\n", at)
		return
	}
	root := r.Calls[0]
	rootAt := fmt.Sprintf("%s:%d:%d", shownPath(root.Loc.Path, cwd), root.Loc.Line, root.Loc.Col)
	incoming := r.Op == lsp.OpIncomingCalls
	switch {
	case len(root.Children) == 0 && incoming:
		fmt.Fprintf(b, "No calls to %s %s (%s) found.\n", root.Kind, root.Name, rootAt)
		return
	case len(root.Children) == 0:
		fmt.Fprintf(b, "%s %s (%s) calls nothing %s knows of.\n", capitalize(root.Kind), root.Name, rootAt, r.Server)
		return
	case incoming:
		fmt.Fprintf(b, "Calls to %s %s (%s) — %s:\n", root.Kind, root.Name, rootAt, countOf(len(root.Children), "caller"))
	default:
		fmt.Fprintf(b, "Calls made by %s %s (%s) — %s:\n", root.Kind, root.Name, rootAt, countOf(len(root.Children), "callee"))
	}
	for i, c := range root.Children {
		last := i == len(root.Children)-1
		branch, stem := "├─ ", "│  "
		if last {
			branch, stem = "└─ ", "   "
		}
		fmt.Fprintf(b, "%s%s %s — %s:%d:%d\n", branch, c.Kind, c.Name, shownPath(c.Loc.Path, cwd), c.Loc.Line, c.Loc.Col)
		// The call sites: in the caller's file for incoming calls, in the
		// root's for outgoing ones.
		home := c.Loc.Path
		if !incoming {
			home = root.Loc.Path
		}
		for j, s := range c.Sites {
			leaf := "├─ "
			if j == len(c.Sites)-1 {
				leaf = "└─ "
			}
			where := fmt.Sprintf("%d:%d", s.Line, s.Col)
			if s.Path != home {
				where = fmt.Sprintf("%s:%d:%d", shownPath(s.Path, cwd), s.Line, s.Col)
			}
			fmt.Fprintf(b, "%s%s%s: %s\n", stem, leaf, where, codeLine(s.Text))
		}
	}
}

// codeOf renders a diagnostic's source and code as "[source code]".
func codeOf(d lsp.Diag) string {
	parts := strings.TrimSpace(d.Source + " " + d.Code)
	if parts == "" {
		return ""
	}
	return " [" + parts + "]"
}

// message puts a diagnostic's message on one line (clangd adds notes on
// lines of their own, with absolute paths) with paths in the session's
// directory shown relative to it.
func message(m, cwd string) string {
	m = strings.TrimSpace(m)
	if cwd != "" && cwd != "/" {
		m = strings.ReplaceAll(m, cwd+"/", "")
	}
	m = strings.ReplaceAll(m, "\n\n", "; ")
	return strings.Join(strings.Fields(m), " ")
}

// borisDiag writes one diagnostic: where, what, and the code line.
func borisDiag(b *strings.Builder, d lsp.Diag, cwd string) {
	fmt.Fprintf(b, "%s:%d:%d: %s: %s%s\n", shownPath(d.Loc.Path, cwd), d.Loc.Line, d.Loc.Col, lsp.SeverityName(d.Severity), message(d.Message, cwd), codeOf(d))
	if t := strings.TrimRight(d.Loc.Text, " \t"); strings.TrimSpace(t) != "" {
		b.Write(tool.AppendLineNo(nil, d.Loc.Line))
		b.WriteString(clipCode(t) + "\n")
	}
}

func clipCode(s string) string {
	if r := []rune(s); len(r) > maxCodeLine {
		return string(r[:maxCodeLine]) + "…"
	}
	return s
}

func diagnosticsAnswer(b *strings.Builder, r *lsp.Result, cwd string) {
	file := shownPath(r.File, cwd)
	if r.Stale {
		fmt.Fprintf(b, "(%s had not reported on the current text of %s after %s; shown is what it reported last)\n", r.Server, file, r.Waited.Round(time.Millisecond))
	}
	if len(r.Diagnostics) == 0 {
		fmt.Fprintf(b, "%s reports no problems in %s.\n", r.Server, file)
		return
	}
	counts := map[int]int{}
	for _, d := range r.Diagnostics {
		counts[d.Severity]++
	}
	var parts []string
	for _, s := range []int{lsp.SeverityError, lsp.SeverityWarning, lsp.SeverityInformation, lsp.SeverityHint} {
		if n := counts[s]; n > 0 {
			parts = append(parts, countOf(n, lsp.SeverityName(s)))
		}
	}
	fmt.Fprintf(b, "%s reports %s in %s:\n", r.Server, strings.Join(parts, ", "), file)
	for _, d := range r.Diagnostics {
		borisDiag(b, d, cwd)
	}
}

// borisDiagnostics renders what an edit's files' servers reported after
// it, as a block of its own for boris's and Codex's dialects ("" when
// there is nothing to say: no new errors, nothing pending). A delayed
// report (an Inbox's: what earlier edits' pending files came to) is
// rendered for the answer it ends.
func borisDiagnostics(rep *lsp.Report, cwd string, wait time.Duration) string {
	if rep.Empty() {
		return ""
	}
	var b strings.Builder
	if rep.Delayed {
		for _, f := range rep.Files {
			if n := fileNote(f, cwd, "lsp"); n != "" {
				b.WriteString(n)
				continue
			}
			if len(f.Introduced) == 0 {
				fmt.Fprintf(&b, "An earlier edit of %s introduced no errors (%s reported after its answer).\n", shownPath(f.Path, cwd), serverName(f.Server))
				continue
			}
			fmt.Fprintf(&b, "An earlier edit of %s introduced %s (%s reported after its answer%s):\n", shownPath(f.Path, cwd), countOf(len(f.Introduced), "error"), serverName(f.Server), merged(f))
			for _, d := range f.Introduced {
				borisDiag(&b, d, cwd)
			}
		}
		return b.String()
	}
	var found []lsp.Diag
	servers := map[string]bool{}
	var mergedNote []string
	for _, f := range rep.Files {
		b.WriteString(fileNote(f, cwd, "lsp"))
		if len(f.Introduced) > 0 {
			servers[f.Server] = true
			if f.Merged > 0 {
				mergedNote = append(mergedNote, shownPath(f.Path, cwd))
			}
		}
		found = append(found, f.Introduced...)
	}
	if len(found) > 0 {
		var names []string
		for _, f := range rep.Files {
			if servers[f.Server] {
				names = append(names, f.Server)
				servers[f.Server] = false
			}
		}
		also := ""
		if len(mergedNote) > 0 {
			also = "; counting the errors of earlier edits of " + strings.Join(mergedNote, ", ") + " that were not reported yet"
		}
		fmt.Fprintf(&b, "This edit introduced %s (%s%s):\n", countOf(len(found), "error"), strings.Join(names, ", "), also)
		for _, d := range found {
			borisDiag(&b, d, cwd)
		}
	}
	return b.String()
}

// merged says a delayed file report counts earlier edits' errors too.
func merged(f lsp.FileReport) string {
	if f.Merged == 0 {
		return ""
	}
	return fmt.Sprintf("; counting the errors of %s before it, not reported yet", countOf(f.Merged, "earlier edit"))
}

// fileNote is the line a file's report gets when it is not a plain list
// of new errors: a restart, a server that cannot be had, a report still
// pending or never had ("" for none). tool names the lsp tool.
func fileNote(f lsp.FileReport, cwd, tool string) string {
	file := shownPath(f.Path, cwd)
	note := ""
	if f.Note != "" {
		note = f.Note + "\n"
	}
	switch {
	case f.Err != nil:
		note += fmt.Sprintf("Diagnostics for %s are unavailable: %s\n", file, firstLine(f.Err.Error()))
	case f.Pending && f.Server == "":
		note += fmt.Sprintf("Diagnostics: the language server of %s is still starting; the errors this edit introduced will come with your next call (or ask the %s tool's diagnostics operation).\n", file, tool)
	case f.Pending:
		note += fmt.Sprintf("Diagnostics: %s has not reported on %s yet%s; the errors this edit introduced will come with your next call (or ask the %s tool's diagnostics operation).\n", f.Server, file, busyWith(f.Indexing), tool)
	case f.Late:
		note += fmt.Sprintf("Diagnostics: %s did not report on %s within %s of an earlier edit%s; use the %s tool's diagnostics operation on it.\n", serverName(f.Server), file, f.Waited, busyWith(f.Indexing), tool)
	case f.Superseded:
		note += fmt.Sprintf("Diagnostics: %s changed again before %s reported on an earlier edit of it; its errors are counted with that change (the %s tool's diagnostics operation lists them all).\n", file, serverName(f.Server), tool)
	case f.Unknown:
		note += fmt.Sprintf("Diagnostics: %s's report on %s before the edit could not be had, so which errors are new cannot be told; the %s tool's diagnostics operation lists them all.\n", serverName(f.Server), file, tool)
	}
	return note
}

// claudeDiagnostics renders the same in the form Claude Code gives the
// diagnostics that appeared after an edit (a <new-diagnostics> block,
// grouped by file, "✘ [Line L:C] message [code] (source)"), with the code
// line under each. Errors that arrived after an earlier edit's answer
// (a delayed report) come in the same block, as Claude Code delivers
// diagnostics that arrive late.
func claudeDiagnostics(rep *lsp.Report, cwd string, wait time.Duration) string {
	if rep.Empty() {
		return ""
	}
	var notes, body strings.Builder
	for _, f := range rep.Files {
		notes.WriteString(fileNote(f, cwd, "LSP"))
		if rep.Delayed && fileNote(f, cwd, "LSP") == "" && len(f.Introduced) == 0 {
			fmt.Fprintf(&notes, "An earlier edit of %s introduced no errors (%s reported after its answer).\n", shownPath(f.Path, cwd), serverName(f.Server))
		}
		if len(f.Introduced) == 0 {
			continue
		}
		fmt.Fprintf(&body, "%s:\n", shownPath(f.Path, cwd))
		for _, d := range f.Introduced {
			code := ""
			if d.Code != "" {
				code = " [" + d.Code + "]"
			}
			src := ""
			if d.Source != "" {
				src = " (" + d.Source + ")"
			}
			fmt.Fprintf(&body, "  %s [Line %d:%d] %s%s%s\n", claudeSymbol(d.Severity), d.Loc.Line, d.Loc.Col, message(d.Message, cwd), code, src)
			if t := strings.TrimSpace(d.Loc.Text); t != "" {
				fmt.Fprintf(&body, "    %s\n", clipCode(t))
			}
		}
	}
	out := notes.String()
	if body.Len() > 0 {
		out += "<new-diagnostics>The following new diagnostic issues were detected:\n\n" + body.String() + "</new-diagnostics>\n"
	}
	return out
}

func claudeSymbol(sev int) string {
	switch sev {
	case lsp.SeverityWarning:
		return "⚠"
	case lsp.SeverityInformation:
		return "ℹ"
	case lsp.SeverityHint:
		return "★"
	}
	return "✘"
}

func serverName(s string) string {
	if s == "" {
		return "the language server"
	}
	return s
}

func busyWith(indexing string) string {
	if indexing == "" {
		return ""
	}
	return " (it is busy: " + indexing + ")"
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// diagnosticsText is the block of new errors an edit's answer ends with,
// in the dialect's form ("" when there is nothing to say).
func diagnosticsText(m dialect.Mode, rep *lsp.Report, cwd string, wait time.Duration) string {
	if m == dialect.Claude {
		return claudeDiagnostics(rep, cwd, wait)
	}
	return borisDiagnostics(rep, cwd, wait)
}
