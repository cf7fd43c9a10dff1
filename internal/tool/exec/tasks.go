package exec

import (
	"context"
	"strings"
	"syscall"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/results"
	"github.com/boris-mcp/boris/internal/session"
	"github.com/boris-mcp/boris/internal/tool"
)

// The task tools read, drive and stop background tasks: task_output,
// task_input, task_kill.

type taskOutputArgs struct {
	TaskID string    `json:"task_id,omitempty" jsonschema:"The task_id a bash call returned. Omit it to list this session's tasks."`
	WaitMs *tool.Int `json:"wait_ms,omitempty" jsonschema:"Wait up to this many milliseconds for new output (or the task's end) when there is none yet; 0 (the default) answers at once. Max 600000."`
	Screen tool.Bool `json:"screen,omitempty" jsonschema:"For a task started with tty: true: show its terminal's screen as it looks now, for full-screen programs (less, top, vi) whose output stream is not readable text."`
}

func taskOutputTool() (*tool.Def, error) {
	desc := `Read a background task's new output: what it printed since your previous read, and its status.

- wait_ms waits for output when there is none yet (the answer comes once the task goes quiet, ends, or the time is up).
- screen: true (tasks started with tty: true) shows the terminal's screen, for full-screen programs.
- Once a task has ended, its remaining output can be read once; the task is then forgotten.
- Without task_id: a list of this session's tasks.`
	return tool.Define(tool.Meta{Name: "task_output", Title: "Read a background task's output", Description: desc, Returns: tool.Returns(results.Run{}, results.TaskList{})},
		func(_ context.Context, c *tool.Call, in *taskOutputArgs) (*mcp.CallToolResult, error) {
			id := strings.TrimSpace(in.TaskID)
			if id == "" {
				list := c.Sess.Tasks()
				return tool.Answer(formatTaskList(list), results.FromTasks(list)), nil
			}
			c.Rec.TaskID = id
			if in.Screen {
				snap, st, err := c.Sess.TaskScreen(id)
				if err != nil {
					return nil, err
				}
				taskEnded(c, st)
				return tool.Answer(formatScreen(snap, st), results.FromTask(st).WithScreen(snap)), nil
			}
			st, err := c.Sess.TaskOutput(id, waitOf(in.WaitMs, 0))
			if err != nil {
				return nil, err
			}
			taskEnded(c, st)
			return tool.Answer(formatTask(st, ""), results.FromTask(st)), nil
		})
}

type taskInputArgs struct {
	TaskID string    `json:"task_id" jsonschema:"The task_id of a task started with interactive: true or tty: true."`
	Input  string    `json:"input" jsonschema:"What to type, e.g. \"1+2\\n\" (include the newline to send a line). Control characters work: \"\\u0003\" is Ctrl-C (interrupt), \"\\u0004\" Ctrl-D (end of input)."`
	WaitMs *tool.Int `json:"wait_ms,omitempty" jsonschema:"Wait up to this many milliseconds for the answer: the answer comes once the task has printed and gone quiet, or ended (default 1000, max 600000; 0 answers at once)."`
}

func taskInputTool() (*tool.Def, error) {
	desc := `Write to an interactive background task (started with interactive: true or tty: true) and return what it printed in answer.

- Send whole lines with their newline: "print(1+2)\n". "\u0003" is Ctrl-C, "\u0004" Ctrl-D.
- The answer is the task's new output once it goes quiet (about 100 ms without output), ends, or wait_ms passes; for slow answers raise wait_ms or read later with task_output.`
	return tool.Define(tool.Meta{Name: "task_input", Title: "Write to a background task", Description: desc, Returns: tool.Returns(results.Run{}),
		Tune: func(s *jsonschema.Schema) { tool.SetDefault(s, "wait_ms", defaultWaitMs) }},
		func(_ context.Context, c *tool.Call, in *taskInputArgs) (*mcp.CallToolResult, error) {
			id := strings.TrimSpace(in.TaskID)
			if id == "" {
				return nil, codes.Errorf(codes.InvalidInput, "task_id is required: use the task_id a bash call with interactive or tty returned")
			}
			c.Rec.TaskID, c.Rec.Input = id, in.Input
			st, err := c.Sess.TaskInput(id, in.Input, waitOf(in.WaitMs, defaultWaitMs))
			if err != nil {
				return nil, err
			}
			taskEnded(c, st)
			return tool.Answer(formatTask(st, ""), results.FromTask(st)), nil
		})
}

type taskKillArgs struct {
	TaskID string `json:"task_id" jsonschema:"The task to stop."`
	Signal string `json:"signal,omitempty" jsonschema:"The signal to send first: TERM (default), INT, HUP, QUIT, KILL, USR1 or USR2. Whatever is left 5 s later gets KILL."`
}

func taskKillTool() (*tool.Def, error) {
	desc := `Stop a background task: its whole process group gets the signal (TERM by default), then KILL 5 s later if anything is left. Answers with its final status and the output not read yet; the task is then forgotten.`
	return tool.Define(tool.Meta{Name: "task_kill", Title: "Stop a background task", Description: desc, Returns: tool.Returns(results.Run{}),
		Tune: func(s *jsonschema.Schema) { tool.SetEnum(s, "signal", signalNames...) }},
		func(_ context.Context, c *tool.Call, in *taskKillArgs) (*mcp.CallToolResult, error) {
			id := strings.TrimSpace(in.TaskID)
			if id == "" {
				return nil, codes.Errorf(codes.InvalidInput, "task_id is required")
			}
			c.Rec.TaskID = id
			sig, err := signalOf(in.Signal)
			if err != nil {
				return nil, err
			}
			st, err := c.Sess.TaskKill(id, sig)
			if err != nil {
				return nil, err
			}
			taskEnded(c, st)
			return tool.Answer(formatTask(st, ""), results.FromTask(st)), nil
		})
}

// taskEnded records a task's exit code once it has ended.
func taskEnded(c *tool.Call, st session.TaskStatus) {
	if !st.Running {
		c.Rec.SetExit(st.Result.ExitCode)
		c.Rec.TimedOut = st.KilledByTimeout
	}
}

// signalOf reads a signal name (TERM, SIGTERM, term); "" is TERM.
func signalOf(name string) (syscall.Signal, error) {
	n := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(name)), "SIG")
	if n == "" {
		return syscall.SIGTERM, nil
	}
	if sig, ok := session.Signals[n]; ok {
		return sig, nil
	}
	return 0, codes.Errorf(codes.InvalidInput, "unknown signal %q: valid signals are TERM, INT, HUP, QUIT, KILL, USR1, USR2", name).WithValid("signal", signalNames...)
}

// signalNames are the signals task_kill takes, in the order it lists them.
var signalNames = []string{"TERM", "INT", "HUP", "QUIT", "KILL", "USR1", "USR2"}
