package blackbox

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/results"
	"github.com/boris-mcp/boris/internal/tool"
)

// The structured results are checked in the runs of the golden sessions:
// TestBorisGolden and TestCodexGolden (through runScriptGolden) and
// TestClaudeStructured call checkStructured on every answer, so every
// answer form and error kind of every tool is validated against its
// tool's outputSchema, decoded into the Go type a program would use, and
// compared with the text beside it — over stdio and HTTP, in both eras.

var resultsDump = flag.String("results-dump", "", "write each golden answer's structuredContent with its tool's outputSchema to this directory, one JSON file per answer, for other validators (scripts/validate-results.py)")

// dumpResults writes answers for other validators: {"tool", "isError",
// "schema", "instance"} per answer.
func dumpResults(t *testing.T, cs *mcp.ClientSession, name string, answers []scriptAnswer) {
	t.Helper()
	if *resultsDump == "" {
		return
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]any{}
	for _, tl := range res.Tools {
		schemas[tl.Name] = tl.OutputSchema
	}
	if err := os.MkdirAll(*resultsDump, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, ans := range answers {
		if ans.res.StructuredContent == nil {
			continue
		}
		rec := map[string]any{"tool": ans.op.Tool, "isError": ans.res.IsError, "schema": schemas[ans.op.Tool], "instance": ans.res.StructuredContent}
		if err := os.WriteFile(filepath.Join(*resultsDump, fmt.Sprintf("%s-%03d.json", name, i+1)), []byte(mustJSON(t, rec)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// schemasOf returns each listed tool's output schema, resolved for
// validation (nil for a tool that declares none).
func schemasOf(t *testing.T, cs *mcp.ClientSession) map[string]*jsonschema.Resolved {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*jsonschema.Resolved{}
	for _, tl := range res.Tools {
		out[tl.Name] = nil
		if tl.OutputSchema == nil {
			continue
		}
		raw, err := json.Marshal(tl.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatalf("%s: output schema does not decode: %v", tl.Name, err)
		}
		// MCP's handshake-era revisions require an object schema; so do
		// the TypeScript and Python SDKs' tool definitions.
		if s.Type != "object" {
			t.Fatalf("%s: output schema type %q, want object", tl.Name, s.Type)
		}
		if bytes.Contains(raw, []byte(`"$ref"`)) || bytes.Contains(raw, []byte(`"$schema"`)) {
			t.Fatalf("%s: output schema uses $ref or $schema, which draft-07 and 2020-12 validators read differently", tl.Name)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: output schema does not resolve: %v", tl.Name, err)
		}
		out[tl.Name] = rs
	}
	return out
}

// checkStructured checks every answer's structuredContent: present when
// its tool declares an output schema (absent otherwise), valid against that
// schema, decodable into the result type a Go program would use (no field
// unknown to it, none lost), and saying what the text says.
func checkStructured(t *testing.T, cs *mcp.ClientSession, answers []scriptAnswer) {
	t.Helper()
	schemas := schemasOf(t, cs)
	for i, ans := range answers {
		where := fmt.Sprintf("op %d %s %v", i+1, ans.op.Tool, ans.op.Args)
		rs, ok := schemas[ans.op.Tool]
		if !ok {
			t.Fatalf("%s: tool not listed", where)
		}
		sc := ans.res.StructuredContent
		if rs == nil {
			if sc != nil {
				t.Fatalf("%s: structuredContent without an output schema: %v", where, sc)
			}
			continue
		}
		if sc == nil {
			t.Fatalf("%s: no structuredContent (isError %v)", where, ans.res.IsError)
		}
		if err := rs.Validate(sc); err != nil {
			t.Fatalf("%s: structuredContent does not validate: %v\n%s", where, err, mustJSON(t, sc))
		}
		typed := typedResult(t, where, ans)
		agree(t, where, ans, typed)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// codexTools answer in Codex's exec shape.
var codexTools = map[string]bool{"shell": true, "exec_command": true, "write_stdin": true}

// typedResult decodes an answer's structuredContent into the type of
// package results a Go program would pick for it, refusing unknown fields,
// and checks that encoding it again gives the same JSON.
func typedResult(t *testing.T, where string, ans scriptAnswer) any {
	t.Helper()
	raw := []byte(mustJSON(t, ans.res.StructuredContent))
	var generic map[string]any
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatalf("%s: structuredContent is not an object: %s", where, raw)
	}
	var v any
	switch tool := ans.op.Tool; {
	case codexTools[tool]:
		v = &results.Exec{}
	case ans.res.IsError:
		v = &results.Error{}
	case tool == "bash" && generic["restarted"] != nil:
		v = &results.Restarted{}
	case tool == "bash" || tool == "task_input" || tool == "task_kill":
		v = &results.Run{}
	case tool == "task_output" && generic["tasks"] != nil:
		v = &results.TaskList{}
	case tool == "task_output":
		v = &results.Run{}
	case tool == "view":
		v = &results.View{}
	case tool == "str_replace":
		v = &results.Edit{}
	case tool == "create_file":
		v = &results.Create{}
	case tool == "apply_patch":
		v = &results.Patch{}
	case tool == "find" || tool == "Glob":
		v = &results.Find{}
	case tool == "grep":
		switch generic["mode"] {
		case results.ModeContent:
			v = &results.GrepContent{}
		case results.ModeCount:
			v = &results.GrepCounts{}
		default:
			v = &results.GrepFiles{}
		}
	case tool == "str_replace_editor":
		v = map[string]any{
			"view": &results.View{}, "str_replace": &results.Edit{}, "create": &results.Create{},
			"insert": &results.Insert{}, "undo_edit": &results.Undo{},
		}[fmt.Sprint(ans.op.Args["command"])]
	}
	if v == nil {
		t.Fatalf("%s: no result type for %s", where, raw)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: decoding into %T: %v\n%s", where, v, err, raw)
	}
	again, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(again, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(generic, back) {
		t.Fatalf("%s: %T loses or adds fields:\nserver %s\ntyped  %s", where, v, raw, again)
	}
	return v
}

var (
	exitLine     = regexp.MustCompile(`(?m)^exit_code: (-?\d+)$`)
	statusLine   = regexp.MustCompile(`(?m)^status: (\w+)$`)
	taskLine     = regexp.MustCompile(`(?m)^task_id: (\S+)$`)
	codexExit    = regexp.MustCompile(`(?m)^(?:Exit code: |Process exited with code )(-?\d+)$`)
	codexSession = regexp.MustCompile(`(?m)^Process running with session ID (\d+)$`)
)

// agree checks that the data says what the text beside it says.
func agree(t *testing.T, where string, ans scriptAnswer, typed any) {
	t.Helper()
	text := resultText(ans.res)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s: %s\ntext: %.600q", where, fmt.Sprintf(format, args...), text)
	}
	switch v := typed.(type) {
	case *results.Error:
		if !slicesContains(codes.All, codes.Code(v.Code)) {
			fail("unknown code %q", v.Code)
		}
		if !strings.HasPrefix(text, "["+v.Code+"] ") {
			fail("code %s, text says otherwise", v.Code)
		}
		// boris's own dialect words the error as its message; others
		// (Claude's sentences) word it their way.
		if ans.op.Tool != "str_replace_editor" && !strings.HasPrefix(text, "["+v.Code+"] "+v.Message) {
			fail("message %q is not the text's", v.Message)
		}
	case *results.Exec:
		if ans.res.IsError {
			if v.Output != text || v.ExitCode != nil || v.SessionID != nil {
				fail("error data %+v", v)
			}
			return
		}
		if !strings.Contains(text, "Output:\n"+v.Output) {
			fail("output %q is not the text's", v.Output)
		}
		switch m, s := codexExit.FindStringSubmatch(text), codexSession.FindStringSubmatch(text); {
		case m != nil:
			if v.ExitCode == nil || strconv.Itoa(*v.ExitCode) != m[1] || v.SessionID != nil {
				fail("exit code %v, text %s", v.ExitCode, m[1])
			}
		case s != nil:
			if v.SessionID == nil || strconv.Itoa(*v.SessionID) != s[1] || v.ExitCode != nil {
				fail("session id %v, text %s", v.SessionID, s[1])
			}
		default:
			fail("no exit code or session in the text")
		}
		if ans.op.Tool != "shell" {
			if v.ChunkID == "" || !strings.HasPrefix(text, "Chunk ID: "+v.ChunkID+"\n") || v.OriginalTokenCount == nil || !strings.Contains(text, fmt.Sprintf("\nOriginal token count: %d\n", *v.OriginalTokenCount)) {
				fail("chunk %q, tokens %v", v.ChunkID, v.OriginalTokenCount)
			}
		}
	case *results.Run:
		if m := exitLine.FindStringSubmatch(text); m != nil {
			if v.ExitCode == nil || strconv.Itoa(*v.ExitCode) != m[1] || v.Status != results.StatusCompleted {
				fail("exit code %v status %s, text %s", v.ExitCode, v.Status, m[1])
			}
		} else if v.ExitCode != nil {
			fail("exit code %d the text does not show", *v.ExitCode)
		}
		if m := statusLine.FindStringSubmatch(text); m != nil && m[1] != v.Status {
			fail("status %s, text %s", v.Status, m[1])
		}
		if m := taskLine.FindStringSubmatch(text); (m == nil) != (v.TaskID == "") || (m != nil && m[1] != v.TaskID) {
			fail("task_id %q", v.TaskID)
		}
		for name, out := range map[string]string{"stdout": v.Stdout, "stderr": v.Stderr} {
			if v.TTY && name == "stdout" {
				name = "output"
			}
			if out != "" && !strings.Contains(text, name+":\n"+out) {
				fail("%s %.80q is not the text's", name, out)
			}
		}
		if v.StdoutTruncated != strings.Contains(text, "[stdout truncated: ") || v.TimedOut != (strings.Contains(text, "timed out after") || strings.Contains(text, "killed: the task ran out of time")) {
			fail("truncated %v, timed out %v", v.StdoutTruncated, v.TimedOut)
		}
		if v.Screen != nil && !strings.HasSuffix(text, v.Screen.Text) {
			fail("screen %q", v.Screen.Text)
		}
	case *results.TaskList:
		if got := strings.Count(text, "\n"); v.Total != len(v.Tasks) || (v.Total > 0 && got != v.Total) {
			fail("%d tasks, total %d", len(v.Tasks), v.Total)
		}
		for _, tk := range v.Tasks {
			if !strings.Contains(text, tk.TaskID+"\t") {
				fail("task %s not in the text", tk.TaskID)
			}
		}
	case *results.View:
		agreeView(t, fail, text, v, ans)
	case *results.Edit:
		if !strings.Contains(text, "The file "+v.Path+" has been edited") {
			fail("path %s", v.Path)
		}
	case *results.Create:
		verb := "Overwrote"
		if v.Created {
			verb = "Created"
		}
		if ans.op.Tool == "create_file" && text != fmt.Sprintf("%s %s (%d bytes).", verb, v.Path, v.BytesWritten) {
			fail("%s %s %d", verb, v.Path, v.BytesWritten)
		}
	case *results.Patch:
		var b strings.Builder
		b.WriteString("Success. Updated the following files:\n")
		for _, g := range []struct {
			tag   string
			paths []string
		}{{"A", v.Added}, {"M", v.Modified}, {"D", v.Deleted}} {
			for _, p := range g.paths {
				b.WriteString(g.tag + " " + p + "\n")
			}
		}
		if text != b.String() {
			fail("files %+v", v)
		}
	case *results.Find:
		if len(v.Paths) > 0 && text != strings.Join(v.Paths, "\n") {
			fail("paths %q", v.Paths)
		}
		if len(v.Paths) == 0 && text != "No files found" {
			fail("no paths")
		}
	case *results.GrepFiles:
		agreeLines(t, fail, text, v.GrepPage, v.Files)
	case *results.GrepCounts:
		var lines []string
		for _, c := range v.Counts {
			lines = append(lines, fmt.Sprintf("%s:%d", c.Path, c.Count))
		}
		agreeLines(t, fail, text, v.GrepPage, lines)
	case *results.GrepContent:
		var lines []string
		numbers, _ := ans.op.Args["line_numbers"].(bool)
		if _, given := ans.op.Args["line_numbers"]; !given {
			numbers = true
		}
		for _, m := range v.Matches {
			sep := ":"
			if m.Context {
				sep = "-"
			}
			l := m.Path + sep
			if numbers {
				l += strconv.Itoa(m.Line) + sep
			}
			lines = append(lines, l+m.Text)
		}
		var shown []string
		for _, l := range strings.Split(text, "\n") {
			if l != "--" {
				shown = append(shown, l)
			}
		}
		page := v.GrepPage
		agreeLines(t, fail, strings.Join(shown, "\n"), page, lines)
	}
}

// agreeLines checks a grep page's entries against its text.
func agreeLines(t *testing.T, fail func(string, ...any), text string, pg results.GrepPage, lines []string) {
	t.Helper()
	body := text
	if pg.Skipped != "" {
		body, _, _ = strings.Cut(text, ": ")
	}
	switch {
	case len(lines) == 0:
		if pg.Total > 0 && !strings.HasPrefix(body, "No results at offset") || pg.Total == 0 && body != "No files found" && body != "No matches found" {
			fail("no entries, total %d", pg.Total)
		}
	case body != strings.Join(lines, "\n"):
		fail("entries %q", lines)
	}
}

// agreeView checks a view's data against its text (boris's numbered lines,
// or Claude's).
func agreeView(t *testing.T, fail func(string, ...any), text string, v *results.View, ans scriptAnswer) {
	t.Helper()
	switch v.Kind {
	case results.KindImage:
		if len(ans.res.Content) != 1 || v.MIMEType == "" || v.Size <= 0 {
			fail("image %+v", v)
		}
	case results.KindDirectory:
		for _, e := range v.Entries {
			if !strings.Contains(text, e.Path) {
				fail("entry %s not in the text", e.Path)
			}
		}
	case results.KindFile:
		if v.TotalLines == nil {
			fail("no total_lines")
		}
		if ans.op.Tool != "view" {
			return
		}
		// The text shows the lines start_line to end_line, numbered.
		if v.StartLine > 0 {
			first := string(tool.AppendLineNo(nil, v.StartLine))
			last := "\n" + string(tool.AppendLineNo(nil, v.EndLine))
			next := "\n" + string(tool.AppendLineNo(nil, v.EndLine+1))
			if !strings.HasPrefix(text, first) || (v.EndLine > v.StartLine && !strings.Contains(text, last)) || strings.Contains(text, next) {
				fail("lines %d-%d", v.StartLine, v.EndLine)
			}
		}
		if v.Truncated != strings.Contains(text, "[Showing lines") {
			fail("truncated %v", v.Truncated)
		}
		if strings.Contains(text, fmt.Sprintf(" of %d. Use view_range", *v.TotalLines)) != v.Truncated {
			fail("total_lines %d", *v.TotalLines)
		}
	}
}

func slicesContains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestClaudeStructured runs the Claude golden session with
// --structured-content on: the texts are byte for byte those of
// testdata/claude/session.golden, and every answer carries data valid
// against its tool's schema. Without the flag (auto) the Claude dialect
// declares no schema and answers with text only.
func TestClaudeStructured(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "claude", "session.json"))
	if err != nil {
		t.Fatal(err)
	}
	var claude goldenSpec
	if err := json.Unmarshal(raw, &claude); err != nil {
		t.Fatal(err)
	}
	spec := scriptSpec{Files: claude.Files}
	for _, op := range claude.Ops {
		spec.Ops = append(spec.Ops, scriptOp{Tool: "str_replace_editor", Args: op})
	}
	want, err := os.ReadFile(filepath.Join("testdata", "claude", "session.golden"))
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range agents(t, "--anthropic-compat", "--structured-content=on", "--diagnostics=off") {
		t.Run(a.name, func(t *testing.T) {
			answers := runScriptFiles(t, a, spec, false)
			if got := renderClaude(a.dir, answers); got != string(want) {
				t.Fatal(firstDifference(string(want), got))
			}
			checkStructured(t, a.cs, answers)
			if i == 0 {
				dumpResults(t, a.cs, "claude", answers)
			}
			for name, rs := range schemasOf(t, a.cs) {
				if rs == nil {
					t.Errorf("%s declares no output schema with --structured-content on", name)
				}
			}
		})
	}
	for _, a := range agents(t, "--anthropic-compat")[:2] {
		t.Run("auto/"+a.name, func(t *testing.T) {
			for name, rs := range schemasOf(t, a.cs) {
				if rs != nil {
					t.Errorf("%s declares an output schema in --anthropic-compat", name)
				}
			}
			res, err := a.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo hi"}})
			if err != nil || res.StructuredContent != nil || resultText(res) != "exit_code: 0\nstdout:\nhi\n" {
				t.Fatalf("%v %v %q", err, res.StructuredContent, resultText(res))
			}
		})
	}
}

// renderClaude renders answers as runGolden does.
func renderClaude(dir string, answers []scriptAnswer) string {
	var b strings.Builder
	for i, ans := range answers {
		label, _ := json.Marshal(ans.op.Args)
		status := "ok"
		if ans.res.IsError {
			status = "error"
		}
		fmt.Fprintf(&b, "=== %d %s\n%s\n%s\n", i+1, label, status, strings.ReplaceAll(resultText(ans.res), dir, "$DIR"))
	}
	return b.String()
}

// TestEveryToolDeclaresResults: in the default mode and --openai-compat
// every tool lists an output schema; exec_command and write_stdin list
// Codex's exactly.
func TestEveryToolDeclaresResults(t *testing.T) {
	dir := t.TempDir()
	for _, mode := range [][]string{nil, {"--openai-compat"}} {
		cs, cmd, _ := connectStdio(t, dir, mode...)
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tools) < 4 {
			t.Fatalf("%v: %d tools", mode, len(res.Tools))
		}
		for _, tl := range res.Tools {
			if tl.OutputSchema == nil {
				t.Errorf("%v: %s declares no output schema", mode, tl.Name)
				continue
			}
			if tl.Name == "exec_command" || tl.Name == "write_stdin" {
				var got, want any
				if err := json.Unmarshal([]byte(mustJSON(t, tl.OutputSchema)), &got); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(results.ExecSchema, &want); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: schema %s is not Codex's", tl.Name, mustJSON(t, tl.OutputSchema))
				}
			}
		}
		cs.Close()
		_ = cmd.Wait()
	}
}

// structured calls a tool and decodes its structuredContent into v.
func structured(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, v any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.StructuredContent == nil {
		t.Fatalf("%s: no structuredContent: %q", tool, resultText(res))
	}
	if err := json.Unmarshal([]byte(mustJSON(t, res.StructuredContent)), v); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestStructuredValues: the data a program reads says what happened —
// values checked one by one for the cases the golden session does not
// pin down (a cd, a signal, dropped output, a minted session, a move, the
// facts of errors).
func TestStructuredValues(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "dup.txt"), "x\nx\n")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	cs, cmd, _ := connectStdio(t, dir)
	defer func() { cs.Close(); _ = cmd.Wait() }()

	var run results.Run
	structured(t, cs, "bash", map[string]any{"command": "cd sub; printf 'a\\xffb'; echo e >&2; (exit 7)"}, &run)
	if run.Status != "completed" || *run.ExitCode != 7 || run.Cwd != filepath.Join(dir, "sub") || run.Stdout != "a\ufffdb" || run.Stderr != "e\n" || run.StderrChars != 2 || run.ElapsedMs <= 0 {
		t.Fatalf("bash: %+v", run)
	}
	run = results.Run{}
	structured(t, cs, "bash", map[string]any{"command": "sleep 100", "run_in_background": true}, &run)
	if run.Status != "running" || run.TaskID != "task_1" || run.Pgid <= 0 || run.ExitCode != nil {
		t.Fatalf("background: %+v", run)
	}
	run = results.Run{}
	structured(t, cs, "task_kill", map[string]any{"task_id": "task_1"}, &run)
	if run.Status != "completed" || run.Signal != "TERM" || *run.ExitCode != 143 {
		t.Fatalf("killed: %+v", run)
	}
	// More than a task keeps waiting unread: the read says how much it dropped.
	structured(t, cs, "bash", map[string]any{"command": "head -c 3000000 /dev/zero | tr '\\0' x; echo; echo end", "run_in_background": true}, &run)
	deadline := time.Now().Add(20 * time.Second)
	var dropped int64
	var out strings.Builder
	for time.Now().Before(deadline) {
		run = results.Run{}
		structured(t, cs, "task_output", map[string]any{"task_id": "task_2", "wait_ms": 2000}, &run)
		dropped += run.DroppedBytes
		out.WriteString(run.Stdout)
		if run.Status == "completed" && !run.More {
			break
		}
	}
	if run.Status != "completed" || dropped < 1000000 || !strings.HasSuffix(out.String(), "end\n") {
		t.Fatalf("dropped %d, status %s, output ends %q", dropped, run.Status, out.String()[max(0, out.Len()-20):])
	}

	var minted results.Run
	res := structured(t, cs, "bash", map[string]any{"command": "true", "session": "new"}, &minted)
	if !strings.HasPrefix(minted.NewSession, "s_") || !strings.Contains(resultText(res), "session: "+minted.NewSession+"\n") {
		t.Fatalf("minted %q: %q", minted.NewSession, resultText(res))
	}
	var again results.Run
	structured(t, cs, "bash", map[string]any{"command": "true", "session": minted.NewSession}, &again)
	if again.NewSession != "" || again.Cwd != dir {
		t.Fatalf("in the minted session: %+v", again)
	}

	mustOK(t, cs, "bash", map[string]any{"command": "cd .."})
	writeFile(t, filepath.Join(dir, "m.txt"), "one\n")
	var p results.Patch
	structured(t, cs, "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: m.txt\n*** Move to: n.txt\n@@\n-one\n+two\n*** End Patch"}, &p)
	if len(p.Moved) != 1 || p.Moved[0] != (results.Move{From: "m.txt", To: "n.txt"}) || len(p.Modified) != 1 || len(p.Added) != 0 || p.BytesWritten != 4 {
		t.Fatalf("patch: %+v", p)
	}

	var e results.Error
	structured(t, cs, "view", map[string]any{"path": "nope.txt"}, &e)
	if e.Code != "PATH_NOT_FOUND" || e.Path != filepath.Join(dir, "nope.txt") {
		t.Fatalf("not found: %+v", e)
	}
	e = results.Error{}
	mustOK(t, cs, "view", map[string]any{"path": "dup.txt"})
	structured(t, cs, "str_replace", map[string]any{"path": "dup.txt", "old_str": "x", "new_str": "y"}, &e)
	if e.Code != "STR_REPLACE_AMBIGUOUS" || e.Count != 2 || fmt.Sprint(e.Lines) != "[1 2]" || e.Path != filepath.Join(dir, "dup.txt") {
		t.Fatalf("ambiguous: %+v", e)
	}
	e = results.Error{}
	structured(t, cs, "grep", map[string]any{"pattern": "x", "output_mode": "lines"}, &e)
	if e.Code != "GREP_INVALID_OUTPUT_MODE" || e.Param != "output_mode" || fmt.Sprint(e.Valid) != "[files_with_matches content count]" {
		t.Fatalf("output mode: %+v", e)
	}
	e = results.Error{}
	structured(t, cs, "task_kill", map[string]any{"task_id": "x", "signal": "NOPE"}, &e)
	if e.Code != "INVALID_INPUT" || e.Param != "signal" || len(e.Valid) != 7 {
		t.Fatalf("signal: %+v", e)
	}
	e = results.Error{}
	res = structured(t, cs, "view", map[string]any{"path": "x", "session": "new"}, &e)
	if e.Code != "PATH_NOT_FOUND" || !strings.HasPrefix(e.NewSession, "s_") || !strings.Contains(resultText(res), e.NewSession) {
		t.Fatalf("an error in a minted session: %+v", e)
	}
	e = results.Error{}
	structured(t, cs, "view", map[string]any{"path": "x", "session": "s_unknown"}, &e)
	if e.Code != "SESSION_NOT_FOUND" || e.NewSession != "" {
		t.Fatalf("unknown session: %+v", e)
	}

	var g results.GrepContent
	writeFile(t, filepath.Join(dir, "g.txt"), "m1\nm2\nm3\n")
	structured(t, cs, "grep", map[string]any{"pattern": "m", "path": "g.txt", "output_mode": "content", "head_limit": 2}, &g)
	if len(g.Matches) != 2 || g.Matches[1] != (results.Match{Path: "g.txt", Line: 2, Text: "m2"}) || !g.Truncated || g.NextOffset != 2 || g.TotalExact {
		t.Fatalf("grep page: %+v", g)
	}
}

