package hostenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func value(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

func count(env []string, key string) int {
	n := 0
	for _, kv := range env {
		if strings.HasPrefix(kv, key+"=") {
			n++
		}
	}
	return n
}

// A HOME that cannot serve (unset, relative, a file) is replaced by a
// directory of boris's own in the temp directory, private to the user, and
// the cache directory follows it; a usable one is left alone.
func TestHomeReplacedWhenUnusable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, home, why string
	}{
		{"unset", "", "unset"},
		{"relative", "home", "not an absolute path"},
		{"file", file, "not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			environ := []string{"PATH=/usr/bin:/bin"}
			if tc.home != "" {
				environ = append(environ, "HOME="+tc.home)
			}
			r := Probe(Options{Workdir: t.TempDir(), Environ: environ, TempDir: tmp})
			if r.HomeWhy != tc.why {
				t.Fatalf("HomeWhy %q, want %q", r.HomeWhy, tc.why)
			}
			want := filepath.Join(tmp, "boris-home-"+strconv.Itoa(os.Getuid()))
			if r.Home != want {
				t.Fatalf("Home %q, want %q", r.Home, want)
			}
			fi, err := os.Stat(want)
			if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
				t.Fatalf("boris's home: %v %v", fi, err)
			}
			env := r.Environ(environ)
			if v, _ := value(env, "HOME"); v != want || count(env, "HOME") != 1 {
				t.Fatalf("HOME in %v", env)
			}
			if v, _ := value(env, "XDG_CACHE_HOME"); v != filepath.Join(want, ".cache") {
				t.Fatalf("XDG_CACHE_HOME in %v", env)
			}
			if !mentions(r, "HOME="+want) {
				t.Fatalf("no start-up note names the new HOME: %+v", r.Notes)
			}
		})
	}
	t.Run("usable", func(t *testing.T) {
		home := t.TempDir()
		environ := []string{"HOME=" + home}
		r := Probe(Options{Workdir: t.TempDir(), Environ: environ, TempDir: t.TempDir()})
		if r.Home != home || r.HomeWhy != "" {
			t.Fatalf("Home %q (%q), want %q unchanged", r.Home, r.HomeWhy, home)
		}
		if _, ok := value(r.Environ(environ), "XDG_CACHE_HOME"); ok {
			t.Fatal("XDG_CACHE_HOME set for a usable HOME")
		}
	})
}

// A home another user made first in the temp directory is not used.
func TestOwnHomeRefusesAnothersDirectory(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to make a directory owned by another uid")
	}
	tmp := t.TempDir()
	squat := filepath.Join(tmp, "boris-home-0")
	if err := os.Mkdir(squat, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(squat, 4321, 4321); err != nil {
		t.Fatal(err)
	}
	r := Probe(Options{Workdir: t.TempDir(), Environ: nil, TempDir: tmp})
	if r.Home == squat || !strings.HasPrefix(r.Home, squat+"-") {
		t.Fatalf("Home %q: want a fresh directory, not %s", r.Home, squat)
	}
}

// git gets safe.directory for the workspace, after any entries the
// environment already had, and for checkouts one level down.
func TestGitSafeDirectory(t *testing.T) {
	ws := t.TempDir()
	sub := filepath.Join(ws, "project")
	if err := os.MkdirAll(filepath.Join(sub, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	environ := []string{"HOME=" + t.TempDir(), "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.pager", "GIT_CONFIG_VALUE_0=cat"}
	r := Probe(Options{Workdir: ws, Environ: environ, TempDir: t.TempDir(), LookPath: func(string) (string, error) { return "/usr/bin/git", nil }})
	env := r.Environ(environ)
	for k, want := range map[string]string{
		"GIT_CONFIG_COUNT": "3", "GIT_CONFIG_KEY_0": "core.pager", "GIT_CONFIG_VALUE_0": "cat",
		"GIT_CONFIG_KEY_1": "safe.directory", "GIT_CONFIG_VALUE_1": ws,
		"GIT_CONFIG_KEY_2": "safe.directory", "GIT_CONFIG_VALUE_2": sub,
	} {
		if v, _ := value(env, k); v != want || count(env, k) != 1 {
			t.Errorf("%s=%q (%d times), want %q", k, v, count(env, k), want)
		}
	}
	// Without git, nothing is set.
	r = Probe(Options{Workdir: ws, Environ: environ, TempDir: t.TempDir(), LookPath: func(string) (string, error) { return "", exec.ErrNotFound }})
	if len(r.SafeDirs) != 0 {
		t.Fatalf("safe dirs without git: %v", r.SafeDirs)
	}
}

// The real git trusts a repository another uid owns only with the
// variables boris gives.
func TestGitTrustsForeignRepository(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	if os.Getuid() != 0 {
		t.Skip("needs root to give the repository to another uid")
	}
	ws := t.TempDir()
	run := func(env []string, args ...string) (string, error) {
		cmd := exec.Command(git, args...)
		cmd.Dir, cmd.Env = ws, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	base := []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}
	if out, err := run(base, "init", "-q"); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	if err := filepath.Walk(ws, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, 4321, 4321)
	}); err != nil {
		t.Fatal(err)
	}
	if out, err := run(base, "status"); err == nil || !strings.Contains(out, "dubious ownership") {
		t.Fatalf("git status without safe.directory: %v %s (the test needs git to refuse)", err, out)
	}
	r := Probe(Options{Workdir: ws, Environ: base, TempDir: t.TempDir(), LookPath: func(string) (string, error) { return git, nil }})
	if out, err := run(r.Environ(base), "status"); err != nil {
		t.Fatalf("git status with boris's environment: %v %s", err, out)
	}
	if !mentions(r, "safe.directory") {
		t.Fatalf("no note about safe.directory: %+v", r.Notes)
	}
}

// A workspace another uid owns that boris cannot write is a warning that
// says whom to run as.
func TestForeignWorkspaceWarns(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give the workspace to another uid")
	}
	ws := t.TempDir()
	if err := os.Chown(ws, 1000, 1000); err != nil {
		t.Fatal(err)
	}
	r := Probe(Options{Workdir: ws, Environ: []string{"HOME=/root"}, TempDir: t.TempDir()})
	found := false
	for _, n := range r.Notes {
		if n.Level == Warn && strings.Contains(n.Msg, "runs as root") && strings.Contains(n.Msg, "--user 1000:1000") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no warning naming --user 1000:1000: %+v", r.Notes)
	}
}

func mentions(r *Report, s string) bool {
	for _, n := range r.Notes {
		if strings.Contains(n.Msg, s) {
			return true
		}
	}
	return false
}
