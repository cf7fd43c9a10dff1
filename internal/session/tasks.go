package session

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/execcheck"
	"github.com/boris-mcp/boris/internal/guard"
	"github.com/boris-mcp/boris/internal/shell"
	"github.com/boris-mcp/boris/internal/term"
)

// Limits of background tasks.
const (
	// TaskWindow is how much unread output a task keeps per stream; older
	// unread output is dropped, and the next read says how much.
	TaskWindow = 1 << 20
	// Quiet is how long a task must print nothing for a waiting read to
	// take its output as complete: a prompt, an answer, a burst.
	Quiet = 100 * time.Millisecond
)

// task is a background command.
type task struct {
	id       string
	command  string
	proc     *shell.Process
	timer    *time.Timer
	started  time.Time
	finished bool // counted out of the running limit
	// leftover tasks are the processes a finished foreground command left
	// running; listed until they are gone.
	leftover bool
	// budget is the process budget the leftover's command was given (0:
	// none), for telling a fork refused after its answer.
	budget int
	// interactive tasks have stdin open; tty ones run under a terminal,
	// whose stream filter turns into text and whose screen is kept.
	interactive bool
	screen      *term.Screen

	readMu sync.Mutex // one read of the task at a time: TakeNew and the filter
	filter term.Filter
}

// TaskOptions describe a background task.
type TaskOptions struct {
	Script string
	// Interactive keeps stdin open (a pipe) for TaskInput.
	Interactive bool
	// TTY runs the command under a pseudo-terminal of Cols×Rows; it is
	// interactive too.
	TTY        bool
	Cols, Rows int
	// Dir is where the task starts ("": the session's directory); Merge
	// sends its stderr into its stdout.
	Dir   string
	Merge bool
	// Env are NAME=value variables added to the task's environment.
	Env []string
	// Judge, with Options.ExecCheck, decides every exec of the task's
	// process tree, with a context that ends with the task's timeout.
	Judge execcheck.Judge
}

// TaskInfo describes a started background task.
type TaskInfo struct {
	ID   string
	Pgid int
}

// StartBackground starts a background command with stdin at /dev/null.
func (s *Session) StartBackground(script string) (TaskInfo, error) {
	return s.StartTask(TaskOptions{Script: script})
}

// StartTask starts a background task. It never changes the session's
// directory.
func (s *Session) StartTask(o TaskOptions) (TaskInfo, error) {
	dir, _, err := s.startDir()
	if err != nil {
		return TaskInfo{}, err
	}
	if o.Dir != "" {
		dir = o.Dir
	}
	c := shell.Command{Script: o.Script, Dir: dir, Env: o.Env, Window: TaskWindow, Merge: o.Merge}
	var screen *term.Screen
	var reply lateWriter
	switch {
	case o.TTY:
		c.Stdin, c.Cols, c.Rows = shell.StdinTTY, o.Cols, o.Rows
		if c.Cols <= 0 || c.Rows <= 0 {
			c.Cols, c.Rows = term.DefaultCols, term.DefaultRows
		}
		// The screen answers what the program asks its terminal (where
		// the cursor is, say) through the terminal's input.
		screen = term.NewScreen(c.Cols, c.Rows, &reply)
		c.Tee = screen
	case o.Interactive:
		c.Stdin = shell.StdinPipe
	}
	var t *task
	chk, chkDone := newCheck(context.Background(), o.Judge, s.opts.TaskTimeout)
	p, err := s.start(c, chk, chkDone, s.checkTaskLimitLocked, func(p *shell.Process) {
		s.taskSeq++
		t = &task{id: fmt.Sprintf("task_%d", s.taskSeq), command: o.Script, proc: p, started: time.Now(), interactive: o.Interactive || o.TTY, screen: screen}
		s.tasks[t.id] = t
	})
	if err != nil {
		chkDone()
		return TaskInfo{}, err
	}
	reply.set(p)
	s.watchTask(t, s.opts.TaskTimeout)
	return TaskInfo{ID: t.id, Pgid: p.Pgid()}, nil
}

// lateWriter writes to a process's input once it is known; before that,
// and after, it drops what is written.
type lateWriter struct {
	mu sync.Mutex
	p  *shell.Process
}

func (w *lateWriter) set(p *shell.Process) { w.mu.Lock(); w.p = p; w.mu.Unlock() }

func (w *lateWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	p := w.p
	w.mu.Unlock()
	if p != nil {
		_ = p.Input(b)
	}
	return len(b), nil
}