// TestTextInDataForHostsThatShowIt: a client known to give its model the
// structured content in place of the text (Claude Code, Codex CLI) gets
// the answer's text word for word inside the data, on success and on
// error, so its model reads what any other model reads; other clients do
// not pay for the copy.
func TestTextInDataForHostsThatShowIt(t *testing.T) {
	p := startInProcess(t)
	if err := os.WriteFile(filepath.Join(p.dir, "f.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, client := range []string{"claude-code", "codex-mcp-client", "other"} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1"}, nil).
			Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: p.url + "/mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"view", map[string]any{"path": "f.txt"}},
			{"bash", map[string]any{"command": "echo hi"}},
			{"view", map[string]any{"path": "missing.txt"}},
		} {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
			if err != nil {
				t.Fatal(err)
			}
			var d struct {
				Text *string `json:"text"`
			}
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &d); err != nil {
				t.Fatal(err)
			}
			switch {
			case client == "other" && d.Text != nil:
				t.Errorf("%s %v: text copied into the data for a client that reads the text", c.tool, c.args)
			case client != "other" && (d.Text == nil || *d.Text != resultText(res)):
				t.Errorf("%s %s %v: data text %v, want the answer's text %q", client, c.tool, c.args, d.Text, resultText(res))
			}
		}
		cs.Close()
	}
}

