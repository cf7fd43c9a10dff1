package blackbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io/fs"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/checkpoint"
	"github.com/boris-mcp/boris/internal/results"
)

// treeState is a workspace as the tests see it, read straight from the
// disk: path → "f <mode> <content>", "l <target>" or "d <mode>".
func treeState(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			tg, _ := os.Readlink(p)
			out[rel] = "l " + tg
		case fi.IsDir():
			out[rel] = fmt.Sprintf("d %o", fi.Mode().Perm())
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("f %o %s", fi.Mode().Perm(), b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// split parts a state into what checkpoints cover and what they do not
// (the ignored paths of the property test: *.log files and build/).
func split(s map[string]string) (covered, ignored map[string]string) {
	covered, ignored = map[string]string{}, map[string]string{}
	for k, v := range s {
		if isIgnored(k) {
			ignored[k] = v
		} else {
			covered[k] = v
		}
	}
	return covered, ignored
}

// isIgnored applies the property test's .gitignore ("*.log", "build/")
// to a path: a match on any component excludes what is below it.
func isIgnored(p string) bool {
	parts := strings.Split(p, "/")
	for i, c := range parts {
		if strings.HasSuffix(c, ".log") || (c == "build" && i < len(parts)-1) {
			return true
		}
		if c == "build" && i == len(parts)-1 {
			return true // a directory named build, or a file: git ignores only the directory; the test never makes a file "build"
		}
	}
	return false
}

func stateDiff(want, got map[string]string) []string {
	var out []string
	for k, v := range want {
		if w, ok := got[k]; !ok {
			out = append(out, "missing "+k)
		} else if v != w {
			out = append(out, fmt.Sprintf("differs %s: want %.40q got %.40q", k, v, w))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			out = append(out, "extra "+k)
		}
	}
	sort.Strings(out)
	return out
}

// expectedChanges are the paths a diff must name between two covered
// states: files and symlinks that differ, directories added or removed
// while empty, directories whose mode changed, and kind changes.
func expectedChanges(a, b map[string]string) []string {
	empty := func(m map[string]string, p string) bool {
		for k := range m {
			if strings.HasPrefix(k, p+"/") {
				return false
			}
		}
		return true
	}
	isDir := func(v string) bool { return strings.HasPrefix(v, "d ") }
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]string{a, b} {
		for p := range m {
			if seen[p] {
				continue
			}
			seen[p] = true
			va, ina := a[p]
			vb, inb := b[p]
			var changed bool
			switch {
			case ina && inb && isDir(va) == isDir(vb):
				changed = va != vb
			case ina && inb:
				changed = true
			case ina:
				changed = !isDir(va) || empty(a, p)
			default:
				changed = !isDir(vb) || empty(b, p)
			}
			if changed {
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}

// changeLine is a line of a change summary: "A  path  (details)".
var changeLine = regexp.MustCompile(`^([AMD])  (.+?)(  \(.*\))?$`)

// diffPaths are the paths the summary of a diff answer names.
func diffPaths(t *testing.T, text string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l == "" {
			break // the patches follow the first empty line
		}
		if m := changeLine.FindStringSubmatch(l); m != nil {
			out = append(out, m[2])
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

var idRe = regexp.MustCompile(`^checkpoint (c\d+)( created|: nothing changed)`)

func createCheckpoint(t *testing.T, cs *mcp.ClientSession, args map[string]any) string {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	args["action"] = "create"
	out := mustOK(t, cs, "checkpoint", args)
	m := idRe.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no id in %q", out)
	}
	return m[1]
}

// names the property test plays with: spaces, unicode, nesting, and the
// ignored ones.
var propNames = []string{"a", "b.txt", "sp ace", "ü ñ", "日本.txt", "d1/x", "d1/d2/y", "d1/d2", "d3", "e/f/g/h", "x.log", "build/out.o"}

func sq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// randomOp is a shell command making one random change.
func randomOp(r *mrand.Rand) string {
	p := propNames[r.IntN(len(propNames))]
	q := propNames[r.IntN(len(propNames))]
	mk := "mkdir -p \"$(dirname " + sq(p) + ")\" 2>/dev/null; rm -rf " + sq(p) + "; "
	switch r.IntN(11) {
	case 0: // text, sometimes CRLF, sometimes no final newline
		return mk + fmt.Sprintf("printf 'line %d\\r\\nsecond\\r\\n' > %s", r.IntN(100), sq(p))
	case 1:
		return mk + fmt.Sprintf("printf 'v%d\\nmore\\nlast' > %s", r.IntN(100), sq(p))
	case 2: // append to whatever is there
		return fmt.Sprintf("[ -f %s ] && printf 'appended %d\\n' >> %s; true", sq(p), r.IntN(100), sq(p))
	case 3:
		return "rm -rf " + sq(p)
	case 4:
		return fmt.Sprintf("[ -f %s ] && chmod %s %s; true", sq(p), []string{"+x", "-x"}[r.IntN(2)], sq(p))
	case 5: // a symlink: to a sibling, a directory, or nowhere
		return mk + fmt.Sprintf("ln -s %s %s", sq([]string{"a", "d1", "missing", "../b.txt"}[r.IntN(4)]), sq(p))
	case 6: // an empty directory, nested
		return mk + "mkdir -p " + sq(p+"/empty/nested")
	case 7: // binary
		return mk + fmt.Sprintf("head -c %d /dev/urandom > %s", 1+r.IntN(5000), sq(p))
	case 8: // rename
		if p == q || strings.HasPrefix(q, p+"/") || strings.HasPrefix(p, q+"/") {
			return "true"
		}
		return fmt.Sprintf("[ -e %s ] && mkdir -p \"$(dirname %s)\" 2>/dev/null && rm -rf %s && mv %s %s; true", sq(p), sq(q), sq(q), sq(p), sq(q))
	case 9: // a file replaced by a directory, and back
		return mk + "mkdir -p " + sq(p) + " && printf 'in dir' > " + sq(p+"/inside")
	default:
		return fmt.Sprintf("chmod %s %s 2>/dev/null; true", []string{"700", "755", "750"}[r.IntN(3)], sq(filepath.Dir(p)))
	}
}

// TestCheckpointProperty applies random sequences of changes through
// bash and checks that restore gives back exactly the recorded tree
// (contents, modes, symlink targets, directories), leaving ignored files
// as they are, that a restore of some paths changes only those, and that
// diff names exactly the paths that changed. It runs over stdio and HTTP,
// at the current revision and a handshake-era one.
func TestCheckpointProperty(t *testing.T) {
	steps := 40
	if testing.Short() {
		steps = 15
	}
	for i, a := range agents(t) {
		t.Run(a.name, func(t *testing.T) {
			r := mrand.New(mrand.NewPCG(uint64(i)+1, propSeed()))
			writeFile(t, filepath.Join(a.dir, ".gitignore"), "*.log\nbuild/\n")
			type point struct {
				id    string
				state map[string]string
			}
			var points []point
			for step := 0; step < steps; step++ {
				var cmds []string
				for k := 0; k < 1+r.IntN(4); k++ {
					cmds = append(cmds, randomOp(r))
				}
				script := strings.Join(cmds, "\n")
				mustOK(t, a.cs, "bash", map[string]any{"command": script})
				id := createCheckpoint(t, a.cs, nil)
				cov, _ := split(treeState(t, a.dir))
				points = append(points, point{id, cov})
				if n := len(points); n >= 2 {
					// diff between two checkpoints names exactly what
					// changed between them.
					res, err := a.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "checkpoint", Arguments: map[string]any{"action": "diff", "from": points[n-2].id, "to": points[n-1].id}})
					if err != nil || res.IsError {
						t.Fatalf("diff: %v %s", err, resultText(res))
					}
					out := resultText(res)
					want := expectedChanges(points[n-2].state, points[n-1].state)
					if got := diffPaths(t, out); !slices.Equal(got, want) {
						t.Fatalf("step %d (%s): diff %s→%s names %q, want %q\n%s", step, script, points[n-2].id, points[n-1].id, got, want, out)
					}
					// The structured answer validates and names the same.
					var data results.Checkpoint
					if err := json.Unmarshal(validated(t, a.cs, "checkpoint", res), &data); err != nil {
						t.Fatal(err)
					}
					var named []string
					for _, c := range data.Changes {
						named = append(named, strings.TrimPrefix(c.Path, a.dir+"/"))
					}
					slices.Sort(named)
					if !slices.Equal(named, want) || data.Added+data.Modified+data.Deleted != len(data.Changes) {
						t.Fatalf("step %d: structured diff names %q (%d+%d+%d), want %q", step, named, data.Added, data.Modified, data.Deleted, want)
					}
				}
				switch {
				case step%7 == 6:
					// Restore some paths only.
					p := points[r.IntN(len(points))]
					before := treeState(t, a.dir)
					paths := []string{propNames[r.IntN(len(propNames))], "d1"}
					mustOK(t, a.cs, "checkpoint", map[string]any{"action": "restore", "id": p.id, "paths": paths})
					under := func(k string) bool {
						for _, q := range paths {
							if k == q || strings.HasPrefix(k, q+"/") {
								return true
							}
						}
						return false
					}
					// What the restore must give: the paths asked for as
					// at the checkpoint, everything else as before; the
					// directories above a restored path are made (with the
					// checkpoint's mode) where missing or not directories.
					cov, ign := split(before)
					want := ign
					for k, v := range cov {
						if !under(k) {
							want[k] = v
						}
					}
					for k, v := range p.state {
						if !under(k) {
							continue
						}
						want[k] = v
						for a := filepath.Dir(k); a != "."; a = filepath.Dir(a) {
							if under(a) {
								continue
							}
							if cur, ok := want[a]; !ok || !strings.HasPrefix(cur, "d ") {
								want[a] = p.state[a]
							}
						}
					}
					got := treeState(t, a.dir)
					if d := stateDiff(want, got); len(d) > 0 {
						t.Fatalf("step %d: restore of %s (paths %q) left %v", step, p.id, paths, d)
					}
				case step%5 == 4:
					// Restore everything: exactly the recorded tree, the
					// ignored files as they were just before.
					p := points[r.IntN(len(points))]
					_, ignBefore := split(treeState(t, a.dir))
					out := mustOK(t, a.cs, "checkpoint", map[string]any{"action": "restore", "id": p.id})
					cov, ign := split(treeState(t, a.dir))
					if d := stateDiff(p.state, cov); len(d) > 0 {
						t.Fatalf("step %d: restore of %s left %v\n%s", step, p.id, d, out)
					}
					if d := stateDiff(ignBefore, ign); len(d) > 0 {
						t.Fatalf("step %d: restore of %s touched ignored files: %v", step, p.id, d)
					}
				}
			}
			// The default diff: from the session's first checkpoint to now.
			out := mustOK(t, a.cs, "checkpoint", map[string]any{"action": "diff"})
			if !strings.Contains(out, "this session's first checkpoint") {
				t.Fatalf("default diff: %s", out)
			}
		})
	}
}

// TestCheckpointDialects: the tool is there in every mode, automatic
// checkpoints are taken before each mode's own shell and edit tools, and
// diff and restore see what they did.
func TestCheckpointDialects(t *testing.T) {
	modes := []struct {
		name  string
		args  []string
		shell func(dir string) (string, map[string]any)
		edit  func(dir string) (string, map[string]any)
	}{
		{"default", nil,
			func(string) (string, map[string]any) { return "bash", map[string]any{"command": "printf new > n.txt"} },
			func(dir string) (string, map[string]any) {
				return "create_file", map[string]any{"path": "c.txt", "content": "created\n"}
			}},
		{"anthropic", []string{"--anthropic-compat"},
			func(string) (string, map[string]any) { return "bash", map[string]any{"command": "printf new > n.txt"} },
			func(dir string) (string, map[string]any) {
				return "str_replace_editor", map[string]any{"command": "create", "path": filepath.Join(dir, "c.txt"), "file_text": "created\n"}
			}},
		{"openai", []string{"--openai-compat"},
			func(string) (string, map[string]any) {
				return "shell", map[string]any{"command": []string{"bash", "-c", "printf new > n.txt"}}
			},
			func(string) (string, map[string]any) {
				return "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: c.txt\n+created\n*** End Patch\n"}
			}},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			dir := tempDir(t)
			writeFile(t, filepath.Join(dir, "keep.txt"), "keep\n")
			cs, _, _ := connectStdio(t, dir, m.args...)
			if !slices.Contains(toolNames(t, cs), "checkpoint") {
				t.Fatalf("no checkpoint tool in %v", toolNames(t, cs))
			}
			name, args := m.shell(dir)
			mustOK(t, cs, name, args)
			name, args = m.edit(dir)
			mustOK(t, cs, name, args)
			out := mustOK(t, cs, "checkpoint", map[string]any{"action": "list"})
			// The start-up checkpoint, then the one before the edit (the
			// shell call found nothing changed since start-up).
			if !strings.Contains(out, "at start-up") || !strings.Contains(out, "before "+name) {
				t.Fatalf("list: %s", out)
			}
			diff := mustOK(t, cs, "checkpoint", map[string]any{"action": "diff"})
			if got := diffPaths(t, diff); !slices.Equal(got, []string{"c.txt", "n.txt"}) {
				t.Fatalf("diff names %v:\n%s", got, diff)
			}
			mustOK(t, cs, "checkpoint", map[string]any{"action": "restore", "id": "c1"})
			if got := treeState(t, dir); len(got) != 1 || got["keep.txt"] != "f 644 keep\n" {
				t.Fatalf("after restore: %v", got)
			}
		})
	}
}

