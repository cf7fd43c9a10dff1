package blackbox

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var syscallTERM = syscall.SIGTERM

func syscallKill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// The language-server tests run gopls (pinned, built from the module proxy
// into the user cache directory by scripts/lsp-deps.sh, which `make deps`
// runs), clangd and pylsp with pyflakes (Debian's clangd, python3-pylsp,
// python3-pyflakes, which scripts/deps.sh installs). A missing one fails
// the test, saying how to install it.

// goplsVersion is the gopls the tests (and scripts/lsp-deps.sh) pin.
const goplsVersion = "v0.23.0"

// goplsBin returns the pinned gopls.
func goplsBin(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("BORIS_TEST_GOPLS"); p != "" {
		return p
	}
	cache, err := os.UserCacheDir()
	if err == nil {
		p := filepath.Join(cache, "boris-lsp", "gopls-"+goplsVersion, "gopls")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatalf("gopls %s is needed: run `make deps` (scripts/lsp-deps.sh builds it into %s), or set BORIS_TEST_GOPLS to a gopls binary", goplsVersion, filepath.Join(cache, "boris-lsp"))
	return ""
}

// needServers checks that clangd and pylsp (with pyflakes, its error
// checker) are installed.
func needServers(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("clangd"); err != nil {
		t.Fatal("clangd is needed: run `make deps`, or apt-get install clangd")
	}
	pylsp, err := exec.LookPath("pylsp")
	if err != nil {
		t.Fatal("pylsp is needed: run `make deps`, or apt-get install python3-pylsp python3-pyflakes")
	}
	// pylsp reports errors through pyflakes, in the interpreter of its
	// script.
	f, err := os.Open(pylsp)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	interp := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "#!"))
	if len(interp) > 0 {
		if out, err := exec.Command(interp[0], append(interp[1:], "-c", "import pyflakes")...).CombinedOutput(); err != nil {
			t.Fatalf("pyflakes is needed for pylsp's errors: run `make deps`, or apt-get install python3-pyflakes (%s)", out)
		}
	}
}

// lspArgs names the servers the tests use (pylsp even where pyright is
// installed: the answers are pinned).
func lspArgs(t testing.TB, extra ...string) []string {
	t.Helper()
	needServers(t)
	return append([]string{"--lsp", "go=" + goplsBin(t), "--lsp", "c=clangd", "--lsp", "python=pylsp"}, extra...)
}