// watchTask counts a task among the running ones until it ends, and ends
// it when it outlives timeout (0: never).
func (s *Session) watchTask(t *task, timeout time.Duration) {
	if s.opts.OnTaskChange != nil {
		s.opts.OnTaskChange(+1)
	}
	if timeout > 0 {
		s.mu.Lock()
		t.timer = time.AfterFunc(timeout, t.proc.MarkTimedOut)
		s.mu.Unlock()
	}
	go func() {
		<-t.proc.Done()
		s.mu.Lock()
		t.finished = true
		if t.timer != nil {
			t.timer.Stop()
		}
		s.trimFinishedLocked()
		s.mu.Unlock()
		if s.opts.OnTaskChange != nil {
			s.opts.OnTaskChange(-1)
		}
	}()
}

// adopt makes a running foreground command a background task (a command
// that outlived its yield). It fails when the session already runs as many
// tasks as it may.
func (s *Session) adopt(p *shell.Process, script string, timeout time.Duration) (TaskInfo, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return TaskInfo{}, errClosed()
	}
	if err := s.checkTaskLimitLocked(); err != nil {
		s.mu.Unlock()
		return TaskInfo{}, err
	}
	delete(s.running, p)
	s.taskSeq++
	t := &task{id: fmt.Sprintf("task_%d", s.taskSeq), command: script, proc: p, started: time.Now()}
	s.tasks[t.id] = t
	s.mu.Unlock()
	s.watchTask(t, timeout)
	return TaskInfo{ID: t.id, Pgid: p.Pgid()}, nil
}

// checkTaskLimitLocked returns BASH_TASK_LIMIT when the session already
// runs the maximum number of background tasks.
func (s *Session) checkTaskLimitLocked() error {
	if n := s.runningTasksLocked(); n >= s.opts.MaxTasks {
		return codes.Errorf(codes.TaskLimit, "%d background tasks are already running in this session (the limit is %d); wait for one to finish (task_output) or stop one (task_kill)", n, s.opts.MaxTasks)
	}
	return nil
}

func (s *Session) runningTasksLocked() int {
	n := 0
	for _, t := range s.tasks {
		if !t.finished {
			n++
		}
	}
	return n
}

// trimFinishedLocked drops the oldest finished tasks beyond the retention
// limit, so unread results cannot pile up without bound.
func (s *Session) trimFinishedLocked() {
	var done []*task
	for _, t := range s.tasks {
		if t.finished {
			done = append(done, t)
		}
	}
	if len(done) <= maxFinishedTasks {
		return
	}
	sort.Slice(done, func(i, j int) bool { return done[i].started.Before(done[j].started) })
	for _, t := range done[:len(done)-maxFinishedTasks] {
		delete(s.tasks, t.id)
		s.retireLocked(t.proc)
	}
}

// retireLocked keeps a finished process with live leftovers for killing at
// close, and releases one without.
func (s *Session) retireLocked(p *shell.Process) {
	if p.Result().Leftover && shell.GroupAlive(p.Pgid()) {
		s.leftovers = append(s.leftovers, p)
		return
	}
	s.forgetCheckLocked(p)
	p.Close()
}

// TaskStatus is a task's state and the output it printed since the
// previous read.
type TaskStatus struct {
	ID   string
	Pgid int
	// Command is the task's command line.
	Command string
	Running bool
	// TTY and Interactive say how the task runs.
	TTY, Interactive bool
	// KilledByTimeout is set when --background-task-timeout (or the
	// command's own timeout) ended it.
	KilledByTimeout bool
	// Result has the exit code (of a finished task) and the whole output
	// as kept (its first characters).
	Result shell.Result
	// Stdout and Stderr are the new output: for a terminal, one stream of
	// text in Stdout, escape sequences removed.
	Stdout, Stderr string
	// Dropped counts the bytes of unread output dropped since the previous
	// read (more than TaskWindow were waiting); a note at the head of the
	// stream says so too.
	Dropped int64
	// More is set when output is left for the next read: a read takes at
	// most Options.MaxRead bytes of each stream. A finished task with
	// more is kept until it has been read.
	More bool
	// Age is how long ago the task started.
	Age time.Duration
	// Leftover: the task is the processes a finished foreground command
	// left running (Command); Running says whether any still are.
	Leftover bool
	// Guard says what the guard saw of a finished task.
	Guard guard.Outcome
	// Refused are the task's execs its judge refused so far (at most
	// 20), RefusedCount how many in all (Options.ExecCheck).
	Refused      []execcheck.Refusal
	RefusedCount int
}

// find returns a task of the session.
func (s *Session) find(id string) (*task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[id]
	if !ok {
		var ids []string
		for k := range s.tasks {
			ids = append(ids, k)
		}
		sort.Strings(ids)
		known := "this session has no background tasks"
		if len(ids) > 0 {
			known = "this session's tasks are: " + joinMax(ids, 20)
		}
		return nil, codes.Errorf(codes.TaskNotFound, "no background task %q in this session (%s); a finished task's output can be read once", id, known)
	}
	return t, nil
}

