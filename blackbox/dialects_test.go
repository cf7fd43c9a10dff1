package blackbox

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestUndoEditThroughMCP: undo_edit steps back through this session's
// edits of a file made by any edit tool (str_replace, insert, create,
// apply_patch), removes a file an edit created, and refuses when the file
// changed outside the session since, leaving it as it is.
func TestUndoEditThroughMCP(t *testing.T) {
	for _, a := range agents(t, "--anthropic-compat") {
		t.Run(a.name, func(t *testing.T) {
			f := filepath.Join(a.dir, "f.txt")
			read := func() string {
				t.Helper()
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			ed := func(args map[string]any) string {
				t.Helper()
				args["path"] = f
				return mustOK(t, a.cs, "str_replace_editor", args)
			}
			undo := func(want string) {
				t.Helper()
				text := ed(map[string]any{"command": "undo_edit"})
				if got := read(); got != want {
					t.Fatalf("after undo: %q, want %q", got, want)
				}
				if !strings.HasPrefix(text, "Last edit to "+f+" undone successfully. Here's the result of running `cat -n` on "+f+":\n") {
					t.Fatalf("undo answer %q", text)
				}
			}
			ed(map[string]any{"command": "create", "file_text": "one\ntwo\n"})
			ed(map[string]any{"command": "str_replace", "old_str": "two", "new_str": "2"})
			ed(map[string]any{"command": "insert", "insert_line": 0, "new_str": "zero"})
			mustOK(t, a.cs, "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: f.txt\n@@\n one\n-2\n+TWO\n*** End Patch\n"})
			if got := read(); got != "zero\none\nTWO\n" {
				t.Fatalf("after the edits: %q", got)
			}
			undo("zero\none\n2\n")                             // the patch
			undo("one\n2\n")                                   // the insert
			undo("one\ntwo\n")                                 // the str_replace
			text := ed(map[string]any{"command": "undo_edit"}) // the create
			if _, err := os.Stat(f); !os.IsNotExist(err) || !strings.Contains(text, "removed") {
				t.Fatalf("undo of the create: %v %q", err, text)
			}
			mustErr(t, a.cs, "str_replace_editor", map[string]any{"command": "undo_edit", "path": f}, "PATH_NOT_FOUND")

			// A patch that adds a file is undone by removing it.
			mustOK(t, a.cs, "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: added.txt\n+x\n*** End Patch"})
			mustOK(t, a.cs, "str_replace_editor", map[string]any{"command": "undo_edit", "path": filepath.Join(a.dir, "added.txt")})
			if _, err := os.Stat(filepath.Join(a.dir, "added.txt")); !os.IsNotExist(err) {
				t.Fatalf("added file still there: %v", err)
			}

			// Changed outside the session since its edit: refused, untouched.
			ed(map[string]any{"command": "create", "file_text": "mine\n"})
			mustOK(t, a.cs, "bash", map[string]any{"command": "echo theirs >> f.txt"})
			msg := mustErr(t, a.cs, "str_replace_editor", map[string]any{"command": "undo_edit", "path": f}, "FILE_CHANGED_SINCE_VIEW")
			if got := read(); got != "mine\ntheirs\n" || !strings.Contains(msg, "nothing was done") {
				t.Fatalf("refused undo: %q, file %q", msg, got)
			}
			msg = mustErr(t, a.cs, "str_replace_editor", map[string]any{"command": "undo_edit", "path": filepath.Join(a.dir, "never.txt")}, "PATH_NOT_FOUND")
			if !strings.Contains(msg, "The path "+filepath.Join(a.dir, "never.txt")+" does not exist. Please provide a valid path.") {
				t.Fatalf("%q", msg)
			}
			writeFile(t, filepath.Join(a.dir, "other.txt"), "x\n")
			msg = mustErr(t, a.cs, "str_replace_editor", map[string]any{"command": "undo_edit", "path": filepath.Join(a.dir, "other.txt")}, "UNDO_NO_HISTORY")
			if msg != "[UNDO_NO_HISTORY] No edit history found for "+filepath.Join(a.dir, "other.txt")+"." {
				t.Fatalf("%q", msg)
			}
		})
	}
}