// TestCheckpointErrors: bad actions and ids come back with codes, and
// the tool says when checkpoints cannot work.
func TestCheckpointErrors(t *testing.T) {
	dir := tempDir(t)
	cs, _, _ := connectStdio(t, dir)
	mustErr(t, cs, "checkpoint", map[string]any{"action": "rewind"}, "INVALID_INPUT")
	mustErr(t, cs, "checkpoint", map[string]any{"action": "restore"}, "INVALID_INPUT")
	msg := mustErr(t, cs, "checkpoint", map[string]any{"action": "restore", "id": "c99"}, "CHECKPOINT_NOT_FOUND")
	if !strings.Contains(msg, "c1 to c1") {
		t.Fatalf("not found: %s", msg)
	}
	mustErr(t, cs, "checkpoint", map[string]any{"action": "diff", "from": "nope"}, "CHECKPOINT_NOT_FOUND")
	mustErr(t, cs, "checkpoint", map[string]any{"action": "diff", "paths": []string{"/etc"}}, "INVALID_INPUT")

	// A checkpoint directory inside the workspace is refused at start.
	out, err := exec.Command(binPath, "--transport=stdio", "--workdir="+dir, "--checkpoint-dir="+filepath.Join(dir, "store")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "inside the workspace") {
		t.Fatalf("store inside the workspace: %v %s", err, out)
	}
	// No usable default directory (the workspace is /): the tool says so.
	cs2, _, _ := connectStdio(t, "/", "--allow-dir=/")
	msg = mustErr(t, cs2, "checkpoint", map[string]any{"action": "list"}, "CHECKPOINT_DISABLED")
	if !strings.Contains(msg, "--checkpoint-dir") {
		t.Fatalf("disabled: %s", msg)
	}
}

