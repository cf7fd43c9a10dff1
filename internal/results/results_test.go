package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/files"
	"github.com/boris-mcp/boris/internal/patch"
	"github.com/boris-mcp/boris/internal/scope"
	"github.com/boris-mcp/boris/internal/session"
	"github.com/boris-mcp/boris/internal/shell"
)

// validator resolves Schema(shapes...) for validating values.
func validator(t *testing.T, shapes ...any) *jsonschema.Resolved {
	t.Helper()
	raw, err := Schema(shapes...)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// valid reports whether v, encoded as boris encodes it, fits rs.
func valid(t *testing.T, rs *jsonschema.Resolved, v any) error {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var inst any
	if err := json.Unmarshal(raw, &inst); err != nil {
		t.Fatal(err)
	}
	return rs.Validate(inst)
}

// TestSchemaAdmitsExactlyItsShapes: a tool's schema admits its shapes and
// the error shape, and refuses another tool's shape, an unknown field, a
// value outside an enum and a missing required field.
func TestSchemaAdmitsExactlyItsShapes(t *testing.T) {
	rs := validator(t, Run{}, TaskList{})
	code := 0
	run := &Run{Status: StatusCompleted, ExitCode: &code, Stdout: "x", StdoutChars: 1}
	for _, ok := range []any{run, FromTasks(nil), ErrorOf(codes.Errorf(codes.PathNotFound, "gone")), ErrorOf(errors.New("plain"))} {
		if err := valid(t, rs, ok); err != nil {
			t.Errorf("%T refused: %v", ok, err)
		}
	}
	bad := []any{
		&Create{Path: "/x"},
		map[string]any{"status": "completed", "timed_out": false, "stdout": "", "stderr": "", "stdout_chars": 0, "stderr_chars": 0, "stdout_truncated": false, "stderr_truncated": false, "elapsed_ms": 1, "extra": 1},
		&Run{Status: "done"},
		map[string]any{"status": "running"},
		&Error{Code: "NOT_A_CODE", Message: "x"},
	}
	for i, b := range bad {
		if err := valid(t, rs, b); err == nil {
			t.Errorf("bad value %d admitted: %+v", i, b)
		}
	}
}

// TestEveryShapeHasASchema: each shape's schema builds, and the values
// the conversions make fit it.
func TestEveryShapeHasASchema(t *testing.T) {
	lines := 3
	cases := []struct {
		shape any
		value any
	}{
		{Run{}, FromRun(session.RunResult{Result: shell.Result{ExitCode: 2, Signal: "KILL"}}, "/w")},
		{Run{}, Started(session.TaskInfo{ID: "task_1", Pgid: 9})},
		{Run{}, FromTask(session.TaskStatus{ID: "task_1", Running: true, Pgid: 9, Stdout: "é\n"})},
		{TaskList{}, FromTasks([]session.TaskStatus{{ID: "task_1", TTY: true}, {ID: "task_2", Running: true}})},
		{Restarted{}, &Restarted{Restarted: true}},
		{View{}, &View{Path: "/a", Kind: KindBinary, Size: 3}},
		{View{}, &View{Path: "/a", Kind: KindDirectory, Entries: []Entry{{Path: "l", Type: EntrySymlink, Target: "x"}}}},
		{View{}, &View{Path: "/a", Kind: KindFile, TotalLines: &lines, StartLine: 1, EndLine: 3}},
		{Edit{}, FromReplace(&files.ReplaceResult{Path: "/a", Line: 3, NewStr: "x\ny", Count: 1})},
		{Create{}, FromCreate(&files.CreateResult{Path: "/a", Size: 4}, "a\nb")},
		{Insert{}, FromInsert(&files.InsertResult{Path: "/a", After: 2, Lines: 2})},
		{Undo{}, FromUndo(&files.UndoResult{Path: "/a", Removed: true})},
		{Patch{}, FromPatch(&files.PatchResult{Modified: []string{"b"}, Moved: []files.Move{{From: "a", To: "b"}}})},
		{Find{}, &Find{Paths: []string{}}},
		{GrepFiles{}, &GrepFiles{Files: []string{"a"}, GrepPage: GrepPage{Mode: ModeFiles, Total: 1, TotalExact: true}}},
		{GrepCounts{}, &GrepCounts{Counts: []FileCount{{Path: "a", Count: 2}}, GrepPage: GrepPage{Mode: ModeCount}}},
		{GrepContent{}, &GrepContent{Matches: []Match{{Path: "a", Line: 1, Text: "x", Context: true}}, GrepPage: GrepPage{Mode: ModeContent, Skipped: "binary"}}},
	}
	for i, c := range cases {
		if err := valid(t, validator(t, c.shape), c.value); err != nil {
			t.Errorf("case %d %T: %v", i, c.value, err)
		}
	}
	// A grep result of one mode is not another mode's.
	if err := valid(t, validator(t, GrepCounts{}), &GrepFiles{Files: []string{}, GrepPage: GrepPage{Mode: ModeFiles}}); err == nil {
		t.Error("a files_with_matches result fits the count shape")
	}
}

// TestErrorOf: an error's data carries its code, boris's message and the
// facts of its kind.
func TestErrorOf(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{codes.Errorf(codes.PathNotFound, "gone").WithFact(files.FactMissing{Path: "/a"}), "PATH_NOT_FOUND gone /a 0 [] 0"},
		{codes.Errorf(codes.StrReplaceAmbiguous, "twice").WithFact(files.FactAmbiguous{Path: "/a", Count: 2, SameLine: []int{1, 4}}), "STR_REPLACE_AMBIGUOUS twice /a 2 [1 4] 0"},
		{codes.Errorf(codes.InvalidInput, "past").WithFact(files.FactRange{Path: "/a", Lines: 7}), "INVALID_INPUT past /a 0 [] 7"},
		{codes.Errorf(codes.PatchContextNotFound, "ctx").WithFact(files.FactPatchContext{File: "p", Err: &patch.ContextError{Hunk: 2, Line: 9}}), "PATCH_CONTEXT_NOT_FOUND ctx p 0 [] 0"},
		{fmt.Errorf("wrapped: %w", codes.Errorf(codes.TaskNotFound, "no task")), "BASH_TASK_NOT_FOUND no task  0 [] 0"},
		{errors.New("disk on fire"), "IO_ERROR disk on fire  0 [] 0"},
	}
	for _, tt := range tests {
		e := ErrorOf(tt.err)
		if got := fmt.Sprintf("%s %s %s %d %v %d", e.Code, e.Message, e.Path, e.Count, e.Lines, e.TotalLines); got != tt.want {
			t.Errorf("%v: %q, want %q", tt.err, got, tt.want)
		}
	}
	e := ErrorOf(codes.Errorf(codes.PatchContextNotFound, "ctx").WithFact(files.FactPatchContext{File: "p", Err: &patch.ContextError{Hunk: 2, Line: 9}}))
	if e.Hunk != 2 || e.PatchLine != 9 {
		t.Errorf("patch context: %+v", e)
	}
	e = ErrorOf(codes.Errorf(codes.InvalidInput, "bad").WithValid("signal", "TERM", "KILL"))
	if e.Param != "signal" || fmt.Sprint(e.Valid) != "[TERM KILL]" {
		t.Errorf("valid values: %+v", e)
	}
}

