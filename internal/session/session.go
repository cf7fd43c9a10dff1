// Package session holds the state of one MCP session: its working
// directory, the sentinel nonce of its shell commands, the files it has
// viewed, and every process it started. Closing a session terminates all of
// those processes; a closed session starts no more.
package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/execcheck"
	"github.com/boris-mcp/boris/internal/files"
	"github.com/boris-mcp/boris/internal/guard"
	"github.com/boris-mcp/boris/internal/lsp"
	"github.com/boris-mcp/boris/internal/shell"
)

// Defaults for Options.
const (
	DefaultMaxTasks = 10
	// maxFinishedTasks bounds finished, unread background tasks kept.
	maxFinishedTasks = 100
)

// Options configure sessions; one value is shared by all sessions of a
// server.
type Options struct {
	// Workdir is the initial working directory (absolute, symlink-free).
	Workdir string
	// Runner starts shell commands; nil when no shell exists.
	Runner *shell.Runner
	// TaskTimeout limits a background task's life (0 = no limit).
	TaskTimeout time.Duration
	// MaxTasks limits running background tasks (0 = DefaultMaxTasks).
	MaxTasks int
	// MaxRead is the most bytes of each stream one read of a task's
	// output takes (0: all that waits); the rest waits for the next read.
	MaxRead int
	// Warm, if set, lets sessions keep their next bash started (see
	// WarmPool).
	Warm *WarmPool
	// OnTaskChange, if set, is called with +1/-1 as background tasks start
	// and finish (for metrics).
	OnTaskChange func(delta int)
	// Guard, if set, admits every command before it runs anything (its
	// process budget, OOM score and priority; see package guard).
	Guard *guard.Guard
	// NewDomain, if set, gives each session a confinement of its own (a
	// sandbox domain): it is called once, when the session starts its
	// first process, and its Start then starts every process of the
	// session instead of the Runner's own start; its Close is called when
	// the session closes, after its processes are gone.
	NewDomain func() (Domain, error)
	// ExecCheck, if set, holds every exec of the session's commands for a
	// judge (package execcheck): the session's commands are forked from a
	// thread carrying the exec filter (its domain's, or a thread of its
	// own without one), and each command's execs go to the Cmd's (or
	// task's) Judge; a command without one runs unjudged. ExecFallback
	// judges the execs of processes no command owns any more (nil:
	// refused).
	ExecCheck    bool
	ExecFallback execcheck.Judge
}

// Domain is where a session's processes are forked from: a thread of its
// own (a sandbox domain's restricted thread).
type Domain interface {
	// Start starts cmd (as cmd.Start does) from the domain's thread.
	Start(*exec.Cmd) error
	// Do runs a function on that thread.
	Do(func()) error
	// Close ends the thread.
	Close()
}

// Session is the state of one MCP session. It is safe for concurrent use.
type Session struct {
	id       string
	sentinel string
	opts     Options

	mu        sync.Mutex
	cwd       string
	viewed    map[string]files.Stamp
	closed    bool
	running   map[*shell.Process]struct{} // foreground commands
	leftovers []*shell.Process            // finished, with processes left in their group
	tasks     map[string]*task
	taskSeq   int
	undo      history
	warm      *warmShell
	warming   bool
	lastRun   time.Time // when the last foreground command ended
	ckpt      checkpointMarks
	admitted  map[*shell.Process]guard.Admission
	// checks are the commands' exec checks (Options.ExecCheck), until
	// their groups are gone.
	checks map[*shell.Process]*execcheck.Command

	// lateDiags holds what the session's edits' answers left pending:
	// their next answers say what it came to.
	lateDiags lsp.Inbox

	closeOnce sync.Once
	closedCh  chan struct{}

	// The session's own runner, made with its domain at its first process
	// (Options.NewDomain); domClosed once Close has ended the domain.
	domMu       sync.Mutex
	runner      *shell.Runner
	closeDomain func()
	domClosed   bool
	// root is where the session works when it has a directory of its own
	// (Isolate): its initial working directory in place of
	// Options.Workdir; newDomain then makes its domain. Set before its
	// first process, under mu and domMu.
	root      string
	newDomain func() (Domain, error)
	// watcher answers the exec filter of the session's thread
	// (Options.ExecCheck), made with the runner.
	watcher *execcheck.Watcher
	// started is set once the session has started a process.
	started bool
}

