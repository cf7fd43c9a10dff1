package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzCommand: any command line gets a verdict without a panic, and one
// that holds a forbidden command as a plain simple command of its own line
// is never judged laxer than Ask.
func FuzzCommand(f *testing.F) {
	for _, s := range []string{"git push", "echo $(git push)", "bash -c 'x'", "eval \"$x\"", "a | b && c; d", "f() { g; }", "cat <<EOF\nx\nEOF", "x=$'\\x41'", "{a,b}", "git -c alias.x=y x", "find . -exec {} \\;"} {
		f.Add(s)
	}
	dir := f.TempDir()
	p := filepath.Join(dir, "f.rules")
	writeFile(f, p, `prefix_rule(pattern = ["git", "push"], decision = "forbidden")`)
	r, err := LoadIn([]string{p}, dir)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := r.Command(s)
		_ = r.Argv(strings.Fields(s))
		_ = r.Exec(strings.Fields(s))
		// The forbidden command on a line of its own after the script
		// (when the script parses and leaves nothing open) must be seen.
		if v.Decision >= Ask || strings.ContainsAny(s, "\\'\"`$({<#") {
			return
		}
		if w := r.Command(s + "\ngit push"); w.Decision < Ask {
			t.Fatalf("%q + git push judged %+v", s, w)
		}
	})
}

func writeFile(tb testing.TB, p, s string) {
	tb.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		tb.Fatal(err)
	}
}
