package blackbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// writeNested writes a file, making its directories.
func writeNested(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, content)
}

// raceTree fills dir with files enough for the start-up checkpoint to take
// a while (2,000 files), an executable, a symlink, nested directories and
// ignored files (the .gitignore of the property test: *.log, build/). As
// a git work tree it is committed, with a branch "other" that lacks
// only-main.txt.
func raceTree(t *testing.T, dir string, withGit bool) {
	t.Helper()
	line := strings.Repeat("the quick brown fox jumps over the lazy dog ", 4) + "\n"
	for i := 0; i < 2000; i++ {
		writeNested(t, filepath.Join(dir, fmt.Sprintf("d%02d/f%03d.txt", i%20, i)), fmt.Sprintf("file %d\n", i)+strings.Repeat(line, 10+i%30))
	}
	writeNested(t, filepath.Join(dir, "run.sh"), "#!/bin/sh\necho hi\n")
	os.Chmod(filepath.Join(dir, "run.sh"), 0o755)
	writeNested(t, filepath.Join(dir, "sub/deep/x.txt"), "deep\n")
	writeNested(t, filepath.Join(dir, "only-main.txt"), "main only\n")
	writeNested(t, filepath.Join(dir, "edit.txt"), "alpha\nbeta\ngamma\n")
	if err := os.Symlink("run.sh", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	writeNested(t, filepath.Join(dir, ".gitignore"), "*.log\nbuild/\n")
	writeNested(t, filepath.Join(dir, "keep.log"), "ignored\n")
	writeNested(t, filepath.Join(dir, "build/out.o"), "ignored build\n")
	if !withGit {
		return
	}
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "base")
	gitIn(t, dir, "checkout", "-q", "-b", "other")
	gitIn(t, dir, "rm", "-q", "only-main.txt")
	gitIn(t, dir, "commit", "-qm", "other")
	gitIn(t, dir, "checkout", "-q", "-")
}

// covered is a tree's state without what checkpoints leave out (.git and
// the ignored files).
func covered(t *testing.T, dir string) map[string]string {
	t.Helper()
	cov, _ := split(treeState(t, dir))
	for k := range cov {
		if k == ".git" || strings.HasPrefix(k, ".git/") {
			delete(cov, k)
		}
	}
	return cov
}

// TestCheckpointStartupRace: calls that change the workspace — bash, a
// background task, the edit tools, git itself (a checkout deleting a
// file, a stash, then a commit rewritten and the old objects pruned) —
// are made at once while the start-up checkpoint is being taken, on a
// git work tree and on a plain one. Restoring the start-up checkpoint
// gives back exactly the tree boris found (contents, modes, symlinks,
// renames undone, deleted files back), leaving the ignored files as the
// calls left them; restoring the checkpoint the restore made gives back
// the tree as it was before it.
func TestCheckpointStartupRace(t *testing.T) {
	for _, kind := range []string{"git", "plain"} {
		t.Run(kind, func(t *testing.T) {
			dir := tempDir(t)
			store := tempDir(t)
			marks := tempDir(t)
			raceTree(t, dir, kind == "git")
			s0 := covered(t, dir)
			baseCommit := "none"
			if kind == "git" {
				out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
				if err != nil {
					t.Fatal(err)
				}
				baseCommit = strings.TrimSpace(string(out))
			}
			cs, _, logs := connectStdio(t, dir, "--checkpoint-dir="+store)

			var wg sync.WaitGroup
			errs := make(chan string, 8)
			do := func(name string, args map[string]any) {
				defer wg.Done()
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
				if err != nil || res.IsError {
					errs <- fmt.Sprintf("%s %v: %v %s", name, args, err, resultText(res))
				}
			}
			wg.Add(4)
			go do("bash", map[string]any{"command": `for f in d0*/f00*.txt; do echo changed >> "$f"; done
rm -f d01/f001.txt
mv sub sub2
chmod +x d02/f002.txt
chmod -x run.sh
rm link && ln -s d03/f003.txt link
echo more >> keep.log
echo new > build/new.o`})
			// The background task says it is done outside the workspace
			// (git stash -u would take an untracked marker away).
			go do("bash", map[string]any{"run_in_background": true, "command": `for i in 1 2 3 4 5; do echo bg$i >> d05/f005.txt; sleep 0.02; done
rm -f d06/f006.txt
echo done > ` + filepath.Join(marks, "bgdone")})
			go func() {
				defer wg.Done()
				mustOK(t, cs, "view", map[string]any{"path": filepath.Join(dir, "edit.txt")})
				mustOK(t, cs, "str_replace", map[string]any{"path": filepath.Join(dir, "edit.txt"), "old_str": "beta\n", "new_str": "BETA\n"})
				mustOK(t, cs, "create_file", map[string]any{"path": filepath.Join(dir, "d08/created.txt"), "content": "made by create_file\n"})
			}()
			go func() {
				defer wg.Done()
				if kind == "git" {
					// A checkout that deletes only-main.txt, then a stash
					// that takes away whatever is changed or untracked
					// by then.
					mustOK(t, cs, "bash", map[string]any{"command": "git checkout -q other 2>&1; git -c user.name=t -c user.email=t@t stash -u -q 2>&1; true"})
				} else {
					mustOK(t, cs, "bash", map[string]any{"command": "rm -f only-main.txt; mv d09/f009.txt d09/renamed.txt"})
				}
			}()
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Fatal(e)
			}
			waitFor(t, 60*time.Second, func() bool {
				_, err := os.Stat(filepath.Join(marks, "bgdone"))
				return err == nil
			})
			if kind == "git" {
				// What git held at start becomes unreachable and is
				// pruned: the checkpoints keep their own copies.
				// Nothing reaches the first commit any more: a history of
				// one new commit, the old branches, stash and reflogs gone.
				mustOK(t, cs, "bash", map[string]any{"command": `set -e
git checkout -q --orphan fresh
git add -A
git -c user.name=t -c user.email=t@t commit -qm fresh
git for-each-ref --format='%(refname:short)' refs/heads | grep -vx fresh | xargs -r git branch -q -D
git stash clear
git reflog expire --expire=now --all
git gc -q --prune=now
test -z "$(git rev-list --all | grep -x ` + baseCommit + `)"`})
			}
			// The first checkpoint is the start-up one.
			list := mustOK(t, cs, "checkpoint", map[string]any{"action": "list"})
			if !regexp.MustCompile(`(?m)^c1 .*at start-up`).MatchString(list) {
				t.Fatalf("c1 is not the start-up checkpoint:\n%s", list)
			}
			ignoredBefore := treeState(t, dir)
			s1 := covered(t, dir)
			out := mustOK(t, cs, "checkpoint", map[string]any{"action": "restore", "id": "c1"})
			if d := stateDiff(s0, covered(t, dir)); len(d) > 0 {
				t.Fatalf("restore of the start-up checkpoint left %d differences: %v\n%s\n%s", len(d), d[:min(len(d), 10)], out, logs)
			}
			// Ignored files are left as the calls left them.
			for _, p := range []string{"keep.log", "build/out.o", "build/new.o"} {
				if got := treeState(t, dir)[p]; got != ignoredBefore[p] {
					t.Fatalf("%s: %q after the restore, %q before", p, got, ignoredBefore[p])
				}
			}
			m := regexp.MustCompile(`the state before this restore is checkpoint (c\d+)`).FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("the restore does not name the checkpoint of the state before it:\n%s", out)
			}
			before := m[1]
			mustOK(t, cs, "checkpoint", map[string]any{"action": "restore", "id": before})
			if d := stateDiff(s1, covered(t, dir)); len(d) > 0 {
				t.Fatalf("undoing the restore left %v", d[:min(len(d), 10)])
			}
			verifyStore(t, store, dir)
		})
	}
}