// TestAuditAgrees: where the audit record and a call's structured result
// carry the same thing, they carry it under the same name with the same
// value (error_code is the structured code).
func TestAuditAgrees(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	url, logs := startBinaryHTTP(t, dir, "--log-format=json")
	cs := connectHTTP(t, url, "", nil)
	var data []map[string]any
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"bash", map[string]any{"command": "exit 3"}},
		{"bash", map[string]any{"command": "sleep 5", "timeout": 200}},
		{"bash", map[string]any{"command": "sleep 100", "run_in_background": true}},
		{"task_kill", map[string]any{"task_id": "task_1"}},
		{"create_file", map[string]any{"path": "a.txt", "content": "one\ntwo\n"}},
		{"view", map[string]any{"path": "a.txt"}},
		{"str_replace", map[string]any{"path": "a.txt", "old_str": "two", "new_str": "2"}},
		{"apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch"}},
		{"view", map[string]any{"path": "missing"}},
	} {
		var d map[string]any
		structured(t, cs, c.tool, c.args, &d)
		data = append(data, d)
	}
	recs := waitRecords(t, logs, len(data))
	for i, d := range data {
		rec := recs[i]
		for _, name := range []string{"exit_code", "timed_out", "task_id", "bytes_written"} {
			a, inAudit := rec[name]
			s, inData := d[name]
			if name == "timed_out" && !inAudit && inData {
				a, inAudit = false, true // the audit record leaves a false out
			}
			if name == "bytes_written" && !inAudit && s == float64(0) {
				continue
			}
			if inAudit != inData || fmt.Sprint(a) != fmt.Sprint(s) {
				t.Errorf("call %d %s: audit %v (%v), data %v (%v)", i+1, name, a, inAudit, s, inData)
			}
		}
		if code, ok := d["code"]; ok && rec["error_code"] != code {
			t.Errorf("call %d: audit error_code %v, data code %v", i+1, rec["error_code"], code)
		}
	}
}