// LateDiagnostics is the session's inbox of edit diagnostics that were
// not known when the edit's answer went out.
func (s *Session) LateDiagnostics() *lsp.Inbox { return &s.lateDiags }

// New returns a session with the given id.
func New(id string, opts Options) *Session {
	if opts.MaxTasks <= 0 {
		opts.MaxTasks = DefaultMaxTasks
	}
	var nonce [4]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err)) // never happens on supported systems
	}
	return &Session{
		id:       id,
		sentinel: "__BORIS_CWD_" + hex.EncodeToString(nonce[:]) + "__",
		ckpt:     checkpointMarks{key: newCheckpointKey()},
		opts:     opts,
		cwd:      opts.Workdir,
		viewed:   map[string]files.Stamp{},
		running:  map[*shell.Process]struct{}{},
		tasks:    map[string]*task{},
		admitted: map[*shell.Process]guard.Admission{},
		checks:   map[*shell.Process]*execcheck.Command{},
		closedCh: make(chan struct{}),
	}
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// Sentinel returns the session's cwd sentinel (for tests).
func (s *Session) Sentinel() string { return s.sentinel }

// Isolate makes root the session's own directory: its working directory
// now and whenever it goes back to the initial one (a lost directory, a
// restart). newDomain, if set, makes the domain its commands start in,
// instead of Options.NewDomain: one that confines them to root. It must
// come before the session's first process; after one it fails.
func (s *Session) Isolate(root string, newDomain func() (Domain, error)) error {
	// mu before domMu, as start takes them.
	s.mu.Lock()
	defer s.mu.Unlock()
	s.domMu.Lock()
	defer s.domMu.Unlock()
	if s.closed || s.domClosed {
		return errClosed()
	}
	if s.started || s.runner != nil {
		return fmt.Errorf("the session has already run commands in %s", s.cwd)
	}
	s.root, s.cwd, s.newDomain = root, root, newDomain
	return nil
}

// Root is the session's initial working directory: its own directory
// (Isolate), else Options.Workdir.
func (s *Session) Root() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rootLocked()
}

func (s *Session) rootLocked() string {
	if s.root != "" {
		return s.root
	}
	return s.opts.Workdir
}

// Cwd returns the current working directory.
func (s *Session) Cwd() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cwd
}

// MarkViewed records that this session has seen a resolved path's
// content, as of st (a view, or the session's own edit).
func (s *Session) MarkViewed(path string, st files.Stamp) {
	s.mu.Lock()
	s.viewed[path] = st
	s.mu.Unlock()
}

// ViewedStamp returns the version of a resolved path this session last
// saw, if it has seen it.
func (s *Session) ViewedStamp(path string) (files.Stamp, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.viewed[path]
	return st, ok
}

// Busy reports whether anything of the session is running: a command, a
// background task, or processes a finished command left behind.
func (s *Session) Busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.running) > 0 || s.runningTasksLocked() > 0 {
		return true
	}
	for _, p := range s.leftovers {
		if shell.GroupAlive(p.Pgid()) {
			return true
		}
	}
	for _, t := range s.tasks {
		if t.leftover && shell.GroupAlive(t.proc.Pgid()) {
			return true
		}
	}
	return false
}

// Closed is closed when the session has been closed.
func (s *Session) Closed() <-chan struct{} { return s.closedCh }

func errClosed() error {
	return codes.Errorf(codes.SessionClosed, "this session has been closed (idle timeout, DELETE, or the server shutting down); call again without session, or with session: \"new\", to start a new one")
}

