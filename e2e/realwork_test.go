package e2e

import (
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

// Real work in a user's toolchain image: boris put into an image made from
// Debian's packages that knows nothing of boris (scripts/toolchain-images.sh
// makes boris-e2e/python and boris-e2e/go), working on a real project's
// checkout owned by uid 1000, as an agent would — run the tests, break
// the code with an edit and see them fail, fix it, add a feature with its
// test, git diff and commit, the language server's definitions,
// references and diagnostics, a checkpoint's diff and a restore. Every
// step is timed; the table is logged (go test -v shows it).

const (
	imagePython = "boris-e2e/python:latest"
	imageGo     = "boris-e2e/go:latest"
	// checkoutUID owns the checkouts, as the developer who cloned them.
	checkoutUID = 1000
)

// project is a real project and what an agent does to it.
type project struct {
	name, image string
	// files returns the directory holding the project as released;
	// gitignore is the checkout's .gitignore ("" for none), which the
	// project's repository has and its release does not.
	files     func(t *testing.T) string
	gitignore string
	// test runs its tests; pass is in the output of a passing run.
	test, pass string
	// file is broken (old → broken) and fixed again; brokenWant is in the
	// failing run's output and diagWant in the language server's
	// diagnostics of the broken file.
	file, old, broken, brokenWant, diagWant string
	// The feature: an edit of file (featureOld → featureNew) and a new
	// test file.
	featureOld, featureNew, testFile, testContent string
	// defFile:defNeedle is a use whose definition is in defWant's file;
	// refsNeedle in file is the definition whose references include refsWant.
	defFile, defNeedle, defWant, refsNeedle, refsWant string
}

var pythonProject = project{
	name: "toolz 0.12.0", image: imagePython,
	files:     func(t *testing.T) string { return cachedProject(t, "src/toolz-0.12.0", "toolz/__init__.py") },
	gitignore: "*.py[cod]\n__pycache__/\n.pytest_cache/\n",
	test:      "python3 -m pytest -q -x -p no:cacheprovider 2>&1 | tail -4", pass: " passed",
	file:       "toolz/itertoolz.py",
	old:        "    'A'\n    \"\"\"\n    return next(iter(seq))",
	broken:     "    'A'\n    \"\"\"\n    return next(iter(sequence))",
	brokenWant: "NameError", diagWant: "undefined name 'sequence'",
	featureOld:  "def nth(n, seq):",
	featureNew:  "def third(seq):\n    \"\"\" The third element in a sequence\n\n    >>> third('ABC')\n    'C'\n    \"\"\"\n    return nth(2, seq)\n\n\ndef nth(n, seq):",
	testFile:    "toolz/tests/test_third.py",
	testContent: "from toolz.itertoolz import third\n\n\ndef test_third():\n    assert third('ABC') == 'C'\n    assert third(range(5)) == 2\n",
	defFile:     "toolz/tests/test_itertoolz.py", defNeedle: "first('ABCDE')", defWant: "itertoolz.py:369:5: def first(seq):",
	refsNeedle: "first(seq):", refsWant: "test_itertoolz.py",
}

var goProject = project{
	name: "github.com/BurntSushi/toml v1.6.0", image: imageGo,
	files: func(t *testing.T) string { return goModuleDir(t, "github.com/BurntSushi/toml@v1.6.0") },
	test:  "go test ./... 2>&1 | tail -12", pass: "ok  \tgithub.com/BurntSushi/toml\t",
	file:       "lex.go",
	old:        "func isWhitespace(r rune) bool { return r == '\\t' || r == ' ' }",
	broken:     "func isWhitespace(r rune) bool { return r == \"\\t\" || r == ' ' }",
	brokenWant: "mismatched types", diagWant: "mismatched types",
	featureOld:  "func isNL(r rune) bool         { return r == '\\n' || r == '\\r' }",
	featureNew:  "func isNL(r rune) bool         { return r == '\\n' || r == '\\r' }\n\n// isBlank reports whether r is whitespace or a newline.\nfunc isBlank(r rune) bool { return isWhitespace(r) || isNL(r) }",
	testFile:    "blank_test.go",
	testContent: "package toml\n\nimport \"testing\"\n\nfunc TestIsBlank(t *testing.T) {\n\tfor _, r := range \" \\t\\n\\r\" {\n\t\tif !isBlank(r) {\n\t\t\tt.Errorf(\"isBlank(%q) = false\", r)\n\t\t}\n\t}\n\tif isBlank('x') {\n\t\tt.Error(\"isBlank('x') = true\")\n\t}\n}\n",
	defFile:     "decode_test.go", defNeedle: "Unmarshal(doc, new(map[string]any))", defWant: "decode.go:27:6: func Unmarshal(data []byte, v any) error {",
	refsNeedle: "isWhitespace(r rune)", refsWant: "lex.go",
}

// cachedProject is a project scripts/toolchain-images.sh fetched into the
// user cache directory.
func cachedProject(t *testing.T, rel, marker string) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "boris-e2e", rel)
	if _, err := os.Stat(filepath.Join(dir, marker)); err != nil {
		t.Fatalf("%s is missing: make images (scripts/toolchain-images.sh) fetches it: %v", dir, err)
	}
	return dir
}