// TestCheckpointTwoSessions: two sessions change files at the same time;
// every checkpoint records its session, list shows them all, each
// session's diff starts from its own first checkpoint, and the store stays
// consistent.
func TestCheckpointTwoSessions(t *testing.T) {
	dir := tempDir(t)
	store := tempDir(t)
	p := startInProcess(t, "--workdir="+dir, "--checkpoint-dir="+store)
	cs := connectHTTP(t, p.url, "", nil)
	h1, _ := newSession(t, cs, "bash", map[string]any{"command": "true"})
	h2, _ := newSession(t, cs, "bash", map[string]any{"command": "true"})
	var wg sync.WaitGroup
	for i, h := range []string{h1, h2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 15; k++ {
				mustOK(t, cs, "bash", map[string]any{"session": h, "command": fmt.Sprintf("mkdir -p s%d && printf %d > s%d/f%d", i, k, i, k%4)})
			}
		}()
	}
	wg.Wait()
	mustOK(t, cs, "bash", map[string]any{"session": h1, "command": "true"})
	list := mustOK(t, cs, "checkpoint", map[string]any{"action": "list", "session": h1})
	if !strings.Contains(list, "this session") || !strings.Contains(list, "session "+h2[:8]) {
		t.Fatalf("list does not tell the sessions apart:\n%s", list)
	}
	d1 := mustOK(t, cs, "checkpoint", map[string]any{"action": "diff", "session": h1})
	d2 := mustOK(t, cs, "checkpoint", map[string]any{"action": "diff", "session": h2})
	for _, d := range []string{d1, d2} {
		if !strings.Contains(d, "this session's first checkpoint") {
			t.Fatalf("diff: %s", d)
		}
	}
	for _, want := range []string{"s0/f3", "s1/f3"} {
		if !slices.Contains(diffPaths(t, d1), want) {
			t.Fatalf("session 1's diff lacks %s:\n%s", want, d1)
		}
	}
	// A restore by one session undoes both sessions' work; the other
	// session's next command sees it.
	mustOK(t, cs, "checkpoint", map[string]any{"action": "restore", "id": "c1", "session": h2})
	out := mustOK(t, cs, "bash", map[string]any{"session": h1, "command": "ls"})
	if strings.Contains(out, "s0") || strings.Contains(out, "s1") {
		t.Fatalf("after restore: %s", out)
	}
	verifyStore(t, store, dir)
}