// RunResult is a foreground command's result.
type RunResult struct {
	shell.Result
	// CwdReset is set when the tracked directory had disappeared; it names
	// the lost one, and RanIn where the command ran instead (the initial
	// workdir, or / if that is gone too).
	CwdReset string
	RanIn    string
	// Task is set when the command outlived its Yield and goes on as this
	// background task; Result then holds the output so far.
	Task *TaskInfo
	// LeftRunning names the task that lists the processes the command
	// left running (started with &, a daemon), "" when it left none.
	LeftRunning string
	// LeftPgid is the process group of what the command left running.
	LeftPgid int
	// Guard says what the guard saw: an OOM kill, a refused fork.
	Guard guard.Outcome
	// Refused are the execs of the command that its Judge refused (at
	// most 20), RefusedCount how many in all (Options.ExecCheck).
	Refused      []execcheck.Refusal
	RefusedCount int
}

// Cmd is a foreground command of a session.
type Cmd struct {
	// Script is run by the session's shell; a cd in it moves the session.
	Script string
	// Argv, instead of Script, is run directly (no shell).
	Argv []string
	// Dir is where the command starts; "" is the session's directory.
	Dir string
	// Merge and Tail are as in shell.Command.
	Merge, Tail bool
	// Env are NAME=value variables added to the command's environment.
	Env []string
	// Yield, when positive, makes a command still running after that long
	// a background task: Run returns with the output so far and the task
	// (RunResult.Task); the command keeps its timeout.
	Yield time.Duration
	// Judge, with Options.ExecCheck, decides every exec of the command's
	// process tree (the shell's own first exec aside); its context ends
	// with the command's timeout. Nil: the command's execs are not judged.
	Judge execcheck.Judge
}

// check is what judges a command's execs: the judge and its context.
type check struct {
	ctx   context.Context
	judge execcheck.Judge
}

// newCheck makes a command's check: judge, with a context that ends when
// the command's timeout does (0: none) or the session's watcher stops
// tracking the command. It does not end with the call's context: a command
// that goes on as a task is judged as before.
func newCheck(ctx context.Context, judge execcheck.Judge, timeout time.Duration) (check, context.CancelFunc) {
	c := context.WithoutCancel(ctx)
	if timeout > 0 {
		c, cancel := context.WithTimeout(c, timeout)
		return check{ctx: c, judge: judge}, cancel
	}
	c, cancel := context.WithCancel(c)
	return check{ctx: c, judge: judge}, cancel
}

// forgetCheckLocked drops a command's check once nothing will read its
// refusals again.
func (s *Session) forgetCheckLocked(p *shell.Process) { delete(s.checks, p) }

// trackLocked hands a started command, its gate still closed, to the
// session's exec watcher (if it has one) with its check; the tracking
// ends, and the check's context with it, once its process group is gone.
func (s *Session) trackLocked(p *shell.Process, chk check, done context.CancelFunc) {
	s.domMu.Lock()
	w := s.watcher
	s.domMu.Unlock()
	if w == nil {
		done()
		return
	}
	c := w.Track(p.Pgid(), chk.ctx, chk.judge)
	s.checks[p] = c
	go func() {
		<-p.Done()
		pause := 10 * time.Millisecond
		for shell.GroupAlive(p.Pgid()) {
			time.Sleep(pause)
			pause = min(2*pause, time.Second)
		}
		c.Untrack()
		done()
	}()
}

// refusedLocked returns what a command's check refused so far.
func (s *Session) refusedLocked(p *shell.Process) ([]execcheck.Refusal, int) {
	if c := s.checks[p]; c != nil {
		return c.Refused()
	}
	return nil, 0
}

// Refused returns the execs refused so far of the process (see
// RunResult.Refused).
func (s *Session) refused(p *shell.Process) ([]execcheck.Refusal, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refusedLocked(p)
}