// copyLSPFixtures copies testdata/lsp's projects (go, c, python) into dir;
// *.in files lose the suffix and get @DIR@ replaced by their directory.
func copyLSPFixtures(t testing.TB, dir string) {
	t.Helper()
	src := filepath.Join("testdata", "lsp")
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(dir, rel)
		if fi.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if strings.HasSuffix(p, ".golden") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(dst, ".in") {
			dst = strings.TrimSuffix(dst, ".in")
			data = []byte(strings.ReplaceAll(string(data), "@DIR@", filepath.Dir(dst)))
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// lspCall asks the lsp tool (LSP in --anthropic-compat).
func lspCall(t *testing.T, cs *mcp.ClientSession, tool, op, file string, line, char int, query string) (string, bool) {
	t.Helper()
	args := map[string]any{"operation": op, "filePath": file, "line": line, "character": char}
	if query != "" {
		args["query"] = query
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", tool, err)
	}
	validated(t, cs, tool, res)
	return resultText(res), res.IsError
}

// indexingNote is the line an answer ends with while its server is still
// indexing: whether a server is busy at a given call is the machine's
// speed, not boris's answer, so the golden script leaves it out.
var indexingNote = regexp.MustCompile(`(?m)^\(\S+ is still indexing — .* — so this answer may be incomplete\)\n`)

// lspScriptFiles are the files the golden script asks about that exist.
func lspScriptFiles() []string {
	var files []string
	for _, op := range lspScript {
		if op.File == "" || strings.Contains(op.File, "missing") {
			continue
		}
		if _, err := os.Stat(filepath.Join("testdata", "lsp", op.File)); err == nil {
			files = append(files, op.File)
		}
	}
	return files
}

// settle asks until the server of file has finished indexing (no note
// saying it is still at it), so answers are complete and stable.
func settle(t *testing.T, cs *mcp.ClientSession, tool, file string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		text, isErr := lspCall(t, cs, tool, "documentSymbol", file, 1, 1, "")
		if !isErr && !strings.Contains(text, "still indexing") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server of %s did not settle: %s", file, text)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// lspOp is one call of the golden script.
type lspOp struct {
	Op        string `json:"op"`
	File      string `json:"file"`
	Line      int    `json:"line,omitempty"`
	Character int    `json:"character,omitempty"`
	Query     string `json:"query,omitempty"`
}

var lspScript = []lspOp{
	// Go: a module of three files.
	{"goToDefinition", "go/total.go", 14, 9, ""},
	{"findReferences", "go/total.go", 4, 6, ""},
	{"hover", "go/total.go", 4, 6, ""},
	{"documentSymbol", "go/shapes.go", 0, 0, ""},
	{"workspaceSymbol", "go/shapes.go", 0, 0, "Describe"},
	{"goToImplementation", "go/shapes.go", 8, 2, ""},
	{"prepareCallHierarchy", "go/total.go", 4, 6, ""},
	{"incomingCalls", "go/total.go", 4, 6, ""},
	{"outgoingCalls", "go/total.go", 13, 6, ""},
	{"diagnostics", "go/total.go", 0, 0, ""},
	// C (and a C++ corner) with compile_commands.json.
	{"goToDefinition", "c/main.c", 7, 7, ""},
	{"findReferences", "c/shapes.c", 9, 8, ""},
	{"hover", "c/shapes.c", 9, 8, ""},
	{"documentSymbol", "c/shapes.c", 0, 0, ""},
	{"workspaceSymbol", "c/shapes.c", 0, 0, "square_area"},
	{"goToImplementation", "c/shape.cpp", 3, 17, ""},
	{"prepareCallHierarchy", "c/shapes.c", 9, 8, ""},
	{"incomingCalls", "c/shapes.c", 4, 8, ""},
	{"outgoingCalls", "c/shapes.c", 9, 8, ""},
	{"diagnostics", "c/main.c", 0, 0, ""},
	// Python: a package.
	{"goToDefinition", "python/shapes/total.py", 6, 24, ""},
	{"findReferences", "python/shapes/base.py", 9, 9, ""},
	{"hover", "python/shapes/total.py", 6, 5, ""},
	{"documentSymbol", "python/shapes/base.py", 0, 0, ""},
	{"workspaceSymbol", "python/shapes/base.py", 0, 0, "area"},
	{"goToImplementation", "python/shapes/base.py", 9, 9, ""},
	{"prepareCallHierarchy", "python/shapes/total.py", 6, 5, ""},
	{"incomingCalls", "python/shapes/total.py", 6, 5, ""},
	{"outgoingCalls", "python/shapes/total.py", 14, 5, ""},
	{"diagnostics", "python/shapes/total.py", 0, 0, ""},
	// Mistakes.
	{"hover", "go/total.go", 99, 1, ""},
	{"hover", "go/total.go", 4, 80, ""},
	{"goToDefinition", "go/total.go", 0, 0, ""},
	{"rename", "go/total.go", 4, 6, ""},
	{"hover", "go/missing.go", 1, 1, ""},
}

// TestLSPGolden: every operation on a Go module, a C project and a Python
// package, through the binary over stdio and boris in-process over HTTP
// (handshake era), and in Claude's dialect (LSP); the answers are pinned
// in testdata/lsp/answers.golden (-update rewrites it).
func TestLSPGolden(t *testing.T) {
	goldenPath := filepath.Join("testdata", "lsp", "answers.golden")
	type run struct {
		name string
		tool string
		dir  string
		cs   *mcp.ClientSession
	}
	args := lspArgs(t)
	stdioDir := tempDir(t)
	cs, cmd, logs := connectStdio(t, stdioDir, args...)
	t.Cleanup(func() { cs.Close(); _ = cmd.Wait() })
	p := startInProcess(t, append(args, "--anthropic-compat")...)
	runs := []run{
		{"stdio", "lsp", stdioDir, cs},
		{"http/compat", "LSP", p.dir, connectHTTPAt(t, p.url, "", handshakeEra, nil)},
	}
	for i, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			copyLSPFixtures(t, r.dir)
			// Every file the script asks about is opened and settled
			// first: a server that indexes or lints a file when it is
			// opened (pylsp's "lint: pyflakes") would otherwise be busy
			// at the script's first question about it, or not, as the
			// machine's speed decides.
			settled := map[string]bool{}
			for _, f := range append([]string{"go/total.go", "c/shapes.c", "python/shapes/total.py"}, lspScriptFiles()...) {
				if !settled[f] {
					settled[f] = true
					settle(t, r.cs, r.tool, f)
				}
			}
			var b strings.Builder
			for j, op := range lspScript {
				label, _ := json.Marshal(op)
				text, isErr := lspCall(t, r.cs, r.tool, op.Op, op.File, op.Line, op.Character, op.Query)
				status := "ok"
				if isErr {
					status = "error"
				}
				fmt.Fprintf(&b, "=== %d %s\n%s\n%s\n", j+1, label, status, indexingNote.ReplaceAllString(strings.ReplaceAll(text, r.dir, "$DIR"), ""))
			}
			got := b.String()
			if *update && i == 0 {
				if err := os.WriteFile(goldenPath, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(goldenPath)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Fatalf("%s\nlog:\n%s", firstDifference(string(want), got), logs)
			}
		})
	}
}

// descendants lists the processes below pid with their command lines.
func descendants(pid int) map[int]string {
	parent := map[int]int{}
	cmdline := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		parent[p] = pp
		c, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		cmdline[p] = strings.ReplaceAll(strings.TrimRight(string(c), "\x00"), "\x00", " ")
	}
	out := map[int]string{}
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out[p] = cmdline[p]
				break
			}
		}
	}
	return out
}

