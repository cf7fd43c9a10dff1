// Package shell runs one shell command the way the bash tool needs it: in
// its own process group, stdin from /dev/null, a non-interactive
// environment, output captured in fixed memory, the working directory it
// ends in read back through a sentinel, and the whole group terminated
// (SIGTERM, then SIGKILL after a grace period) on timeout or cancellation.
package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// Defaults for Options.
const (
	DefaultGrace    = 5 * time.Second
	DefaultDrain    = 150 * time.Millisecond
	DefaultProgress = 250 * time.Millisecond
	// maxProgressBytes bounds one progress message; older unsent output is
	// skipped (and said so) rather than buffered without limit.
	maxProgressBytes = 16 << 10
)

// Options tune a Runner. Zero values mean the defaults.
type Options struct {
	// Grace is the time between SIGTERM and SIGKILL.
	Grace time.Duration
	// Drain is how long to keep reading after the shell exits while a
	// child still holds its output open.
	Drain time.Duration
	// ProgressInterval is the minimum time between progress callbacks.
	ProgressInterval time.Duration
	// Start, if set, starts each command instead of cmd.Start: the
	// sandbox uses it to fork commands from its restricted thread.
	Start func(*exec.Cmd) error
	// MaxOutput is the most characters of each stream a result keeps
	// (0: MaxOutputChars).
	MaxOutput int
}

// Runner starts commands with one shell and one environment. It is safe
// for concurrent use.
type Runner struct {
	shell string
	env   []string
	opts  Options
}

// NewRunner returns a Runner for the shell at path with the given base
// environment (see Environ).
func NewRunner(path string, env []string, opts Options) *Runner {
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	if opts.Drain <= 0 {
		opts.Drain = DefaultDrain
	}
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = MaxOutputChars
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = DefaultProgress
	}
	return &Runner{shell: path, env: env, opts: opts}
}

// WithStart returns a Runner like r whose commands are started by start
// instead of r's Options.Start: a session uses it to start its commands in
// a sandbox domain of its own.
func (r *Runner) WithStart(start func(*exec.Cmd) error) *Runner {
	c := *r
	c.opts.Start = start
	return &c
}

// Shell returns the shell's path.
func (r *Runner) Shell() string { return r.shell }

// Grace returns the SIGTERM-to-SIGKILL grace period.
func (r *Runner) Grace() time.Duration { return r.opts.Grace }

// Command is one command to run.
type Command struct {
	// Script is the user's command line, run by the shell as written.
	Script string
	// Argv, when set, is run directly instead of Script: no shell, no
	// sentinel (the directory cannot change). argv[0] is looked up in the
	// PATH of the runner's environment unless it contains a slash; a
	// relative one is taken relative to Dir.
	Argv []string
	// Merge sends stderr into the stdout stream (Result.Stdout then holds
	// both, interleaved as written).
	Merge bool
	// Tail keeps the end of each stream too (Output.Tail).
	Tail bool
	// Stdin is what the command reads: /dev/null, a pipe the caller writes
	// with Process.Input, or a pseudo-terminal that is its stdin, stdout and
	// stderr (one stream, read as Stdout) of Cols×Rows.
	Stdin      StdinMode
	Cols, Rows int
	// Window, when positive, keeps up to that many bytes of each stream
	// that Process.TakeNew has not returned yet; older unread output is
	// dropped, and TakeNew says how much.
	Window int
	// Tee, if set, also receives everything the command writes to stdout
	// (to its terminal, with StdinTTY), from one goroutine.
	Tee io.Writer
	// Dir is the working directory.
	Dir string
	// Env are NAME=value variables added to the runner's environment
	// (a prestarted shell exports them before the command).
	Env []string
	// Sentinel marks where the shell prints its final directory.
	Sentinel string
	// Gated starts the shell waiting: it runs nothing, the command
	// included, until Process.Open, so that the caller can set the
	// process's limits first and everything the command starts inherits
	// them. An Argv command is run through the shell for this (exec, so
	// no process is added).
	Gated bool
	// OnProgress, if set, receives new output (stdout then stderr) at most
	// once per progress interval while the command runs. total grows with
	// every call.
	OnProgress func(text string, total int64)
}

// StdinMode says what a command's standard input is.
type StdinMode uint8