// goModuleDir is a module's directory in the Go module cache, downloaded
// from the module proxy when missing.
func goModuleDir(t *testing.T, at string) string {
	t.Helper()
	out, err := exec.Command("go", "mod", "download", "-json", at).Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v", at, err)
	}
	m := regexp.MustCompile(`"Dir": "([^"]+)"`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("go mod download %s: no Dir in %s", at, out)
	}
	return string(m[1])
}

// checkout copies a project into dir (made if missing) as a git checkout
// with one commit, everything owned by uid:gid — a developer's clone.
func checkout(t *testing.T, p project, dir string, uid int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-R", p.files(t)+"/.", dir).CombinedOutput(); err != nil {
		t.Fatalf("copy %s: %v %s", p.name, err, out)
	}
	if p.gitignore != "" {
		if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(p.gitignore), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("-c", "user.name=Developer", "-c", "user.email=dev@example.com", "commit", "-qm", p.name)
	// The module cache's files are read-only; a clone's are not.
	if err := filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			if err := os.Chmod(path, fi.Mode().Perm()|0o200); err != nil {
				return err
			}
		}
		return os.Lchown(path, uid, uid)
	}); err != nil {
		t.Fatal(err)
	}
}

// position is the 1-based line and character of needle in a file of the
// checkout (offset runes into it).
func position(t *testing.T, ws, file, needle string) (int, int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, file))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(b), "\n") {
		if j := strings.Index(line, needle); j >= 0 {
			return i + 1, len([]rune(line[:j])) + 1
		}
	}
	t.Fatalf("%q is not in %s", needle, file)
	return 0, 0
}

// steps times the steps of a real-work run and keeps them for the table.
type steps struct {
	t    *testing.T
	name string
	rows []string
}

func (s *steps) do(what string, f func()) {
	s.t.Helper()
	start := time.Now()
	f()
	d := time.Since(start)
	s.rows = append(s.rows, fmt.Sprintf("%-48s %8.2fs", what, d.Seconds()))
}

var (
	realworkMu     sync.Mutex
	realworkTables []string
)

func (s *steps) report() {
	table := fmt.Sprintf("real work: %s\n  %s", s.name, strings.Join(s.rows, "\n  "))
	s.t.Log(table)
	realworkMu.Lock()
	realworkTables = append(realworkTables, table)
	realworkMu.Unlock()
}

