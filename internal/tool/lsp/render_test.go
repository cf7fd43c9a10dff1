package lsp

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/boris-mcp/boris/internal/lsp"
)

func TestDiagnosticsBlocks(t *testing.T) {
	d := lsp.Diag{Loc: lsp.Loc{Path: "/ws/a.c", Line: 7, Col: 20, Text: "\tputs(describe(list));"}, Severity: lsp.SeverityError,
		Message: "Too few arguments\n\n/ws/shapes.h:10:13:\nnote: declared here", Source: "clang", Code: "too_few_args"}
	rep := &lsp.Report{Files: []lsp.FileReport{
		{Path: "/ws/a.c", Server: "clangd", Introduced: []lsp.Diag{d}},
		{Path: "/ws/b.go", Server: "gopls", Pending: true, Indexing: "Loading packages"},
		{Path: "/ws/c.py", Err: errors.New("[LSP_START_FAILED] pylsp failed to start\nits stderr")},
		{Path: "/ws/d.go", Server: "gopls", Note: "note: the go language server (gopls) had stopped (exit status 2) and was restarted for this call"},
	}}
	wantBoris := "Diagnostics: gopls has not reported on b.go yet (it is busy: Loading packages); the errors this edit introduced will come with your next call (or ask the lsp tool's diagnostics operation).\n" +
		"Diagnostics for c.py are unavailable: [LSP_START_FAILED] pylsp failed to start\n" +
		"note: the go language server (gopls) had stopped (exit status 2) and was restarted for this call\n" +
		"This edit introduced 1 error (clangd):\n" +
		"a.c:7:20: error: Too few arguments; shapes.h:10:13: note: declared here [clang too_few_args]\n" +
		"     7\t\tputs(describe(list));\n"
	if got := borisDiagnostics(rep, "/ws", 2*time.Second); got != wantBoris {
		t.Errorf("boris:\n%s\nwant:\n%s", got, wantBoris)
	}
	wantClaude := "Diagnostics: gopls has not reported on b.go yet (it is busy: Loading packages); the errors this edit introduced will come with your next call (or ask the LSP tool's diagnostics operation).\n" +
		"Diagnostics for c.py are unavailable: [LSP_START_FAILED] pylsp failed to start\n" +
		"note: the go language server (gopls) had stopped (exit status 2) and was restarted for this call\n" +
		"<new-diagnostics>The following new diagnostic issues were detected:\n\n" +
		"a.c:\n  ✘ [Line 7:20] Too few arguments; shapes.h:10:13: note: declared here [too_few_args] (clang)\n    puts(describe(list));\n" +
		"</new-diagnostics>\n"
	if got := claudeDiagnostics(rep, "/ws", 2*time.Second); got != wantClaude {
		t.Errorf("claude:\n%s\nwant:\n%s", got, wantClaude)
	}
	quiet := &lsp.Report{Files: []lsp.FileReport{{Path: "/ws/a.c", Server: "clangd"}}}
	if borisDiagnostics(quiet, "/ws", time.Second) != "" || claudeDiagnostics(quiet, "/ws", time.Second) != "" || borisDiagnostics(nil, "/ws", time.Second) != "" {
		t.Error("an edit that introduced nothing got a block")
	}
}

