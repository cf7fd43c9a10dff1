package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boris-mcp/boris/internal/shell"
)

// Starter starts a command (as exec.Cmd.Start does) somewhere it is
// confined; done releases what it holds once the command has been waited
// for.
type Starter struct {
	Start func(*exec.Cmd) error
	Done  func()
}

// hardening is the configuration every git command boris runs inside a
// workspace gets: nothing a workspace's own configuration or attributes
// name is run (hooks, the file system monitor, external diff and text
// conversion drivers, signing programs), nothing runs in the background
// (automatic gc and maintenance), and no optional lock is taken. The
// commands are confined like the agent's own anyway (Options.Confine);
// this keeps them from running the agent's programs at all.
var hardening = []string{
	"--no-optional-locks",
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "core.untrackedCache=false",
	"-c", "diff.external=",
	"-c", "core.pager=cat",
	"-c", "commit.gpgSign=false",
	"-c", "tag.gpgSign=false",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"-c", "advice.detachedHead=false",
	"-c", "core.quotePath=false",
}

// gitCmd is one git invocation.
type gitCmd struct {
	dir   string
	args  []string
	stdin io.Reader
	// stdout, when set, receives the output instead of the buffer run
	// returns.
	stdout io.Writer
	env    []string
	// confined runs the command through the workspace's confinement: for
	// every command that reads or writes a workspace (whose content and
	// configuration the agent controls). starter, when set, is the
	// confinement already held for the operation.
	confined *Workspace
	starter  *starter
}

// GitError is a git command that failed: its arguments, how it ended and
// the end of what it wrote to stderr.
type GitError struct {
	Args   []string
	Err    error
	Stderr string
}

func (e *GitError) Error() string {
	msg := fmt.Sprintf("git %s: %v", strings.Join(e.Args, " "), e.Err)
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += ": " + s
	}
	return msg
}

func (e *GitError) Unwrap() error { return e.Err }

// maxStderr bounds what is kept of a git command's stderr.
const maxStderr = 4 << 10

// run runs a git command and returns its stdout. The command runs in its
// own process group, which is killed when ctx ends.
func (m *Manager) run(ctx context.Context, g gitCmd) ([]byte, error) {
	args := g.args
	if g.confined != nil {
		args = append(append([]string(nil), hardening...), args...)
	}
	cmd := exec.CommandContext(ctx, m.git, args...)
	cmd.Dir = g.dir
	cmd.Env = append(append([]string(nil), m.env...), g.env...)
	cmd.Stdin = g.stdin
	var out bytes.Buffer
	if g.stdout != nil {
		cmd.Stdout = g.stdout
	} else {
		cmd.Stdout = &out
	}
	var errBuf tailBuffer
	cmd.Stderr = &errBuf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		return nil
	}
	cmd.WaitDelay = 5 * time.Second
	start := cmd.Start
	if g.confined != nil {
		st := g.starter
		if st == nil {
			var err error
			if st, err = g.confined.confine(); err != nil {
				return nil, err
			}
			defer st.done()
		}
		if st.s.Start != nil {
			start = func() error { return st.s.Start(cmd) }
		}
	}
	wait, err := shell.StartWaited(cmd, func(*exec.Cmd) error { return start() })
	if err != nil {
		return nil, &GitError{Args: g.args, Err: err}
	}
	err = wait()
	// Whatever the command left in its group goes with it.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return out.Bytes(), &GitError{Args: g.args, Err: err, Stderr: errBuf.String()}
	}
	return out.Bytes(), nil
}

// tailBuffer keeps the last maxStderr bytes written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > maxStderr {
		t.b = append(t.b[:0], t.b[len(t.b)-maxStderr:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }

// gitEnviron is the environment of boris's git commands: the commands'
// environment (base, with boris's own settings left out) without the GIT_
// variables that would point git at another repository, index or object
// store (configuration given through the environment, GIT_CONFIG_*, is
// kept: it is the operator's, safe.directory for a workdir owned by another
// user included), in the C locale so that what boris parses is git's
// English.
func gitEnviron(base []string) []string {
	drop := map[string]bool{
		"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true, "GIT_OBJECT_DIRECTORY": true,
		"GIT_ALTERNATE_OBJECT_DIRECTORIES": true, "GIT_COMMON_DIR": true, "GIT_NAMESPACE": true,
		"GIT_PREFIX": true, "GIT_QUARANTINE_PATH": true, "GIT_EXTERNAL_DIFF": true, "GIT_DIFF_OPTS": true,
		"LC_ALL": true, "LANGUAGE": true, "GIT_TERMINAL_PROMPT": true,
	}
	out := make([]string, 0, len(base)+2)
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "BORIS_") || drop[k] {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
}

// lines splits git's output into its non-empty lines.
func lines(b []byte) []string {
	var out []string
	for l := range strings.SplitSeq(strings.TrimRight(string(b), "\n"), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// removeAll removes a directory tree, making read-only directories in it
// writable first (a Go module cache, a build's output), so that what an
// agent made never blocks the removal.
func removeAll(dir string) error {
	err := os.RemoveAll(dir)
	if err == nil || !errors.Is(err, os.ErrPermission) {
		return err
	}
	_ = walkDirs(dir, func(p string) {
		// Through a descriptor opened without following a symlink: a
		// directory swapped for one is never changed.
		if fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
			_ = unix.Fchmod(fd, 0o700)
			unix.Close(fd)
		}
	})
	return os.RemoveAll(dir)
}