// The kinds of standard input.
const (
	StdinNull StdinMode = iota // /dev/null: nothing to read, nothing waits
	StdinPipe                  // a pipe, written with Process.Input
	StdinTTY                   // a pseudo-terminal, also stdout and stderr
)

// ErrNoInput is returned by Input for a command whose stdin is /dev/null,
// or closed.
var ErrNoInput = errors.New("the command's standard input is not open")

// Result is what a finished command did.
type Result struct {
	// ExitCode is the user command's exit status; 128+N when a signal N
	// ended the shell.
	ExitCode int
	// Signal names the signal that ended the shell (TERM, KILL, …), ""
	// when it exited.
	Signal string
	Stdout Output
	Stderr Output
	// Dir is the directory the command ended in, "" when unknown (the
	// shell exited early, was killed, or the sentinel was lost).
	Dir      string
	TimedOut bool
	Canceled bool
	// Terminated is true when the command was ended by Terminate while
	// it ran, other than by its timeout or a cancellation (its session
	// closed, say).
	Terminated bool
	// Leftover is true when processes of the group outlived the shell.
	Leftover bool
	Duration time.Duration
}

// StartError is returned when the shell cannot be started.
type StartError struct{ Err error }

func (e *StartError) Error() string { return "start shell: " + e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// Process is a started command.
type Process struct {
	r       *Runner
	cmd     *exec.Cmd
	pgid    int
	started time.Time
	stdout  *capture
	stderr  *capture
	pipes   []*os.File
	readers sync.WaitGroup
	tee     io.Writer

	// input is the write end of stdin: a pipe, or the terminal's master
	// (then also pipes[0]); nil for /dev/null.
	inMu    sync.Mutex
	input   *os.File
	tty     bool
	inClose bool // input is a pipe of its own, closed by CloseInput

	// script is the write end of a prestarted shell's descriptor 3, where
	// Begin writes its command; nil otherwise.
	script *os.File
	// gate is the write end of a gated shell's descriptor 3, which Open
	// writes a line to; nil once open, or when not gated.
	gateMu sync.Mutex
	gate   *os.File

	// bell is closed, and replaced, whenever output arrives or the command
	// finishes.
	bellMu sync.Mutex
	bell   chan struct{}

	exited   chan struct{} // the shell has exited and been reaped
	done     chan struct{} // exited, and output drained or drain timed out
	progDone chan struct{} // the progress goroutine has returned (nil: none)
	progStop chan struct{} // closed to end the progress goroutine early
	stopOnce sync.Once

	status   chan syscall.WaitStatus // from the reaper; nil when os/exec waits
	ws       syscall.WaitStatus
	leftover bool
	finished time.Time

	timedOut  atomic.Bool
	canceled  atomic.Bool
	stopped   atomic.Bool // Terminate was called while the shell ran
	termOnce  sync.Once
	termDone  chan struct{}
	closeOnce sync.Once
}

// wrapper runs the user's command with eval so that nothing in it — a
// trailing comment, an unterminated heredoc, a missing final newline — can
// reach the epilogue, which records the command's status, prints the
// sentinel pair around the working directory and exits with that status.
// The xtrace of the epilogue goes to /dev/null so `set -x` shows only the
// user's own commands.
func wrapper(sentinel string) string {
	return `__boris_c=$1; shift; eval "$__boris_c"` + epilogue(sentinel)
}

// epilogue records the command's status, prints the sentinel pair around
// the working directory and exits with that status ("" without a sentinel:
// the shell just exits with the command's status).
func epilogue(sentinel string) string {
	if sentinel == "" {
		return ""
	}
	return `; { __boris_s=$?; set +x; } 2>/dev/null; ` +
		`command printf '%s' '` + sentinel + `'; command pwd; command printf '%s' '` + sentinel + `'; exit "$__boris_s"`
}

// gatePrefix makes a gated shell wait for a line on descriptor 3 (see
// Command.Gated); the descriptor closed without one makes it exit.
const gatePrefix = `IFS= read -r __boris_g <&3 || exit 125; exec 3<&-; unset __boris_g; `

// prestartWrapper is wrapper for a prestarted shell: it reads the directory
// and the command, each ended by a NUL, from descriptor 3, closes it, goes
// to the directory and runs the command as wrapper does. A shell whose
// command never comes (descriptor 3 closed empty) exits at once.
func prestartWrapper(sentinel string) string {
	return `IFS= read -r -d '' __boris_d <&3 && IFS= read -r -d '' __boris_c <&3 || exit 125; ` +
		`while IFS= read -r -d '' __boris_v <&3 && [ -n "$__boris_v" ]; do export "$__boris_v"; done; exec 3<&-; ` +
		`cd -- "$__boris_d" || exit 1; unset OLDPWD __boris_d __boris_v; eval "$__boris_c"` + epilogue(sentinel)
}

// ErrNotPrestartable is returned by Begin for a command a prestarted shell
// cannot take (a NUL in it); start it the ordinary way.
var ErrNotPrestartable = errors.New("the command cannot be handed to a prestarted shell")

// CanPrestart reports whether the runner's shell can be prestarted (bash,
// whose read takes a NUL-ended text).
func (r *Runner) CanPrestart() bool { return filepath.Base(r.shell) == "bash" }

// Prestart starts a shell for a command that comes later (Begin), so the
// call that brings it does not wait for a process to be made: the process,
// its group, its pipes, its environment and its sandbox are ready, and the
// shell waits reading its command. dir is where it starts (Begin's dir
// takes over); stdin is /dev/null.
func (r *Runner) Prestart(dir, sentinel string) (*Process, error) {
	if !r.CanPrestart() {
		return nil, &StartError{Err: errors.New("prestart needs bash")}
	}
	return r.start(Command{Dir: dir, Sentinel: sentinel}, true)
}

// Begin hands a prestarted shell its command: c's Script, Dir, Env, Tail,
// Window and OnProgress (its other fields were fixed by Prestart). The
// command's time starts now.
func (p *Process) Begin(c Command) error {
	if p.script == nil {
		return errors.New("not a prestarted process")
	}
	if strings.IndexByte(c.Script, 0) >= 0 || strings.IndexByte(c.Dir, 0) >= 0 {
		return ErrNotPrestartable
	}
	// The directory, the command, each variable, and an empty field
	// that ends the variables (see prestartWrapper).
	msg := make([]byte, 0, len(c.Dir)+len(c.Script)+3+64*len(c.Env))
	msg = append(append(append(append(msg, c.Dir...), 0), c.Script...), 0)
	for _, v := range c.Env {
		if v == "" || strings.IndexByte(v, 0) >= 0 {
			return ErrNotPrestartable
		}
		msg = append(append(msg, v...), 0)
	}
	msg = append(msg, 0)
	p.configure(c)
	p.started = time.Now()
	_, err := p.script.Write(msg)
	p.script.Close()
	p.script = nil
	if err != nil {
		return err
	}
	if c.OnProgress != nil {
		go p.progress(c.OnProgress)
	}
	return nil
}

// Open lets a gated command run (see Command.Gated); its time starts now.
// It does nothing for a command that was not gated or is open already.
func (p *Process) Open() error {
	p.gateMu.Lock()
	defer p.gateMu.Unlock()
	if p.gate == nil {
		return nil
	}
	p.started = time.Now()
	_, err := p.gate.Write([]byte{'\n'})
	p.gate.Close()
	p.gate = nil
	return err
}

// shut closes a gate that was never opened: the shell exits (125)
// without running anything.
func (p *Process) shut() {
	p.gateMu.Lock()
	defer p.gateMu.Unlock()
	if p.gate != nil {
		p.gate.Close()
		p.gate = nil
	}
}

// configure applies the options that only change how output is kept.
func (p *Process) configure(c Command) {
	if c.Tail {
		p.stdout.keepTail()
		p.stderr.keepTail()
	}
	if c.Window > 0 {
		p.stdout.enableProgress(c.Window)
		p.stderr.enableProgress(c.Window)
	}
	if c.OnProgress != nil {
		if c.Window <= 0 {
			p.stdout.enableProgress(maxProgressBytes)
			p.stderr.enableProgress(maxProgressBytes)
		}
		p.progDone, p.progStop = make(chan struct{}), make(chan struct{})
	}
}

// Start starts c in a new process group.
func (r *Runner) Start(c Command) (*Process, error) { return r.start(c, false) }

// start starts c; deferred leaves the command to Begin.
func (r *Runner) start(c Command, deferred bool) (*Process, error) {
	if c.Stdin == StdinTTY {
		// One stream, shown as text: a sentinel would be seen, and there
		// is no directory to track for a task.
		c.Sentinel, c.Merge = "", true
	}
	gated := c.Gated && !deferred && r.shell != ""
	var cmd *exec.Cmd
	if len(c.Argv) > 0 {
		path, err := r.lookPath(c.Argv[0], c.Dir)
		if err != nil {
			return nil, &StartError{Err: err}
		}
		if gated {
			cmd = exec.Command(r.shell, append([]string{"-c", gatePrefix + `exec "$@"`, c.Argv[0], path}, c.Argv[1:]...)...)
		} else {
			cmd = exec.Command(path, c.Argv[1:]...)
			cmd.Args[0] = c.Argv[0]
		}
		c.Sentinel = ""
	} else {
		if r.shell == "" {
			return nil, &StartError{Err: errors.New("no shell available")}
		}
		switch {
		case deferred:
			cmd = exec.Command(r.shell, "-c", prestartWrapper(c.Sentinel), filepath.Base(r.shell))
		case gated:
			cmd = exec.Command(r.shell, "-c", gatePrefix+wrapper(c.Sentinel), filepath.Base(r.shell), c.Script)
		default:
			cmd = exec.Command(r.shell, "-c", wrapper(c.Sentinel), filepath.Base(r.shell), c.Script)
		}
	}
	var pipes, writers []*os.File
	var input *os.File
	fail := func(err error) (*Process, error) {
		for _, f := range append(pipes, writers...) {
			f.Close()
		}
		if input != nil && (len(pipes) == 0 || input != pipes[0]) {
			input.Close()
		}
		return nil, &StartError{Err: err}
	}
	cmd.Dir = c.Dir
	cmd.Env = append(append(append(make([]string, 0, len(r.env)+len(c.Env)+3), r.env...), c.Env...), "PWD="+c.Dir)
	if c.Stdin == StdinTTY {
		master, tty, err := pty.Open()
		if err != nil {
			return fail(err)
		}
		pipes, writers, input = []*os.File{master}, []*os.File{tty}, master
		cols, rows := c.Cols, c.Rows
		if cols <= 0 || rows <= 0 {
			cols, rows = 120, 40
		}
		if err := pty.Setsize(master, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}); err != nil {
			return fail(err)
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
		// A session of its own with the terminal as its controlling
		// terminal: ^C and ^Z reach the foreground job, and the session
		// leader's group is the command's process group.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		cmd.Env = append(cmd.Env, "TERM=xterm-256color", "NO_COLOR=1")
	} else {
		outR, outW, err := os.Pipe()
		if err != nil {
			return fail(err)
		}
		pipes, writers = []*os.File{outR}, []*os.File{outW}
		errW := outW
		if !c.Merge {
			var errR *os.File
			if errR, errW, err = os.Pipe(); err != nil {
				return fail(err)
			}
			pipes, writers = append(pipes, errR), append(writers, errW)
		}
		cmd.Stdout, cmd.Stderr = outW, errW
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if c.Stdin == StdinPipe {
			inR, inW, err := os.Pipe()
			if err != nil {
				return fail(err)
			}
			writers, input = append(writers, inR), inW
			cmd.Stdin = inR
		}
	}
	var script, gate *os.File
	if deferred || gated {
		fd3R, fd3W, err := os.Pipe()
		if err != nil {
			return fail(err)
		}
		writers = append(writers, fd3R)
		cmd.ExtraFiles = []*os.File{fd3R} // descriptor 3
		if deferred {
			script = fd3W
		} else {
			gate = fd3W
		}
	}

	p := &Process{
		r:        r,
		cmd:      cmd,
		stdout:   newCapture(r.opts.MaxOutput, c.Sentinel),
		stderr:   newCapture(r.opts.MaxOutput, ""),
		pipes:    pipes,
		tee:      c.Tee,
		input:    input,
		tty:      c.Stdin == StdinTTY,
		inClose:  c.Stdin == StdinPipe,
		bell:     make(chan struct{}),
		exited:   make(chan struct{}),
		done:     make(chan struct{}),
		termDone: make(chan struct{}),
		script:   script,
		gate:     gate,
	}
	if !deferred {
		p.configure(c)
	}

	start := r.opts.Start
	if start == nil {
		start = (*exec.Cmd).Start
	}
	children.startMu.RLock()
	err := start(cmd)
	if err == nil && Reaping() {
		p.status = children.register(cmd.Process.Pid)
	}
	children.startMu.RUnlock()
	for _, w := range writers {
		w.Close()
	}
	writers = nil
	if err != nil {
		for _, f := range []*os.File{script, gate} {
			if f != nil {
				f.Close()
			}
		}
		return fail(err)
	}
	p.pgid = cmd.Process.Pid
	p.started = time.Now()

	p.readers.Add(len(pipes))
	go p.read(pipes[0], p.stdout)
	if len(pipes) > 1 {
		go p.read(pipes[1], p.stderr)
	}
	go p.wait()
	if c.OnProgress != nil && !deferred {
		go p.progress(c.OnProgress)
	}
	return p, nil
}

// lookPath finds a program as execvp would, in the PATH of the runner's
// environment; a name with a slash is taken as a path, relative to dir.
func (r *Runner) lookPath(name, dir string) (string, error) {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		return name, nil
	}
	pathEnv := ""
	for _, kv := range r.env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v
		}
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: command not found (not in PATH %s)", name, pathEnv)
}

