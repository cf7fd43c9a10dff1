package blackbox

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/patch/corpus"
)

// minCorpus is the fewest commits the corpus test accepts: fewer means a
// shallow or truncated checkout, not this repository's history.
const minCorpus = 100

// TestPatchCorpus applies this repository's own history as V4A patches:
// every commit, written as the patch that makes it from its parent — once
// with an "@@ <enclosing func or type>" line per hunk, repeated where
// hunks share one (as git names hunks and as models following OpenAI's
// guide write them), once with bare "@@" — is applied at the parent
// through the binary's apply_patch, and every file the commit changes
// must come out byte for byte as the commit has it. Changes a patch cannot
// express (symbolic links, binary files, a mode change alone, a new last
// line without a final newline) are left out and counted.
//
// The commits alternate between two servers: boris's own dialect over
// stdio (the patch as input), and --openai-compat over HTTP (the patch
// through the shell tool as Codex runs it, and as Responses-API
// operations, one per file).
func TestPatchCorpus(t *testing.T) {
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("the corpus test needs this repository's git history: git rev-parse: %v", err)
	}
	repo, err := corpus.Open(strings.TrimSpace(string(root)))
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	shallow, err := repo.Shallow()
	if err != nil {
		t.Fatal(err)
	}
	if shallow {
		t.Fatalf("the checkout is shallow: the corpus test needs the whole history (git fetch --unshallow)")
	}
	revs, err := repo.History()
	if err != nil {
		t.Fatal(err)
	}
	if len(revs) < minCorpus {
		t.Fatalf("the history has %d commits, fewer than %d: the corpus test needs the whole history (a truncated clone?)", len(revs), minCorpus)
	}

	work := tempDir(t)
	stdio, cmd, _ := connectStdio(t, work, "--log-level=warn")
	t.Cleanup(func() { stdio.Close(); _ = cmd.Wait() })
	url, _ := serveBinary(t, exec.Command(binPath, "--port=0", "--workdir="+work, "--openai-compat"))
	web := connectHTTP(t, url, "", nil)

	var stats [2]corpus.Stats
	skipped := map[corpus.Reason]int{}
	applied, empty, modes, failures := 0, 0, 0, 0
	for n, rev := range revs {
		c, err := repo.Load(rev)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range c.Skipped {
			skipped[s.Reason]++
		}
		modes += c.ModeChanges
		if len(c.Files) == 0 {
			empty++
			continue
		}
		for _, style := range []corpus.Style{corpus.Headers, corpus.Bare} {
			prefix := fmt.Sprintf("%03d-%s/", n, style)
			secs, st := c.Sections(style, prefix)
			stats[style].Add(st)
			dir := filepath.Join(work, prefix)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, f := range c.Files {
				if f.From != "" {
					p := filepath.Join(dir, f.From)
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					writeFile(t, p, string(f.Before))
				}
			}
			how, msg := applyCorpusPatch(t, n%2 == 0, style, stdio, web, secs)
			if msg == "" {
				msg = compareCommit(t, dir, c)
			}
			if msg != "" {
				failures++
				t.Errorf("commit %s (%d of %d), %s, %s:\n%s", rev.ID[:12], n+1, len(revs), style, how, msg)
				if failures >= 5 {
					t.FailNow()
				}
			}
		}
		applied++
	}

	for _, style := range []corpus.Style{corpus.Headers, corpus.Bare} {
		s := stats[style]
		t.Logf("%s: %d sections, %d hunks (%d with a header, %d of them repeated or passed; %d headers left out as misleading), %d given wider context, %d closed by *** End of File",
			style, s.Sections, s.Hunks, s.Headers, s.Repeated, s.Dropped, s.Widened, s.EndOfFile)
	}
	var reasons []string
	for r, k := range skipped {
		reasons = append(reasons, fmt.Sprintf("%s: %d", r, k))
	}
	slices.Sort(reasons)
	t.Logf("%d commits: %d applied in both styles, %d with nothing a patch can express; files left out: %s; content changes whose mode change a patch does not carry: %d",
		len(revs), applied, empty, strings.Join(append(reasons, "none")[:max(1, len(reasons))], ", "), modes)
	if stats[corpus.Headers].Repeated == 0 {
		t.Errorf("no hunk of the corpus repeated a header already passed: the test no longer covers the case")
	}
}

