package exec

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/dialect"
	"github.com/boris-mcp/boris/internal/results"
	"github.com/boris-mcp/boris/internal/session"
	"github.com/boris-mcp/boris/internal/tool"
)

// claudeRestarted is the reference bash tool's answer to restart.
const claudeRestarted = "tool has been restarted."

// MaxTimeoutMs caps the bash timeout parameter.
const MaxTimeoutMs = 600000

// bashRun is what a bash call asks for, whatever its dialect's schema.
type bashRun struct {
	Timeout         *tool.Int `json:"timeout,omitempty" jsonschema:"Timeout in milliseconds (max 600000). The whole process group is terminated when it expires."`
	RunInBackground tool.Bool `json:"run_in_background,omitempty" jsonschema:"Start the command in the background and return at once with a task_id; read its output later with task_output."`
	Interactive     tool.Bool `json:"interactive,omitempty" jsonschema:"Keep the command's stdin open so you can answer prompts or drive a REPL with task_input. The command runs as a background task; the answer gives its task_id and its first output."`
	TTY             tool.Bool `json:"tty,omitempty" jsonschema:"Run the command under a pseudo-terminal (implies interactive): for REPLs, debuggers, prompts and programs that need a terminal. Output comes back as plain text; task_output with screen: true shows a full-screen program's screen."`
	YieldMs         tool.Int  `json:"yield_ms,omitempty" jsonschema:"If the command is still running after this many milliseconds, return its output so far and let it go on as a background task (the answer gives its task_id); it keeps its timeout."`
	WaitMs          *tool.Int `json:"wait_ms,omitempty" jsonschema:"With interactive or tty: how long to wait for the command's first output before answering (default 1000, max 600000; 0 answers at once); the answer comes sooner when the command goes quiet or exits."`
	Description     string    `json:"description,omitempty" jsonschema:"A short description of what the command does (optional, for the log of the conversation)."`
}

// claudeBashArgs are the bash tool's arguments, with the reference bash
// tool's restart, which makes command optional.
type claudeBashArgs struct {
	Command string    `json:"command,omitempty" jsonschema:"The bash command to run. Required unless the tool is being restarted."`
	Restart tool.Bool `json:"restart,omitempty" jsonschema:"Specifying true will restart this tool: every process your commands left running is ended and the working directory goes back to the initial one. Otherwise, leave this unspecified."`
	bashRun
}

// Defaults of the task tools.
const (
	defaultWaitMs = 1000
	taskHint      = "Read its new output with task_output (wait_ms to wait for more), write to it with task_input, stop it with task_kill."
)

func bashTool(o Options, m dialect.Mode) (*tool.Def, error) {
	defMs := o.Timeout.Milliseconds()
	desc := fmt.Sprintf(`Run a command with %s and return its exit code, stdout and stderr.

- The working directory persists between calls: a cd in one command applies to the next ones of this session. Environment variables and shell options do not persist.
- stdin is /dev/null and the environment is non-interactive (PAGER=cat, no git prompts) unless you ask for interactive or tty.
- Default timeout %d ms, max %d ms; on timeout the process group gets SIGTERM, then SIGKILL 5 s later.
- stdout and stderr are each cut at %d characters; redirect big output to a file and use view or grep on it.
- A non-zero exit code is reported as data, not as an error.
- For long-running processes (servers, watchers) use run_in_background: true; for a command that may take long, yield_ms returns its output so far and lets it go on as a background task.
- To answer prompts or drive a REPL or debugger: start it with tty: true (a terminal; or interactive: true for a plain stdin pipe), then loop task_input (send a line, get the answer) and task_output; task_kill stops it. "\u0003" in task_input is Ctrl-C, "\u0004" Ctrl-D (end of input).
- Prefer the grep, find and view tools over grep/find/cat in the shell for searching and reading files.`,
		o.Shell, defMs, MaxTimeoutMs, o.maxOutput())
	desc += o.Sandbox.note("A refused operation fails with \"Permission denied\" (or \"Operation not permitted\"): that is the sandbox, not a transient error, so do not retry it or try other ways around it; work inside the workspace or the temp directory.")
	tune := func(s *jsonschema.Schema) {
		tool.SetDefault(s, "timeout", defMs)
		tool.SetDefault(s, "wait_ms", defaultWaitMs)
	}
	desc += "\n- restart: true ends every process your commands left running (background tasks included) and puts the working directory back to the initial one; command is then not needed."
	return tool.Define(tool.Meta{Name: Bash, Title: "Run a shell command", Description: desc, Returns: tool.Returns(results.Run{}, results.Restarted{}), Tune: tune},
		func(ctx context.Context, c *tool.Call, in *claudeBashArgs) (*mcp.CallToolResult, error) {
			if in.Restart {
				if err := c.Sess.Restart(); err != nil {
					return nil, err
				}
				restarted := "restarted: every process your commands left running was ended, and the working directory is back to " + c.Env.Workdir
				if m == dialect.Claude {
					restarted = claudeRestarted
				}
				return tool.Answer(restarted, &results.Restarted{Restarted: true}), nil
			}
			if strings.TrimSpace(in.Command) == "" && m == dialect.Claude {
				return nil, codes.Errorf(codes.CommandEmpty, "no command provided.")
			}
			return runBash(ctx, c, o, in.Command, &in.bashRun, defMs)
		})
}