// languageServers returns the language servers (and their helpers) running
// below pid.
func languageServers(pid int) map[int]string {
	out := map[int]string{}
	for p, c := range descendants(pid) {
		if strings.Contains(c, "gopls") || strings.Contains(c, "clangd") || strings.Contains(c, "pylsp") {
			out[p] = c
		}
	}
	return out
}

// waitServers polls until n language servers run below pid.
func waitServers(t *testing.T, pid, n int) map[int]string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := languageServers(pid)
		if len(s) >= n {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d language servers below %d, want %d: %v", len(s), pid, n, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// contents returns a result's text blocks.
func contents(t *testing.T, res *mcp.CallToolResult) []string {
	t.Helper()
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return out
}

// edit makes an edit call and returns its text blocks (the answer, then
// the diagnostics block when there is one).
func edit(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) []string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s %v failed: %s", tool, args, resultText(res))
	}
	blocks := contents(t, res)
	if data := validated(t, cs, tool, res); data != nil {
		// The data says what the text's diagnostics block says.
		var d struct {
			New []struct {
				Message string `json:"message"`
			} `json:"new_diagnostics"`
		}
		if err := json.Unmarshal(data, &d); err != nil {
			t.Fatal(err)
		}
		introduced := len(blocks) > 1 && strings.Contains(blocks[1], "introduced")
		if introduced != (len(d.New) > 0) {
			t.Fatalf("%s: text says new errors %v, data has %d: %s", tool, introduced, len(d.New), data)
		}
		for _, n := range d.New {
			// The text puts a message on one line; its first line is
			// there as the server wrote it.
			if first, _, _ := strings.Cut(n.Message, "\n"); !strings.Contains(blocks[1], first) {
				t.Fatalf("%s: data's error %q is not in the text:\n%s", tool, n.Message, blocks[1])
			}
		}
	}
	return blocks
}

// validated checks a result's structuredContent against its tool's output
// schema, and returns it as JSON (nil when the tool declares none).
func validated(t *testing.T, cs *mcp.ClientSession, tool string, res *mcp.CallToolResult) json.RawMessage {
	t.Helper()
	rs := schemasOf(t, cs)[tool]
	if rs == nil {
		if res.StructuredContent != nil {
			t.Fatalf("%s: structuredContent without an output schema", tool)
		}
		return nil
	}
	if err := rs.Validate(res.StructuredContent); err != nil {
		t.Fatalf("%s: structuredContent does not validate: %v\n%s", tool, err, mustJSON(t, res.StructuredContent))
	}
	return json.RawMessage(mustJSON(t, res.StructuredContent))
}

// wantDiag checks an edit's answer: one block (no new errors) when want is
// empty, else a second block holding each of want.
func wantDiag(t *testing.T, blocks []string, want ...string) {
	t.Helper()
	if len(want) == 0 {
		if len(blocks) != 1 {
			t.Fatalf("an edit that introduced no error got a diagnostics block: %q", blocks)
		}
		return
	}
	if len(blocks) != 2 {
		t.Fatalf("want the answer and a diagnostics block holding %q, got %q", want, blocks)
	}
	for _, w := range want {
		if !strings.Contains(blocks[1], w) {
			t.Fatalf("diagnostics block lacks %q:\n%s", w, blocks[1])
		}
	}
}

