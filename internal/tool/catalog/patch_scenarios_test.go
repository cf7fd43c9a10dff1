package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/dialect"
	"github.com/boris-mcp/boris/internal/session"
)

// patchScenarioDir holds the apply_patch scenarios, one folder each:
//
//	input/          the tree before (absent: an empty tree)
//	patch.txt       the whole patch, passed as the tool's input argument, or
//	operation.json  a Responses-API operation {type, path, diff}, passed as operation
//	expected/       the tree after a success (absent: an empty tree), with
//	output.txt      the exact success text; or instead
//	error.txt       the error: its first line the code, then substrings the
//	                error text must contain, one per line (a line in double
//	                quotes is a Go string literal, for tabs and newlines);
//	                the tree after must equal input/
//	mode.txt        optional "path 0755" lines: chmod the input file before
//	                the run, and check the mode of the file after it
//	deny.txt        optional --deny-dir patterns, one per line
//
// Every expectation is written by hand from the format's semantics.
const patchScenarioDir = "testdata/patch"

// patchScenarioFiles are the names a scenario folder may hold.
var patchScenarioFiles = []string{"input", "expected", "patch.txt", "operation.json", "output.txt", "error.txt", "mode.txt", "deny.txt"}

// TestPatchScenarios runs every scenario of testdata/patch through the
// apply_patch tool over an in-memory MCP connection, as a client would call
// it, and compares the answer and the whole tree after it with the
// scenario's expectations, byte for byte.
func TestPatchScenarios(t *testing.T) {
	entries, err := os.ReadDir(patchScenarioDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		t.Fatalf("no scenarios in %s", patchScenarioDir)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runPatchScenario(t, filepath.Join(patchScenarioDir, name))
		})
	}
}

