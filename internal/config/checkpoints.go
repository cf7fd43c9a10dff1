package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// resolveCheckpoints checks the checkpoint settings and chooses the
// directory of the stores: --checkpoint-dir, else the first usable of the
// user's state directory and the temp directory. A directory inside the
// workspace is refused (a store must not checkpoint itself, and commands
// could change it), and so is one sandboxed commands may write.
func (c *cli) resolveCheckpoints(cfg *Config, getenv func(string) string, fail func(string, ...any)) {
	switch strings.ToLower(strings.TrimSpace(c.Checkpoints)) {
	case "on", "":
		cfg.Checkpoints = true
	case "off":
	default:
		fail("invalid --checkpoints %q: valid values are on and off", c.Checkpoints)
	}
	var err error
	if cfg.CheckpointMaxBytes, err = ParseSize(c.CheckpointMaxBytes); err != nil {
		fail("invalid --checkpoint-max-bytes: %v", err)
	}
	if cfg.CheckpointMaxFileSize, err = ParseSize(c.CheckpointMaxFileSize); err != nil {
		fail("invalid --checkpoint-max-file-size: %v", err)
	}
	if !cfg.Checkpoints || cfg.Disabled["checkpoint"] {
		cfg.Checkpoints = false
		return
	}
	workspace := cfg.AllowDirs
	if len(workspace) == 0 {
		workspace = []string{cfg.Workdir}
	}
	if dir := strings.TrimSpace(c.CheckpointDir); dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			fail("invalid --checkpoint-dir %q: %v", dir, err)
			return
		}
		if why := checkpointDirProblem(abs, workspace, cfg, getenv); why != "" {
			fail("invalid --checkpoint-dir %s: %s", abs, why)
			return
		}
		cfg.CheckpointDir = realDir(abs)
		return
	}
	var tried []string
	for _, cand := range defaultCheckpointDirs(getenv) {
		if why := checkpointDirProblem(cand, workspace, cfg, getenv); why != "" {
			tried = append(tried, cand+" ("+why+")")
			continue
		}
		cfg.CheckpointDir = realDir(cand)
		return
	}
	cfg.CheckpointUnavailable = "no directory for the checkpoint store could be used: " + strings.Join(tried, "; ") + ". Start boris with --checkpoint-dir set to a writable directory outside the workspace"
	cfg.Warnings = append(cfg.Warnings, "checkpoints are off: "+cfg.CheckpointUnavailable)
}

// defaultCheckpointDirs are the candidate directories, best first.
func defaultCheckpointDirs(getenv func(string) string) []string {
	var out []string
	if x := getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		out = append(out, filepath.Join(x, "boris", "checkpoints"))
	} else if h := getenv("HOME"); filepath.IsAbs(h) {
		out = append(out, filepath.Join(h, ".local", "state", "boris", "checkpoints"))
	}
	tmp := getenv("TMPDIR")
	if !filepath.IsAbs(tmp) {
		tmp = os.TempDir()
	}
	return append(out, filepath.Join(tmp, "boris-checkpoints-"+strconv.Itoa(os.Getuid())))
}

// checkpointDirProblem says why dir cannot hold checkpoint stores, or "".
// It creates the directory (0700) to find out whether it can.
func checkpointDirProblem(dir string, workspace []string, cfg *Config, getenv func(string) string) string {
	real := realDir(dir)
	for _, w := range workspace {
		if within(real, w) || within(dir, w) {
			return fmt.Sprintf("it is inside the workspace %s; checkpoints must live outside what they record", w)
		}
		if within(w, real) {
			return fmt.Sprintf("the workspace %s is inside it; choose a directory beside the workspace, not above it", w)
		}
	}
	if cfg.Sandbox {
		writable := append([]string{os.TempDir()}, cfg.SandboxWrite...)
		if t := getenv("TMPDIR"); filepath.IsAbs(t) {
			writable = append(writable, t)
		}
		for _, w := range writable {
			if within(real, realDir(w)) || within(dir, w) {
				return fmt.Sprintf("sandboxed commands may write in %s, and the store must be out of their reach (--sandbox on denies them the checkpoint directory, which Landlock cannot do inside a writable one)", w)
			}
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "cannot create it: " + errText(err)
	}
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return "cannot write in it: " + errText(err)
	}
	f.Close()
	os.Remove(f.Name())
	return ""
}

func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// realDir resolves the symlinks of the longest existing prefix of dir.
func realDir(dir string) string {
	rest := ""
	for p := dir; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return dir
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	if dir == "/" {
		return true
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}