// TestBashRestartThroughMCP: restart: true ends what the session's
// commands left running (background tasks, children of finished commands),
// puts the working directory back and answers as the reference bash tool
// does; without command or restart the call is a tool error; arguments the
// schema does not know are ignored.
func TestBashRestartThroughMCP(t *testing.T) {
	for _, a := range agents(t, "--anthropic-compat") {
		t.Run(a.name, func(t *testing.T) {
			if err := os.Mkdir(filepath.Join(a.dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			mustOK(t, a.cs, "bash", map[string]any{"command": "sleep 300 & echo $! > left.pid"})
			mustOK(t, a.cs, "bash", map[string]any{"command": "sleep 300 & echo $! > bg.pid; wait", "run_in_background": true})
			mustOK(t, a.cs, "bash", map[string]any{"command": "cd sub"})
			pids := []int{readPid(t, filepath.Join(a.dir, "left.pid")), readPid(t, filepath.Join(a.dir, "bg.pid"))}
			if got := mustOK(t, a.cs, "bash", map[string]any{"restart": true}); got != "tool has been restarted." {
				t.Fatalf("restart answer %q", got)
			}
			waitGone(t, 10*time.Second, pids...)
			if got := mustOK(t, a.cs, "bash", map[string]any{"command": "pwd", "unknown_extra": 1}); got != "exit_code: 0\nstdout:\n"+a.dir+"\n" {
				t.Fatalf("after restart: %q", got)
			}
			if got := mustErr(t, a.cs, "bash", map[string]any{}, "BASH_EMPTY_COMMAND"); got != "[BASH_EMPTY_COMMAND] no command provided." {
				t.Fatalf("%q", got)
			}
		})
	}
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tree returns every file under dir with its content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s: %q, want %q (tree %q)", k, got[k], v, got)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Fatalf("unexpected file %s (tree %q)", k, got)
		}
	}
}

// TestApplyPatchThroughMCP: a patch as one text or as Responses-API
// operations, a multi-file patch applied as one (add, update with rename,
// delete), a failing last section that leaves everything untouched, a CRLF
// file kept CRLF, and a denied path refused.
func TestApplyPatchThroughMCP(t *testing.T) {
	for _, a := range agents(t, "--deny-dir", "**/secret*", "--diagnostics=off") {
		t.Run(a.name, func(t *testing.T) {
			writeFile(t, filepath.Join(a.dir, "app.py"), "def greet():\n    print(\"Hi\")\n")
			writeFile(t, filepath.Join(a.dir, "old.txt"), "obsolete\n")
			writeFile(t, filepath.Join(a.dir, "win.txt"), "one\r\ntwo\r\n")
			writeFile(t, filepath.Join(a.dir, "secret.env"), "TOKEN=1\n")
			before := tree(t, a.dir)

			failing := "*** Begin Patch\n*** Add File: new/hello.txt\n+hi\n*** Delete File: old.txt\n*** Update File: app.py\n@@\n-    print(\"Bye\")\n+    print(\"x\")\n*** End Patch"
			msg := mustErr(t, a.cs, "apply_patch", map[string]any{"input": failing}, "PATCH_CONTEXT_NOT_FOUND")
			if !strings.Contains(msg, "app.py") || !strings.Contains(msg, `print("Hi")`) {
				t.Fatalf("no closest region in %q", msg)
			}
			sameTree(t, tree(t, a.dir), before)
			mustErr(t, a.cs, "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Delete File: old.txt\n*** Update File: secret.env\n@@\n-TOKEN=1\n+TOKEN=2\n*** End Patch"}, "ACCESS_DENIED")
			mustErr(t, a.cs, "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Frobnicate: x\n*** End Patch"}, "PATCH_INVALID")
			sameTree(t, tree(t, a.dir), before)

			patch := "*** Begin Patch\n*** Add File: new/hello.txt\n+Hello world\n*** Update File: app.py\n*** Move to: src/main.py\n@@ def greet():\n-    print(\"Hi\")\n+    print(\"Hello, world!\")\n*** Delete File: old.txt\n*** Update File: win.txt\n@@\n one\n-two\n+2\n+3\n*** End Patch\n"
			got := mustOK(t, a.cs, "apply_patch", map[string]any{"input": patch})
			if want := "Success. Updated the following files:\nA new/hello.txt\nM src/main.py\nM win.txt\nD old.txt\n"; got != want {
				t.Fatalf("summary %q, want %q", got, want)
			}
			want := map[string]string{
				"new/hello.txt": "Hello world\n",
				"src/main.py":   "def greet():\n    print(\"Hello, world!\")\n",
				"win.txt":       "one\r\n2\r\n3\r\n",
				"secret.env":    "TOKEN=1\n",
			}
			sameTree(t, tree(t, a.dir), want)

			ops := []struct {
				op   map[string]any
				want string
			}{
				{map[string]any{"type": "create_file", "path": "b.txt", "diff": "+first\n+second\n"}, "A b.txt"},
				{map[string]any{"type": "update_file", "path": "b.txt", "diff": "@@\n first\n-second\n+2nd\n"}, "M b.txt"},
				{map[string]any{"type": "delete_file", "path": "new/hello.txt"}, "D new/hello.txt"},
			}
			for _, o := range ops {
				if got := mustOK(t, a.cs, "apply_patch", map[string]any{"operation": o.op}); got != "Success. Updated the following files:\n"+o.want+"\n" {
					t.Fatalf("%v: %q", o.op, got)
				}
			}
			want["b.txt"] = "first\n2nd\n"
			delete(want, "new/hello.txt")
			sameTree(t, tree(t, a.dir), want)
			mustErr(t, a.cs, "apply_patch", map[string]any{"operation": map[string]any{"type": "rename_file", "path": "b.txt"}}, "INVALID_INPUT")
			mustErr(t, a.cs, "apply_patch", map[string]any{}, "INVALID_INPUT")
		})
	}
}