func runPatchScenario(t *testing.T, src string) {
	sc := loadPatchScenario(t, src)

	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	copyScenarioTree(t, filepath.Join(src, "input"), dir)
	before := snapshotTree(t, filepath.Join(src, "input"))
	for p, m := range sc.modes {
		if _, ok := before[p]; ok {
			if err := os.Chmod(filepath.Join(dir, filepath.FromSlash(p)), m); err != nil {
				t.Fatal(err)
			}
		}
	}

	sess := session.New("s", session.Options{Workdir: dir})
	t.Cleanup(sess.Close)
	cs := connect(t, setup{workdir: dir, mode: dialect.Codex, deny: sc.deny}, sess)

	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "apply_patch", Arguments: sc.args})
	if err != nil {
		t.Fatalf("apply_patch: protocol error: %v", err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	got := text.String()

	want := before
	if sc.errCode == "" {
		if res.IsError {
			t.Fatalf("apply_patch failed, want success:\n%s", got)
		}
		if got != sc.output {
			t.Errorf("apply_patch answered:\n%s\nwant (output.txt):\n%s", got, sc.output)
		}
		want = snapshotTree(t, filepath.Join(src, "expected"))
	} else {
		if !res.IsError {
			t.Fatalf("apply_patch succeeded, want %s:\n%s", sc.errCode, got)
		}
		if !strings.HasPrefix(got, "["+sc.errCode+"] ") {
			t.Errorf("error code: got\n%s\nwant [%s]", got, sc.errCode)
		}
		for _, sub := range sc.errSubs {
			if !strings.Contains(got, sub) {
				t.Errorf("the error text lacks %q; it is:\n%s", sub, got)
			}
		}
	}

	after := snapshotTree(t, dir)
	compareScenarioTrees(t, after, want)
	for p, m := range sc.modes {
		e, ok := after[p]
		if !ok {
			if _, inBefore := before[p]; !inBefore {
				t.Errorf("mode.txt names %s, which is in neither the tree before nor the tree after", p)
			}
			continue
		}
		if e.mode != m {
			t.Errorf("%s: mode %04o, want %04o", p, e.mode, m)
		}
	}
}

// patchScenario is a scenario folder, read.
type patchScenario struct {
	args    map[string]any
	output  string // success text; "" when errCode is set
	errCode string
	errSubs []string
	modes   map[string]fs.FileMode // by slash path
	deny    []string
}

func loadPatchScenario(t *testing.T, src string) patchScenario {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	has := map[string]bool{}
	for _, e := range entries {
		if !slices.Contains(patchScenarioFiles, e.Name()) {
			t.Fatalf("unknown entry %s in the scenario; a scenario holds %s", e.Name(), strings.Join(patchScenarioFiles, ", "))
		}
		has[e.Name()] = true
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	sc := patchScenario{modes: map[string]fs.FileMode{}}
	switch {
	case has["patch.txt"] == has["operation.json"]:
		t.Fatal("a scenario needs patch.txt or operation.json, not both")
	case has["patch.txt"]:
		sc.args = map[string]any{"input": read("patch.txt")}
	default:
		var op map[string]any
		if err := json.Unmarshal([]byte(read("operation.json")), &op); err != nil {
			t.Fatalf("operation.json: %v", err)
		}
		sc.args = map[string]any{"operation": op}
	}

	switch {
	case has["output.txt"] == has["error.txt"]:
		t.Fatal("a scenario needs output.txt (success) or error.txt (failure), not both")
	case has["output.txt"]:
		sc.output = read("output.txt")
	default:
		if has["expected"] {
			t.Fatal("an error scenario has no expected/: the tree after is input/")
		}
		lines := strings.Split(strings.TrimSuffix(read("error.txt"), "\n"), "\n")
		sc.errCode = strings.TrimSpace(lines[0])
		if sc.errCode == "" {
			t.Fatal("error.txt: the first line must be the error code")
		}
		for i, l := range lines[1:] {
			if l == "" {
				continue
			}
			if strings.HasPrefix(l, `"`) {
				u, err := strconv.Unquote(l)
				if err != nil {
					t.Fatalf("error.txt line %d: %v", i+2, err)
				}
				l = u
			}
			sc.errSubs = append(sc.errSubs, l)
		}
	}

	if has["mode.txt"] {
		for i, l := range strings.Split(read("mode.txt"), "\n") {
			f := strings.Fields(l)
			if len(f) == 0 {
				continue
			}
			m, err := strconv.ParseUint(f[len(f)-1], 8, 32)
			if len(f) != 2 || err != nil || m > 0o777 {
				t.Fatalf("mode.txt line %d: want \"path 0755\", got %q", i+1, l)
			}
			sc.modes[filepath.ToSlash(f[0])] = fs.FileMode(m)
		}
	}
	if has["deny.txt"] {
		for l := range strings.SplitSeq(read("deny.txt"), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				sc.deny = append(sc.deny, l)
			}
		}
	}
	return sc
}

// copyScenarioTree copies the files and directories under src (which may be
// absent) into dst.
func copyScenarioTree(t *testing.T, src, dst string) {
	t.Helper()
	if _, err := os.Stat(src); os.IsNotExist(err) {
		return
	}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(out, 0o755)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(out, b, 0o644)
		}
		return fmt.Errorf("%s: only files and directories may be in a scenario's tree", p)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// treeEntry is a file or directory of a tree.
type treeEntry struct {
	dir  bool
	data []byte
	mode fs.FileMode
}

// snapshotTree reads every file and directory under root (an absent root is
// an empty tree), by slash path relative to root.
func snapshotTree(t *testing.T, root string) map[string]treeEntry {
	t.Helper()
	tree := map[string]treeEntry{}
	if _, err := os.Stat(root); os.IsNotExist(err) {
		return tree
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		e := treeEntry{dir: d.IsDir(), mode: info.Mode().Perm()}
		switch {
		case d.IsDir():
		case d.Type().IsRegular():
			if e.data, err = os.ReadFile(p); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: unexpected %v", p, d.Type())
		}
		tree[filepath.ToSlash(rel)] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// compareScenarioTrees reports every difference between the tree after the run and
// the expected one.
func compareScenarioTrees(t *testing.T, got, want map[string]treeEntry) {
	t.Helper()
	var paths []string
	for p := range got {
		paths = append(paths, p)
	}
	for p := range want {
		if _, ok := got[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	kind := func(e treeEntry) string {
		if e.dir {
			return "directory"
		}
		return "file"
	}
	for _, p := range paths {
		g, inGot := got[p]
		w, inWant := want[p]
		switch {
		case !inWant:
			t.Errorf("%s: unexpected %s after the patch", p, kind(g))
		case !inGot:
			t.Errorf("%s: missing after the patch (want a %s)", p, kind(w))
		case g.dir != w.dir:
			t.Errorf("%s: is a %s, want a %s", p, kind(g), kind(w))
		case !g.dir && !bytes.Equal(g.data, w.data):
			t.Errorf("%s: content differs: %s\n got: %q\nwant: %q", p, firstLineDiff(g.data, w.data), g.data, w.data)
		}
	}
}

// firstLineDiff names the first line where got and want differ.
func firstLineDiff(got, want []byte) string {
	g, w := strings.SplitAfter(string(got), "\n"), strings.SplitAfter(string(want), "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d is %q, want %q", i+1, gl, wl)
		}
	}
	return "same lines"
}
