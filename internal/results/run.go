package results

import (
	"time"

	"github.com/boris-mcp/boris/internal/execcheck"
	"github.com/boris-mcp/boris/internal/guard"
	"unicode/utf8"

	"github.com/boris-mcp/boris/internal/session"
	"github.com/boris-mcp/boris/internal/shell"
	"github.com/boris-mcp/boris/internal/term"
)

// Status values of a command or task.
const (
	StatusCompleted = "completed"
	StatusRunning   = "running"
)

// Run is a command's result (bash) or a background task's status and new
// output (bash with run_in_background, interactive, tty or a yield_ms that
// passed; task_output, task_input, task_kill).
type Run struct {
	Status          string  `json:"status" jsonschema:"completed: the command has ended (exit_code says how); running: it goes on as the background task task_id."`
	TaskID          string  `json:"task_id,omitempty" jsonschema:"The background task, for task_output, task_input and task_kill."`
	Pgid            int     `json:"pgid,omitempty" jsonschema:"The running command's process group."`
	ExitCode        *int    `json:"exit_code,omitempty" jsonschema:"Present once the command has ended: its exit code, 128+N when signal N ended it."`
	Signal          string  `json:"signal,omitempty" jsonschema:"The signal that ended the command's shell (TERM, KILL, INT, …), when one did."`
	TimedOut        bool    `json:"timed_out" jsonschema:"The command was ended by its timeout (or a task by --background-task-timeout)."`
	Canceled        bool    `json:"canceled,omitempty" jsonschema:"The client cancelled the call or went away; the command was ended."`
	Terminated      bool    `json:"terminated,omitempty" jsonschema:"The session was closed while the command ran; the command was ended."`
	Stdout          string  `json:"stdout" jsonschema:"What the command wrote on stdout (a task: since the previous read); for a terminal (tty) everything it printed, escape sequences removed."`
	Stderr          string  `json:"stderr" jsonschema:"What the command wrote on stderr (empty for a terminal)."`
	StdoutChars     int64   `json:"stdout_chars" jsonschema:"Characters the command wrote on stdout in all (a task: in this read); more than stdout holds when stdout_truncated."`
	StderrChars     int64   `json:"stderr_chars" jsonschema:"Characters the command wrote on stderr in all (a task: in this read)."`
	StdoutTruncated bool    `json:"stdout_truncated" jsonschema:"stdout holds only the first 30,000 characters."`
	StderrTruncated bool    `json:"stderr_truncated" jsonschema:"stderr holds only the first 30,000 characters."`
	TTY             bool    `json:"tty,omitempty" jsonschema:"The task runs under a terminal: its output is in stdout."`
	DroppedBytes    int64   `json:"dropped_bytes,omitempty" jsonschema:"Bytes of unread task output dropped since the previous read (more than 1 MiB was waiting); stdout or stderr then begins with a line saying so."`
	More            bool    `json:"more,omitempty" jsonschema:"A task's output not in this answer waits for the next read (an answer holds at most --max-answer characters); a completed task is kept until it is read."`
	Cwd             string  `json:"cwd,omitempty" jsonschema:"The session's working directory after the command (a cd in it moves the session)."`
	CwdReset        string  `json:"cwd_reset,omitempty" jsonschema:"The session's working directory, which no longer existed: the command ran in cwd instead."`
	ElapsedMs       float64 `json:"elapsed_ms" jsonschema:"How long the command has run (a task: since it started), in milliseconds."`
	Screen          *Screen `json:"screen,omitempty" jsonschema:"task_output with screen: the terminal's screen."`
	Refused
	Guarded
	Common
}

// Refused is what the command rules refused of a command while it ran.
type Refused struct {
	RefusedExecs      []RefusedExec `json:"refused_execs,omitempty" jsonschema:"Programs the command's processes tried to execute that the command rules refused (each exec failed with EPERM), first 20."`
	RefusedExecsTotal int           `json:"refused_execs_total,omitempty" jsonschema:"How many execs were refused in all."`
}