// TestLSPEditDiagnostics: an edit that breaks Go, C or Python code gets the
// compiler's (or pyflakes') error in its own answer, and the edit that
// fixes it gets nothing more than its usual answer — in boris's dialect
// (str_replace, create_file, apply_patch over stdio), Claude's
// (str_replace_editor's str_replace, insert, create and undo_edit over
// HTTP) and OpenAI's (apply_patch over stdio).
func TestLSPEditDiagnostics(t *testing.T) {
	args := lspArgs(t, "--diagnostics-wait=10s")
	t.Run("boris", func(t *testing.T) {
		dir := tempDir(t)
		copyLSPFixtures(t, dir)
		cs, cmd, _ := connectStdio(t, dir, args...)
		t.Cleanup(func() { cs.Close(); _ = cmd.Wait() })
		for _, c := range []struct{ file, old, bad, msg string }{
			{"go/total.go", "sum += s.Area()", "sum += s.Area() + undefinedThing", "undefined: undefinedThing"},
			{"c/shapes.c", "sum += square_area(&list[i]);", "sum += square_area(&list[i]) + nosuch;", "Use of undeclared identifier 'nosuch'"},
			{"python/shapes/total.py", "result += s.area()", "result += s.area() + nosuch", "undefined name 'nosuch'"},
		} {
			mustOK(t, cs, "view", map[string]any{"path": c.file})
			blocks := edit(t, cs, "str_replace", map[string]any{"path": c.file, "old_str": c.old, "new_str": c.bad})
			wantDiag(t, blocks, "This edit introduced 1 error", c.file+":", ": error: "+c.msg, strings.TrimSpace(c.bad))
			if !strings.HasPrefix(blocks[0], "The file "+filepath.Join(dir, c.file)+" has been edited.") {
				t.Fatalf("the edit's own answer changed: %q", blocks[0])
			}
			wantDiag(t, edit(t, cs, "str_replace", map[string]any{"path": c.file, "old_str": c.bad, "new_str": c.old}))
			// An edit elsewhere in a file that still has its error does not
			// report it again, though its line moved.
			wantDiag(t, edit(t, cs, "str_replace", map[string]any{"path": c.file, "old_str": c.old, "new_str": c.bad}), c.msg)
			data, _ := os.ReadFile(filepath.Join(dir, c.file))
			first, _, _ := strings.Cut(string(data), "\n")
			wantDiag(t, edit(t, cs, "str_replace", map[string]any{"path": c.file, "old_str": first + "\n", "new_str": first + "\n\n\n"}))
			wantDiag(t, edit(t, cs, "str_replace", map[string]any{"path": c.file, "old_str": c.bad, "new_str": c.old}))
		}
		wantDiag(t, edit(t, cs, "create_file", map[string]any{"path": "go/broken.go", "content": "package shapes\n\nfunc Broken() int { return \"no\" }\n"}),
			"go/broken.go:3:", "cannot use \"no\"")
		wantDiag(t, edit(t, cs, "create_file", map[string]any{"path": "notes.txt", "content": "no server here\n"}))
		wantDiag(t, edit(t, cs, "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: python/shapes/base.py\n@@ class Square(Shape):\n-        return self.side * self.side\n+        return self.side * sidee\n*** End Patch\n"}),
			"python/shapes/base.py:", "undefined name 'sidee'")
	})
	t.Run("claude", func(t *testing.T) {
		p := startInProcess(t, append(args, "--anthropic-compat")...)
		copyLSPFixtures(t, p.dir)
		cs := connectHTTPAt(t, p.url, "", handshakeEra, nil)
		file := filepath.Join(p.dir, "go/total.go")
		mustOK(t, cs, "str_replace_editor", map[string]any{"command": "view", "path": file})
		blocks := edit(t, cs, "str_replace_editor", map[string]any{"command": "str_replace", "path": file, "old_str": "sum += s.Area()", "new_str": "sum += s.Area() + undefinedThing"})
		wantDiag(t, blocks, "<new-diagnostics>The following new diagnostic issues were detected:\n\ngo/total.go:\n  ✘ [Line 7:21] undefined: undefinedThing [UndeclaredName] (compiler)\n    sum += s.Area() + undefinedThing\n</new-diagnostics>")
		if !strings.HasPrefix(blocks[0], "The file "+file+" has been edited. Here's the result of running `cat -n` on a snippet of "+file+":") {
			t.Fatalf("the reference's answer changed: %q", blocks[0])
		}
		wantDiag(t, edit(t, cs, "str_replace_editor", map[string]any{"command": "undo_edit", "path": file}))
		wantDiag(t, edit(t, cs, "str_replace_editor", map[string]any{"command": "insert", "path": file, "insert_line": 9, "new_str": "\treturn nope"}), "undefined: nope")
		wantDiag(t, edit(t, cs, "str_replace_editor", map[string]any{"command": "undo_edit", "path": file}))
		wantDiag(t, edit(t, cs, "str_replace_editor", map[string]any{"command": "create", "path": filepath.Join(p.dir, "python/shapes/extra.py"), "file_text": "def f():\n    return missing_name\n"}),
			"python/shapes/extra.py:\n  ✘ [Line 2:12] undefined name 'missing_name' (pyflakes)")
	})
	t.Run("openai", func(t *testing.T) {
		dir := tempDir(t)
		copyLSPFixtures(t, dir)
		cs, cmd, _ := connectStdio(t, dir, append(args, "--openai-compat")...)
		t.Cleanup(func() { cs.Close(); _ = cmd.Wait() })
		blocks := edit(t, cs, "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: c/main.c\n@@\n-\tputs(describe(list, 2));\n+\tputs(describe(list));\n*** End Patch\n"})
		wantDiag(t, blocks, "c/main.c:7:20: error: Too few arguments to function call, expected 2, have 1; c/shapes.h:10:13: note: 'describe' declared here [clang typecheck_call_too_few_args]")
		if blocks[0] != "Success. Updated the following files:\nM c/main.c\n" {
			t.Fatalf("Codex's answer changed: %q", blocks[0])
		}
	})
}

