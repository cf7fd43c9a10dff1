package blackbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// policyCheck runs `boris policy check` on rules files holding srcs and
// returns its stdout, stderr and whether it succeeded.
func policyCheck(t *testing.T, srcs []string, args ...string) (string, string, bool) {
	t.Helper()
	dir := t.TempDir()
	var cmdArgs []string
	cmdArgs = append(cmdArgs, "policy", "check")
	for i, src := range srcs {
		p := filepath.Join(dir, "r"+string(rune('0'+i))+".rules")
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		cmdArgs = append(cmdArgs, "--rules", p)
	}
	cmd := exec.Command(binPath, append(cmdArgs, args...)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err == nil
}

// TestPolicyCheckCodexCases: the cases of Codex's execpolicy tests
// (codex-rs/execpolicy/tests/basic.rs), through `boris policy check`, each
// answer compared field for field with what `codex execpolicy check`
// prints for the same files and argv.
func TestPolicyCheckCodexCases(t *testing.T) {
	const gitPrompt = `prefix_rule(pattern = ["git"], decision = "prompt")`
	const gitCommitForbidden = `prefix_rule(pattern = ["git", "commit"], decision = "forbidden")`
	cases := []struct {
		name  string
		rules []string
		args  []string
		want  string
	}{
		{"basic match", []string{`prefix_rule(pattern = ["git", "status"])`}, []string{"--", "git", "status"},
			`{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["git","status"],"decision":"allow"}}],"decision":"allow"}`},
		{"justification on forbidden", []string{`prefix_rule(pattern = ["rm"], decision = "forbidden", justification = "destructive command")`}, []string{"--", "rm", "-rf", "/some/important/folder"},
			`{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["rm"],"decision":"forbidden","justification":"destructive command"}}],"decision":"forbidden"}`},
		{"justification on allow", []string{`prefix_rule(pattern = ["ls"], decision = "allow", justification = "safe and commonly used")`}, []string{"--", "ls", "-l"},
			`{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["ls"],"decision":"allow","justification":"safe and commonly used"}}],"decision":"allow"}`},
		{"multiple files, git status", []string{gitPrompt, gitCommitForbidden}, []string{"--", "git", "status"},
			`{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["git"],"decision":"prompt"}}],"decision":"prompt"}`},
		{"multiple files, strictest wins", []string{gitPrompt, gitCommitForbidden}, []string{"--", "git", "commit", "-m", "hi"},
			`{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["git"],"decision":"prompt"}},{"prefixRuleMatch":{"matchedPrefix":["git","commit"],"decision":"forbidden"}}],"decision":"forbidden"}`},
		{"one file, strictest wins", []string{gitPrompt + "\n" + gitCommitForbidden}, []string{"git", "commit", "-m", "hi"},
			`{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["git"],"decision":"prompt"}},{"prefixRuleMatch":{"matchedPrefix":["git","commit"],"decision":"forbidden"}}],"decision":"forbidden"}`},
		{"first token alternatives: bash", []string{`prefix_rule(pattern = [["bash", "sh"], ["-c", "-l"]])`}, []string{"--", "bash", "-c", "echo", "hi"},
			`{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["bash","-c"],"decision":"allow"}}],"decision":"allow"}`},
		{"first token alternatives: sh", []string{`prefix_rule(pattern = [["bash", "sh"], ["-c", "-l"]])`}, []string{"--", "sh", "-l", "echo", "hi"},
			`{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["sh","-l"],"decision":"allow"}}],"decision":"allow"}`},
		{"tail alternatives: npm i", []string{`prefix_rule(pattern = ["npm", ["i", "install"], ["--legacy-peer-deps", "--no-save"]])`}, []string{"--", "npm", "i", "--legacy-peer-deps"},
			`{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["npm","i","--legacy-peer-deps"],"decision":"allow"}}],"decision":"allow"}`},
		{"tail alternatives: npm install", []string{`prefix_rule(pattern = ["npm", ["i", "install"], ["--legacy-peer-deps", "--no-save"]])`}, []string{"--", "npm", "install", "--no-save", "leftpad"},
			`{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["npm","install","--no-save"],"decision":"allow"}}],"decision":"allow"}`},
		{"tail alternatives are not a cartesian product", []string{`prefix_rule(pattern = ["npm", ["i", "install"], ["--legacy-peer-deps", "--no-save"]])`}, []string{"--", "npm", "i", "leftpad"},
			`{"matchedRules":[]}`},
		{"match examples checked", []string{`prefix_rule(
    pattern = ["git", "status"],
    match = [["git", "status"], "git status"],
    not_match = [
        ["git", "--config", "color.status=always", "status"],
        "git --config color.status=always status",
    ],
)`}, []string{"--", "git", "status"},
			`{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["git","status"],"decision":"allow"}}],"decision":"allow"}`},
		{"not_match example does not match", []string{`prefix_rule(pattern = ["git", "status"], not_match = ["git --config color.status=always status"])`}, []string{"--", "git", "--config", "color.status=always", "status"},
			`{"matchedRules":[]}`},
		{"no rule matches", []string{gitPrompt}, []string{"--", "python"}, `{"matchedRules":[]}`},
		{"host executable resolved", []string{`prefix_rule(pattern = ["git", "status"], decision = "prompt")
host_executable(name = "git", paths = ["/usr/bin/git"])`}, []string{"--resolve-host-executables", "--", "/usr/bin/git", "status"},
			`{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["git","status"],"decision":"prompt","resolvedProgram":"/usr/bin/git"}}],"decision":"prompt"}`},
		{"host executable not resolved without the flag", []string{`prefix_rule(pattern = ["git", "status"], decision = "prompt")
host_executable(name = "git", paths = ["/usr/bin/git"])`}, []string{"--", "/usr/bin/git", "status"},
			`{"matchedRules":[]}`},
		{"host executable: explicit empty allowlist", []string{`prefix_rule(pattern = ["git"], decision = "prompt")
host_executable(name = "git", paths = [])`}, []string{"--resolve-host-executables", "--", "/usr/bin/git", "status"},
			`{"matchedRules":[]}`},
		{"host executable: path not in the allowlist", []string{`prefix_rule(pattern = ["git"], decision = "prompt")
host_executable(name = "git", paths = ["/usr/bin/git"])`}, []string{"--resolve-host-executables", "--", "/opt/homebrew/bin/git", "status"},
			`{"matchedRules":[]}`},
		{"host executable: no mapping falls back to the name", []string{`prefix_rule(pattern = ["git"], decision = "prompt")`}, []string{"--resolve-host-executables", "--", "/usr/bin/git", "status"},
			`{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["git"],"decision":"prompt","resolvedProgram":"/usr/bin/git"}}],"decision":"prompt"}`},
		{"host executable: an exact match wins", []string{`prefix_rule(pattern = ["/usr/bin/git"], decision = "allow")
prefix_rule(pattern = ["git"], decision = "prompt")
host_executable(name = "git", paths = ["/usr/bin/git"])`}, []string{"--resolve-host-executables", "--", "/usr/bin/git", "status"},
			`{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["/usr/bin/git"],"decision":"allow"}}],"decision":"allow"}`},
		{"host executable: the last definition wins", []string{`prefix_rule(pattern = ["git"], decision = "prompt")
host_executable(name = "git", paths = ["/usr/bin/git"])`, `host_executable(name = "git", paths = ["/opt/homebrew/bin/git"])`}, []string{"--resolve-host-executables", "--", "/usr/bin/git", "status"},
			`{"matchedRules":[]}`},
		{"without --", []string{`prefix_rule(pattern = ["git", "status"])`}, []string{"git", "status", "--short"},
			`{"matchedRules":[{"prefixRuleMatch":{"matchedPrefix":["git","status"],"decision":"allow"}}],"decision":"allow"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, ok := policyCheck(t, c.rules, c.args...)
			if !ok {
				t.Fatalf("failed: %s", errOut)
			}
			if got := strings.TrimSpace(out); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

// TestPolicyCheckBadRules: what Codex refuses to load, boris refuses too,
// naming the file and line.
func TestPolicyCheckBadRules(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"empty justification", "\nprefix_rule(pattern = [\"ls\"], decision = \"prompt\", justification = \"   \")", "r0.rules:2: invalid rule: justification cannot be empty"},
		{"host path not absolute", `host_executable(name = "git", paths = ["git"])`, "host_executable paths must be absolute"},
		{"host name with a separator", `host_executable(name = "/usr/bin/git", paths = ["/usr/bin/git"])`, "host_executable name must be a bare executable name"},
		{"host path with another name", `host_executable(name = "git", paths = ["/usr/bin/rg"])`, "must have basename `git`"},
		{"match example that does not match", "prefix_rule(\n  pattern = [\"git\", \"push\"],\n  match = [\"git pull\"],\n)", "r0.rules:1"},
		{"not_match example that matches", "prefix_rule(pattern = [\"git\"], not_match = [\"git push\"])", "not_match example `git push` matches"},
		{"unknown function", "\n\nallow_rule(pattern = [\"git\"])", "r0.rules:3"},
		{"unknown decision", `prefix_rule(pattern = ["git"], decision = "deny")`, "unknown decision"},
		{"empty pattern", `prefix_rule(pattern = [])`, "pattern cannot be empty"},
		{"syntax error", "prefix_rule(pattern = [\"git\"]", "r0.rules:1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, ok := policyCheck(t, []string{c.src}, "--", "git", "status")
			if ok {
				t.Fatalf("loaded: %s", out)
			}
			if !strings.Contains(errOut, c.want) {
				t.Errorf("error %q lacks %q", errOut, c.want)
			}
		})
	}
}