// RefusedExec is one refused exec.
type RefusedExec struct {
	Argv   []string `json:"argv" jsonschema:"The exec's argv as the program would have seen it (or with argv[0] the program's real path, when that was what was refused)."`
	Reason string   `json:"reason" jsonschema:"Why: the rule that refused it, or why it could not be checked."`
	Pid    int      `json:"pid" jsonschema:"The process that tried it."`
}

func refused(list []execcheck.Refusal, total int) Refused {
	if total == 0 {
		return Refused{}
	}
	r := Refused{RefusedExecs: make([]RefusedExec, len(list)), RefusedExecsTotal: total}
	for i, x := range list {
		r.RefusedExecs[i] = RefusedExec{Argv: x.Argv, Reason: x.Reason, Pid: x.Pid}
	}
	return r
}

// Guarded is what boris's resource guard saw of a command.
type Guarded struct {
	OOMKilled          bool     `json:"oom_killed,omitempty" jsonschema:"The kernel's OOM killer ended the command (or one of its processes): the container ran out of memory."`
	MemoryLimit        int64    `json:"memory_limit,omitempty" jsonschema:"With oom_killed: the container's memory limit in bytes, when known."`
	OOMKilledProcesses []string `json:"oom_killed_processes,omitempty" jsonschema:"With oom_killed: the command's processes the OOM killer took, as \"tail (pid 42)\", when boris could tell them (the command may have gone on without them and exited 0)."`
	OOMGroupEnded      bool     `json:"oom_group_ended,omitempty" jsonschema:"With oom_killed: boris ended the command's other processes too, to give the memory back."`
	ProcessBudget      int      `json:"process_budget,omitempty" jsonschema:"A fork was refused: the command reached its process budget, this many processes."`
	LeftRunning        string   `json:"left_running,omitempty" jsonschema:"The command ended but left processes running (started with &, a daemon): the task that lists them, for task_kill."`
}

func guarded(o guard.Outcome, leftRunning string) Guarded {
	g := Guarded{OOMKilled: o.OOMKilled, OOMGroupEnded: o.GroupEnded, LeftRunning: leftRunning}
	if o.OOMKilled {
		g.MemoryLimit = o.MemoryLimit
		g.OOMKilledProcesses = o.Victims
	}
	if o.BudgetHit {
		g.ProcessBudget = o.Budget
	}
	return g
}

// Screen is a terminal's screen as it looks now.
type Screen struct {
	Text      string `json:"text" jsonschema:"The screen's lines, trailing blank lines left out."`
	Rows      int    `json:"rows" jsonschema:"The terminal's height in rows."`
	CursorRow int    `json:"cursor_row" jsonschema:"The cursor's row, 1-based."`
	CursorCol int    `json:"cursor_col" jsonschema:"The cursor's column, 1-based."`
}

// FromRun is a foreground command's result; cwd is the session's
// directory after it. A command that outlived its yield_ms is a running
// task with its output so far.
func FromRun(res session.RunResult, cwd string) *Run {
	r := &Run{
		Status:   StatusCompleted,
		TimedOut: res.TimedOut, Canceled: res.Canceled, Terminated: res.Terminated,
		Cwd: cwd, CwdReset: res.CwdReset,
		ElapsedMs: ms(res.Duration),
		Guarded:   guarded(res.Guard, res.LeftRunning),
		Refused:   refused(res.Refused, res.RefusedCount),
	}
	r.streams(res.Stdout, res.Stderr)
	if res.Task != nil {
		r.Status, r.TaskID, r.Pgid = StatusRunning, res.Task.ID, res.Task.Pgid
		return r
	}
	r.ended(res.Result)
	return r
}

// Started is a background task just started, with no output read yet.
func Started(info session.TaskInfo) *Run {
	return &Run{Status: StatusRunning, TaskID: info.ID, Pgid: info.Pgid}
}