// verifyStore checks that every object of every checkpoint of the
// workspace is in the store and matches its hash.
func verifyStore(t *testing.T, parent string, roots ...string) {
	t.Helper()
	st, err := checkpoint.OpenStore(parent, roots)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Verify(); err != nil {
		t.Fatalf("the store is damaged: %v", err)
	}
	left, _ := os.ReadDir(filepath.Join(st.Dir, "tmp"))
	if len(left) > 0 {
		t.Fatalf("leftovers in the store's tmp/: %v", left)
	}
}

// randomFiles fills dir with n files of size bytes of random data.
func randomFiles(t *testing.T, dir string, n, size int) {
	t.Helper()
	for i := 0; i < n; i++ {
		b := make([]byte, size)
		rand.Read(b)
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%10), fmt.Sprintf("f%04d.bin", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// tmpfs mounts a tmpfs of the given size (bytes) for the test; the
// disk-full tests need root.
func tmpfs(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small file system to fill needs root")
	}
	dir := tempDir(t)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0755", size)); err != nil {
		t.Fatalf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// TestCheckpointDiskFull: a full disk under the store refuses the
// checkpoint with a clear answer and leaves the store as it was; a full
// disk under the workspace makes a restore fail before it changes
// anything.
func TestCheckpointDiskFull(t *testing.T) {
	t.Run("store", func(t *testing.T) {
		store := tmpfs(t, 1<<20)
		dir := tempDir(t)
		writeFile(t, filepath.Join(dir, "small.txt"), "small\n")
		cs, _, _ := connectStdio(t, dir, "--checkpoint-dir="+store)
		mustOK(t, cs, "bash", map[string]any{"command": "true"}) // after the start-up checkpoint
		randomFiles(t, dir, 30, 100<<10)                         // 3 MB that does not compress
		out, isErr := call(t, cs, "bash", map[string]any{"command": "echo hi"})
		if isErr || !strings.Contains(out, "hi") || !strings.Contains(out, "no checkpoint was taken before this call") || !strings.Contains(out, "full") {
			t.Fatalf("bash with the store's disk full: %s", out)
		}
		// Told once, not at every call.
		if out := mustOK(t, cs, "bash", map[string]any{"command": "echo again"}); strings.Contains(out, "no checkpoint") {
			t.Fatalf("told twice: %s", out)
		}
		msg := mustErr(t, cs, "checkpoint", map[string]any{"action": "create"}, "CHECKPOINT_FAILED")
		if !strings.Contains(msg, "full") {
			t.Fatalf("create: %s", msg)
		}
		list := mustOK(t, cs, "checkpoint", map[string]any{"action": "list"})
		if !strings.Contains(list, "1 checkpoint ") {
			t.Fatalf("list after the failures: %s", list)
		}
		verifyStore(t, store, dir)
		// Space again: checkpoints work again.
		os.RemoveAll(filepath.Join(dir, "d00"))
		os.RemoveAll(filepath.Join(dir, "d01"))
		for i := 2; i < 10; i++ {
			os.RemoveAll(filepath.Join(dir, fmt.Sprintf("d%02d", i)))
		}
		createCheckpoint(t, cs, nil)
		verifyStore(t, store, dir)
	})
	t.Run("workspace", func(t *testing.T) {
		dir := tmpfs(t, 2<<20)
		store := tempDir(t)
		b := make([]byte, 600<<10)
		rand.Read(b)
		if err := os.WriteFile(filepath.Join(dir, "a.bin"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, ".gitignore"), "filler\n")
		cs, _, _ := connectStdio(t, dir, "--checkpoint-dir="+store)
		first := createCheckpoint(t, cs, nil)
		// A new version, then the disk filled with an ignored file.
		mustOK(t, cs, "bash", map[string]any{"command": "head -c 600000 /dev/urandom > a.bin; printf v2 > b.txt; dd if=/dev/zero of=filler bs=64k 2>/dev/null; true"})
		before := treeState(t, dir)
		msg := mustErr(t, cs, "checkpoint", map[string]any{"action": "restore", "id": first}, "CHECKPOINT_FAILED")
		if !strings.Contains(msg, "nothing was changed") {
			t.Fatalf("restore on a full disk: %s", msg)
		}
		if d := stateDiff(before, treeState(t, dir)); len(d) > 0 {
			t.Fatalf("a failed restore changed the workspace: %v", d)
		}
		os.Remove(filepath.Join(dir, "filler"))
		mustOK(t, cs, "checkpoint", map[string]any{"action": "restore", "id": first})
		got, err := os.ReadFile(filepath.Join(dir, "a.bin"))
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("a.bin not restored: %v", err)
		}
		verifyStore(t, store, dir)
	})
}

// startKillable starts the binary over stdio for a test that kills it.
func startKillable(t *testing.T, dir, store string, env ...string) (*mcp.ClientSession, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(binPath, "--transport=stdio", "--workdir="+dir, "--checkpoint-dir="+store, "--log-level=debug")
	cmd.Env = append(os.Environ(), env...)
	cs, _ := connectCmd(t, cmd, defaultClient, nil)
	t.Cleanup(func() { cs.Close(); _ = cmd.Process.Kill() })
	return cs, cmd
}

// TestCheckpointKilled: boris killed (SIGKILL) in the middle of a big
// checkpoint and in the middle of a big restore. Started again on the
// same store, the store is consistent, the leftovers are gone, each file
// of the workspace is whole (as before the restore or as restored), and
// the restore can be finished.
func TestCheckpointKilled(t *testing.T) {
	dir := tempDir(t)
	store := tempDir(t)
	randomFiles(t, dir, 400, 150<<10) // 60 MB of incompressible data
	// Killed during the start-up checkpoint: a pack is being written.
	cmd := exec.Command(binPath, "--transport=stdio", "--workdir="+dir, "--checkpoint-dir="+store)
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, func() bool {
		ents, _ := filepath.Glob(filepath.Join(store, "ws-*", "tmp", "p-*.pack"))
		return len(ents) > 0
	})
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	stdin.Close()
	verifyStoreLeft(t, store, dir)
	verifyStore(t, store, dir) // opening it removed the partial pack

	// The test build pauses after each file the restore puts in place, so
	// the kill lands in the middle of the second phase: 400 files × 20 ms
	// leave 8 s to see 50 of them restored (reading the tree takes a while
	// on a loaded machine) and kill boris before the last one.
	cs, cmd := startKillable(t, dir, store, "BORIS_CHECKPOINT_TEST_RENAME_PAUSE=20ms")
	first := createCheckpoint(t, cs, map[string]any{"label": "original"})
	original := treeState(t, dir)
	// Every file gets a new content.
	mustOK(t, cs, "bash", map[string]any{"command": "for f in d*/*.bin; do head -c 153600 /dev/urandom > \"$f\"; done"})
	changed := treeState(t, dir)
	createCheckpoint(t, cs, nil)
	// Killed in the middle of the restore: some files renamed into place,
	// others still staged.
	go func() {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "checkpoint", Arguments: map[string]any{"action": "restore", "id": first}})
	}()
	waitFor(t, 30*time.Second, func() bool {
		// Read while the restore renames: errors are expected, skipped.
		n := 0
		files, _ := filepath.Glob(filepath.Join(dir, "d*", "*.bin"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			rel, _ := filepath.Rel(dir, f)
			if err == nil && "f 644 "+string(b) == original[rel] {
				n++
			}
		}
		return n >= 50
	})
	_ = cmd.Process.Kill()
	// The client's transport waits for the process (a second Wait here
	// would race with it); closing the client returns once it has.
	_ = cs.Close()
	now := treeState(t, dir)
	restored, staged := 0, 0
	for k, v := range now {
		if strings.Contains(k, ".boris-restore-") {
			staged++ // removed when the store is opened again
			continue
		}
		if v != original[k] && v != changed[k] {
			t.Fatalf("%s is neither as before nor as restored", k)
		}
		if v == original[k] && v != changed[k] {
			restored++
		}
	}
	if restored == 0 || staged == 0 {
		t.Fatalf("the kill did not land in the middle of the restore: %d files restored, %d staged", restored, staged)
	}
	t.Logf("killed with %d files restored and %d staged", restored, staged)

	cs, _ = startKillable(t, dir, store)
	list := mustOK(t, cs, "checkpoint", map[string]any{"action": "list"})
	if !strings.Contains(list, "was cut short") {
		t.Fatalf("list does not tell of the interrupted restore:\n%s", list)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "d*", ".boris-restore-*")); len(left) > 0 {
		t.Fatalf("staged files left after the restart: %v", left)
	}
	mustOK(t, cs, "checkpoint", map[string]any{"action": "restore", "id": first})
	if d := stateDiff(original, treeState(t, dir)); len(d) > 0 {
		t.Fatalf("the finished restore left %v", d[:min(len(d), 5)])
	}
	verifyStore(t, store, dir)
}