// TestLSPSeesCommandChanges: what commands do to the files — sed -i on an
// open file and on one the server never had opened, a new file, a removed
// file — is seen by the next lsp call.
func TestLSPSeesCommandChanges(t *testing.T) {
	dir := tempDir(t)
	copyLSPFixtures(t, dir)
	cs, cmd, _ := connectStdio(t, dir, lspArgs(t)...)
	t.Cleanup(func() { cs.Close(); _ = cmd.Wait() })
	if got, _ := lspCall(t, cs, "lsp", "goToDefinition", "go/total.go", 14, 9, ""); !strings.Contains(got, "go/format.go:6:6: func format(v float64) string {") {
		t.Fatalf("definition: %s", got)
	}
	// total.go is open in gopls now; format.go is not.
	mustOK(t, cs, "bash", map[string]any{"command": "sed -i 's/format(/render(/' go/total.go go/format.go"})
	got, _ := lspCall(t, cs, "lsp", "goToDefinition", "go/total.go", 14, 9, "")
	if !strings.Contains(got, "Definition of render:\ngo/format.go:6:6: func render(v float64) string {") {
		t.Fatalf("after sed -i: %s", got)
	}
	mustOK(t, cs, "bash", map[string]any{"command": "mkdir -p go/more && printf 'package shapes\\n\\nfunc Twice() float64 { return 2 * Total() }\\n' > go/extra.go"})
	got, _ = lspCall(t, cs, "lsp", "findReferences", "go/total.go", 4, 6, "")
	if !strings.Contains(got, "3 references to Total in 2 files") || !strings.Contains(got, "go/extra.go (1):") {
		t.Fatalf("after a new file: %s", got)
	}
	mustOK(t, cs, "bash", map[string]any{"command": "rm go/extra.go"})
	got, _ = lspCall(t, cs, "lsp", "findReferences", "go/total.go", 4, 6, "")
	if !strings.Contains(got, "2 references to Total in 1 file") {
		t.Fatalf("after rm: %s", got)
	}
	lspCall(t, cs, "lsp", "documentSymbol", "python/shapes/total.py", 0, 0, "")
	mustOK(t, cs, "bash", map[string]any{"command": "sed -i 's/def describe/def summary/' python/shapes/total.py"})
	if got, _ := lspCall(t, cs, "lsp", "documentSymbol", "python/shapes/total.py", 0, 0, ""); !strings.Contains(got, "function summary") || strings.Contains(got, "describe") {
		t.Fatalf("pylsp after sed -i: %s", got)
	}
}