// TaskOutput returns a task's status and the output it printed since the
// previous read. When there is none yet it waits up to wait for some, and
// then until the task goes quiet. A finished task is removed once its
// output has been read.
func (s *Session) TaskOutput(id string, wait time.Duration) (TaskStatus, error) {
	t, err := s.find(id)
	if err != nil {
		return TaskStatus{}, err
	}
	if !t.proc.Pending() {
		settle(t.proc, wait, t.proc.Changed(), false)
	}
	return s.read(t), nil
}

// TaskWait waits up to wait for a task to end, then returns its status and
// all its new output (the wait of Codex's exec_command and write_stdin,
// which do not answer before their time is up unless the command ends, and
// keep the head and the tail of long output themselves).
func (s *Session) TaskWait(id string, wait time.Duration) (TaskStatus, error) {
	t, err := s.find(id)
	if err != nil {
		return TaskStatus{}, err
	}
	waitDone(t.proc, wait)
	return s.readAtMost(t, 0), nil
}

// TaskWrite writes input to an interactive task, then waits as TaskWait.
func (s *Session) TaskWrite(id, input string, wait time.Duration) (TaskStatus, error) {
	t, err := s.find(id)
	if err != nil {
		return TaskStatus{}, err
	}
	if input != "" {
		if !t.interactive {
			return TaskStatus{}, codes.Errorf(codes.InvalidInput, "task %s was started without a terminal, so its stdin is /dev/null; start the command with tty: true to write to it (empty chars just read its new output)", id)
		}
		if err := s.write(t, input); err != nil {
			return TaskStatus{}, codes.Errorf(codes.IOError, "write to task %s: %v", id, err)
		}
	}
	waitDone(t.proc, wait)
	return s.readAtMost(t, 0), nil
}

func waitDone(p *shell.Process, wait time.Duration) {
	if wait <= 0 {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-p.Done():
	case <-t.C:
	}
}

