package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/scope"
	"github.com/boris-mcp/boris/internal/shell"
)

// Servers are started through the shell package, which needs the reaper.
func TestMain(m *testing.M) {
	if err := shell.EnableReaping(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func diag(line, char int, msg string) diagnostic {
	return diagnostic{Range: lspRange{Start: position{Line: line, Character: char}}, Severity: SeverityError, Source: "test", Message: msg}
}

func TestIntroduced(t *testing.T) {
	const before = "a\nb\nc\nd\ne\n"
	tests := []struct {
		name   string
		before []diagnostic
		after  string
		diags  []diagnostic
		want   []string // messages of the introduced errors
	}{
		{"a new error", nil, "a\nb\nX\nd\ne\n", []diagnostic{diag(2, 0, "bad X")}, []string{"bad X"}},
		{"an old error moved down by the edit above it", []diagnostic{diag(3, 1, "old")}, "a\nb\nc\nc2\nc3\nd\ne\n", []diagnostic{diag(5, 1, "old")}, nil},
		{"an old error moved up", []diagnostic{diag(4, 0, "old")}, "a\nd\ne\n", []diagnostic{diag(2, 0, "old")}, nil},
		{"an old error inside the edited region", []diagnostic{diag(2, 0, "old")}, "a\nb\nC changed\nd\ne\n", []diagnostic{diag(2, 4, "old")}, nil},
		{"the same message twice, one of them new", []diagnostic{diag(0, 0, "missing return")}, "a\nb\nc\nd\ne\nf\n", []diagnostic{diag(0, 0, "missing return"), diag(5, 0, "missing return")}, []string{"missing return"}},
		{"a message naming a line that moved", []diagnostic{diag(4, 0, "redefinition of unused 'x' from line 1")}, "new\na\nb\nc\nd\ne\n", []diagnostic{diag(5, 0, "redefinition of unused 'x' from line 2")}, nil},
		{"an error fixed, another made", []diagnostic{diag(1, 0, "old")}, "a\nB\nc\nd\ne\n", []diagnostic{diag(1, 0, "new")}, []string{"new"}},
		{"warnings are not errors", nil, "a\nb\nc\nd\ne\nx\n", []diagnostic{{Range: lspRange{Start: position{Line: 5}}, Severity: SeverityWarning, Message: "unused"}}, nil},
		{"no severity means error", nil, "a\nb\nc\nd\ne\nx\n", []diagnostic{{Range: lspRange{Start: position{Line: 5}}, Message: "bad"}}, []string{"bad"}},
		{"an old error moved by a cut and paste elsewhere", []diagnostic{diag(0, 0, "old")}, "b\nc\nd\ne\na\n", []diagnostic{diag(4, 0, "old")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, d := range introduced(tt.before, []byte(before), tt.diags, []byte(tt.after)) {
				got = append(got, d.Message)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("introduced %q, want %q", got, tt.want)
			}
		})
	}
}

func TestColumns(t *testing.T) {
	line := []byte("é😀x = 1")
	for _, tt := range []struct{ char, utf16, utf8 int }{{0, 0, 0}, {1, 1, 2}, {2, 3, 6}, {3, 4, 7}, {9, 8, 11}} {
		if got := toUnits(line, tt.char, false); got != tt.utf16 {
			t.Errorf("toUnits(%d, utf-16) = %d, want %d", tt.char, got, tt.utf16)
		}
		if got := toUnits(line, tt.char, true); got != tt.utf8 {
			t.Errorf("toUnits(%d, utf-8) = %d, want %d", tt.char, got, tt.utf8)
		}
		if tt.char <= 7 {
			if got := fromUnits(line, tt.utf16, false); got != tt.char {
				t.Errorf("fromUnits(%d, utf-16) = %d, want %d", tt.utf16, got, tt.char)
			}
			if got := fromUnits(line, tt.utf8, true); got != tt.char {
				t.Errorf("fromUnits(%d, utf-8) = %d, want %d", tt.utf8, got, tt.char)
			}
		}
	}
	content := []byte("one\r\ntwo\n\nfour")
	for n, want := range []string{"one", "two", "", "four"} {
		if got, ok := lineAt(content, n); !ok || string(got) != want {
			t.Errorf("lineAt(%d) = %q, %v", n, got, ok)
		}
	}
	if _, ok := lineAt(content, 4); ok {
		t.Error("line 5 of 4 exists")
	}
	for s, want := range map[string]int{"": 1, "a": 1, "a\n": 1, "a\nb": 2, "a\nb\n": 2} {
		if got := lineCount([]byte(s)); got != want {
			t.Errorf("lineCount(%q) = %d, want %d", s, got, want)
		}
	}
	for _, tt := range []struct {
		line string
		i    int
		want string
	}{{"return format(Total(x))", 9, "format"}, {"return format(Total(x))", 13, "format"}, {"a + b", 2, ""}, {"Ünïcode_1 = 2", 3, "Ünïcode_1"}} {
		if got := wordAt([]byte(tt.line), tt.i); got != tt.want {
			t.Errorf("wordAt(%q, %d) = %q, want %q", tt.line, tt.i, got, tt.want)
		}
	}
}

func TestURIs(t *testing.T) {
	for _, p := range []string{"/a/b.go", "/with space/ü#?.py"} {
		u := fileURI(p)
		if got := u.path(); got != p {
			t.Errorf("%q -> %q -> %q", p, u, got)
		}
	}
	if got := uri("https://example.com/x").path(); got != "" {
		t.Errorf("non-file URI gave %q", got)
	}
}

func TestWatchPatterns(t *testing.T) {
	var ws []fileSystemWatcher
	kindCreateDelete := watchCreate | watchDelete
	for _, w := range []struct {
		glob string
		kind *int
	}{{`"**/*.{go,mod}"`, nil}, {`{"baseUri":"file:///ws/sub","pattern":"*.txt"}`, &kindCreateDelete}, {`{"baseUri":{"uri":"file:///ws","name":"ws"},"pattern":"gen/**"}`, nil}} {
		ws = append(ws, fileSystemWatcher{GlobPattern: json.RawMessage(w.glob), Kind: w.kind})
	}
	pats := compileWatchers(ws, "/ws")
	for _, tt := range []struct {
		path string
		typ  int
		want bool
	}{
		{"/ws/a/b.go", fileChanged, true}, {"/ws/go.mod", fileCreated, true}, {"/ws/a/b.py", fileChanged, false},
		{"/ws/sub/x.txt", fileCreated, true}, {"/ws/sub/x.txt", fileChanged, false}, {"/ws/sub/deep/x.txt", fileCreated, false},
		{"/ws/gen/a/b.c", fileDeleted, true}, {"/other/gen/a.c", fileDeleted, false},
	} {
		got := false
		for _, p := range pats {
			got = got || p.matches(tt.path, tt.typ)
		}
		if got != tt.want {
			t.Errorf("%s (%d): %v, want %v", tt.path, tt.typ, got, tt.want)
		}
	}
}

func TestCoalesce(t *testing.T) {
	for _, tt := range []struct {
		seq  []int
		want int // 0: nothing pending
	}{
		{[]int{fileCreated, fileChanged}, fileCreated},
		{[]int{fileCreated, fileDeleted}, 0},
		{[]int{fileDeleted, fileCreated}, fileChanged},
		{[]int{fileChanged, fileDeleted}, fileDeleted},
		{[]int{fileChanged, fileChanged}, fileChanged},
	} {
		m := map[string]int{}
		for _, e := range tt.seq {
			coalesce(m, "f", e)
		}
		if m["f"] != tt.want {
			t.Errorf("%v -> %d, want %d", tt.seq, m["f"], tt.want)
		}
	}
}

func mkfiles(t *testing.T, root string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFindRoot(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mkfiles(t, ws, "mod/go.mod", "mod/pkg/a.go", "work/go.work", "work/m/go.mod", "work/m/b.go", "cc/build/compile_commands.json", "cc/src/x.c",
		"py/pyproject.toml", "py/pkg/y.py", "loose/z.py")
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	mkfiles(t, outside, "free.rs")
	lang := func(n string) *Language { return LanguageNamed(n) }
	for _, tt := range []struct {
		lang, file, want string
	}{
		{"go", ws + "/mod/pkg/a.go", ws + "/mod"},
		{"go", ws + "/work/m/b.go", ws + "/work"},
		{"c", ws + "/cc/src/x.c", ws + "/cc"},
		{"python", ws + "/py/pkg/y.py", ws + "/py"},
		{"python", ws + "/loose/z.py", ws},
		{"rust", outside + "/free.rs", outside},
	} {
		if got := findRoot(lang(tt.lang), tt.file, ws); got != tt.want {
			t.Errorf("findRoot(%s, %s) = %s, want %s", tt.lang, tt.file, got, tt.want)
		}
	}
	if l, id := languageOf("x/Y.HPP"); l == nil || l.Name != "c" || id != "cpp" {
		t.Errorf("languageOf(.HPP) = %v, %q", l, id)
	}
	if l, _ := languageOf("Makefile"); l != nil {
		t.Errorf("languageOf(Makefile) = %v", l)
	}
	if LanguageNamed("C++") == nil || LanguageNamed("JS").Name != "typescript" || LanguageNamed("cobol") != nil {
		t.Error("LanguageNamed aliases")
	}
}

func TestWatcher(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mkfiles(t, root, ".gitignore", "src/a.go", "build/out.o", ".git/HEAD")
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("build/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := newWatcher(root)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	mkfiles(t, root, "src/b.go", "build/ignored.go", "fresh/dir/c.go")
	if err := os.WriteFile(filepath.Join(root, "src/a.go"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "src/b.go")); err != nil {
		t.Fatal(err)
	}
	mkfiles(t, root, "src/tmp.go")
	if err := os.Rename(filepath.Join(root, "src/tmp.go"), filepath.Join(root, "src/renamed.go")); err != nil {
		t.Fatal(err)
	}
	got, overflow := w.drain()
	if overflow {
		t.Fatal("overflow")
	}
	want := map[string]int{
		root + "/src/a.go":         fileChanged,
		root + "/fresh/dir/c.go":   fileCreated,
		root + "/src/renamed.go":   fileCreated,
		root + "/fresh":            0,
		root + "/build/ignored.go": 0,
	}
	for p, typ := range want {
		if got[p] != typ {
			t.Errorf("%s: %d, want %d (all: %v)", p, got[p], typ, got)
		}
	}
	if _, ok := got[root+"/src/b.go"]; ok {
		t.Errorf("a file created and removed between two drains is reported: %v", got)
	}
	if again, _ := w.drain(); len(again) != 0 {
		t.Errorf("second drain: %v", again)
	}
	mkfiles(t, root, "fresh/dir/d.go")
	if got, _ := w.drain(); got[root+"/fresh/dir/d.go"] != fileCreated {
		t.Errorf("a file in a directory made after the watcher: %v", got)
	}
}

func TestNest(t *testing.T) {
	flat := []Symbol{
		{Name: "math", Loc: Loc{Line: 1}, EndLine: 1},
		{Name: "C", Loc: Loc{Line: 3}, EndLine: 10},
		{Name: "m", Container: "C", Loc: Loc{Line: 4}, EndLine: 6},
		{Name: "x", Container: "m", Loc: Loc{Line: 5}, EndLine: 5},
		{Name: "n", Container: "C", Loc: Loc{Line: 8}, EndLine: 10},
		{Name: "f", Loc: Loc{Line: 12}, EndLine: 13},
	}
	var render func([]Symbol, string) string
	render = func(ss []Symbol, ind string) string {
		var b strings.Builder
		for _, s := range ss {
			b.WriteString(ind + s.Name + "\n" + render(s.Children, ind+" "))
		}
		return b.String()
	}
	if got, want := render(nest(flat), ""), "math\nC\n m\n  x\n n\nf\n"; got != want {
		t.Fatalf("nest:\n%s\nwant:\n%s", got, want)
	}
}

func TestParseAnswers(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want int
	}{
		{`null`, 0},
		{`{"uri":"file:///a.go","range":{"start":{"line":1,"character":2},"end":{"line":1,"character":3}}}`, 1},
		{`[{"uri":"file:///a.go","range":{"start":{"line":1,"character":2},"end":{"line":1,"character":3}}},{"uri":"file:///b.go","range":{}}]`, 2},
		{`[{"targetUri":"file:///c.go","targetRange":{},"targetSelectionRange":{"start":{"line":4,"character":5},"end":{}}}]`, 1},
	} {
		if got := parseLocations(json.RawMessage(tt.raw)); len(got) != tt.want {
			t.Errorf("%s: %d locations", tt.raw, len(got))
		}
	}
	links := parseLocations(json.RawMessage(`[{"targetUri":"file:///c.go","targetSelectionRange":{"start":{"line":4,"character":5}}}]`))
	if links[0].URI.path() != "/c.go" || links[0].Range.Start.Line != 4 {
		t.Errorf("link: %+v", links[0])
	}
	for raw, want := range map[string]string{
		`"plain"`:                                   "plain",
		`{"kind":"markdown","value":"**b**"}`:       "**b**",
		`{"language":"go","value":"func F()"}`:      "```go\nfunc F()\n```",
		`["doc",{"language":"c","value":"int x;"}]`: "doc\n\n```c\nint x;\n```",
		`null`: "",
	} {
		if got := hoverText(json.RawMessage(raw)); got != want {
			t.Errorf("hoverText(%s) = %q, want %q", raw, got, want)
		}
	}
}

// probeManager runs the probe server (testdata/lspprobe) for .rs files,
// in a mode (see probe.py).
func probeManager(t *testing.T, idle time.Duration, target string, mode ...string) (*Manager, string) {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed for the probe language server: apt-get install python3")
	}
	probe, err := filepath.Abs(filepath.Join("testdata", "lspprobe", "probe.py"))
	if err != nil {
		t.Fatal(err)
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mkfiles(t, ws, "main.rs")
	pol, err := scope.New(nil, nil, ws)
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{
		Servers:        map[string][]string{"rust": append([]string{python, probe, target}, mode...)},
		IdleTimeout:    idle,
		RequestTimeout: 2 * time.Second,
		Runner:         shell.NewRunner("", shell.Environ(os.Environ()), shell.Options{Grace: 500 * time.Millisecond}),
		Workdir:        ws,
		Policy:         pol,
	})
	t.Cleanup(m.Close)
	return m, ws
}

func TestIdleServersStopAndCloseEndsAll(t *testing.T) {
	m, ws := probeManager(t, 300*time.Millisecond, os.DevNull)
	res, err := m.Do(context.Background(), Query{Op: OpHover, Cwd: ws, Path: "main.rs", Line: 1, Character: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Hover, "wrote "+os.DevNull) || res.Server != "probe" {
		t.Fatalf("hover %+v", res)
	}
	pids := m.Running()
	if len(pids) != 1 {
		t.Fatalf("running %v", pids)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(m.Running()) > 0 || shell.GroupAlive(pids[0]) {
		if time.Now().After(deadline) {
			t.Fatalf("the idle server was not stopped (running %v)", m.Running())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// It starts again when needed; Close ends it and refuses more.
	if _, err := m.Do(context.Background(), Query{Op: OpHover, Cwd: ws, Path: "main.rs", Line: 1, Character: 1}); err != nil {
		t.Fatal(err)
	}
	pids = m.Running()
	m.Close()
	if len(pids) != 1 || shell.GroupAlive(pids[0]) {
		t.Fatalf("Close left %v running", pids)
	}
	_, err = m.Do(context.Background(), Query{Op: OpHover, Cwd: ws, Path: "main.rs", Line: 1, Character: 1})
	if e, ok := codes.As(err); !ok || e.Code != codes.SessionClosed {
		t.Fatalf("after Close: %v", err)
	}
}

// TestRestartSaysHowItEnded: a server whose connection closed a moment
// before its process ended is restarted by the next call, whose note
// says how the process ended, not only that the connection closed.
func TestRestartSaysHowItEnded(t *testing.T) {
	m, ws := probeManager(t, time.Minute, os.DevNull, "lingering")
	q := Query{Op: OpHover, Cwd: ws, Path: "main.rs", Line: 1, Character: 1}
	if res, err := m.Do(context.Background(), q); err != nil || res.Hover != "lingering" {
		t.Fatalf("first hover: %+v %v", res, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(m.Running()) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the closed connection was not noticed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	res, err := m.Do(context.Background(), q)
	if err != nil || !strings.Contains(res.Note, "had stopped (exit status 3) and was restarted") {
		t.Fatalf("after the server closed its output: %+v %v", res, err)
	}
}

func TestUnsupportedOperation(t *testing.T) {
	m, ws := probeManager(t, time.Minute, os.DevNull)
	_, err := m.Do(context.Background(), Query{Op: OpReferences, Cwd: ws, Path: "main.rs", Line: 1, Character: 1})
	if e, ok := codes.As(err); !ok || e.Code != codes.LSPUnsupported || !strings.Contains(e.Message, "does not support findReferences") {
		t.Fatalf("err = %v", err)
	}
}

func TestIndexingAndTimeouts(t *testing.T) {
	q := func(ws string) Query { return Query{Op: OpHover, Cwd: ws, Path: "main.rs", Line: 1, Character: 1} }
	m, ws := probeManager(t, time.Minute, os.DevNull, "indexing")
	_, err := m.Do(context.Background(), q(ws))
	if e, ok := codes.As(err); !ok || e.Code != codes.LSPIndexing || !strings.Contains(e.Message, "Indexing (40%)") {
		t.Fatalf("an empty answer while indexing: %v", err)
	}
	m, ws = probeManager(t, time.Minute, os.DevNull, "silent")
	start := time.Now()
	_, err = m.Do(context.Background(), q(ws))
	if e, ok := codes.As(err); !ok || e.Code != codes.LSPTimeout || !strings.Contains(e.Message, "did not answer textDocument/hover within 2s") {
		t.Fatalf("a server that does not answer: %v", err)
	}
	// Broken, it would wait for ever; 30 s no loaded machine needs.
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("the timeout took %v", d)
	}
	// An edit whose server never reports diagnostics is answered in the
	// wait, saying its report is pending.
	path := filepath.Join(ws, "main.rs")
	m.Warm(path)
	e := m.BeginEdit(path)
	if err := os.WriteFile(path, []byte("fn main() { x }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	rep := e.Finish(context.Background(), 300*time.Millisecond)
	// The server never reports: broken, Finish would wait for ever.
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("Finish took %v with a 300ms wait", d)
	}
	if len(rep.Files) != 1 || !rep.Files[0].Pending || len(rep.Files[0].Introduced) != 0 || rep.Late == nil {
		t.Fatalf("report %+v", rep.Files)
	}
	// A file no server handles costs nothing.
	if e := m.BeginEdit(filepath.Join(ws, "notes.txt")); e != nil {
		t.Fatalf("an edit of a .txt file got an Edit: %+v", e)
	}
}

// An empty answer given while the server reported errors (on stderr, or
// in a logMessage of type Error) is the server's failure, said so with the
// errors; an empty answer without errors stays an answer.
func TestEmptyAnswerWithErrorsIsFailure(t *testing.T) {
	q := func(ws string) Query { return Query{Op: OpHover, Cwd: ws, Path: "main.rs", Line: 1, Character: 1} }
	for _, tc := range []struct{ mode, want string }{
		{"failing", "PermissionError: [Errno 13] Permission denied: '/.cache'"},
		{"failing-message", "hover crashed: cannot open the index"},
	} {
		m, ws := probeManager(t, time.Minute, os.DevNull, tc.mode)
		for i := range 3 { // every time, not only the first
			_, err := m.Do(context.Background(), q(ws))
			e, ok := codes.As(err)
			if !ok || e.Code != codes.LSPServerError || !strings.Contains(e.Message, tc.want) || !strings.Contains(e.Message, "reported errors while answering hover") {
				t.Fatalf("%s, call %d: %v", tc.mode, i+1, err)
			}
		}
	}
	m, ws := probeManager(t, time.Minute, os.DevNull, "empty")
	res, err := m.Do(context.Background(), q(ws))
	if err != nil || res.Hover != "" {
		t.Fatalf("an empty answer without errors: %+v %v", res, err)
	}
}

func TestFileTooLarge(t *testing.T) {
	m, ws := probeManager(t, time.Minute, os.DevNull)
	m.opts.MaxFileSize = 2 // main.rs holds "x\n" and one byte more
	if err := os.WriteFile(filepath.Join(ws, "main.rs"), []byte("x\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := m.Do(context.Background(), Query{Op: OpHover, Cwd: ws, Path: "main.rs", Line: 1, Character: 1})
	if e, ok := codes.As(err); !ok || e.Code != codes.FileTooLarge {
		t.Fatalf("err = %v", err)
	}
	if len(m.Running()) != 0 {
		t.Fatal("a server was started for a file it is not asked about")
	}
}

// A query with a policy of its own (a session confined to its
// workspace) cannot name a file outside it; a server per workspace root;
// StopUnder stops one workspace's servers and leaves the other's.
func TestQueryPolicyAndStopUnder(t *testing.T) {
	m, ws := probeManager(t, time.Minute, os.DevNull)
	a, b := filepath.Join(ws, "a"), filepath.Join(ws, "b")
	mkfiles(t, a, "Cargo.toml", "main.rs")
	mkfiles(t, b, "Cargo.toml", "main.rs")
	onlyA, err := scope.New([]string{a}, nil, a)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Do(context.Background(), Query{Op: OpHover, Cwd: a, Path: "../b/main.rs", Line: 1, Character: 1, Policy: onlyA})
	if e, ok := codes.As(err); !ok || e.Code != codes.AccessDenied {
		t.Fatalf("a file of another workspace: %v", err)
	}
	if len(m.Running()) != 0 {
		t.Fatal("a server was started for a refused file")
	}
	for _, dir := range []string{a, b} {
		if _, err := m.Do(context.Background(), Query{Op: OpHover, Cwd: dir, Path: "main.rs", Line: 1, Character: 1, Policy: onlyA}); dir == a && err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Do(context.Background(), Query{Op: OpHover, Cwd: b, Path: "main.rs", Line: 1, Character: 1}); err != nil {
		t.Fatal(err)
	}
	if n := len(m.Running()); n != 2 {
		t.Fatalf("%d servers for two roots", n)
	}
	m.StopUnder(a)
	if n := len(m.Running()); n != 1 {
		t.Fatalf("%d servers after stopping a's", n)
	}
	if _, err := m.Do(context.Background(), Query{Op: OpHover, Cwd: a, Path: "main.rs", Line: 1, Character: 1}); err != nil {
		t.Fatalf("a's server does not start again: %v", err)
	}
}

// A server is started through Confine for its root, when set: the start
// it gives is the one used, and a refusal is the server's start error.
func TestConfine(t *testing.T) {
	m, ws := probeManager(t, time.Minute, os.DevNull)
	var roots []string
	started := 0
	m.opts.Confine = func(root string) (func(*exec.Cmd) error, func(), error) {
		roots = append(roots, root)
		if strings.HasSuffix(root, "refused") {
			return nil, nil, errors.New("no domain")
		}
		return func(c *exec.Cmd) error { started++; return c.Start() }, func() {}, nil
	}
	if _, err := m.Do(context.Background(), Query{Op: OpHover, Cwd: ws, Path: "main.rs", Line: 1, Character: 1}); err != nil {
		t.Fatal(err)
	}
	if started != 1 || len(roots) != 1 || roots[0] != ws {
		t.Fatalf("started %d, roots %v", started, roots)
	}
	bad := filepath.Join(ws, "refused")
	mkfiles(t, bad, "Cargo.toml", "main.rs")
	_, err := m.Do(context.Background(), Query{Op: OpHover, Cwd: bad, Path: "main.rs", Line: 1, Character: 1})
	if e, ok := codes.As(err); !ok || e.Code != codes.LSPStartFailed || !strings.Contains(e.Message, "no domain") {
		t.Fatalf("a refused confinement: %v", err)
	}
}