// verifyStoreLeft checks that a killed process left no visible partial
// file in the store: whatever is half written is in tmp/.
func verifyStoreLeft(t *testing.T, parent string, roots ...string) {
	t.Helper()
	st, err := filepath.Glob(filepath.Join(parent, "ws-*"))
	if err != nil || len(st) != 1 {
		t.Fatalf("stores: %v %v", st, err)
	}
	ents, _ := os.ReadDir(st[0])
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".pack") || strings.HasPrefix(e.Name(), "c-") {
			t.Logf("committed: %s", e.Name())
		}
	}
}

func waitFor(t *testing.T, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

var storeRe = regexp.MustCompile(`the store holds ([\d.]+) (B|KB|MB)`)

// TestCheckpointBound: the store stays within --checkpoint-max-bytes, the
// oldest checkpoints going first, and a workspace that cannot fit is
// refused with a clear answer.
func TestCheckpointBound(t *testing.T) {
	dir := tempDir(t)
	store := tempDir(t)
	cs, _, _ := connectStdio(t, dir, "--checkpoint-dir="+store, "--checkpoint-max-bytes=400KB")
	for i := 0; i < 8; i++ {
		mustOK(t, cs, "bash", map[string]any{"command": "head -c 100000 /dev/urandom > f.bin"})
		createCheckpoint(t, cs, nil)
	}
	list := mustOK(t, cs, "checkpoint", map[string]any{"action": "list"})
	m := storeRe.FindStringSubmatch(list)
	if m == nil {
		t.Fatalf("list: %s", list)
	}
	if strings.Contains(list, "c1 ") || strings.Contains(list, "c2 ") || !strings.Contains(list, "c9 ") {
		t.Fatalf("the oldest should be pruned, the newest kept:\n%s", list)
	}
	var size int64
	filepath.WalkDir(store, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			fi, _ := d.Info()
			size += fi.Size()
		}
		return nil
	})
	if size > 400<<10+8<<10 { // the bound, and the lock, owner and gen files
		t.Fatalf("the store takes %d bytes on disk, over the bound", size)
	}
	mustErr(t, cs, "checkpoint", map[string]any{"action": "restore", "id": "c1"}, "CHECKPOINT_NOT_FOUND")
	// A workspace that does not fit.
	mustOK(t, cs, "bash", map[string]any{"command": "head -c 600000 /dev/urandom > big.bin"})
	out := mustOK(t, cs, "bash", map[string]any{"command": "echo next"})
	if !strings.Contains(out, "CHECKPOINT_TOO_LARGE") || !strings.Contains(out, "--checkpoint-max-bytes") {
		t.Fatalf("bash after the workspace outgrew the bound: %s", out)
	}
	mustErr(t, cs, "checkpoint", map[string]any{"action": "create"}, "CHECKPOINT_TOO_LARGE")
	verifyStore(t, store, dir)
}

