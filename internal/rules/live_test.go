package rules

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestLiveReload: a changed file is loaded; a change that does not load
// keeps the previous rules and is warned about once; a later good change
// is loaded again.
func TestLiveReload(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "l.rules", `prefix_rule(pattern = ["a"], decision = "forbidden")`)
	var logs bytes.Buffer
	l, err := NewLive([]string{p}, dir, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if l.Check() {
		t.Fatal("reloaded an unchanged file")
	}
	write(t, dir, "l.rules", `prefix_rule(pattern = ["b"], decision = "forbidden")`)
	if !l.Check() || l.Rules().Command("b").Decision != Forbid || l.Rules().Command("a").Decision != NoMatch {
		t.Fatalf("the change was not loaded: %+v", l.Rules().Command("b"))
	}
	write(t, dir, "l.rules", "prefix_rule(pattern = [\"c\"], decision = \"maybe\")")
	for range 2 {
		if l.Check() {
			t.Fatal("a bad change was loaded")
		}
	}
	if l.Rules().Command("b").Decision != Forbid {
		t.Fatal("the previous rules were dropped")
	}
	if n := strings.Count(logs.String(), "does not load"); n != 1 || !strings.Contains(logs.String(), "l.rules:1") {
		t.Fatalf("warnings: %d\n%s", n, logs.String())
	}
	write(t, dir, "l.rules", `prefix_rule(pattern = ["c"], decision = "prompt")`)
	if !l.Check() || l.Rules().Command("c").Decision != Ask {
		t.Fatal("a good change after a bad one was not loaded")
	}
	var none *Live
	if none.Rules() != nil || none.Rules().Command("x").Decision != NoMatch {
		t.Fatal("a nil Live has rules")
	}
}