func (p *Process) read(f *os.File, c *capture) {
	defer p.readers.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			c.Write(buf[:n])
			if p.tee != nil && c == p.stdout {
				_, _ = p.tee.Write(buf[:n])
			}
			p.ring()
		}
		if err != nil {
			return
		}
	}
}

// ring wakes whoever waits on Changed.
func (p *Process) ring() {
	p.bellMu.Lock()
	close(p.bell)
	p.bell = make(chan struct{})
	p.bellMu.Unlock()
}

// Changed returns a channel that is closed when the command next writes
// output, or finishes (see Done).
func (p *Process) Changed() <-chan struct{} {
	p.bellMu.Lock()
	defer p.bellMu.Unlock()
	return p.bell
}

// Pending reports whether output is waiting for TakeNew.
func (p *Process) Pending() bool { return p.stdout.pending() || p.stderr.pending() }

// TTY reports whether the command runs under a pseudo-terminal.
func (p *Process) TTY() bool { return p.tty }

// Input writes to the command's standard input: its pipe, or its terminal
// (where control characters do what they do at a keyboard: ^C interrupts
// the foreground job, ^D ends input).
func (p *Process) Input(b []byte) error {
	p.inMu.Lock()
	defer p.inMu.Unlock()
	if p.input == nil {
		return ErrNoInput
	}
	_, err := p.input.Write(b)
	return err
}

