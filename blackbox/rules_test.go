package blackbox

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rulesFixture is a work tree whose origin is a local bare repository, and
// a local HTTP server counting its hits: a real git push and a real curl
// leave traces that can be looked for.
type rulesFixture struct {
	dir, ws, remote string
	url             string
	hits            atomic.Int64
	paths           chan string
}

func newRulesFixture(t *testing.T) *rulesFixture {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed")
	}
	top, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &rulesFixture{dir: top, ws: filepath.Join(top, "ws"), remote: filepath.Join(top, "remote.git"), paths: make(chan string, 1000)}
	gitRun(t, top, "init", "-q", "--bare", f.remote)
	gitRun(t, top, "init", "-q", "-b", "main", f.ws)
	if err := os.WriteFile(filepath.Join(f.ws, "README"), []byte("git push is in this file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, f.ws, "add", "README")
	gitRun(t, f.ws, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
	gitRun(t, f.ws, "remote", "add", "origin", f.remote)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.hits.Add(1)
		f.paths <- r.URL.Path
		fmt.Fprintln(w, "fetched")
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// pushed are the refs the bare repository got.
func (f *rulesFixture) pushed(t *testing.T) string {
	t.Helper()
	return strings.TrimSpace(gitRun(t, f.remote, "for-each-ref", "--format=%(refname)"))
}

func (f *rulesFixture) write(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(f.dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// attackRules writes the attack suite's rules in format (codex or
// claude) and returns the file's path.
func (f *rulesFixture) attackRules(t *testing.T, format string) string {
	t.Helper()
	if format == "codex" {
		return f.write(t, "team.rules", codexAttackRules)
	}
	return f.write(t, "settings.json", claudeAttackRules)
}

const codexAttackRules = `
prefix_rule(
    pattern = ["git", "push"],
    decision = "forbidden",
    justification = "pushing is for humans",
    match = ["git push origin main"],
    not_match = ["git status", "echo git push"],
)
prefix_rule(pattern = [["curl", "wget"]], decision = "forbidden", justification = "no fetching from the network")
`

const claudeAttackRules = `{
  "permissions": {
    "allow": ["Bash(git status)", "Bash(echo *)"],
    "deny": ["Bash(git push:*)", "Bash(curl:*)", "Bash(wget:*)"]
  }
}`

// attacks are command lines that would push to the bare repository or
// fetch from the server; each must be refused before anything of it runs.
// N is replaced by the attack's number (its branch, its URL path).
func attacks(gitPath, url string) []string {
	push := "push origin HEAD:refs/heads/aN"
	fetch := url + "/aN"
	return []string{
		"git " + push,
		gitPath + " " + push,
		"g''it " + push,
		`"git" "push" origin HEAD:refs/heads/aN`,
		`\git ` + push,
		`git pu\sh origin HEAD:refs/heads/aN`,
		"true; git " + push,
		"true && git " + push,
		"false || git " + push,
		"echo | git " + push,
		"(git " + push + ")",
		"{ git " + push + "; }",
		"echo $(git " + push + ")",
		"echo `git " + push + "`",
		"bash -c 'git " + push + "'",
		`sh -c "git ` + push + `"`,
		`bash -c "bash -c 'git ` + push + `'"`,
		"bash -lc 'cd . && git " + push + "'",
		"eval 'git " + push + "'",
		"eval git " + push,
		"env git " + push,
		"env -i PATH=/usr/bin:/bin git " + push,
		`env PATH="$PATH" git ` + push,
		"env -S 'git " + push + "'",
		"command git " + push,
		"exec git " + push,
		"nice -n 5 git " + push,
		"nohup git " + push,
		"timeout 30 git " + push,
		"timeout -s KILL 30 git " + push,
		"sudo git " + push,
		"echo HEAD:refs/heads/aN | xargs git push origin",
		"echo push origin HEAD:refs/heads/aN | xargs git",
		"x=git; $x " + push,
		"x=push; git $x origin HEAD:refs/heads/aN",
		"$(echo git) " + push,
		"`echo git` " + push,
		`eval "$(echo git) ` + push + `"`,
		"if true; then git " + push + "; fi",
		"for i in 1; do git " + push + "; done",
		"while true; do git " + push + "; break; done",
		"case x in x) git " + push + ";; esac",
		"f() { git " + push + "; }; f",
		"GIT_TRACE=0 git " + push,
		"git -C . " + push,
		"git -c user.name=x " + push,
		"find . -maxdepth 0 -exec git " + push + ` \;`,
		"flock " + filepath.Join(os.TempDir(), "boris-rules-lock") + " git " + push,
		"script -qc 'git " + push + "' /dev/null",
		"git -c alias.p=push p origin HEAD:refs/heads/aN",
		"strace -f -o /dev/null git " + push,
		"echo 'git " + push + "' | bash",
		"bash <<'EOF'\ngit " + push + "\nEOF",
		"cat <<EOF\n$(git " + push + ")\nEOF",
		"touch marker-aN && git " + push,
		"{git,push} origin HEAD:refs/heads/aN",
		"curl -s " + fetch,
		"wget -q -O - " + fetch,
		"curl -s " + fetch + " | sh",
		"bash -c 'curl -s " + fetch + "'",
		"c\\url -s " + fetch,
		"$(echo curl) -s " + fetch,
		"/usr/bin/env curl -s " + fetch,
	}
}

// TestRulesAttackSuite drives the binary with every bypass shape against
// rules forbidding git push and curl/wget, in Codex's format and Claude
// Code's: each attack is refused (RULE_FORBIDDEN, or RULE_APPROVAL_NEEDED
// where the program cannot be known before it runs and the client cannot
// ask), the bare repository gets no ref and the server no request; the
// commands that only mention git push still run. A control run without
// rules pushes and fetches for real, so the traces looked for are real.
func TestRulesAttackSuite(t *testing.T) {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"codex", "claude"} {
		t.Run(format, func(t *testing.T) {
			f := newRulesFixture(t)
			rulesFile := f.attackRules(t, format)
			cs, _, logs := connectStdio(t, f.ws, "--rules="+rulesFile, "--checkpoints=off")
			for i, a := range attacks(gitPath, f.url) {
				n := fmt.Sprint(i)
				cmd := strings.ReplaceAll(a, "aN", "a"+n)
				text, isErr := call(t, cs, "bash", map[string]any{"command": cmd})
				if !isErr || !(strings.HasPrefix(text, "[RULE_FORBIDDEN] ") || strings.HasPrefix(text, "[RULE_APPROVAL_NEEDED] ")) {
					t.Errorf("attack %d %q was not refused: isError=%v %q", i, cmd, isErr, text)
					continue
				}
				if strings.HasPrefix(text, "[RULE_FORBIDDEN] ") && !strings.Contains(text, rulesFile+":") {
					t.Errorf("attack %d %q: the refusal does not name the rule's file and line: %q", i, cmd, text)
				}
			}
			if refs := f.pushed(t); refs != "" {
				t.Errorf("the bare repository got refs: %s", refs)
			}
			if n := f.hits.Load(); n != 0 {
				t.Errorf("the server got %d requests", n)
			}
			if m, _ := filepath.Glob(filepath.Join(f.ws, "marker-*")); len(m) > 0 {
				t.Error("the part before a forbidden part ran")
			}
			// The refusal says what and why.
			text, _ := call(t, cs, "bash", map[string]any{"command": "echo hi && git push origin main"})
			for _, want := range []string{"git push origin main", "nothing was run"} {
				if !strings.Contains(text, want) {
					t.Errorf("refusal %q lacks %q", text, want)
				}
			}
			if format == "codex" && !strings.Contains(text, "pushing is for humans") {
				t.Errorf("refusal %q lacks the justification", text)
			}
			// No false refusals.
			if out := mustOK(t, cs, "bash", map[string]any{"command": "echo git push"}); !strings.Contains(out, "git push") {
				t.Errorf("echo git push: %q", out)
			}
			if out := mustOK(t, cs, "bash", map[string]any{"command": `grep -r "git push" .`}); !strings.Contains(out, "README") {
				t.Errorf("grep: %q", out)
			}
			if out := mustOK(t, cs, "bash", map[string]any{"command": "git status"}); !strings.Contains(out, "branch main") {
				t.Errorf("git status: %q", out)
			}
			if out := mustOK(t, cs, "bash", map[string]any{"command": "git log --oneline | cat"}); !strings.Contains(out, "one") {
				t.Errorf("git log: %q", out)
			}
			if t.Failed() {
				t.Logf("server log:\n%s", logs)
			}
		})
	}
	t.Run("control", func(t *testing.T) {
		f := newRulesFixture(t)
		cs, _, _ := connectStdio(t, f.ws, "--checkpoints=off")
		mustOK(t, cs, "bash", map[string]any{"command": "x=git; $x push origin HEAD:refs/heads/control && curl -s " + f.url + "/control"})
		if refs := f.pushed(t); refs != "refs/heads/control" {
			t.Errorf("without rules the push did not happen: %q", refs)
		}
		if n := f.hits.Load(); n != 1 {
			t.Errorf("without rules the server got %d requests", n)
		}
	})
}

// TestRulesCodexTools: Codex's shell (an argv, bash -lc) and exec_command
// are judged like bash.
func TestRulesCodexTools(t *testing.T) {
	f := newRulesFixture(t)
	rulesFile := f.write(t, "team.rules", codexAttackRules)
	cs, _, _ := connectStdio(t, f.ws, "--rules="+rulesFile, "--checkpoints=off", "--openai-compat")
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"shell", map[string]any{"command": []string{"git", "push", "origin", "HEAD:refs/heads/s1"}}},
		{"shell", map[string]any{"command": []string{"bash", "-lc", "git push origin HEAD:refs/heads/s2"}}},
		{"shell", map[string]any{"command": []string{"env", "curl", f.url + "/s3"}}},
		{"exec_command", map[string]any{"cmd": "git push origin HEAD:refs/heads/s4"}},
		{"exec_command", map[string]any{"cmd": "x=curl; $x " + f.url + "/s5", "tty": true}},
	} {
		text, isErr := call(t, cs, c.tool, c.args)
		if !isErr || !strings.Contains(text, "RULE_") {
			t.Errorf("%s %v: not refused: %q", c.tool, c.args, text)
		}
	}
	if refs := f.pushed(t); refs != "" {
		t.Errorf("pushed: %s", refs)
	}
	if n := f.hits.Load(); n != 0 {
		t.Errorf("fetched %d times", n)
	}
	text, isErr := call(t, cs, "shell", map[string]any{"command": []string{"git", "status"}})
	if isErr || !strings.Contains(text, "branch main") {
		t.Errorf("git status through shell: %v %q", isErr, text)
	}
}

// TestRulesPaths: Claude Code's Read and Edit rules bind the file tools,
// apply_patch included.
func TestRulesPaths(t *testing.T) {
	f := newRulesFixture(t)
	if err := os.WriteFile(filepath.Join(f.ws, ".env"), []byte("SECRET=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rulesFile := f.write(t, "settings.json", `{"permissions": {"deny": ["Read(./.env)", "Edit(docs/**)"]}}`)
	cs, _, _ := connectStdio(t, f.ws, "--rules="+rulesFile, "--checkpoints=off")
	if text := mustErr(t, cs, "view", map[string]any{"path": ".env"}, "RULE_FORBIDDEN"); strings.Contains(text, "SECRET") {
		t.Errorf("the denied file's content came back: %q", text)
	}
	mustErr(t, cs, "create_file", map[string]any{"path": "docs/a.md", "content": "x"}, "RULE_FORBIDDEN")
	mustErr(t, cs, "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: docs/b.md\n+x\n*** End Patch\n"}, "RULE_FORBIDDEN")
	if _, err := os.Stat(filepath.Join(f.ws, "docs")); err == nil {
		t.Error("a forbidden edit made docs/")
	}
	mustOK(t, cs, "create_file", map[string]any{"path": "src/a.md", "content": "x"})
	mustOK(t, cs, "view", map[string]any{"path": "README"})
}

// TestRulesElicitation: a command a rule asks about runs when the human,
// asked through the client's elicitation, accepts, and is refused when
// they decline, in both protocol eras.
func TestRulesElicitation(t *testing.T) {
	for _, era := range []string{handshakeEra, defaultClient} {
		name := era
		if name == "" {
			name = "stateless"
		}
		t.Run(name, func(t *testing.T) {
			f := newRulesFixture(t)
			rulesFile := f.write(t, "ask.rules", `prefix_rule(pattern = ["touch"], decision = "prompt", justification = "new files need a look")`)
			var answer atomic.Value
			var asked atomic.Int64
			var lastMsg atomic.Value
			opts := &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked.Add(1)
				lastMsg.Store(req.Params.Message)
				return &mcp.ElicitResult{Action: answer.Load().(string)}, nil
			}}
			cs, _, logs := connectStdioWith(t, f.ws, era, opts, "--rules="+rulesFile, "--checkpoints=off")
			answer.Store("accept")
			mustOK(t, cs, "bash", map[string]any{"command": "touch accepted"})
			if _, err := os.Stat(filepath.Join(f.ws, "accepted")); err != nil {
				t.Errorf("accepted command did not run: %v\n%s", err, logs)
			}
			if msg, _ := lastMsg.Load().(string); !strings.Contains(msg, "touch accepted") || !strings.Contains(msg, "new files need a look") || !strings.Contains(msg, "ask.rules:1") {
				t.Errorf("the question %q lacks the command, the justification or the rule", msg)
			}
			answer.Store("decline")
			mustErr(t, cs, "bash", map[string]any{"command": "touch declined"}, "RULE_DECLINED")
			if _, err := os.Stat(filepath.Join(f.ws, "declined")); err == nil {
				t.Error("declined command ran")
			}
			if n := asked.Load(); n < 2 {
				t.Errorf("asked %d times", n)
			}
		})
	}
	t.Run("no capability", func(t *testing.T) {
		f := newRulesFixture(t)
		rulesFile := f.write(t, "ask.rules", `prefix_rule(pattern = ["touch"], decision = "prompt")`)
		cs, _, _ := connectStdio(t, f.ws, "--rules="+rulesFile, "--checkpoints=off")
		mustErr(t, cs, "bash", map[string]any{"command": "touch x"}, "RULE_APPROVAL_NEEDED")
		if _, err := os.Stat(filepath.Join(f.ws, "x")); err == nil {
			t.Error("ran without approval")
		}
	})
}

// TestRulesStartAndReload: a rules file that does not load stops the
// start, naming the file and line; a changed file is reloaded; a change
// that does not load keeps the previous rules, with a warning.
func TestRulesStartAndReload(t *testing.T) {
	f := newRulesFixture(t)
	bad := f.write(t, "bad.rules", "prefix_rule(pattern = [\"git\"])\n\nprefix_rule(pattern = [\"ls\"], justification = \"\")\n")
	cmd := exec.Command(binPath, "--transport=stdio", "--workdir="+f.ws, "--rules="+bad)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), bad+":3") {
		t.Fatalf("start with a bad rules file: err=%v, output %q does not name %s:3", err, out, bad)
	}

	rulesFile := f.write(t, "live.rules", `prefix_rule(pattern = ["touch"], decision = "forbidden")`)
	cs, _, logs := connectStdio(t, f.ws, "--rules="+rulesFile, "--checkpoints=off")
	mustErr(t, cs, "bash", map[string]any{"command": "touch a"}, "RULE_FORBIDDEN")
	mustOK(t, cs, "bash", map[string]any{"command": "mkdir d1"})

	f.write(t, "live.rules", `prefix_rule(pattern = ["mkdir"], decision = "forbidden", justification = "no new dirs")`)
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; ; i++ {
		text, isErr := call(t, cs, "bash", map[string]any{"command": fmt.Sprintf("mkdir r%d", i)})
		if isErr && strings.Contains(text, "no new dirs") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the changed rules were not reloaded: %q\n%s", text, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	mustOK(t, cs, "bash", map[string]any{"command": "touch b"})

	f.write(t, "live.rules", "prefix_rule(pattern = [\"mkdir\"], decision = \"sometimes\")\n")
	for !strings.Contains(logs.String(), "does not load") {
		if time.Now().After(deadline.Add(20 * time.Second)) {
			t.Fatalf("no warning about the bad reload:\n%s", logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "live.rules:1") {
		t.Errorf("the warning does not name the file and line:\n%s", logs)
	}
	mustErr(t, cs, "bash", map[string]any{"command": "mkdir after"}, "RULE_FORBIDDEN")
}

// TestRulesElicitationHTTP: the same question and answer over streamable
// HTTP, in both eras (the 2026-07-28 era's answer comes with a second POST
// of the call).
func TestRulesElicitationHTTP(t *testing.T) {
	dir := t.TempDir()
	rulesFile := filepath.Join(dir, "ask.rules")
	if err := os.WriteFile(rulesFile, []byte(`prefix_rule(pattern = ["touch"], decision = "prompt")`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startInProcess(t, "--rules="+rulesFile, "--checkpoints=off")
	for _, era := range []string{handshakeEra, statelessEra} {
		t.Run(era, func(t *testing.T) {
			var answer atomic.Value
			opts := &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: answer.Load().(string)}, nil
			}}
			cs := connectHTTPAt(t, p.url, "", era, opts)
			answer.Store("accept")
			mustOK(t, cs, "bash", map[string]any{"command": "touch yes-" + era})
			if _, err := os.Stat(filepath.Join(p.dir, "yes-"+era)); err != nil {
				t.Errorf("accepted command did not run: %v", err)
			}
			answer.Store("cancel")
			mustErr(t, cs, "bash", map[string]any{"command": "touch no-" + era}, "RULE_DECLINED")
			if _, err := os.Stat(filepath.Join(p.dir, "no-"+era)); err == nil {
				t.Error("cancelled command ran")
			}
		})
	}
}

// TestRulesElicitationTimeout: a question nobody answers waits at most the
// call's timeout, then the call is refused, naming the wait.
func TestRulesElicitationTimeout(t *testing.T) {
	f := newRulesFixture(t)
	rulesFile := f.write(t, "ask.rules", `prefix_rule(pattern = ["touch"], decision = "prompt")`)
	release := make(chan struct{})
	defer close(release)
	opts := &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		select {
		case <-ctx.Done():
		case <-release:
		}
		return &mcp.ElicitResult{Action: "accept"}, nil
	}}
	cs, _, _ := connectStdioWith(t, f.ws, handshakeEra, opts, "--rules="+rulesFile, "--checkpoints=off")
	text := mustErr(t, cs, "bash", map[string]any{"command": "touch late", "timeout": 300}, "RULE_APPROVAL_NEEDED")
	if !strings.Contains(text, "no answer came within 300ms") {
		t.Errorf("refusal %q does not name the wait", text)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "late")); err == nil {
		t.Error("ran without an answer")
	}
}

// TestRulesClaudeDialect: with --anthropic-compat, Claude's bash and its
// editor are judged as boris's tools are, and the refusal still names the
// rule.
func TestRulesClaudeDialect(t *testing.T) {
	f := newRulesFixture(t)
	if err := os.WriteFile(filepath.Join(f.ws, ".env"), []byte("SECRET=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rulesFile := f.write(t, "settings.json", `{"permissions": {"deny": ["Bash(git push:*)", "Read(./.env)", "Edit(docs/**)"]}}`)
	cs, _, _ := connectStdio(t, f.ws, "--rules="+rulesFile, "--checkpoints=off", "--anthropic-compat")
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"bash", map[string]any{"command": "cd . && git push origin HEAD:refs/heads/c1"}},
		{"str_replace_editor", map[string]any{"command": "view", "path": filepath.Join(f.ws, ".env")}},
		{"str_replace_editor", map[string]any{"command": "create", "path": filepath.Join(f.ws, "docs/x.md"), "file_text": "x"}},
	} {
		text, isErr := call(t, cs, c.tool, c.args)
		if !isErr || !strings.Contains(text, "settings.json:1") || strings.Contains(text, "SECRET") {
			t.Errorf("%s %v: not refused by the rule: %v %q", c.tool, c.args, isErr, text)
		}
	}
	if refs := f.pushed(t); refs != "" {
		t.Errorf("pushed: %s", refs)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "docs")); err == nil {
		t.Error("docs/ was made")
	}
}

// TestRulesEveryExec: commands whose line the rules cannot see into — a
// script file, python's subprocess, a Makefile, a background
// task — still cannot run what the rules forbid: the exec itself is held
// and refused (EPERM), the answer names what was refused, and the bare
// repository and the server get nothing. Allowed programs still run.
func TestRulesEveryExec(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is needed")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatal("make is needed")
	}
	for _, format := range []string{"codex", "claude"} {
		t.Run(format, func(t *testing.T) {
			f := newRulesFixture(t)
			rulesFile := f.attackRules(t, format)
			write := func(name, body string) {
				if err := os.WriteFile(filepath.Join(f.ws, name), []byte(body), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			write("p.sh", "#!/bin/sh\ngit push origin HEAD:refs/heads/script\n")
			write("p.py", "import subprocess\nsubprocess.run(['git', 'push', 'origin', 'HEAD:refs/heads/python'])\nsubprocess.run(['curl', '-s', '"+f.url+"/python'])\n")
			write("Makefile", "ship:\n\tgit push origin HEAD:refs/heads/make\n")
			cs, _, logs := connectStdio(t, f.ws, "--rules="+rulesFile, "--checkpoints=off")
			for _, cmd := range []string{"./p.sh", "python3 p.py", "make ship"} {
				var run struct {
					Refused []struct {
						Argv   []string `json:"argv"`
						Reason string   `json:"reason"`
					} `json:"refused_execs"`
				}
				text := resultText(structured(t, cs, "bash", map[string]any{"command": cmd}, &run))
				if len(run.Refused) == 0 || !strings.Contains(text, "git push") {
					t.Errorf("%q: no refused exec named: %q %+v", cmd, text, run)
					continue
				}
				if r := run.Refused[0]; !slicesHasPrefix(r.Argv, "git", "push") && !strings.HasSuffix(r.Argv[0], "/git") || !strings.Contains(r.Reason, "RULE_") {
					t.Errorf("%q: refused %+v", cmd, r)
				}
			}
			// A background task is judged without asking anyone.
			var started struct {
				TaskID string `json:"task_id"`
			}
			structured(t, cs, "bash", map[string]any{"command": "./p.sh; echo done", "run_in_background": true}, &started)
			deadline := time.Now().Add(30 * time.Second)
			for {
				out, _ := call(t, cs, "task_output", map[string]any{"task_id": started.TaskID, "wait_ms": 2000})
				if strings.Contains(out, "done") && strings.Contains(out, "git push") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("task: %q", out)
				}
			}
			if refs := f.pushed(t); refs != "" {
				t.Errorf("the bare repository got refs: %s", refs)
			}
			if n := f.hits.Load(); n != 0 {
				t.Errorf("the server got %d requests", n)
			}
			// What no rule forbids runs, through the same programs.
			write("ok.sh", "#!/bin/sh\ngit status\n")
			if out := mustOK(t, cs, "bash", map[string]any{"command": "./ok.sh"}); !strings.Contains(out, "branch main") {
				t.Errorf("./ok.sh: %q", out)
			}
			if t.Failed() {
				t.Logf("server log:\n%s", logs)
			}
		})
	}
}

func slicesHasPrefix(argv []string, want ...string) bool {
	if len(argv) < len(want) {
		return false
	}
	for i, w := range want {
		if argv[i] != w {
			return false
		}
	}
	return true
}