// settle waits, up to wait, for a process to print — unless heard says it
// has — and then to be quiet for Quiet, or to finish. first is the change
// channel to wait on first, taken before whatever was meant to make the
// process print.
func settle(p *shell.Process, wait time.Duration, first <-chan struct{}, heard bool) {
	if wait <= 0 {
		return
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	quiet := time.NewTimer(Quiet)
	defer quiet.Stop()
	for changed := first; ; changed = p.Changed() {
		if !p.Running() {
			return
		}
		if !heard {
			select {
			case <-changed:
				heard = true
				quiet.Reset(Quiet)
			case <-p.Done():
				return
			case <-deadline.C:
				return
			}
			continue
		}
		select {
		case <-changed:
			quiet.Reset(Quiet)
		case <-quiet.C:
			return
		case <-p.Done():
			return
		case <-deadline.C:
			return
		}
	}
}

// read takes a task's new output and status; a finished task is forgotten
// with this read.
func (s *Session) read(t *task) TaskStatus { return s.readAtMost(t, s.opts.MaxRead) }

// readAtMost is read taking at most max bytes of each stream (0: all).
func (s *Session) readAtMost(t *task, max int) TaskStatus {
	t.readMu.Lock()
	running := t.proc.Running()
	var n shell.NewOutput
	if !t.leftover { // a foreground command's output went with its answer
		n = t.proc.TakeNewAtMost(max)
	}
	more := t.proc.Pending()
	stdout := string(n.Stdout)
	if t.screen != nil {
		stdout = t.filter.Write(n.Stdout)
	}
	t.readMu.Unlock()
	res := t.proc.Result()
	st := TaskStatus{
		ID: t.id, Pgid: t.proc.Pgid(), Command: t.command, Running: running,
		TTY: t.screen != nil, Interactive: t.interactive, KilledByTimeout: res.TimedOut,
		Result: res, Stdout: stdout, Stderr: string(n.Stderr), Age: time.Since(t.started),
		Dropped: n.StdoutDropped + n.StderrDropped, Leftover: t.leftover, More: more,
	}
	st.Refused, st.RefusedCount = s.refused(t.proc)
	if t.leftover {
		// Listed for as long as any of its processes are.
		st.Running = shell.GroupAlive(t.proc.Pgid())
		st.Stdout, st.Stderr = "", ""
		st.Guard = leftoverOutcome(t, res)
		if st.Running {
			return st
		}
	}
	if !running && !more {
		s.mu.Lock()
		if s.tasks[t.id] == t {
			delete(s.tasks, t.id)
			if !t.leftover {
				st.Guard = s.outcomeLocked(t.proc, res)
			}
			s.retireLocked(t.proc)
		}
		s.mu.Unlock()
	}
	return st
}

// TaskInput writes input to an interactive task's stdin or terminal, then
// waits up to wait for its answer (output, then Quiet) or its end, and
// returns what it printed meanwhile. On a pipe, a ^C (U+0003) interrupts
// the task's process group and a ^D (U+0004) closes its stdin, as they
// would at a terminal; under a terminal every character goes to it as
// typed.
func (s *Session) TaskInput(id, input string, wait time.Duration) (TaskStatus, error) {
	t, err := s.find(id)
	if err != nil {
		return TaskStatus{}, err
	}
	if !t.interactive {
		return TaskStatus{}, codes.Errorf(codes.InvalidInput, "task %s is not interactive: its stdin is /dev/null. Start the command with interactive: true (or tty: true) to write to it", id)
	}
	if !t.proc.Running() {
		return TaskStatus{}, codes.Errorf(codes.InvalidInput, "task %s has ended; read its last output with task_output", id)
	}
	changed := t.proc.Changed()
	if err := s.write(t, input); err != nil {
		return TaskStatus{}, codes.Errorf(codes.IOError, "write to task %s: %v", id, err)
	}
	settle(t.proc, wait, changed, false)
	return s.read(t), nil
}

// write sends input to a task.
func (s *Session) write(t *task, input string) error {
	if t.screen != nil {
		return t.proc.Input([]byte(input))
	}
	for input != "" {
		i := strings.IndexAny(input, "\x03\x04")
		text := input
		if i >= 0 {
			text = input[:i]
		}
		if text != "" {
			if err := t.proc.Input([]byte(text)); err != nil {
				return err
			}
		}
		if i < 0 {
			return nil
		}
		if input[i] == 0x03 {
			_ = t.proc.Signal(syscall.SIGINT)
		} else {
			return t.proc.CloseInput()
		}
		input = input[i+1:]
	}
	return nil
}

// Signals task_kill knows by name.
var Signals = map[string]syscall.Signal{
	"TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL, "INT": syscall.SIGINT, "HUP": syscall.SIGHUP,
	"QUIT": syscall.SIGQUIT, "USR1": syscall.SIGUSR1, "USR2": syscall.SIGUSR2,
}

// TaskKill stops a task: sig to its process group, SIGKILL after the grace
// period if anything is left, then its final status and unread output. The
// task is forgotten.
func (s *Session) TaskKill(id string, sig syscall.Signal) (TaskStatus, error) {
	t, err := s.find(id)
	if err != nil {
		return TaskStatus{}, err
	}
	if t.proc.Running() || shell.GroupAlive(t.proc.Pgid()) {
		shell.KillGroupWith(t.proc.Pgid(), sig, s.opts.Runner.Grace())
	}
	<-t.proc.Done()
	return s.read(t), nil
}

// TaskScreen returns the screen of a task that runs under a terminal.
func (s *Session) TaskScreen(id string) (term.Snapshot, TaskStatus, error) {
	t, err := s.find(id)
	if err != nil {
		return term.Snapshot{}, TaskStatus{}, err
	}
	if t.screen == nil {
		return term.Snapshot{}, TaskStatus{}, codes.Errorf(codes.InvalidInput, "task %s does not run under a terminal, so it has no screen; read its output without screen, or start the command with tty: true", id)
	}
	snap := t.screen.Snapshot()
	return snap, s.read(t), nil
}

// leftoverOutcome says whether the processes of a leftover task had a fork
// refused by their budget, after the answer of the command that left them.
func leftoverOutcome(t *task, res shell.Result) guard.Outcome {
	if t.budget <= 0 {
		return guard.Outcome{}
	}
	return guard.Outcome{Budget: t.budget, BudgetHit: guard.BudgetHit(t.budget, outputOf(res))}
}

// Tasks lists the session's tasks, oldest first, without reading them.
func (s *Session) Tasks() []TaskStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]TaskStatus, 0, len(s.tasks))
	for _, t := range s.tasks {
		res := t.proc.Result()
		st := TaskStatus{
			ID: t.id, Pgid: t.proc.Pgid(), Command: t.command, Running: t.proc.Running(),
			TTY: t.screen != nil, Interactive: t.interactive, KilledByTimeout: res.TimedOut,
			Result: res, Age: time.Since(t.started), Leftover: t.leftover,
		}
		if t.leftover {
			st.Running = shell.GroupAlive(t.proc.Pgid())
			st.Guard = leftoverOutcome(t, res)
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Age > out[j].Age })
	return out
}