var wallTimeRe = regexp.MustCompile(`^Exit code: (\d+)\nWall time: \d+(\.\d)? seconds\n(Total output lines: \d+\n)?Output:\n`)

// shellOutput checks Codex's exec format and returns the exit code and the
// output.
func shellOutput(t *testing.T, text string) (string, string) {
	t.Helper()
	m := wallTimeRe.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("not Codex's exec format: %q", text)
	}
	return m[1], text[len(m[0]):]
}

// TestOpenAICompatThroughMCP: --openai-compat serves shell and apply_patch;
// shell runs an argv directly or a bash -lc script (whose cd persists), in
// workdir, answering in Codex's format (stdout and stderr together, exit
// code 124 on timeout); apply_patch passed to shell is applied as Codex
// does.
func TestOpenAICompatThroughMCP(t *testing.T) {
	for _, a := range agents(t, "--openai-compat") {
		t.Run(a.name, func(t *testing.T) {
			if got := toolNames(t, a.cs); !slices.Equal(got, []string{"apply_patch", "checkpoint", "exec_command", "shell", "write_stdin"}) {
				t.Fatalf("tools %v", got)
			}
			if err := os.MkdirAll(filepath.Join(a.dir, "sub", "deeper"), 0o755); err != nil {
				t.Fatal(err)
			}
			run := func(args map[string]any) (string, string) {
				t.Helper()
				return shellOutput(t, mustOK(t, a.cs, "shell", args))
			}
			if code, out := run(map[string]any{"command": []string{"pwd"}, "workdir": "sub"}); code != "0" || out != filepath.Join(a.dir, "sub")+"\n" {
				t.Fatalf("workdir: %s %q", code, out)
			}
			if code, out := run(map[string]any{"command": []string{"bash", "-lc", "echo out; echo err >&2; exit 3"}}); code != "3" || out != "out\nerr\n" {
				t.Fatalf("exit and output: %s %q", code, out)
			}
			// An argv runs directly: no shell expands it.
			if _, out := run(map[string]any{"command": []string{"echo", "$HOME", "*"}}); out != "$HOME *\n" {
				t.Fatalf("argv was expanded: %q", out)
			}
			run(map[string]any{"command": []string{"bash", "-lc", "cd sub/deeper"}, "workdir": a.dir})
			if _, out := run(map[string]any{"command": []string{"pwd"}}); out != filepath.Join(a.dir, "sub", "deeper")+"\n" {
				t.Fatalf("cd did not persist: %q", out)
			}
			if code, out := run(map[string]any{"command": []string{"sleep", "5"}, "timeout_ms": 300}); code != "124" || !strings.HasPrefix(out, "command timed out after ") {
				t.Fatalf("timeout: %s %q", code, out)
			}
			mustErr(t, a.cs, "shell", map[string]any{"command": []string{"no-such-program-here"}}, "BASH_START_FAILED")
			mustErr(t, a.cs, "shell", map[string]any{"command": []string{}}, "BASH_EMPTY_COMMAND")
			mustErr(t, a.cs, "shell", map[string]any{"command": []string{"pwd"}, "workdir": "nowhere"}, "INVALID_INPUT")

			patch := "*** Begin Patch\n*** Add File: p.txt\n+patched\n*** End Patch\n"
			if _, out := run(map[string]any{"command": []string{"apply_patch", patch}, "workdir": a.dir}); out != "Success. Updated the following files:\nA p.txt\n" {
				t.Fatalf("apply_patch through shell: %q", out)
			}
			if _, out := run(map[string]any{"command": []string{"bash", "-lc", "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: p.txt\n@@\n-patched\n+patched twice\n*** End Patch\nEOF\n"}, "workdir": a.dir}); out != "Success. Updated the following files:\nM p.txt\n" {
				t.Fatalf("heredoc apply_patch through shell: %q", out)
			}
			if b, _ := os.ReadFile(filepath.Join(a.dir, "p.txt")); string(b) != "patched twice\n" {
				t.Fatalf("p.txt %q", b)
			}
		})
	}
}
