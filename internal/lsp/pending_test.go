package lsp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/boris-mcp/boris/internal/scope"
	"github.com/boris-mcp/boris/internal/shell"
)

// The diag server (testdata/lspdiag) calls every line holding ERR an
// error; its manners (hold, pull, noversion, clangd) make what the tests
// need happen when they say, not when a clock says.

// diagManager runs the diag server for .rs files in a mode; main.rs holds
// "fn main() {}".
func diagManager(t *testing.T, mode string) (*Manager, string) {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed for the test language server: apt-get install python3")
	}
	server, err := filepath.Abs(filepath.Join("testdata", "lspdiag", "diag.py"))
	if err != nil {
		t.Fatal(err)
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(ws, "main.rs")
	if err := os.WriteFile(path, []byte("fn main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pol, err := scope.New(nil, nil, ws)
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{
		Servers:        map[string][]string{"rust": {python, server, mode}},
		RequestTimeout: 30 * time.Second,
		Runner:         shell.NewRunner("", shell.Environ(os.Environ()), shell.Options{Grace: 500 * time.Millisecond}),
		Workdir:        ws,
		Policy:         pol,
	})
	t.Cleanup(m.Close)
	return m, path
}

// edit writes content as an edit through m and returns its report.
func edit(t *testing.T, m *Manager, path, content string, wait time.Duration) *Report {
	t.Helper()
	e := m.BeginEdit(path)
	if e == nil {
		t.Fatalf("no server for %s", path)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return e.Finish(context.Background(), wait)
}

// ask sends the server a request about path (hover), and returns the
// diagnostics operation's answer after it.
func ask(t *testing.T, m *Manager, path string) []Diag {
	t.Helper()
	if _, err := m.Do(context.Background(), Query{Op: OpHover, Path: path, Line: 1, Character: 1}); err != nil {
		t.Fatal(err)
	}
	res, err := m.Do(context.Background(), Query{Op: OpDiagnostics, Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stale {
		t.Fatalf("diagnostics of %s stale", path)
	}
	return res.Diagnostics
}

// messages lists the messages of diagnostics.
func messages(ds []Diag) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Message)
	}
	return out
}

// wantFile checks one file of a report: its state and its errors.
func wantFile(t *testing.T, rep *Report, pending bool, errs ...string) {
	t.Helper()
	if rep == nil || len(rep.Files) != 1 {
		t.Fatalf("report %+v", rep)
	}
	f := rep.Files[0]
	if f.Pending != pending || f.Err != nil || f.Late || f.Superseded || f.Unknown {
		t.Fatalf("file report %+v, want pending=%v", f, pending)
	}
	if got := messages(f.Introduced); !reflect.DeepEqual(got, errs) {
		t.Fatalf("introduced %q, want %q", got, errs)
	}
}

// TestPendingEditReachesTheInbox: an edit whose server has not reported
// when the answer goes out is pending in it; the inbox gives nothing until
// the server has reported, then the edit's new error, once; the
// diagnostics operation lists it too.
func TestPendingEditReachesTheInbox(t *testing.T) {
	m, path := diagManager(t, "hold")
	if got := ask(t, m, path); len(got) != 0 {
		t.Fatalf("diagnostics before the edit: %+v", got)
	}
	rep := edit(t, m, path, "fn main() {}\nERR one\n", 50*time.Millisecond)
	wantFile(t, rep, true)
	if rep.Late == nil {
		t.Fatal("a pending report without Late")
	}
	var in Inbox
	in.Add(rep.Late)
	if got := in.Take(); got != nil {
		t.Fatalf("the inbox gave %+v before the server reported", got)
	}
	if got := in.Pending(); !reflect.DeepEqual(got, []string{path}) {
		t.Fatalf("pending %q", got)
	}
	// A request: the server sends what it held before answering it.
	if got := messages(ask(t, m, path)); !reflect.DeepEqual(got, []string{"bad line: ERR one"}) {
		t.Fatalf("diagnostics after the edit: %q", got)
	}
	late := in.Take()
	if late == nil || !late.Delayed {
		t.Fatalf("late report %+v", late)
	}
	wantFile(t, late, false, "bad line: ERR one")
	if d := late.Files[0].Introduced[0]; d.Loc.Line != 2 || d.Loc.Text != "ERR one" {
		t.Fatalf("the error's place %+v", d.Loc)
	}
	if got := in.Take(); got != nil {
		t.Fatalf("delivered twice: %+v", got)
	}
}

// TestEditsOfAFileInTurn: an edit of a file whose earlier edit is still
// pending waits for it, and starts from what the server said after it:
// each edit reports its own error, once, in the order of the edits.
func TestEditsOfAFileInTurn(t *testing.T) {
	m, path := diagManager(t, "hold")
	ask(t, m, path)
	var in Inbox
	first := edit(t, m, path, "fn main() {}\nERR one\n", 50*time.Millisecond)
	wantFile(t, first, true)
	in.Add(first.Late)
	second := edit(t, m, path, "fn main() {}\nERR one\nERR two\n", 50*time.Millisecond)
	wantFile(t, second, true)
	in.Add(second.Late)
	ask(t, m, path) // the server sends what it held
	late := in.Take()
	if late == nil || len(late.Files) != 2 {
		t.Fatalf("late %+v", late)
	}
	for i, want := range []string{"bad line: ERR one", "bad line: ERR two"} {
		if f := late.Files[i]; f.Merged != 0 || !reflect.DeepEqual(messages(f.Introduced), []string{want}) {
			t.Fatalf("edit %d: %+v, want %q", i+1, f, want)
		}
	}
}

// TestChangedBeforeTheServerReported: a file changed again (by a command)
// before its server reported on an edit: the edit is superseded, and the
// change's errors are the diagnostics operation's.
func TestChangedBeforeTheServerReported(t *testing.T) {
	m, path := diagManager(t, "debounce")
	ask(t, m, path)
	rep := edit(t, m, path, "fn main() {}\nERR one\n", 50*time.Millisecond)
	wantFile(t, rep, true)
	var in Inbox
	in.Add(rep.Late)
	if err := os.WriteFile(path, []byte("fn main() {}\nERR cmd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The held server drops its report on the edit's text for the newer
	// one, as a debouncing server does.
	if got := messages(ask(t, m, path)); !reflect.DeepEqual(got, []string{"bad line: ERR cmd"}) {
		t.Fatalf("diagnostics %q", got)
	}
	late := in.Take()
	if late == nil || len(late.Files) != 1 || !late.Files[0].Superseded {
		t.Fatalf("late %+v", late)
	}
}

// TestSkippedTextCountedWithTheNext: a server that reports only on the
// latest of two texts (it debounces) skips the first edit's: that edit
// says so, and the second counts both edits' errors.
func TestSkippedTextCountedWithTheNext(t *testing.T) {
	m, path := diagManager(t, "debounce")
	ask(t, m, path)
	var in Inbox
	for _, content := range []string{"fn main() {}\nERR one\n", "fn main() {}\nERR one\nERR two\n"} {
		rep := edit(t, m, path, content, 50*time.Millisecond)
		wantFile(t, rep, true)
		in.Add(rep.Late)
	}
	ask(t, m, path)
	late := in.Take()
	if late == nil || len(late.Files) != 2 || !late.Files[0].Superseded || late.Files[1].Merged != 1 {
		t.Fatalf("late %+v", late)
	}
	if got := messages(late.Files[1].Introduced); !reflect.DeepEqual(got, []string{"bad line: ERR one", "bad line: ERR two"}) {
		t.Fatalf("introduced %q", got)
	}
}

// TestMergedAfterAnEarlierEditGaveUp: when an earlier edit's report never
// came, the next edit of the file counts its errors with its own.
func TestMergedAfterAnEarlierEditGaveUp(t *testing.T) {
	m, path := diagManager(t, "hold")
	ask(t, m, path)
	first := edit(t, m, path, "fn main() {}\nERR one\n", 50*time.Millisecond)
	wantFile(t, first, true)
	second := edit(t, m, path, "fn main() {}\nERR one\nERR two\n", 50*time.Millisecond)
	wantFile(t, second, true)
	f1 := first.Late.files[0]
	f1.giveUp()
	<-f1.done
	if !f1.rep.Late {
		t.Fatalf("gave up: %+v", f1.rep)
	}
	var in Inbox
	in.Add(second.Late)
	ask(t, m, path)
	late := in.Take()
	if late == nil || len(late.Files) != 1 || late.Files[0].Merged != 1 {
		t.Fatalf("late %+v", late)
	}
	if got := messages(late.Files[0].Introduced); !reflect.DeepEqual(got, []string{"bad line: ERR one", "bad line: ERR two"}) {
		t.Fatalf("introduced %q", got)
	}
}

// TestFastPaths: a server with pull diagnostics is asked; one that sends
// no versions is understood; clangd is asked to skip its debounce. Each
// edit's error is in its own report, and the fix reports nothing.
func TestFastPaths(t *testing.T) {
	for _, mode := range []string{"pull", "noversion", "clangd", "push"} {
		t.Run(mode, func(t *testing.T) {
			m, path := diagManager(t, mode)
			m.Warm(path)
			wantFile(t, edit(t, m, path, "fn main() {}\nERR one\n", 30*time.Second), false, "bad line: ERR one")
			wantFile(t, edit(t, m, path, "fn main() {}\nERR one\nERR two\n", 30*time.Second), false, "bad line: ERR two")
			wantFile(t, edit(t, m, path, "fn main() {}\n", 30*time.Second), false)
			if got := ask(t, m, path); len(got) != 0 {
				t.Fatalf("diagnostics after the fix: %+v", got)
			}
		})
	}
}

// TestFailedEditLeavesNothing: an edit begun and never finished (the
// write failed) holds nothing: requests and the next edit go through.
func TestFailedEditLeavesNothing(t *testing.T) {
	m, path := diagManager(t, "push")
	ask(t, m, path)
	if e := m.BeginEdit(path); e == nil {
		t.Fatal("no edit")
	}
	if got := ask(t, m, path); len(got) != 0 {
		t.Fatalf("diagnostics %+v", got)
	}
	wantFile(t, edit(t, m, path, "ERR x\n", 30*time.Second), false, "bad line: ERR x")
}

// TestPylspLintsAtOnce: boris starts Debian's pylsp through its launcher,
// which says on stderr that the lint debounce is gone; an edit's pyflakes
// error is in its report.
func TestPylspLintsAtOnce(t *testing.T) {
	if _, err := exec.LookPath("pylsp"); err != nil {
		t.Fatal("pylsp is needed: apt-get install python3-pylsp python3-pyflakes (scripts/deps.sh)")
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(ws, "a.py")
	if err := os.WriteFile(path, []byte("import os\n\nprint(os.sep)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pol, err := scope.New(nil, nil, ws)
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{
		Servers: map[string][]string{"python": {"pylsp"}},
		Runner:  shell.NewRunner("", shell.Environ(os.Environ()), shell.Options{Grace: 500 * time.Millisecond}),
		Workdir: ws,
		Policy:  pol,
	})
	t.Cleanup(m.Close)
	m.Warm(path)
	wantFile(t, edit(t, m, path, "import os\n\nprint(os.sep, nosuch)\n", 30*time.Second), false, "undefined name 'nosuch'")
	c, _, _, err := m.acquire(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.release(c)
	if tail := c.stderr.String(); !strings.Contains(tail, "boris: pylsp lints at once") {
		t.Fatalf("pylsp's stderr does not say its lint is immediate:\n%s", tail)
	}
}