// FromTask is a task's status and new output.
func FromTask(st session.TaskStatus) *Run {
	r := &Run{
		Status: StatusRunning, TaskID: st.ID,
		TimedOut: st.KilledByTimeout, TTY: st.TTY, DroppedBytes: st.Dropped, More: st.More,
		Stdout: st.Stdout, Stderr: st.Stderr,
		StdoutChars: int64(utf8.RuneCountInString(st.Stdout)), StderrChars: int64(utf8.RuneCountInString(st.Stderr)),
		ElapsedMs: ms(st.Result.Duration),
	}
	r.Guarded = guarded(st.Guard, "") // a running leftover may have had a fork refused
	r.Refused = refused(st.Refused, st.RefusedCount)
	if st.Running {
		r.Pgid = st.Pgid
		return r
	}
	r.Status = StatusCompleted
	r.ended(st.Result)
	return r
}

// WithScreen adds a terminal's screen.
func (r *Run) WithScreen(snap term.Snapshot) *Run {
	r.Screen = &Screen{Text: snap.Text(), Rows: len(snap.Rows), CursorRow: snap.Row, CursorCol: snap.Col}
	return r
}

func (r *Run) streams(stdout, stderr shell.Output) {
	r.Stdout, r.StdoutChars, r.StdoutTruncated = stdout.Text, stdout.Chars, stdout.Truncated
	r.Stderr, r.StderrChars, r.StderrTruncated = stderr.Text, stderr.Chars, stderr.Truncated
}

func (r *Run) ended(res shell.Result) {
	code := res.ExitCode
	r.ExitCode, r.Signal = &code, res.Signal
}

// TaskList is the session's background tasks (task_output without
// task_id), oldest first.
type TaskList struct {
	Tasks []Task `json:"tasks" jsonschema:"The session's tasks, oldest first."`
	Total int    `json:"total" jsonschema:"How many tasks there are."`
	Common
}

// Task is one background task of a list.
type Task struct {
	TaskID   string  `json:"task_id" jsonschema:"The task."`
	Status   string  `json:"status" jsonschema:"running, or completed (its last output not read yet)."`
	ExitCode *int    `json:"exit_code,omitempty" jsonschema:"A completed task's exit code."`
	Signal   string  `json:"signal,omitempty" jsonschema:"The signal that ended a completed task, when one did."`
	Pgid     int     `json:"pgid" jsonschema:"Its process group."`
	Kind     string  `json:"kind" jsonschema:"background (stdin /dev/null), interactive (stdin a pipe), tty (a terminal), or leftover (processes a finished command left running: running while any are)."`
	Command  string  `json:"command" jsonschema:"Its command line."`
	AgeMs    float64 `json:"age_ms" jsonschema:"Milliseconds since it started."`
	// ProcessBudget: what a command left running tried to fork past the
	// budget the command was given.
	ProcessBudget int `json:"process_budget,omitempty" jsonschema:"A leftover task: a fork of its processes was refused, past the process budget its command was given (this many processes)."`
}

// Task kinds.
const (
	KindBackground  = "background"
	KindInteractive = "interactive"
	KindTTY         = "tty"
	KindLeftover    = "leftover"
)

// FromTasks lists tasks.
func FromTasks(list []session.TaskStatus) *TaskList {
	out := &TaskList{Tasks: make([]Task, 0, len(list)), Total: len(list)}
	for _, st := range list {
		t := Task{TaskID: st.ID, Status: StatusRunning, Pgid: st.Pgid, Kind: KindBackground, Command: st.Command, AgeMs: ms(st.Age)}
		switch {
		case st.Leftover:
			t.Kind = KindLeftover
		case st.TTY:
			t.Kind = KindTTY
		case st.Interactive:
			t.Kind = KindInteractive
		}
		if st.Guard.BudgetHit {
			t.ProcessBudget = st.Guard.Budget
		}
		if !st.Running {
			code := st.Result.ExitCode
			t.Status, t.ExitCode, t.Signal = StatusCompleted, &code, st.Result.Signal
		}
		out.Tasks = append(out.Tasks, t)
	}
	return out
}

// ms is d in milliseconds with microsecond resolution, as the audit
// record's duration_ms.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Restarted is the answer of the Claude dialect's bash restart.
type Restarted struct {
	Restarted bool `json:"restarted" jsonschema:"Always true: the session's processes were ended and its working directory is the initial one again."`
	Common
}
