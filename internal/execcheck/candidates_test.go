package execcheck

import (
	"slices"
	"testing"
)

// TestCandidates: the argvs a judge is asked about — as written; with the
// real program first when argv[0] names another; and the program a
// dynamic loader runs.
func TestCandidates(t *testing.T) {
	cases := []struct {
		prog string
		argv []string
		want [][]string
	}{
		{"/usr/bin/git", []string{"git", "push"}, [][]string{{"git", "push"}}},
		{"/usr/bin/git", []string{"/usr/bin/git", "push"}, [][]string{{"/usr/bin/git", "push"}}},
		{"/usr/bin/git", []string{"ls", "push"}, [][]string{{"ls", "push"}, {"/usr/bin/git", "push"}}},
		{"/usr/bin/git", nil, [][]string{{"/usr/bin/git"}}},
		{"", nil, [][]string{{""}}},
		{"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", []string{"/lib64/ld-linux-x86-64.so.2", "--library-path", "/x", "--argv0", "git", "/usr/bin/git", "push"},
			[][]string{{"/lib64/ld-linux-x86-64.so.2", "--library-path", "/x", "--argv0", "git", "/usr/bin/git", "push"}, {"/usr/bin/git", "push"}}},
		{"/lib/ld-musl-x86_64.so.1", []string{"/lib/ld-musl-x86_64.so.1", "--", "/bin/git", "push"},
			[][]string{{"/lib/ld-musl-x86_64.so.1", "--", "/bin/git", "push"}, {"/bin/git", "push"}}},
		{"/lib64/ld-linux-x86-64.so.2", []string{"/lib64/ld-linux-x86-64.so.2", "--list"}, [][]string{{"/lib64/ld-linux-x86-64.so.2", "--list"}}},
	}
	for _, c := range cases {
		got := candidates(c.prog, c.argv)
		if !slices.EqualFunc(got, c.want, slices.Equal) {
			t.Errorf("candidates(%q, %q) = %q; want %q", c.prog, c.argv, got, c.want)
		}
	}
}

func TestQuote(t *testing.T) {
	for argv, want := range map[*[]string]string{
		{"git", "push", "origin", "main"}:    "git push origin main",
		{"sh", "-c", "git push; echo 'x'"}:   `sh -c 'git push; echo '\''x'\'''`,
		{"printf", ""}:                       "printf ''",
		{"/usr/bin/env", "A=b", "x@y:z,w+1"}: "/usr/bin/env A=b x@y:z,w+1",
	} {
		if got := Quote(*argv); got != want {
			t.Errorf("Quote(%q) = %s; want %s", *argv, got, want)
		}
	}
}