// Run runs a foreground command and, when it ends in another directory
// than it started in (a cd), moves the session there. Cancelling ctx
// terminates its group.
func (s *Session) Run(ctx context.Context, c Cmd, timeout time.Duration, onProgress func(string, int64)) (RunResult, error) {
	dir, reset, err := s.startDir()
	if err != nil {
		return RunResult{}, err
	}
	ranIn := ""
	if reset != "" {
		ranIn = dir
	}
	if c.Dir != "" {
		dir, reset, ranIn = c.Dir, "", ""
	}
	sc := shell.Command{Script: c.Script, Argv: c.Argv, Dir: dir, Env: c.Env, Merge: c.Merge, Tail: c.Tail, OnProgress: onProgress}
	if c.Yield > 0 {
		sc.Window = TaskWindow // read incrementally once it is a task
	}
	register := func(p *shell.Process) { s.running[p] = struct{}{} }
	chk, chkDone := newCheck(ctx, c.Judge, timeout)
	p, backToBack := s.startWarm(sc, chk, chkDone, register)
	if p == nil {
		if p, err = s.start(sc, chk, chkDone, nil, register); err != nil {
			chkDone()
			return RunResult{}, err
		}
	}
	if backToBack {
		go s.prewarm()
	} else {
		defer func() { go s.prewarm() }()
	}
	defer func() {
		s.mu.Lock()
		s.lastRun = time.Now()
		s.mu.Unlock()
	}()
	if c.Yield > 0 {
		if info, ok := s.yield(ctx, p, c, timeout); ok {
			out := RunResult{Result: p.Result(), CwdReset: reset, RanIn: ranIn, Task: &info}
			out.Refused, out.RefusedCount = s.refused(p)
			return out, nil
		}
	}
	res := p.Wait(ctx, timeout)

	s.mu.Lock()
	delete(s.running, p)
	if res.Dir != "" && res.Dir != dir && !res.Canceled && !s.closed {
		s.cwd = res.Dir
	}
	// Children left running by a command that completed normally (a dev
	// server started with &) live on until the session closes; a command
	// that timed out or was cancelled leaves nothing behind.
	keep := res.Leftover && !res.TimedOut && !res.Canceled && !s.closed
	out := RunResult{Result: res, CwdReset: reset, RanIn: ranIn, Guard: s.outcomeLocked(p, res)}
	out.Refused, out.RefusedCount = s.refusedLocked(p)
	if out.Guard.GroupEnded {
		keep = false // the guard ended the whole group; nothing is left
	}
	if keep {
		command := c.Script
		if len(c.Argv) > 0 {
			command = strings.Join(c.Argv, " ")
		}
		out.LeftRunning, out.LeftPgid = s.keepLeftoverLocked(p, command, out.Guard.Budget), p.Pgid()
	}
	if !keep {
		s.forgetCheckLocked(p)
	}
	s.mu.Unlock()
	if !keep {
		p.Terminate() // a no-op when the group is already empty
		go func() { <-p.Terminated(); p.Close() }()
	}
	return out, nil
}

// keepLeftoverLocked lists the processes a finished command left running
// as a task of their own, so that the task list shows them (with the
// command that left them) and task_kill ends them; it returns the task's
// id. budget is the process budget the command was given.
func (s *Session) keepLeftoverLocked(p *shell.Process, command string, budget int) string {
	s.taskSeq++
	t := &task{id: fmt.Sprintf("task_%d", s.taskSeq), command: command, proc: p, started: time.Now(), finished: true, leftover: true, budget: budget}
	s.tasks[t.id] = t
	return t.id
}