// TestDelayedDiagnostics: what earlier edits' pending files came to, in
// the answer of the session's next call — errors, none, or why nothing
// will come — and a report that counts earlier edits' errors says so.
func TestDelayedDiagnostics(t *testing.T) {
	d := lsp.Diag{Loc: lsp.Loc{Path: "/ws/t.py", Line: 6, Col: 24, Text: "    result += s.area() + nosuch"}, Severity: lsp.SeverityError, Message: "undefined name 'nosuch'", Source: "pyflakes"}
	rep := &lsp.Report{Delayed: true, Files: []lsp.FileReport{
		{Path: "/ws/t.py", Server: "pylsp", Introduced: []lsp.Diag{d}},
		{Path: "/ws/ok.py", Server: "pylsp"},
		{Path: "/ws/slow.rs", Server: "rust-analyzer", Late: true, Waited: 2 * time.Minute},
		{Path: "/ws/gone.go", Server: "gopls", Superseded: true},
		{Path: "/ws/u.c", Server: "clangd", Unknown: true},
	}}
	wantBoris := "An earlier edit of t.py introduced 1 error (pylsp reported after its answer):\n" +
		"t.py:6:24: error: undefined name 'nosuch' [pyflakes]\n" +
		"     6\t    result += s.area() + nosuch\n" +
		"An earlier edit of ok.py introduced no errors (pylsp reported after its answer).\n" +
		"Diagnostics: rust-analyzer did not report on slow.rs within 2m0s of an earlier edit; use the lsp tool's diagnostics operation on it.\n" +
		"Diagnostics: gone.go changed again before gopls reported on an earlier edit of it; its errors are counted with that change (the lsp tool's diagnostics operation lists them all).\n" +
		"Diagnostics: clangd's report on u.c before the edit could not be had, so which errors are new cannot be told; the lsp tool's diagnostics operation lists them all.\n"
	if got := borisDiagnostics(rep, "/ws", time.Second); got != wantBoris {
		t.Errorf("boris:\n%s\nwant:\n%s", got, wantBoris)
	}
	wantClaude := "An earlier edit of ok.py introduced no errors (pylsp reported after its answer).\n" +
		"Diagnostics: rust-analyzer did not report on slow.rs within 2m0s of an earlier edit; use the LSP tool's diagnostics operation on it.\n" +
		"Diagnostics: gone.go changed again before gopls reported on an earlier edit of it; its errors are counted with that change (the LSP tool's diagnostics operation lists them all).\n" +
		"Diagnostics: clangd's report on u.c before the edit could not be had, so which errors are new cannot be told; the LSP tool's diagnostics operation lists them all.\n" +
		"<new-diagnostics>The following new diagnostic issues were detected:\n\n" +
		"t.py:\n  ✘ [Line 6:24] undefined name 'nosuch' (pyflakes)\n    result += s.area() + nosuch\n" +
		"</new-diagnostics>\n"
	if got := claudeDiagnostics(rep, "/ws", time.Second); got != wantClaude {
		t.Errorf("claude:\n%s\nwant:\n%s", got, wantClaude)
	}
	if borisDiagnostics(&lsp.Report{Delayed: true}, "/ws", time.Second) != "" {
		t.Error("an empty delayed report got a block")
	}
	merged := &lsp.Report{Files: []lsp.FileReport{{Path: "/ws/t.py", Server: "pylsp", Merged: 1, Introduced: []lsp.Diag{d}}}}
	if got, want := borisDiagnostics(merged, "/ws", time.Second), "This edit introduced 1 error (pylsp; counting the errors of earlier edits of t.py that were not reported yet):\n"; !strings.HasPrefix(got, want) {
		t.Errorf("merged:\n%s\nwant it to start with:\n%s", got, want)
	}
	starting := &lsp.Report{Files: []lsp.FileReport{{Path: "/ws/t.py", Pending: true}}}
	if got, want := borisDiagnostics(starting, "/ws", time.Second), "Diagnostics: the language server of t.py is still starting; the errors this edit introduced will come with your next call (or ask the lsp tool's diagnostics operation).\n"; got != want {
		t.Errorf("starting:\n%s\nwant:\n%s", got, want)
	}
}

func TestReferencesAreBounded(t *testing.T) {
	res := &lsp.Result{Op: lsp.OpReferences, Word: "F", Server: "gopls", Pos: lsp.Loc{Path: "/ws/a.go", Line: 1, Col: 6}}
	for i := 0; i < 100; i++ {
		res.Locations = append(res.Locations, lsp.Loc{Path: "/ws/f" + string(rune('a'+i/10)) + ".go", Line: i%10 + 1, Col: 2, Text: "F()"})
	}
	res.Total, res.Files = 150, 20
	got := answerText(res, "/ws")
	for _, want := range []string{"150 references to F in 20 files:\n", "fa.go (10):\n  1:2: F()\n", "fj.go:\n  1:2: F()\n", "… 50 more references not shown (10 more files not listed); ask about a narrower symbol, or grep within a directory.\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("answer lacks %q:\n%s", want, got)
		}
	}
}
