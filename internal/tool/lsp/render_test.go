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
		{Path: "/ws/b.go", Server: "gopls", Late: true, Indexing: "Loading packages"},
		{Path: "/ws/c.py", Err: errors.New("[LSP_START_FAILED] pylsp failed to start\nits stderr")},
		{Path: "/ws/d.go", Server: "gopls", Note: "note: the go language server (gopls) had stopped (exit status 2) and was restarted for this call"},
	}}
	wantBoris := "Diagnostics: gopls did not report on b.go within 2s (it is busy: Loading packages); use the lsp tool's diagnostics operation on it later.\n" +
		"Diagnostics for c.py are unavailable: [LSP_START_FAILED] pylsp failed to start\n" +
		"note: the go language server (gopls) had stopped (exit status 2) and was restarted for this call\n" +
		"This edit introduced 1 error (clangd):\n" +
		"a.c:7:20: error: Too few arguments; shapes.h:10:13: note: declared here [clang too_few_args]\n" +
		"     7\t\tputs(describe(list));\n"
	if got := borisDiagnostics(rep, "/ws", 2*time.Second); got != wantBoris {
		t.Errorf("boris:\n%s\nwant:\n%s", got, wantBoris)
	}
	wantClaude := "Diagnostics: gopls did not report on b.go within 2s (it is busy: Loading packages); use the LSP tool's diagnostics operation on it later.\n" +
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