// admitLocked lets the guard set a started command's limits, then lets it
// run. A command that keeps running past guard.LongAfter is lowered in
// priority, and what it leaves running is lowered at once.
func (s *Session) admitLocked(p *shell.Process) error {
	g := s.opts.Guard
	if g == nil {
		return p.Open()
	}
	adm, err := g.Admit(p.Pgid())
	if err != nil {
		return err
	}
	s.admitted[p] = adm
	pgid := p.Pgid()
	demote := time.AfterFunc(guard.LongAfter, func() { g.Demote(pgid) })
	go func() {
		<-p.Done()
		demote.Stop()
		if p.Result().Leftover {
			g.Demote(pgid)
		}
	}()
	return p.Open()
}

// outcomeLocked asks the guard how a finished command ended.
func (s *Session) outcomeLocked(p *shell.Process, res shell.Result) guard.Outcome {
	adm, ok := s.admitted[p]
	if !ok || s.opts.Guard == nil {
		return guard.Outcome{}
	}
	delete(s.admitted, p)
	killed := res.Signal == "KILL" || res.ExitCode == 128+9
	return s.opts.Guard.Outcome(adm, killed, outputOf(res))
}

// outputOf is what a command printed, as kept, both streams: where the
// guard looks for a refused fork.
func outputOf(res shell.Result) string {
	return res.Stdout.Text + res.Stdout.Tail + res.Stderr.Text + res.Stderr.Tail
}

// yield waits for a command up to its Yield and, if it is still running
// then, makes it a background task with what is left of its timeout. It
// reports false when the command finished first (or was cancelled), or
// when the session may not run another task: the caller then waits for it.
func (s *Session) yield(ctx context.Context, p *shell.Process, c Cmd, timeout time.Duration) (TaskInfo, bool) {
	start := time.Now()
	t := time.NewTimer(c.Yield)
	defer t.Stop()
	select {
	case <-p.Done():
		return TaskInfo{}, false
	case <-ctx.Done():
		return TaskInfo{}, false
	case <-t.C:
	}
	if timeout > 0 && time.Since(start) >= timeout {
		return TaskInfo{}, false
	}
	left := time.Duration(0)
	if timeout > 0 {
		left = timeout - time.Since(start)
	}
	script := c.Script
	if script == "" {
		script = strings.Join(c.Argv, " ")
	}
	info, err := s.adopt(p, script, left)
	if err != nil {
		return TaskInfo{}, false
	}
	p.StopProgress()
	p.TakeNew() // the answer has the output so far; the task's reads go on from here
	return info, true
}

// startWarm hands a foreground command to the session's prestarted shell
// and registers it; nil when there is none, or the command needs what a
// prestarted shell does not have (its own argv, merged output).
//
// backToBack reports a command that took a waiting shell right after the
// session's previous one ended (within backToBackGap): calls made back to
// back, where the next shell is best started at once, beside this
// command, since the next call will come before a shell started after
// this one could be ready. After a pause it starts once this command is
// done, so as not to slow it down.
func (s *Session) startWarm(c shell.Command, chk check, chkDone context.CancelFunc, register func(*shell.Process)) (p *shell.Process, backToBack bool) {
	if len(c.Argv) > 0 || c.Merge || c.Stdin != shell.StdinNull {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false
	}
	if p = s.takeWarmLocked(); p == nil {
		return nil, false
	}
	// The prestarted shell has run only builtins, waiting for its
	// command: tracked now, its command's execs are judged from the first.
	s.trackLocked(p, chk, chkDone)
	if err := s.admitLocked(p); err != nil {
		p.Terminate()
		go func() { <-p.Terminated(); p.Close() }()
		return nil, false
	}
	if err := p.Begin(c); err != nil {
		p.Close()
		return nil, false
	}
	register(p)
	return p, time.Since(s.lastRun) < backToBackGap
}

// backToBackGap is the longest pause between two commands of a session
// that counts as calls made back to back: a program's loop, not an
// agent's turn. It is below the time a shell takes to start (1–2 ms), so
// that a shell started after a command still has the pause to get ready
// in; starting one beside a command costs that command about 0.3 ms on
// two cores.
const backToBackGap = time.Millisecond

