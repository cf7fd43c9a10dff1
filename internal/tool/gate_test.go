package tool

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boris-mcp/boris/internal/audit"
	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/rules"
)

type ruleCounter struct {
	Observer
	got []string
}

func (r *ruleCounter) RuleDecision(decision, stage, answer string) {
	r.got = append(r.got, decision+"/"+stage+"/"+answer)
}

// TestGateExec: the per-exec side of the gate refuses a forbidden argv
// naming the rule, refuses an argv a rule asks about when nobody can be
// asked, lets the rest run, and records each decision.
func TestGateExec(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.rules")
	src := `prefix_rule(pattern = ["git", "push"], decision = "forbidden", justification = "humans push")
prefix_rule(pattern = ["rm"], decision = "prompt")
prefix_rule(pattern = ["ls"], decision = "allow")`
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	live, err := rules.NewLive([]string{p}, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	obs := &ruleCounter{}
	env := &Env{Rules: NewRules(live, time.Second), Observer: obs}
	rec := &audit.Record{}
	g := newGate(env, nil, rec)
	ctx := context.Background()

	err = g.Exec(ctx, []string{"/usr/bin/git", "push", "origin"})
	if e, ok := codes.As(err); !ok || e.Code != codes.RuleForbidden || !strings.Contains(e.Message, "t.rules:1") || !strings.Contains(e.Message, "humans push") {
		t.Fatalf("git push: %v", err)
	}
	if err := g.Exec(ctx, []string{"rm", "-rf", "x"}); err == nil || !strings.Contains(err.Error(), string(codes.RuleApprovalNeeded)) {
		t.Fatalf("rm: %v", err)
	}
	if err := g.Exec(ctx, []string{"ls", "-l"}); err != nil {
		t.Fatalf("ls: %v", err)
	}
	if err := g.Exec(ctx, []string{"cat", "x"}); err != nil {
		t.Fatalf("cat: %v", err)
	}
	if rec.RuleDecision != "forbid" || !strings.HasSuffix(rec.Rule, "t.rules:1") {
		t.Errorf("record: %+v", rec)
	}
	want := []string{"forbid/exec/", "ask/exec/unavailable", "allow/exec/"}
	if strings.Join(obs.got, ",") != strings.Join(want, ",") {
		t.Errorf("metrics got %v, want %v", obs.got, want)
	}
	if !g.Restrictive() {
		t.Error("rules that forbid are not restrictive")
	}
	var nilGate *Gate
	if nilGate.Restrictive() {
		t.Error("a nil gate is restrictive")
	}
	if err := nilGate.Exec(ctx, []string{"git", "push"}); err != nil {
		t.Errorf("a nil gate refused: %v", err)
	}
}