// CloseInput closes a stdin pipe, so the command reads end of file. It is
// a no-op under a terminal (where ^D is end of input) and when stdin is
// not open.
func (p *Process) CloseInput() error {
	p.inMu.Lock()
	defer p.inMu.Unlock()
	if p.input == nil || !p.inClose {
		return nil
	}
	err := p.input.Close()
	p.input = nil
	return err
}

// Signal sends sig to the command's process group.
func (p *Process) Signal(sig syscall.Signal) error {
	if p.pgid <= 1 {
		return syscall.ESRCH
	}
	return syscall.Kill(-p.pgid, sig)
}

// TakeNew returns the output written since the previous TakeNew (which
// needs Command.Window): stdout and stderr, each beginning with a note when
// unread output beyond the window was dropped.
func (p *Process) TakeNew() (stdout, stderr []byte) {
	n := p.TakeNewCounted()
	return n.Stdout, n.Stderr
}

// NewOutput is what TakeNewCounted returns: the new output of each stream
// (each beginning with a note when unread output was dropped) and how many
// bytes were dropped from each.
type NewOutput struct {
	Stdout, Stderr               []byte
	StdoutDropped, StderrDropped int64
}

// TakeNewCounted is TakeNew that also counts the dropped bytes.
func (p *Process) TakeNewCounted() NewOutput { return p.TakeNewAtMost(0) }