// runBash runs a bash tool call: an interactive task, a background one, or
// a foreground command (which may yield), answering in boris's format.
func runBash(ctx context.Context, c *tool.Call, o Options, command string, in *bashRun, defMs int64) (*mcp.CallToolResult, error) {
	if strings.TrimSpace(command) == "" {
		return nil, codes.Errorf(codes.CommandEmpty, "command is empty: give the shell command to run")
	}
	timeoutMs, timeoutNote, err := bashTimeout(in.Timeout, defMs)
	if err != nil {
		return nil, err
	}
	c.Rec.Command = command
	ctx, span, env := startCommand(ctx, c, o)
	defer span.End()
	switch {
	case bool(in.TTY || in.Interactive):
		info, err := c.Sess.StartTask(session.TaskOptions{Script: command, Interactive: true, TTY: bool(in.TTY), Cols: o.TTYCols, Rows: o.TTYRows, Env: env, Judge: c.Gate().TaskJudge()})
		if err != nil {
			return nil, err
		}
		c.Rec.TaskID = info.ID
		st, err := c.Sess.TaskOutput(info.ID, waitOf(in.WaitMs, defaultWaitMs))
		if err != nil {
			return nil, err
		}
		return tool.Answer(formatTask(st, taskHint), results.FromTask(st)), nil
	case bool(in.RunInBackground):
		info, err := c.Sess.StartTask(session.TaskOptions{Script: command, Env: env, Judge: c.Gate().TaskJudge()})
		if err != nil {
			return nil, err
		}
		c.Rec.TaskID = info.ID
		return tool.Answer(fmt.Sprintf("task_id: %s\npgid: %d\nThe command is running in the background. %s (or kill -TERM -%d from bash)",
			info.ID, info.Pgid, taskHint, info.Pgid), results.Started(info)), nil
	}
	cmd := session.Cmd{Script: command, Env: env, Judge: c.Gate().Judge()}
	if in.YieldMs > 0 {
		cmd.Yield = time.Duration(min(int64(in.YieldMs), MaxTimeoutMs)) * time.Millisecond
	}
	res, err := c.Sess.Run(ctx, cmd, time.Duration(timeoutMs)*time.Millisecond, progressFunc(c))
	if err != nil {
		return nil, err
	}
	if res.Task != nil {
		c.Rec.TaskID = res.Task.ID
		var b strings.Builder
		fmt.Fprintf(&b, "status: running\ntask_id: %s\npgid: %d\nThe command is still running after %d ms and goes on as a background task (it keeps its %d ms timeout). %s\n",
			res.Task.ID, res.Task.Pgid, int64(in.YieldMs), timeoutMs, taskHint)
		b.WriteString(refusedLines(res.Refused, res.RefusedCount))
		writeStreams(&b, res.Stdout, res.Stderr)
		return tool.Answer(b.String(), results.FromRun(res, c.Sess.Cwd())), nil
	}
	if res.TimedOut && c.Env.Observer != nil {
		c.Env.Observer.BashTimeout()
	}
	ran(c, span, res.Result)
	text := formatRun(res, timeoutMs)
	if timeoutNote != "" {
		// After the exit code, with the other notes.
		first := strings.IndexByte(text, '\n') + 1
		text = text[:first] + "note: " + timeoutNote + "\n" + text[first:]
	}
	return tool.Answer(text, results.FromRun(res, c.Sess.Cwd())), nil
}

// bashTimeout is the timeout of a foreground bash command: the default
// when none is given or one that is not positive (the spec's "≤0 means
// default"), then with a note saying so, since a timeout of 0 or -5 is
// more likely a mistake than a wish for the default; and the maximum, with
// a note saying so, for one above it.
func bashTimeout(given *tool.Int, defMs int64) (ms int64, note string, err error) {
	def := min(defMs, MaxTimeoutMs)
	if given == nil {
		return def, "", nil
	}
	switch n := int64(*given); {
	case n <= 0:
		return def, fmt.Sprintf("a timeout of %d ms bounds nothing: the command ran with the default of %d ms (give a positive number of milliseconds, at most %d)", n, def, MaxTimeoutMs), nil
	case n > MaxTimeoutMs:
		return MaxTimeoutMs, fmt.Sprintf("the timeout of %d ms is above the maximum: the command ran with %d ms", n, MaxTimeoutMs), nil
	default:
		return n, "", nil
	}
}

// waitOf turns a wait_ms argument into a duration: def when absent, none
// when not positive, at most MaxTimeoutMs.
func waitOf(ms *tool.Int, def int64) time.Duration {
	n := def
	if ms != nil {
		n = max(int64(*ms), 0)
	}
	return time.Duration(min(n, MaxTimeoutMs)) * time.Millisecond
}

// clampTimeout applies the default to a missing or non-positive timeout and
// caps it at MaxTimeoutMs.
func clampTimeout(ms, defMs int64) int64 {
	if ms <= 0 {
		ms = defMs
	}
	return min(ms, MaxTimeoutMs)
}

// progressFunc sends the command's new output as progress notifications
// when the client asked for progress (the progress value is the output's
// length so far).
func progressFunc(c *tool.Call) func(string, int64) {
	if c.Progress == nil {
		return nil
	}
	return func(text string, total int64) { c.Progress.Notify(text, float64(total)) }
}
