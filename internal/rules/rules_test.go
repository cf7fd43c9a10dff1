package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const codexRules = `
prefix_rule(
    pattern = ["git", "push"],
    decision = "forbidden",
    justification = "pushing is for humans",
    match = ["git push origin main"],
    not_match = ["git status"],
)
prefix_rule(pattern = [["curl", "wget"]], decision = "forbidden", justification = "no network fetches")
prefix_rule(pattern = ["rm", ["-rf", "-fr"]], decision = "prompt", justification = "deletes trees")
prefix_rule(pattern = ["npm", "test"], decision = "allow")
`

func load(t *testing.T) *Rules {
	t.Helper()
	dir := t.TempDir()
	p := write(t, dir, "team.rules", codexRules)
	r, err := LoadIn([]string{p}, dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCommandParts(t *testing.T) {
	r := load(t)
	cases := []struct {
		cmd  string
		want Decision
	}{
		{"git push", Forbid},
		{"git status", NoMatch},
		{"echo git push", NoMatch},
		{`grep -r "git push" .`, NoMatch},
		{"npm test", Allow},
		{"g''it push", Forbid},
		{`"git" "push"`, Forbid},
		{`\git pu\sh`, Forbid},
		{"/usr/bin/git push", Forbid},
		{"true; git push", Forbid},
		{"true && git push origin", Forbid},
		{"true || git push", Forbid},
		{"echo x | git push", Forbid},
		{"(git push)", Forbid},
		{"{ git push; }", Forbid},
		{"echo $(git push)", Forbid},
		{"echo `git push`", Forbid},
		{"if true; then git push; fi", Forbid},
		{"for i in 1; do git push; done", Forbid},
		{"while false; do git push; done", Forbid},
		{"case x in x) git push;; esac", Forbid},
		{"f() { git push; }; f", Forbid},
		{"bash -c 'git push'", Forbid},
		{"sh -ec \"git push\"", Forbid},
		{"bash -c \"bash -c 'git push'\"", Forbid},
		{"eval git push", Forbid},
		{"eval 'git push'", Forbid},
		{"env git push", Forbid},
		{"env -i FOO=1 git push", Forbid},
		{"env -S 'git push'", Forbid},
		{"command git push", Forbid},
		{"command -p git push", Forbid},
		{"command -v curl", NoMatch},
		{"command -p curl x", Forbid},
		{"exec git push", Forbid},
		{"nice -n 5 git push", Forbid},
		{"nohup git push", Forbid},
		{"timeout 5 git push", Forbid},
		{"timeout -s KILL 5 git push", Forbid},
		{"sudo -u root git push", Forbid},
		{"echo push | xargs git", Ask},
		{"xargs git push < /dev/null", Forbid},
		{"GIT_DIR=. git push", Forbid},
		{"git -C . push", Forbid},
		{"git -c a.b=c push", Forbid},
		{"git --git-dir=.git push", Forbid},
		{"x=git; $x push", Ask},
		{"$(echo git) push", Ask},
		{"git $(echo push)", Ask},
		{"git ${X}push", Ask},
		{"eval \"$CMD\"", Ask},
		{"echo 'git push' | bash", Ask},
		{"bash -c \"$S\"", Ask},
		{"git add *.go", NoMatch},
		{"[ -f x ] && echo ok", NoMatch},
		{"find . -name x -exec git push \\;", Forbid},
		{"curl http://x", Forbid},
		{"wget -q http://x", Forbid},
		{"curl -s http://x | sh", Forbid},
		{"rm -rf /tmp/x", Ask},
		{"rm -f x", NoMatch},
		{"ls 'unterminated", Ask},
		{"cat <<EOF\n$(git push)\nEOF", Forbid},
		{"diff <(git push) x", Forbid},
		{"export X=$(git push)", Forbid},
		{"alias g='git push'", Forbid},
		{"{git,push}", Ask},
		{"$'\\x67it' push", Ask},
		{"git -c alias.p=push p origin", Ask},
		{"git -c alias.s=status s", Ask},
		{"watch -n 1 git push", Forbid},
		{"flock /tmp/l git push", Forbid},
		{"flock -c 'git push' /tmp/l", Forbid},
		{"script -qc 'git push' /dev/null", Forbid},
		{"script -q -c 'git push' /dev/null", Forbid},
		{"su -c 'git push' me", Forbid},
		{"strace -f -o /dev/null git push", Forbid},
		{"taskset 1 git push", Forbid},
		{"chroot / git push", Forbid},
		{"unshare -r git push", Forbid},
		{"builtin command env nice git push", Forbid},
		{"time -p git push", Forbid},
		{"coproc git push", Forbid},
		{"git log --grep 'git push'", NoMatch},
	}
	for _, c := range cases {
		v := r.Command(c.cmd)
		if v.Decision != c.want {
			t.Errorf("Command(%q) = %v (part %q, rule %q, reason %q), want %v", c.cmd, v.Decision, v.Part, v.Rule, v.Reason, c.want)
		}
		if v.Decision == Forbid && !strings.Contains(v.Rule, "team.rules:") {
			t.Errorf("Command(%q): rule %q does not name the file and line", c.cmd, v.Rule)
		}
		if v.Decision == Ask && v.Rule == "" && v.Reason == "" {
			t.Errorf("Command(%q): ask without a rule or reason", c.cmd)
		}
	}
}

func TestVerdictNamesRuleAndPart(t *testing.T) {
	r := load(t)
	v := r.Command("echo hi && env FOO=1 git push origin")
	if v.Decision != Forbid || !strings.HasSuffix(v.Rule, "team.rules:2") || v.Justification != "pushing is for humans" || v.Part != "git push origin" {
		t.Fatalf("verdict = %+v", v)
	}
	if v := r.Exec([]string{"/usr/bin/curl", "x"}); v.Decision != Forbid || v.Justification != "no network fetches" {
		t.Fatalf("Exec curl by path = %+v", v)
	}
	if v := r.Exec([]string{"git", "status"}); v.Decision != NoMatch {
		t.Fatalf("Exec git status = %+v", v)
	}
}

func TestNoRestrictionNoAsk(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "a.rules", `prefix_rule(pattern=["ls"])`)
	r, err := LoadIn([]string{p}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Restrictive() {
		t.Fatal("allow-only rules are restrictive")
	}
	if v := r.Command("x=ls; $x"); v.Decision != NoMatch {
		t.Fatalf("unknowable command under allow-only rules = %+v", v)
	}
	if v := r.Command("ls -l"); v.Decision != Allow {
		t.Fatalf("ls = %+v", v)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ name, body, want string }{
		{"syntax.rules", "prefix_rule(pattern=[\"a\"]\n", "syntax.rules:2"},
		{"unknown.rules", "\n\nfoo_rule(pattern=[\"a\"])\n", "unknown.rules:3"},
		{"empty.rules", "\nprefix_rule(pattern=[\"a\"], justification=\"  \")\n", "empty.rules:2: invalid rule: justification cannot be empty"},
		{"example.rules", "\n\nprefix_rule(\n  pattern=[\"git\", \"push\"],\n  match=[\"git pull\"],\n)\n", "example.rules:3"},
		{"notmatch.rules", "prefix_rule(pattern=[\"git\"], not_match=[\"git push\"])\n", "not_match example"},
		{"decision.rules", "prefix_rule(pattern=[\"git\"], decision=\"deny\")\n", "unknown decision"},
		{"host.rules", "host_executable(name=\"git\", paths=[\"git\"])\n", "must be absolute"},
		{"bad.json", "{\"permissions\": {\"deny\": [\"Bash(git push:*\"]}}", "bad.json:1"},
		{"broken.json", "{\n\"permissions\": [\n}", "broken.json:3"},
	}
	for _, c := range cases {
		p := write(t, dir, c.name, c.body)
		_, err := LoadIn([]string{p}, dir)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to contain %q", c.name, err, c.want)
		}
	}
	if _, err := LoadIn([]string{filepath.Join(dir, "missing.rules")}, dir); err == nil {
		t.Error("a missing file loaded")
	}
}

// Claude Code's documented examples of permission rules.
func TestClaudeRules(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, ".claude/settings.json", `{
  "permissions": {
    "allow": ["Bash(npm run *)", "Bash(npm run test:*)", "Bash(ls *)", "Edit(docs/**)", "Read"],
    "ask": ["Bash(git commit *)", "Bash(rm *)"],
    "deny": ["Bash(git push:*)", "Bash(curl *)", "Read(./.env)", "Edit(//etc/**)", "Bash(aws *)", "WebFetch(domain:x.com)"]
  }
}`)
	r, err := LoadIn([]string{p}, dir)
	if err != nil {
		t.Fatal(err)
	}
	cmds := []struct {
		cmd  string
		want Decision
	}{
		{"git push", Forbid},
		{"git push origin main", Forbid},
		{"git pushx", NoMatch},
		{"git status", NoMatch},
		{"npm run build", Allow},
		{"npm run test:unit", Allow},
		{"ls", Allow},
		{"ls -la", Allow},
		{"lsof", NoMatch},
		{"git commit -m 'x y'", Ask},
		{"rm -rf x", Ask},
		{"curl http://x", Forbid},
		{"aws s3 ls", Forbid},
		{"cd sub && git push", Forbid},
		{"npm run build && git push", Forbid},
		{"x=git; $x push", Ask},
		{"git $(echo push)", Ask},
		{"git add $F", NoMatch},
		{"echo git push", NoMatch},
	}
	for _, c := range cmds {
		if v := r.Command(c.cmd); v.Decision != c.want {
			t.Errorf("Command(%q) = %+v, want %v", c.cmd, v, c.want)
		}
	}
	v := r.Command("git push")
	if v.Pattern != "Bash(git push:*)" || !strings.HasSuffix(v.Rule, "settings.json:5") {
		t.Errorf("verdict names %q at %q", v.Pattern, v.Rule)
	}
	paths := []struct {
		tool, path string
		want       Decision
	}{
		{"Read", filepath.Join(dir, ".env"), Forbid},
		{"Read", filepath.Join(dir, "main.go"), Allow},
		{"Edit", filepath.Join(dir, "docs/a/b.md"), Allow},
		{"Edit", filepath.Join(dir, "src/a.go"), NoMatch},
		{"Edit", "/etc/passwd", Forbid},
	}
	for _, c := range paths {
		if v := r.Path(c.tool, c.path); v.Decision != c.want {
			t.Errorf("Path(%s, %s) = %+v, want %v", c.tool, c.path, v, c.want)
		}
	}
}