// TakeNewAtMost is TakeNewCounted that takes at most max bytes of each
// stream (0: all); the rest waits for the next take (Pending says so).
func (p *Process) TakeNewAtMost(max int) NewOutput {
	var n NewOutput
	n.Stdout, n.StdoutDropped = p.stdout.takeProgressAtMost(max)
	n.Stderr, n.StderrDropped = p.stderr.takeProgressAtMost(max)
	return n
}

func (p *Process) wait() {
	if p.status != nil {
		p.ws = <-p.status
		_ = p.cmd.Process.Release()
	} else {
		_ = p.cmd.Wait() // the status is in ProcessState
		p.ws, _ = p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	}
	close(p.exited)
	p.ring()
	if p.progDone != nil {
		<-p.progDone // no progress callback after Done
	}

	drained := make(chan struct{})
	go func() { p.readers.Wait(); close(drained) }()
	timer := time.NewTimer(p.r.opts.Drain)
	select {
	case <-drained:
	case <-timer.C:
	}
	timer.Stop()
	p.leftover = groupAlive(p.pgid)
	p.finished = time.Now()
	close(p.done)
	p.ring()
}

// progress delivers coalesced output until the command is done.
func (p *Process) progress(fn func(string, int64)) {
	defer close(p.progDone)
	t := time.NewTicker(p.r.opts.ProgressInterval)
	defer t.Stop()
	var total int64
	for {
		select {
		case <-p.exited:
			return // the final result carries everything from here
		case <-p.progStop:
			return
		case <-t.C:
		}
		out := p.stdout.takeProgress()
		errOut := p.stderr.takeProgress()
		if len(out)+len(errOut) == 0 {
			continue
		}
		total += int64(len(out) + len(errOut))
		fn(string(out)+string(errOut), total)
	}
}