// realWork does a project's work through boris at url. ws is the checkout
// on this machine (for positions and for checking what boris wrote), or
// "" when only the server sees it.
func realWork(t *testing.T, label, url, token string, p project, ws string) {
	t.Helper()
	s := &steps{t: t, name: label + ": " + p.name}
	defer s.report()
	cs := connect(t, url, token)
	defer cs.Close()
	run := func(cmd string) (int, string) {
		t.Helper()
		out := bash(t, cs, cmd)
		return exitCode(t, out), out
	}
	var out string
	var code int
	s.do("bash: the project's tests (pass)", func() { code, out = run(p.test) })
	if code != 0 || !strings.Contains(out, p.pass) {
		t.Fatalf("the tests of a fresh checkout: %s", out)
	}
	s.do("bash: git status (a checkout another uid owns)", func() { code, out = run("git status --short && git log --oneline | wc -l && id -u") })
	if code != 0 || !strings.Contains(out, "stdout:\n1\n1000\n") {
		t.Fatalf("git status: %s", out)
	}
	s.do("view "+p.file, func() { mustOK(t, cs, "view", map[string]any{"path": p.file}) })
	s.do("str_replace: break the code", func() {
		mustOK(t, cs, "str_replace", map[string]any{"path": p.file, "old_str": p.old, "new_str": p.broken})
	})
	s.do("bash: the tests (fail)", func() { code, out = run(p.test) })
	if code == 0 && !strings.Contains(out, p.brokenWant) || !strings.Contains(out, p.brokenWant) {
		t.Fatalf("the tests of the broken code: want %q in %s", p.brokenWant, out)
	}
	// pylsp 1.7 publishes diagnostics without the document's version, so
	// what it published for the text before the edit can arrive after
	// the edit and pass for the current one until its next publish (its
	// lint is debounced): asked again, as an agent would, it reports the
	// error. gopls sends versions and answers right the first time.
	tries := 0
	s.do("lsp diagnostics of the broken file", func() {
		deadline := time.Now().Add(30 * time.Second)
		for {
			tries++
			out = mustOK(t, cs, "lsp", map[string]any{"operation": "diagnostics", "filePath": p.file})
			if strings.Contains(out, p.diagWant) || time.Now().After(deadline) {
				return
			}
			time.Sleep(250 * time.Millisecond)
		}
	})
	if !strings.Contains(out, p.diagWant) {
		t.Fatalf("diagnostics of the broken file after %d tries: want %q in %s", tries, p.diagWant, out)
	}
	if tries > 1 {
		t.Logf("the diagnostics of the broken file took %d tries", tries)
	}
	s.do("str_replace: fix it", func() {
		mustOK(t, cs, "str_replace", map[string]any{"path": p.file, "old_str": p.broken, "new_str": p.old})
	})
	s.do("bash: the tests (pass again)", func() { code, out = run(p.test) })
	if code != 0 || !strings.Contains(out, p.pass) {
		t.Fatalf("the tests after the fix: %s", out)
	}
	var before string
	s.do("checkpoint create", func() {
		out = mustOK(t, cs, "checkpoint", map[string]any{"action": "create", "label": "before the feature"})
		before = regexp.MustCompile(`\bc\d+\b`).FindString(out)
	})
	if before == "" {
		t.Fatalf("no checkpoint id in %q", out)
	}
	s.do("str_replace + create_file: a feature and its test", func() {
		mustOK(t, cs, "str_replace", map[string]any{"path": p.file, "old_str": p.featureOld, "new_str": p.featureNew})
		mustOK(t, cs, "create_file", map[string]any{"path": p.testFile, "content": p.testContent})
	})
	s.do("bash: the tests (with the feature)", func() { code, out = run(p.test) })
	if code != 0 || !strings.Contains(out, p.pass) {
		t.Fatalf("the tests with the feature: %s", out)
	}
	if ws != "" {
		for _, f := range []string{p.file, p.testFile} {
			if uid := ownerOf(t, filepath.Join(ws, f)); uid != checkoutUID {
				t.Fatalf("%s belongs to uid %d after boris wrote it, want %d", f, uid, checkoutUID)
			}
		}
	}
	defLine, defChar := 0, 0
	refLine, refChar := 0, 0
	if ws != "" {
		defLine, defChar = position(t, ws, p.defFile, p.defNeedle)
		refLine, refChar = position(t, ws, p.file, p.refsNeedle)
	} else {
		defLine, defChar = remotePosition(t, cs, p.defFile, p.defNeedle)
		refLine, refChar = remotePosition(t, cs, p.file, p.refsNeedle)
	}
	s.do("lsp goToDefinition (across files)", func() {
		out = mustOK(t, cs, "lsp", map[string]any{"operation": "goToDefinition", "filePath": p.defFile, "line": defLine, "character": defChar})
	})
	if !strings.Contains(out, p.defWant) {
		t.Fatalf("goToDefinition: want %q in %s", p.defWant, out)
	}
	s.do("lsp findReferences", func() {
		out = mustOK(t, cs, "lsp", map[string]any{"operation": "findReferences", "filePath": p.file, "line": refLine, "character": refChar})
	})
	if !strings.Contains(out, p.refsWant) {
		t.Fatalf("findReferences: want %q in %s", p.refsWant, out)
	}
	s.do("lsp diagnostics (clean)", func() { out = mustOK(t, cs, "lsp", map[string]any{"operation": "diagnostics", "filePath": p.file}) })
	if strings.Contains(out, p.diagWant) {
		t.Fatalf("diagnostics after the fix still report it: %s", out)
	}
	s.do("bash: git diff --stat, git commit", func() {
		code, out = run("git add -A && git diff --cached --stat && git -c user.name=Agent -c user.email=agent@example.com commit -qm 'add a feature' && git log --oneline | wc -l")
	})
	if code != 0 || !strings.Contains(out, p.testFile) || !strings.Contains(out, "2 files changed") || !strings.HasSuffix(strings.TrimSpace(out), "2") {
		t.Fatalf("git diff and commit: %s", out)
	}
	s.do("checkpoint diff (since the checkpoint)", func() {
		out = mustOK(t, cs, "checkpoint", map[string]any{"action": "diff", "from": before})
	})
	if !strings.Contains(out, p.testFile) || !strings.Contains(out, "+"+strings.Split(p.testContent, "\n")[0]) {
		t.Fatalf("checkpoint diff: %s", out)
	}
	s.do("checkpoint restore (the feature undone)", func() {
		mustOK(t, cs, "checkpoint", map[string]any{"action": "restore", "id": before})
	})
	s.do("bash: git status after the restore", func() { code, out = run("git status --short") })
	if !strings.Contains(out, p.testFile) || !strings.Contains(out, p.file) {
		t.Fatalf("after the restore git sees the feature's files changed back: %s", out)
	}
}

