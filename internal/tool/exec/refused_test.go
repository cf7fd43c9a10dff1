package exec

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/boris-mcp/boris/internal/execcheck"
	"github.com/boris-mcp/boris/internal/results"
	"github.com/boris-mcp/boris/internal/session"
	"github.com/boris-mcp/boris/internal/shell"
)

// TestRefusedExecsInEveryAnswer: a command whose execs the rules refused
// says so in the text of every dialect and in the structured result.
func TestRefusedExecsInEveryAnswer(t *testing.T) {
	refusals := []execcheck.Refusal{{Argv: []string{"git", "push", "origin", "main"}, Reason: "forbidden by rule git push", Pid: 42}}
	res := session.RunResult{Result: shell.Result{ExitCode: 126, Duration: time.Millisecond}, Refused: refusals, RefusedCount: 3}
	want := "git push origin main: forbidden by rule git push"
	if text := formatRun(res, 1000); !strings.Contains(text, "refused: 3 exec(s)") || !strings.Contains(text, want) || !strings.Contains(text, "… and 2 more") {
		t.Errorf("boris/Claude text:\n%s", text)
	}
	st := session.TaskStatus{ID: "task_1", Running: true, Refused: refusals, RefusedCount: 1}
	if text := formatTask(st, ""); !strings.Contains(text, want) {
		t.Errorf("task status text:\n%s", text)
	}
	if text, _ := unifiedExec(st, time.Millisecond, 0, 0); !strings.Contains(text, want) {
		t.Errorf("Codex unified exec text:\n%s", text)
	}
	b, err := json.Marshal(results.FromRun(res, "/w"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"refused_execs":[{"argv":["git","push","origin","main"],"reason":"forbidden by rule git push","pid":42}],"refused_execs_total":3`) {
		t.Errorf("structured: %s", b)
	}
	if b, _ := json.Marshal(results.FromTask(st)); !strings.Contains(string(b), `"refused_execs_total":1`) {
		t.Errorf("task structured: %s", b)
	}
	// Nothing refused: nothing said.
	clean := session.RunResult{Result: shell.Result{ExitCode: 0}}
	if text := formatRun(clean, 1000); strings.Contains(text, "refused") {
		t.Errorf("text without refusals: %s", text)
	}
	if b, _ := json.Marshal(results.FromRun(clean, "/w")); strings.Contains(string(b), "refused") {
		t.Errorf("structured without refusals: %s", b)
	}
}