// TestCheckpointStartupWait: while the start-up checkpoint is being taken
// (held here by the test build's gate), reads answer at once — view,
// grep, find, checkpoint list, which says the start-up checkpoint is
// being taken — and a call that can change the workspace waits, telling a
// client that gave a progress token so; once the start-up checkpoint is
// taken the call runs, and that checkpoint holds the tree as it was
// before the call.
func TestCheckpointStartupWait(t *testing.T) {
	dir := tempDir(t)
	store := tempDir(t)
	gate := filepath.Join(tempDir(t), "open")
	writeFile(t, filepath.Join(dir, "a.txt"), "needle\n")
	progress := make(chan string, 16)
	opts := &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		select {
		case progress <- req.Params.Message:
		default:
		}
	}}
	cmd := exec.Command(binPath, "--transport=stdio", "--workdir="+dir, "--checkpoint-dir="+store, "--log-level=debug")
	cmd.Env = append(os.Environ(), "BORIS_CHECKPOINT_TEST_BASELINE_GATE="+gate)
	cs, _ := connectCmd(t, cmd, defaultClient, opts)

	if out := mustOK(t, cs, "view", map[string]any{"path": filepath.Join(dir, "a.txt")}); !strings.Contains(out, "needle") {
		t.Fatalf("view: %s", out)
	}
	mustOK(t, cs, "grep", map[string]any{"pattern": "needle"})
	mustOK(t, cs, "find", map[string]any{"pattern": "*.txt"})
	if out := mustOK(t, cs, "checkpoint", map[string]any{"action": "list"}); !strings.Contains(out, "start-up checkpoint is being taken") {
		t.Fatalf("list during the start-up checkpoint: %s", out)
	}

	done := make(chan string, 1)
	go func() {
		params := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo changed > a.txt"}}
		params.SetProgressToken("wait-1")
		res, err := cs.CallTool(context.Background(), params)
		if err != nil {
			done <- "error: " + err.Error()
			return
		}
		done <- resultText(res)
	}()
	select {
	case msg := <-progress:
		if !strings.Contains(msg, "start-up checkpoint") {
			t.Fatalf("progress: %q", msg)
		}
	case out := <-done:
		t.Fatalf("the call ran before the start-up checkpoint was taken: %s", out)
	case <-time.After(60 * time.Second):
		t.Fatal("no progress notification while the call waits")
	}
	// The gate still holds the start-up checkpoint: the call cannot have
	// run.
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "needle\n" {
		t.Fatalf("the call changed the workspace before the start-up checkpoint: %q", b)
	}
	writeFile(t, gate, "")
	select {
	case out := <-done:
		if strings.HasPrefix(out, "error:") || !strings.Contains(out, "exit_code: 0") {
			t.Fatalf("bash: %s", out)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the call did not run once the start-up checkpoint was taken")
	}
	// The start-up checkpoint is c1, the first: the call waited for it
	// rather than taking one of its own first.
	list := mustOK(t, cs, "checkpoint", map[string]any{"action": "list"})
	if !regexp.MustCompile(`(?m)^c1 .*at start-up`).MatchString(list) || strings.Contains(list, "before bash") {
		t.Fatalf("the checkpoints after the call:\n%s", list)
	}
	diff := mustOK(t, cs, "checkpoint", map[string]any{"action": "diff", "from": "c1"})
	if got := diffPaths(t, diff); len(got) != 1 || got[0] != "a.txt" || !strings.Contains(diff, "-needle") {
		t.Fatalf("diff from the start-up checkpoint:\n%s", diff)
	}
}