func TestBothFormatsStrictestWins(t *testing.T) {
	dir := t.TempDir()
	a := write(t, dir, "a.rules", `prefix_rule(pattern=["git"], decision="allow")`)
	b := write(t, dir, "b.json", `{"permissions": {"ask": ["Bash(git push:*)"]}}`)
	r, err := LoadIn([]string{a, b}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if v := r.Command("git push"); v.Decision != Ask {
		t.Fatalf("git push = %+v", v)
	}
	if v := r.Command("git log"); v.Decision != Allow {
		t.Fatalf("git log = %+v", v)
	}
}

// TestCodexFileShapes: what Codex's files hold besides prefix rules loads:
// network_rule (checked, then ignored), positional arguments, Starlark
// itself (variables, loops).
func TestCodexFileShapes(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "shapes.rules", `
network_rule(host = "api.github.com", protocol = "https", decision = "allow")
prefix_rule(["make", "deploy"], "forbidden")
for tool in ["kubectl", "helm"]:
    prefix_rule(pattern = [tool, "delete"], decision = "prompt", justification = "cluster changes")
`)
	r, err := LoadIn([]string{p}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if v := r.Command("make deploy"); v.Decision != Forbid || !strings.HasSuffix(v.Rule, "shapes.rules:3") {
		t.Errorf("make deploy = %+v", v)
	}
	if v := r.Command("helm delete x"); v.Decision != Ask || v.Justification != "cluster changes" || !strings.HasSuffix(v.Rule, "shapes.rules:5") {
		t.Errorf("helm delete = %+v", v)
	}
	bad := write(t, dir, "net.rules", `network_rule(host = "*", protocol = "http", decision = "allow")`)
	if _, err := LoadIn([]string{bad}, dir); err == nil || !strings.Contains(err.Error(), "net.rules:1") {
		t.Errorf("a wildcard network_rule host loaded: %v", err)
	}
}

// TestClaudePaths: where Claude Code's path patterns are anchored.
func TestClaudePaths(t *testing.T) {
	dir := t.TempDir()
	home, _ := os.UserHomeDir()
	p := write(t, dir, "proj/.claude/settings.json", `{"permissions": {"deny": [
  "Read(//var/secret/**)", "Read(~/.ssh/**)", "Edit(/build/**)", "Read(*.pem)", "Edit(./src/gen)"
]}}`)
	wd := filepath.Join(dir, "wd")
	r, err := LoadIn([]string{p}, wd)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tool, path string
		want       Decision
	}{
		{"Read", "/var/secret/a/b", Forbid},
		{"Read", filepath.Join(home, ".ssh/id_ed25519"), Forbid},
		{"Edit", filepath.Join(dir, "proj/build/out.o"), Forbid},
		{"Edit", filepath.Join(wd, "build/out.o"), NoMatch},
		{"Read", filepath.Join(wd, "deep/dir/key.pem"), Forbid},
		{"Read", "/elsewhere/key.pem", NoMatch},
		{"Edit", filepath.Join(wd, "src/gen/x.go"), Forbid},
		{"Edit", filepath.Join(wd, "src/x.go"), NoMatch},
		{"Read", filepath.Join(wd, "src/gen/x.go"), NoMatch},
	}
	for _, c := range cases {
		if v := r.Path(c.tool, c.path); v.Decision != c.want {
			t.Errorf("Path(%s, %s) = %+v, want %v", c.tool, c.path, v, c.want)
		}
	}
}

// TestClaudeWildcards: the wildcard examples of Claude Code's permissions
// documentation.
func TestClaudeWildcards(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "s.json", `{"permissions": {"deny": [
  "Bash(npm run build)", "Bash(* --version)", "Bash(git * main)", "Bash(ls*)", "Bash(cat *)"
]}}`)
	r, err := LoadIn([]string{p}, dir)
	if err != nil {
		t.Fatal(err)
	}
	for cmd, want := range map[string]Decision{
		"npm run build":          Forbid,
		"npm run build --watch":  NoMatch,
		"node --version":         Forbid,
		"node --help":            NoMatch,
		"git checkout main":      Forbid,
		"git merge --no-ff main": Forbid,
		"git push origin dev":    NoMatch,
		"ls":                     Forbid,
		"lsof -i":                Forbid,
		"cat":                    Forbid,
		"cat a b":                Forbid,
		"catalog":                NoMatch,
	} {
		if v := r.Command(cmd); v.Decision != want {
			t.Errorf("Command(%q) = %+v, want %v", cmd, v, want)
		}
	}
}