// StopProgress ends the progress callbacks of a running command (one that
// goes on in the background) and returns once the last has returned.
func (p *Process) StopProgress() {
	if p.progStop == nil {
		return
	}
	p.stopOnce.Do(func() { close(p.progStop) })
	<-p.progDone
}

// Pgid returns the process group id.
func (p *Process) Pgid() int { return p.pgid }

// Done is closed when the command has finished and its output drained.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the command, terminating its group when timeout (if > 0)
// expires or ctx is done, and returns the result.
func (p *Process) Wait(ctx context.Context, timeout time.Duration) Result {
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-p.done:
	case <-expired:
		p.timedOut.Store(true)
		p.Terminate()
		<-p.done
	case <-ctx.Done():
		p.canceled.Store(true)
		p.Terminate()
		<-p.done
	}
	return p.Result()
}

// MarkTimedOut records that a deadline owned by the caller expired, then
// terminates the group.
func (p *Process) MarkTimedOut() {
	p.timedOut.Store(true)
	p.Terminate()
}

// Running reports whether the shell is still running.
func (p *Process) Running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Result returns the result of a finished command, or a snapshot of a
// running one (ExitCode -1).
func (p *Process) Result() Result {
	res := Result{ExitCode: -1, TimedOut: p.timedOut.Load(), Canceled: p.canceled.Load()}
	res.Terminated = p.stopped.Load() && !res.TimedOut && !res.Canceled
	finished := !p.Running()
	res.Stdout, res.Dir = p.stdout.result()
	res.Stderr, _ = p.stderr.result()
	if !finished {
		res.Dir = ""
		res.Duration = time.Since(p.started)
		return res
	}
	res.ExitCode = exitCode(p.ws)
	if p.ws.Signaled() {
		res.Signal = signalName(p.ws.Signal())
	}
	res.Leftover = p.leftover
	res.Duration = p.finished.Sub(p.started)
	return res
}

// signalName names a signal as kill -l does: TERM, KILL, INT, …
func signalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return strings.TrimPrefix(name, "SIG")
	}
	return strconv.Itoa(int(sig))
}

func exitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// Terminate sends SIGTERM to the group and SIGKILL after the grace period
// if anything is left. It returns at once and is idempotent; Terminated is
// closed when the group is gone. A finished command whose group is already
// empty is not signalled (its id may belong to someone else by now).
func (p *Process) Terminate() {
	p.shut() // a gated shell that never opened exits by itself
	p.termOnce.Do(func() {
		select {
		case <-p.done:
			if !p.leftover {
				close(p.termDone)
				return
			}
		default:
			select {
			case <-p.exited: // the shell is done; only its output drains
			default:
				p.stopped.Store(true)
			}
		}
		go func() {
			KillGroup(p.pgid, p.r.opts.Grace)
			close(p.termDone)
		}()
	})
}