// TestCheckpointSandbox: with --sandbox on, commands can neither read nor
// change the checkpoint store; a store where they may write is refused.
func TestCheckpointSandbox(t *testing.T) {
	l := newSBLayout(t)
	store := filepath.Join(l.outside, "ckpt")
	cs, _ := startSandboxed(t, l, nil, "--sandbox=on", "--checkpoint-dir="+store)
	createCheckpoint(t, cs, nil)
	// Names stay listable (as with every --deny-dir path: Landlock grants
	// reading directories from the root down); contents do not.
	for _, cmd := range []string{"cat " + store + "/ws-*/roots", "cat " + store + "/ws-*/c-00000001.json", "rm -rf " + store, "touch " + store + "/x", "mv " + store + " " + l.ws + "/stolen"} {
		code, out := bashExit(t, cs, cmd)
		if code == 0 || !strings.Contains(out, "denied") {
			t.Fatalf("%s: exit %d %s", cmd, code, out)
		}
	}
	verifyStore(t, store, l.ws)
	// Inside the directories sandboxed commands may write: refused.
	cmd := exec.Command(binPath, "--transport=stdio", "--workdir="+l.ws, "--sandbox=on", "--checkpoint-dir="+filepath.Join(l.tmp, "ckpt"))
	cmd.Env = append(os.Environ(), "TMPDIR="+l.tmp)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "sandboxed commands may write") {
		t.Fatalf("store in TMPDIR with the sandbox on: %v %s", err, out)
	}
}