// remotePosition finds needle in a file through boris (grep), for a
// workspace this machine cannot read.
func remotePosition(t *testing.T, cs *mcp.ClientSession, file, needle string) (int, int) {
	t.Helper()
	out := mustOK(t, cs, "grep", map[string]any{"pattern": regexp.QuoteMeta(needle), "path": file, "output_mode": "content", "head_limit": 1})
	m := regexp.MustCompile(`(?m)^(?:[^:\n]*:)?(\d+):(.*)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("grep %q in %s: %s", needle, file, out)
	}
	var line int
	fmt.Sscan(m[1], &line)
	j := strings.Index(m[2], needle)
	return line, len([]rune(m[2][:j])) + 1
}

func ownerOf(t *testing.T, path string) int {
	t.Helper()
	out, err := exec.Command("stat", "-c", "%u", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	var uid int
	fmt.Sscan(string(out), &uid)
	return uid
}

// requireToolchainImages fails without the toolchain images (make images
// makes them).
func requireToolchainImages(t *testing.T) {
	t.Helper()
	requireImages(t)
	for _, img := range []string{imagePython, imageGo} {
		if err := exec.Command("docker", "image", "inspect", img).Run(); err != nil {
			t.Fatalf("%s is missing: make images (scripts/toolchain-images.sh) makes it", img)
		}
	}
}

// borisVolume is a Docker volume holding boris, filled the documented way:
// docker run --rm -v VOL:/opt/boris boris:latest install /opt/boris.
func borisVolume(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("boris-e2e-bin-%d-%d", os.Getpid(), time.Now().UnixNano())
	if out, err := exec.Command("docker", "volume", "create", name).CombinedOutput(); err != nil {
		t.Fatalf("docker volume create: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("docker", "volume", "rm", "-f", name).Run() })
	out, err := exec.Command("docker", "run", "--rm", "-v", name+":/opt/boris", imageLatest, "install", "/opt/boris").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "installed as /opt/boris/boris") {
		t.Fatalf("boris install into the volume: %v %s", err, out)
	}
	return name
}

// documentedDockerfile is the Dockerfile docs/deploy.md gives for boris in
// one's own toolchain image, with its FROM line pointing at base.
func documentedDockerfile(t *testing.T, base string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "### boris in your own toolchain image")
	if i < 0 {
		t.Fatal("docs/deploy.md has no section \"boris in your own toolchain image\"")
	}
	m := regexp.MustCompile("(?s)```dockerfile\n(.*?)```").FindStringSubmatch(doc[i:])
	if m == nil {
		t.Fatal("docs/deploy.md: no dockerfile block in the toolchain image section")
	}
	df := regexp.MustCompile(`(?m)^FROM \S+`).ReplaceAllString(m[1], "FROM "+base)
	if !strings.Contains(df, "FROM "+base) {
		t.Fatalf("no FROM line in the documented Dockerfile:\n%s", m[1])
	}
	return df
}

// TestRealWorkDocker: boris in the toolchain images without building one
// (a volume filled by `boris install`, the image run with /opt/boris/boris
// as its entrypoint) and with the documented Dockerfile, each doing both
// projects' work on a checkout owned by uid 1000, run as that uid.
func TestRealWorkDocker(t *testing.T) {
	requireToolchainImages(t)
	vol := borisVolume(t)
	built := map[string]string{}
	for _, p := range []project{pythonProject, goProject} {
		df := documentedDockerfile(t, p.image)
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644); err != nil {
			t.Fatal(err)
		}
		tag := "boris-e2e/dockerfile-" + strings.TrimSuffix(strings.TrimPrefix(p.image, "boris-e2e/"), ":latest") + ":latest"
		start := time.Now()
		if out, err := exec.Command("docker", "build", "--pull=false", "-q", "-t", tag, dir).CombinedOutput(); err != nil {
			t.Fatalf("docker build of the documented Dockerfile FROM %s: %v\n%s\n%s", p.image, err, out, df)
		}
		t.Logf("the documented Dockerfile FROM %s built in %s", p.image, time.Since(start).Round(10*time.Millisecond))
		built[p.image] = tag
	}
	for _, p := range []project{pythonProject, goProject} {
		t.Run("volume/"+p.image, func(t *testing.T) {
			t.Parallel()
			ws := filepath.Join(workspace(t), "checkout")
			checkout(t, p, ws, checkoutUID)
			// As docs/deploy.md advises for an image that should stay
			// untouched: a read-only root, /tmp a tmpfs (exec: go test
			// runs its binaries from there).
			srv := startBoris(t, spec{
				image: p.image, entrypoint: []string{"/opt/boris/boris"}, user: "1000:1000", workspace: ws,
				volumes: map[string]string{vol: "/opt/boris"}, env: map[string]string{"BORIS_HOST": "0.0.0.0", "BORIS_TOKEN": "real-work"},
				readOnly: true, tmpfs: map[string]string{"/tmp": "rw,exec,mode=1777,size=1g"},
			})
			logs := srv.logs(t)
			for _, want := range []string{"no entry in /etc/passwd", "HOME /: not writable", "HOME=/tmp/boris-home-1000",
				"the root filesystem is read-only: commands can write only to mounted volumes; writable: /workspace, /tmp"} {
				if !strings.Contains(logs, want) {
					t.Errorf("start-up log lacks %q:\n%s", want, logs)
				}
			}
			realWork(t, "docker, boris from a volume", srv.url, srv.token, p, ws)
		})
		t.Run("dockerfile/"+p.image, func(t *testing.T) {
			t.Parallel()
			ws := filepath.Join(workspace(t), "checkout")
			checkout(t, p, ws, checkoutUID)
			srv := startBoris(t, spec{image: built[p.image], user: "1000:1000", workspace: ws, env: map[string]string{"BORIS_TOKEN": "real-work"}, healthInterval: time.Second})
			srv.waitHealthy(t, time.Minute)
			realWork(t, "docker, the documented Dockerfile", srv.url, srv.token, p, ws)
		})
	}
}