// TestFromView: a text view's data says which lines were shown and how
// many the file has.
func TestFromView(t *testing.T) {
	dir := t.TempDir()
	pol, err := scope.New(nil, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	svc := files.New(files.Options{Policy: pol, MaxFileSize: 1 << 20})
	if err := writeFile(dir+"/f.txt", "one\r\ntwo\r\nthree\r\nfour\r\n"); err != nil {
		t.Fatal(err)
	}
	res, err := svc.View(files.Ctx{Cwd: dir}, "f.txt", &files.Range{Start: 2, End: 3}, files.ViewLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if v := FromView(res); v.Kind != KindFile || v.StartLine != 2 || v.EndLine != 3 || *v.TotalLines != 4 || v.Truncated || v.Size != 23 {
		t.Fatalf("%+v", v)
	}
	res, err = svc.View(files.Ctx{Cwd: dir}, "f.txt", nil, files.ViewLimits{MaxLines: 1})
	if err != nil {
		t.Fatal(err)
	}
	if v := FromView(res); v.StartLine != 1 || v.EndLine != 1 || !v.Truncated {
		t.Fatalf("limited: %+v", v)
	}
	if err := writeFile(dir+"/empty.txt", ""); err != nil {
		t.Fatal(err)
	}
	res, err = svc.View(files.Ctx{Cwd: dir}, "empty.txt", nil, files.ViewLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if v := FromView(res); v.Kind != KindFile || *v.TotalLines != 0 || v.StartLine != 0 || v.EndLine != 0 {
		t.Fatalf("empty: %+v", v)
	}
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o644) }