// startDir returns the directory to run in: the tracked one, or if it has
// gone the initial workdir, or / if that has gone too (then reset names the
// lost directory).
func (s *Session) startDir() (dir, reset string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", "", errClosed()
	}
	if isDir(s.cwd) {
		return s.cwd, "", nil
	}
	reset = s.cwd
	s.cwd = s.rootLocked()
	if !isDir(s.cwd) {
		s.cwd = "/"
	}
	return s.cwd, reset, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// start starts a command and registers it under the session lock, so a
// concurrent Close either sees it or prevents it. admit, if set, may refuse
// the start (checked under the same lock).
func (s *Session) start(c shell.Command, chk check, chkDone context.CancelFunc, admit func() error, register func(*shell.Process)) (*shell.Process, error) {
	if s.opts.Runner == nil {
		return nil, codes.Errorf(codes.CommandStartFailed, "no shell is available on this server")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed()
	}
	if admit != nil {
		if err := admit(); err != nil {
			return nil, err
		}
	}
	s.pruneLeftoversLocked()
	c.Sentinel = s.sentinel
	// Gated when the guard or the exec check must see the command
	// before it runs anything.
	c.Gated = s.opts.Guard != nil || s.opts.ExecCheck
	what := s.opts.Runner.Shell()
	if len(c.Argv) > 0 {
		what = c.Argv[0]
	}
	r, err := s.commandRunner()
	if err != nil {
		return nil, codes.Errorf(codes.CommandStartFailed, "could not start %s: %v", what, err)
	}
	p, err := r.Start(c)
	if err != nil {
		return nil, codes.Errorf(codes.CommandStartFailed, "could not start %s: %v", what, unwrapStart(err))
	}
	s.trackLocked(p, chk, chkDone)
	if err := s.admitLocked(p); err != nil {
		p.Terminate()
		go func() { <-p.Terminated(); p.Close() }()
		return nil, codes.Errorf(codes.CommandStartFailed, "could not start %s: setting its limits: %v", what, err)
	}
	register(p)
	return p, nil
}

// commandRunner returns the runner the session's processes are started
// with: Options.Runner, or with Options.NewDomain a copy of it that starts
// them in the session's own domain, made now if this is the first.
func (s *Session) commandRunner() (*shell.Runner, error) {
	s.domMu.Lock()
	defer s.domMu.Unlock()
	s.started = true
	newDomain := s.opts.NewDomain
	if s.newDomain != nil {
		newDomain = s.newDomain
	}
	if newDomain == nil && !s.opts.ExecCheck {
		return s.opts.Runner, nil
	}
	if s.domClosed {
		return nil, errClosed()
	}
	if s.runner == nil {
		var dom Domain
		if newDomain != nil {
			d, err := newDomain()
			if err != nil {
				return nil, fmt.Errorf("the session's sandbox domain: %w", err)
			}
			dom = d
		} else {
			// No sandbox: a plain thread of the session's own carries
			// the exec filter, so nothing else of boris does.
			dom = execcheck.NewThread()
		}
		if s.opts.ExecCheck {
			w, err := execcheck.Attach(dom.Do)
			if err != nil {
				dom.Close()
				return nil, fmt.Errorf("checking the session's execs: %w", err)
			}
			w.SetFallback(s.opts.ExecFallback)
			s.watcher = w
		}
		s.runner, s.closeDomain = s.opts.Runner.WithStart(dom.Start), dom.Close
	}
	return s.runner, nil
}

// endDomain closes the session's domain, if it has one; no process of the
// session is started afterwards.
func (s *Session) endDomain() {
	s.domMu.Lock()
	defer s.domMu.Unlock()
	s.domClosed = true
	if s.watcher != nil {
		s.watcher.Close()
	}
	if s.closeDomain != nil {
		s.closeDomain()
		s.closeDomain = nil
	}
}