// Terminated is closed when a Terminate has finished.
func (p *Process) Terminated() <-chan struct{} { return p.termDone }

// Close releases the output pipes. Call it after the group is gone: a
// process that escaped the group and still writes gets EPIPE.
func (p *Process) Close() {
	p.closeOnce.Do(func() {
		for _, f := range p.pipes {
			f.Close()
		}
		p.inMu.Lock()
		if p.input != nil && p.inClose {
			p.input.Close()
		}
		p.input = nil
		p.inMu.Unlock()
		if p.script != nil {
			p.script.Close()
		}
		p.shut()
	})
}

// GroupAlive reports whether any process is left in the group.
func GroupAlive(pgid int) bool { return groupAlive(pgid) }

func groupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// KillGroup sends SIGTERM to the group, waits up to grace for it to empty,
// then sends SIGKILL. It returns when the group is gone (or shortly after
// SIGKILL).
func KillGroup(pgid int, grace time.Duration) { KillGroupWith(pgid, syscall.SIGTERM, grace) }

// KillGroupWith is KillGroup with sig in place of SIGTERM.
func KillGroupWith(pgid int, sig syscall.Signal, grace time.Duration) {
	if pgid <= 1 {
		return
	}
	if err := syscall.Kill(-pgid, sig); errors.Is(err, syscall.ESRCH) {
		return
	}
	// A stopped process only acts on SIGTERM once continued.
	_ = syscall.Kill(-pgid, syscall.SIGCONT)
	if waitGroupGone(pgid, grace) {
		return
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	waitGroupGone(pgid, time.Second)
}

func waitGroupGone(pgid int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	pause := 2 * time.Millisecond
	for {
		if !groupAlive(pgid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
		pause = min(pause*2, 50*time.Millisecond)
	}
}

// Environ returns base with the settings that keep commands from waiting
// for a human: pagers print, git and package managers never prompt, and
// the terminal is dumb. Variables the operator already set are kept where
// they only choose a program (EDITOR, GIT_SSH_COMMAND).
func Environ(base []string) []string {
	force := map[string]string{
		"PAGER":               "cat",
		"GIT_PAGER":           "cat",
		"MANPAGER":            "cat",
		"SYSTEMD_PAGER":       "cat",
		"LESS":                "-FRX",
		"GIT_TERMINAL_PROMPT": "0",
		"GCM_INTERACTIVE":     "never",
		"GIT_EDITOR":          "true",
		"DEBIAN_FRONTEND":     "noninteractive",
		"PIP_NO_INPUT":        "1",
		"npm_config_yes":      "true",
		"TERM":                "dumb",
		"PYTHONUNBUFFERED":    "1",
	}
	keepIfSet := map[string]string{
		"GIT_SSH_COMMAND": "ssh -o BatchMode=yes",
		"PATH":            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	}
	out := make([]string, 0, len(base)+len(force)+len(keepIfSet))
	seen := map[string]bool{}
	for _, kv := range base {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || strings.HasPrefix(k, "BORIS_") || k == "PWD" || k == "OLDPWD" {
			continue // boris's own settings (the token!) stay out of commands
		}
		if _, forced := force[k]; forced {
			continue
		}
		if v, ok := keepIfSet[k]; ok && strings.TrimPrefix(kv, k+"=") == "" {
			kv = k + "=" + v
		}
		seen[k] = true
		out = append(out, kv)
	}
	for k, v := range keepIfSet {
		if !seen[k] {
			out = append(out, k+"="+v)
		}
	}
	for k, v := range force {
		out = append(out, k+"="+v)
	}
	return out
}

// String describes a result for logs (never the output).
func (r Result) String() string {
	return fmt.Sprintf("exit=%d timed_out=%v canceled=%v stdout=%d stderr=%d", r.ExitCode, r.TimedOut, r.Canceled, r.Stdout.Chars, r.Stderr.Chars)
}

var _ io.Writer = (*capture)(nil)