// propSeed varies the property test's sequences: BORIS_PROP_SEED, else a
// fixed seed so a failure reproduces.
func propSeed() uint64 {
	var n uint64 = 99
	fmt.Sscan(os.Getenv("BORIS_PROP_SEED"), &n)
	return n
}

// TestCheckpointBackgroundChanges: what a background task changes after
// its call has answered is in the checkpoint before the next call.
func TestCheckpointBackgroundChanges(t *testing.T) {
	dir := tempDir(t)
	cs, _, _ := connectStdio(t, dir)
	mustOK(t, cs, "bash", map[string]any{"command": "sleep 0.3; printf late > late.txt; mkdir -p gen/deep; printf x > gen/deep/out", "run_in_background": true})
	waitFor(t, 10*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "gen/deep/out"))
		return string(b) == "x"
	})
	mustOK(t, cs, "bash", map[string]any{"command": "true"})
	list := mustOK(t, cs, "checkpoint", map[string]any{"action": "list"})
	m := regexp.MustCompile(`(?m)^(c\d+) .*before bash: ` + "`true`").FindStringSubmatch(list)
	if m == nil {
		t.Fatalf("no checkpoint before the second call:\n%s", list)
	}
	out := mustOK(t, cs, "checkpoint", map[string]any{"action": "diff", "from": "c1", "to": m[1]})
	if got := diffPaths(t, out); !slices.Equal(got, []string{"gen/deep/out", "late.txt"}) {
		t.Fatalf("the checkpoint after the background task holds %v:\n%s", got, out)
	}
}