// TestLSPRestartsAKilledServer: a server killed between calls is started
// again by the next call, which says so and answers.
func TestLSPRestartsAKilledServer(t *testing.T) {
	dir := tempDir(t)
	copyLSPFixtures(t, dir)
	cs, cmd, logs := connectStdio(t, dir, lspArgs(t)...)
	t.Cleanup(func() { cs.Close(); _ = cmd.Wait() })
	if got, isErr := lspCall(t, cs, "lsp", "hover", "go/total.go", 4, 6, ""); isErr || !strings.Contains(got, "Total sums the areas") {
		t.Fatalf("hover: %s", got)
	}
	servers := waitServers(t, cmd.Process.Pid, 1)
	for pid, c := range servers {
		if strings.Contains(c, "gopls") {
			if err := syscallKill(pid); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, isErr := lspCall(t, cs, "lsp", "hover", "go/total.go", 4, 6, "")
	if isErr || !strings.Contains(got, "note: the go language server (gopls) had stopped (killed by signal 9) and was restarted for this call") || !strings.Contains(got, "Total sums the areas") {
		t.Fatalf("after the kill: %s\n%s", got, logs)
	}
}

// TestLSPNoServer: without a server for a language, the call says which
// servers are configured and how to add one; a server that cannot start
// says why, with the end of its stderr; files of no known language are
// refused plainly, and editing them costs no wait.
func TestLSPNoServer(t *testing.T) {
	dir := tempDir(t)
	copyLSPFixtures(t, dir)
	cmd := exec.Command(binPath, "--transport=stdio", "--workdir="+dir, "--lsp", "python=/bin/sh -c 'echo cannot read settings.toml >&2; exit 3'")
	cmd.Env = append(os.Environ(), "PATH="+t.TempDir())
	cs, _ := connectCmd(t, cmd, defaultClient, nil)
	t.Cleanup(func() { cs.Close(); _ = cmd.Wait() })
	got := mustErr(t, cs, "lsp", map[string]any{"operation": "hover", "filePath": "go/total.go", "line": 4, "character": 6}, "LSP_NO_SERVER")
	for _, w := range []string{"no go language server for", "gopls not found on PATH", "go install golang.org/x/tools/gopls@latest", "--lsp go=COMMAND", "c: clangd not found", "python: /bin/sh -c echo cannot read settings.toml >&2; exit 3 (--lsp)"} {
		if !strings.Contains(got, w) {
			t.Errorf("LSP_NO_SERVER lacks %q: %s", w, got)
		}
	}
	got = mustErr(t, cs, "lsp", map[string]any{"operation": "hover", "filePath": "python/shapes/total.py", "line": 6, "character": 5}, "LSP_START_FAILED")
	if !strings.Contains(got, "exit status 3") || !strings.Contains(got, "cannot read settings.toml") {
		t.Errorf("LSP_START_FAILED lacks the exit and the stderr: %s", got)
	}
	mustOK(t, cs, "create_file", map[string]any{"path": "a.txt", "content": "x\n"})
	got = mustErr(t, cs, "lsp", map[string]any{"operation": "hover", "filePath": "a.txt", "line": 1, "character": 1}, "LSP_NO_SERVER")
	if !strings.Contains(got, "no language server handles") {
		t.Errorf("for a .txt: %s", got)
	}
	// An edit of a Go file without gopls: no server, no block, no wait.
	mustOK(t, cs, "view", map[string]any{"path": "go/total.go"})
	start := time.Now()
	wantDiag(t, edit(t, cs, "str_replace", map[string]any{"path": "go/total.go", "old_str": "sum += s.Area()", "new_str": "sum += s.Area() + undefinedThing"}))
	if d := time.Since(start); d > time.Second {
		t.Errorf("an edit without a server took %v", d)
	}
}

// TestLSPServersEndWithBoris: language servers are ended when boris's stdio
// ends, when the last HTTP session is deleted, and on SIGTERM.
func TestLSPServersEndWithBoris(t *testing.T) {
	args := lspArgs(t)
	ask := func(t *testing.T, cs *mcp.ClientSession) {
		for _, q := range []struct {
			file      string
			line, col int
		}{{"go/total.go", 4, 6}, {"c/shapes.c", 9, 8}, {"python/shapes/total.py", 6, 5}} {
			if got, isErr := lspCall(t, cs, "lsp", "hover", q.file, q.line, q.col, ""); isErr {
				t.Fatalf("hover %s: %s", q.file, got)
			}
		}
	}
	pidsOf := func(m map[int]string) []int {
		var out []int
		for p := range m {
			out = append(out, p)
		}
		return out
	}
	t.Run("stdio EOF", func(t *testing.T) {
		dir := tempDir(t)
		copyLSPFixtures(t, dir)
		cs, cmd, _ := connectStdio(t, dir, args...)
		ask(t, cs)
		servers := waitServers(t, cmd.Process.Pid, 3)
		_ = cs.Close()
		waitGone(t, 10*time.Second, pidsOf(servers)...)
	})
	t.Run("HTTP DELETE then SIGTERM", func(t *testing.T) {
		dir := tempDir(t)
		copyLSPFixtures(t, dir)
		cmd := exec.Command(binPath, append([]string{"--port=0", "--workdir=" + dir, "--log-level=debug"}, args...)...)
		url, logs := serveBinary(t, cmd)
		cs := connectHTTPAt(t, url, "", handshakeEra, nil)
		ask(t, cs)
		servers := waitServers(t, cmd.Process.Pid, 3)
		_ = cs.Close() // DELETE: the only session ends
		waitGone(t, 10*time.Second, pidsOf(servers)...)
		cs = connectHTTPAt(t, url, "", handshakeEra, nil)
		ask(t, cs)
		servers = waitServers(t, cmd.Process.Pid, 3)
		if err := cmd.Process.Signal(syscallTERM); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("boris did not exit on SIGTERM\n%s", logs)
		}
		waitGone(t, time.Second, pidsOf(servers)...)
	})
}

// TestLSPSandboxConfinesServers: with --sandbox on a language server runs
// under the same Landlock domain as commands: the probe server cannot
// write outside the workspace (and can without the sandbox, so the check
// is the sandbox's). gopls works under it.
func TestLSPSandboxConfinesServers(t *testing.T) {
	probe, err := filepath.Abs(filepath.Join(moduleRoot, "internal", "lsp", "testdata", "lspprobe", "probe.py"))
	if err != nil {
		t.Fatal(err)
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed: run `make deps`, or apt-get install python3")
	}
	for _, sandbox := range []string{"off", "on"} {
		t.Run("sandbox "+sandbox, func(t *testing.T) {
			l := newSBLayout(t)
			target := filepath.Join(l.outside, "probe")
			writeFile(t, filepath.Join(l.ws, "x.rs"), "fn main() {}\n")
			cs, logs := startSandboxed(t, l, nil, "--sandbox="+sandbox, "--lsp", "rust="+python+" "+probe+" "+target)
			got, isErr := lspCall(t, cs, "lsp", "hover", "x.rs", 1, 1, "")
			if isErr {
				t.Fatalf("hover: %s\n%s", got, logs)
			}
			_, statErr := os.Stat(target)
			if sandbox == "on" {
				if !strings.Contains(got, "could not write "+target+": Permission denied") || statErr == nil {
					t.Fatalf("the sandboxed server wrote outside the workspace: %s", got)
				}
			} else if !strings.Contains(got, "wrote "+target) || statErr != nil {
				t.Fatalf("the control run could not write (so the check proves nothing): %s", got)
			}
		})
	}
	t.Run("gopls under the sandbox", func(t *testing.T) {
		l := newSBLayout(t)
		copyLSPFixtures(t, l.ws)
		cs, logs := startSandboxed(t, l, nil, append(lspArgs(t), "--sandbox=on")...)
		if got, isErr := lspCall(t, cs, "lsp", "goToDefinition", "go/total.go", 14, 9, ""); isErr || !strings.Contains(got, "go/format.go:6:6") {
			t.Fatalf("gopls sandboxed: %s\n%s", got, logs)
		}
	})
}

// TestLSPScope: the scope rules apply to every path in and out: a denied
// file cannot be asked about, and locations in one are counted, not shown.
func TestLSPScope(t *testing.T) {
	dir := tempDir(t)
	copyLSPFixtures(t, dir)
	cs, cmd, _ := connectStdio(t, dir, append(lspArgs(t), "--deny-dir=**/format.go")...)
	t.Cleanup(func() { cs.Close(); _ = cmd.Wait() })
	got, isErr := lspCall(t, cs, "lsp", "goToDefinition", "go/total.go", 14, 9, "")
	if isErr || !strings.Contains(got, "No definition found for format") || !strings.Contains(got, "(1 result in paths outside the allowed scope not shown)") || strings.Contains(got, "format.go") {
		t.Fatalf("definition into a denied file: %s", got)
	}
	got, _ = lspCall(t, cs, "lsp", "outgoingCalls", "go/total.go", 13, 6, "")
	if !strings.Contains(got, "function Total") || strings.Contains(got, "format.go") || !strings.Contains(got, "not shown") {
		t.Fatalf("outgoing calls into a denied file: %s", got)
	}
	mustErr(t, cs, "lsp", map[string]any{"operation": "documentSymbol", "filePath": "go/format.go", "line": 1, "character": 1}, "ACCESS_DENIED")
}

// TestLSPLateDiagnostics: an error an edit introduced that the server
// reports only after the edit's answer went out is named pending in that
// answer and reaches the agent with its next call, once, and the lsp
// tool's diagnostics list it — in boris's dialect over stdio at the
// current revision, and in Claude's over HTTP at the handshake era. The
// server is Debian's pylsp behind a proxy (internal/lsp/testdata/lspdelay)
// that holds what pylsp publishes after a change until boris next asks it
// anything: the report is late by construction, not by timing.
func TestLSPLateDiagnostics(t *testing.T) {
	needServers(t)
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed: run `make deps`, or apt-get install python3")
	}
	proxy, err := filepath.Abs(filepath.Join(moduleRoot, "internal", "lsp", "testdata", "lspdelay", "delay.py"))
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--lsp", "python=" + python + " " + proxy + " pylsp"}
	const file, old, bad = "python/shapes/total.py", "result += s.area()", "result += s.area() + nosuch"
	// late checks the data of an answer that ends with what the edit
	// left pending: the file, and its error.
	late := func(t *testing.T, cs *mcp.ClientSession, tool string, res *mcp.CallToolResult, path string) {
		t.Helper()
		data := validated(t, cs, tool, res)
		if data == nil {
			return
		}
		var d struct {
			Late *struct {
				Files  []string `json:"files"`
				Errors []struct {
					Message string `json:"message"`
					Line    int    `json:"line"`
				} `json:"errors"`
			} `json:"late_diagnostics"`
		}
		if err := json.Unmarshal(data, &d); err != nil {
			t.Fatal(err)
		}
		if d.Late == nil || len(d.Late.Files) != 1 || d.Late.Files[0] != path || len(d.Late.Errors) != 1 || d.Late.Errors[0].Message != "undefined name 'nosuch'" || d.Late.Errors[0].Line != 10 {
			t.Fatalf("late_diagnostics: %s", data)
		}
	}
	t.Run("boris", func(t *testing.T) {
		dir := tempDir(t)
		copyLSPFixtures(t, dir)
		cs, cmd, logs := connectStdioAt(t, dir, statelessEra, args...)
		t.Cleanup(func() { cs.Close(); _ = cmd.Wait() })
		mustOK(t, cs, "view", map[string]any{"path": file})
		// The server's report on the file as it is: the edit's baseline.
		if got, isErr := lspCall(t, cs, "lsp", "diagnostics", file, 0, 0, ""); isErr || !strings.Contains(got, "pylsp reports no problems in "+file) {
			t.Fatalf("diagnostics before the edit: %s\n%s", got, logs)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "str_replace", Arguments: map[string]any{"path": file, "old_str": old, "new_str": bad}})
		if err != nil || res.IsError {
			t.Fatalf("str_replace: %v %s", err, resultText(res))
		}
		blocks := contents(t, res)
		want := "Diagnostics: pylsp has not reported on " + file + " yet; the errors this edit introduced will come with your next call (or ask the lsp tool's diagnostics operation).\n"
		if len(blocks) != 2 || blocks[1] != want {
			t.Fatalf("the edit's answer does not say its diagnostics are pending: %q", blocks)
		}
		var d struct {
			New     []any    `json:"new_diagnostics"`
			Pending []string `json:"diagnostics_pending"`
		}
		if err := json.Unmarshal(validated(t, cs, "str_replace", res), &d); err != nil || len(d.New) != 0 || len(d.Pending) != 1 || d.Pending[0] != filepath.Join(dir, file) {
			t.Fatalf("the data does not say so: %+v %v", d, err)
		}
		// The next call asks the server about another file: the report
		// comes before its answer, and ends it.
		res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "lsp", Arguments: map[string]any{"operation": "documentSymbol", "filePath": "python/shapes/base.py"}})
		if err != nil || res.IsError {
			t.Fatalf("lsp: %v %s", err, resultText(res))
		}
		blocks = contents(t, res)
		want = "An earlier edit of " + file + " introduced 1 error (pylsp reported after its answer):\n" +
			file + ":10:30: error: undefined name 'nosuch' [pyflakes]\n" +
			"    10\t        " + bad + "\n"
		if len(blocks) != 2 || !strings.HasPrefix(blocks[0], "Outline of python/shapes/base.py") || blocks[1] != want {
			t.Fatalf("the next call's answer does not end with the late error: %q", blocks)
		}
		late(t, cs, "lsp", res, filepath.Join(dir, file))
		// Once: the next answers do not repeat it; the diagnostics
		// operation lists it.
		got, isErr := lspCall(t, cs, "lsp", "diagnostics", file, 0, 0, "")
		if isErr || !strings.Contains(got, "pylsp reports 1 error in "+file+":\n"+file+":10:30: error: undefined name 'nosuch'") || strings.Contains(got, "earlier edit") {
			t.Fatalf("diagnostics after the edit: %s", got)
		}
		if got := mustOK(t, cs, "view", map[string]any{"path": file}); strings.Contains(got, "earlier edit") {
			t.Fatalf("the late error was given twice: %s", got)
		}
	})
	t.Run("claude", func(t *testing.T) {
		p := startInProcess(t, append(args, "--anthropic-compat")...)
		copyLSPFixtures(t, p.dir)
		cs := connectHTTPAt(t, p.url, "", handshakeEra, nil)
		path := filepath.Join(p.dir, file)
		mustOK(t, cs, "str_replace_editor", map[string]any{"command": "view", "path": path})
		if got, isErr := lspCall(t, cs, "LSP", "diagnostics", path, 1, 1, ""); isErr || !strings.Contains(got, "pylsp reports no problems") {
			t.Fatalf("diagnostics before the edit: %s", got)
		}
		got := mustOK(t, cs, "str_replace_editor", map[string]any{"command": "str_replace", "path": path, "old_str": old, "new_str": bad})
		if !strings.HasSuffix(got, "Diagnostics: pylsp has not reported on "+file+" yet; the errors this edit introduced will come with your next call (or ask the LSP tool's diagnostics operation).\n") || strings.Contains(got, "nosuch'") {
			t.Fatalf("the edit's answer does not say its diagnostics are pending: %s", got)
		}
		got, isErr := lspCall(t, cs, "LSP", "documentSymbol", filepath.Join(p.dir, "python/shapes/base.py"), 1, 1, "")
		want := "<new-diagnostics>The following new diagnostic issues were detected:\n\n" + file + ":\n  ✘ [Line 10:30] undefined name 'nosuch' (pyflakes)\n    " + bad + "\n</new-diagnostics>\n"
		if isErr || !strings.HasSuffix(got, want) {
			t.Fatalf("the next call's answer does not end with the late error:\n%s", got)
		}
	})
}

// TestLSPSymbolLinesEndWithTheFile: a symbol whose range ends at the start
// of the line after it (pylsp's ranges end there; a function that is a
// whole 6-line file ends after its last newline) is "lines 1-6", not 1-7.
func TestLSPSymbolLinesEndWithTheFile(t *testing.T) {
	dir := tempDir(t)
	writeFile(t, filepath.Join(dir, "six.py"), "def six():\n    a = 1\n    b = 2\n    c = 3\n    d = 4\n    return a + b + c + d\n")
	cs, cmd, _ := connectStdio(t, dir, lspArgs(t)...)
	t.Cleanup(func() { cs.Close(); _ = cmd.Wait() })
	got, isErr := lspCall(t, cs, "lsp", "documentSymbol", "six.py", 0, 0, "")
	if isErr || !strings.Contains(got, "function six — lines 1-6\n") {
		t.Fatalf("the outline of a 6-line file: %q", got)
	}
}