// applyCorpusPatch applies a commit's sections through one of the two
// servers and returns how, and the error text of a failed call.
func applyCorpusPatch(t *testing.T, onStdio bool, style corpus.Style, stdio, web *mcp.ClientSession, secs []corpus.Section) (string, string) {
	t.Helper()
	text := corpus.Text(secs)
	if onStdio {
		return "stdio apply_patch input", callCorpus(t, stdio, "apply_patch", map[string]any{"input": text})
	}
	moved := slices.ContainsFunc(secs, func(s corpus.Section) bool { return s.MoveTo != "" })
	if style == corpus.Headers || moved {
		return "HTTP --openai-compat shell [apply_patch, patch]", callCorpus(t, web, "shell", map[string]any{"command": []any{"apply_patch", text}})
	}
	types := map[string]string{"add": "create_file", "update": "update_file", "delete": "delete_file"}
	for _, s := range secs {
		op := map[string]any{"type": types[s.Op], "path": s.Path}
		if s.Op != "delete" {
			op["diff"] = s.Body
		}
		if msg := callCorpus(t, web, "apply_patch", map[string]any{"operation": op}); msg != "" {
			return "HTTP --openai-compat apply_patch operations", fmt.Sprintf("%s %s: %s", types[s.Op], s.Path, msg)
		}
	}
	return "HTTP --openai-compat apply_patch operations", ""
}

// callCorpus calls a tool and returns its error text, "" on success.
func callCorpus(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	text := resultText(res)
	if res.IsError {
		return text
	}
	if !strings.Contains(text, "Success. Updated the following files:") {
		return "unexpected answer: " + text
	}
	return ""
}

// compareCommit compares dir with the commit's files and says how it
// differs, "" when it holds exactly them.
func compareCommit(t *testing.T, dir string, c *corpus.Commit) string {
	t.Helper()
	want := map[string][]byte{}
	for _, f := range c.Files {
		if f.To != "" {
			want[f.To] = f.After
		}
	}
	var diffs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		got, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		w, ok := want[rel]
		switch {
		case !ok:
			diffs = append(diffs, rel+": should not exist")
		case string(got) != string(w):
			diffs = append(diffs, fmt.Sprintf("%s: differs from the commit at byte %d (%d bytes, want %d)", rel, firstDiff(got, w), len(got), len(w)))
		}
		delete(want, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel := range want {
		diffs = append(diffs, rel+": missing")
	}
	slices.Sort(diffs)
	return strings.Join(diffs, "\n")
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestApplyPatchRealWorldRulesEveryDialect: in every dialect and through
// every way apply_patch is reached, a second hunk under the same repeated
// "@@ class" header applies, and a file without a final newline edited in
// its middle keeps none.
func TestApplyPatchRealWorldRulesEveryDialect(t *testing.T) {
	const before = "class Request(object):\n    def __init__(self, url):\n        self.url = url\n        self.headers = {}\n\n    def prepare(self):\n        self.body = None\n        return self\n\n    def send(self):\n        return self.body\n\n\nVERSION = 1"
	const after = "class Request(object):\n    def __init__(self, url):\n        self.url = url\n        self.headers = {'a': 1}\n\n    def prepare(self):\n        self.body = None\n        return self\n\n    def send(self):\n        return self.body or b''\n\n\nVERSION = 1"
	const hunks = "@@ class Request(object):\n         self.url = url\n-        self.headers = {}\n+        self.headers = {'a': 1}\n \n" +
		"@@ class Request(object):\n     def send(self):\n-        return self.body\n+        return self.body or b''\n \n"
	patch := "*** Begin Patch\n*** Update File: req.py\n" + hunks + "*** End Patch\n"
	type way struct {
		tool string
		args map[string]any
	}
	for _, mode := range []struct {
		name string
		args []string
		ways []way
	}{
		{"default", nil, []way{{"apply_patch", map[string]any{"input": patch}}}},
		{"anthropic-compat", []string{"--anthropic-compat"}, []way{{"apply_patch", map[string]any{"input": patch}}}},
		{"openai-compat", []string{"--openai-compat"}, []way{
			{"apply_patch", map[string]any{"input": patch}},
			{"apply_patch", map[string]any{"operation": map[string]any{"type": "update_file", "path": "req.py", "diff": hunks}}},
			{"shell", map[string]any{"command": []any{"apply_patch", patch}}},
			{"shell", map[string]any{"command": []any{"bash", "-lc", "apply_patch <<'EOF'\n" + patch + "EOF\n"}}},
		}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			dir := tempDir(t)
			cs, cmd, _ := connectStdio(t, dir, mode.args...)
			t.Cleanup(func() { cs.Close(); _ = cmd.Wait() })
			for _, w := range mode.ways {
				writeFile(t, filepath.Join(dir, "req.py"), before)
				if got := mustOK(t, cs, w.tool, w.args); !strings.Contains(got, "Success. Updated the following files:\nM req.py\n") {
					t.Fatalf("%s %v: %q", w.tool, w.args, got)
				}
				got, err := os.ReadFile(filepath.Join(dir, "req.py"))
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != after {
					t.Fatalf("%s %v: the file is\n%q\nwant\n%q", w.tool, w.args, got, after)
				}
			}
		})
	}
}