// pruneLeftoversLocked forgets leftover groups that have emptied, so their
// ids are never signalled after the system may have reused them.
func (s *Session) pruneLeftoversLocked() {
	kept := s.leftovers[:0]
	for _, p := range s.leftovers {
		if shell.GroupAlive(p.Pgid()) {
			kept = append(kept, p)
		} else {
			s.forgetCheckLocked(p)
			p.Close()
		}
	}
	clear(s.leftovers[len(kept):])
	s.leftovers = kept
	for id, t := range s.tasks {
		if t.leftover && !shell.GroupAlive(t.proc.Pgid()) {
			delete(s.tasks, id)
			s.forgetCheckLocked(t.proc)
			t.proc.Close()
		}
	}
}

// Close terminates every process the session started (SIGTERM, SIGKILL
// after the grace period) and waits until they are gone. It is idempotent.
func (s *Session) Close() {
	s.closeOnce.Do(func() {
		warm := []*shell.Process{s.dropWarm(nil)}
		s.mu.Lock()
		s.closed = true
		if w := s.takeWarmLocked(); w != nil { // started meanwhile
			w.Close()
			warm = append(warm, w)
		}
		var procs []*shell.Process
		for p := range s.running {
			procs = append(procs, p)
		}
		procs = append(procs, s.leftovers...)
		s.leftovers = nil
		for _, t := range s.tasks {
			procs = append(procs, t.proc)
			if t.timer != nil {
				t.timer.Stop()
			}
		}
		s.mu.Unlock()

		for _, p := range procs {
			p.Terminate()
		}
		for _, p := range procs {
			<-p.Terminated()
			p.Close()
		}
		for _, w := range warm {
			if w != nil {
				<-w.Done() // out of the domain before it closes
			}
		}
		s.endDomain()
		close(s.closedCh)
	})
}

// Restart ends every process the session's commands started — commands
// still running, background tasks, and whatever finished commands left
// running — and puts the working directory back to the initial one, as a
// fresh shell would start. Unlike Close, the session stays open. It returns
// once the processes are gone.
func (s *Session) Restart() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errClosed()
	}
	var owned, borrowed []*shell.Process
	for p := range s.running {
		borrowed = append(borrowed, p) // Run closes its own process
	}
	owned = append(owned, s.leftovers...)
	s.leftovers = nil
	for id, t := range s.tasks {
		if t.timer != nil {
			t.timer.Stop()
		}
		owned = append(owned, t.proc)
		delete(s.tasks, id)
	}
	s.cwd = s.rootLocked()
	for _, p := range owned {
		s.forgetCheckLocked(p)
	}
	s.mu.Unlock()

	for _, p := range append(owned, borrowed...) {
		p.Terminate()
	}
	for _, p := range borrowed {
		<-p.Terminated()
	}
	for _, p := range owned {
		<-p.Terminated()
		p.Close()
	}
	return nil
}

// unwrapStart drops the "start shell:" prefix of a start error.
func unwrapStart(err error) error {
	var se *shell.StartError
	if errors.As(err, &se) {
		return se.Err
	}
	return err
}

func joinMax(items []string, n int) string {
	out := ""
	for i, it := range items {
		if i == n {
			return out + fmt.Sprintf(", … (%d more)", len(items)-n)
		}
		if i > 0 {
			out += ", "
		}
		out += it
	}
	return out
}

// DomainFuncs is a Domain made of a start and a close function, for a
// domain not tied to a thread: its Do runs the function where it is
// called.
type DomainFuncs struct {
	StartFunc func(*exec.Cmd) error
	CloseFunc func()
}

// Start calls StartFunc.
func (d DomainFuncs) Start(c *exec.Cmd) error { return d.StartFunc(c) }

// Do runs fn.
func (d DomainFuncs) Do(fn func()) error { fn(); return nil }

// Close calls CloseFunc, if set.
func (d DomainFuncs) Close() {
	if d.CloseFunc != nil {
		d.CloseFunc()
	}
}
