package tools

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/config"
	"github.com/boris-mcp/boris/internal/dialect"
	"github.com/boris-mcp/boris/internal/session"
	"github.com/boris-mcp/boris/internal/shell"
)

// MaxTimeoutMs caps the bash timeout parameter.
const MaxTimeoutMs = 600000

type bashArgs struct {
	Command         string `json:"command" jsonschema:"The shell command to run."`
	Timeout         Int    `json:"timeout,omitempty" jsonschema:"Timeout in milliseconds (max 600000). The whole process group is terminated when it expires."`
	RunInBackground Bool   `json:"run_in_background,omitempty" jsonschema:"Start the command in the background and return at once with a task_id; read its output later with task_output."`
	Description     string `json:"description,omitempty" jsonschema:"A short description of what the command does (optional, for the log of the conversation)."`
}

// claudeBashArgs is bashArgs with the reference bash tool's restart, which
// makes command optional.
type claudeBashArgs struct {
	Command         string `json:"command,omitempty" jsonschema:"The bash command to run. Required unless the tool is being restarted."`
	Restart         Bool   `json:"restart,omitempty" jsonschema:"Specifying true will restart this tool: every process your commands left running is ended and the working directory goes back to the initial one. Otherwise, leave this unspecified."`
	Timeout         Int    `json:"timeout,omitempty" jsonschema:"Timeout in milliseconds (max 600000). The whole process group is terminated when it expires."`
	RunInBackground Bool   `json:"run_in_background,omitempty" jsonschema:"Start the command in the background and return at once with a task_id; read its output later with task_output."`
	Description     string `json:"description,omitempty" jsonschema:"A short description of what the command does (optional, for the log of the conversation)."`
}

func bashTool(cfg *config.Config) (*def, error) {
	defMs := cfg.BashTimeout.Milliseconds()
	desc := fmt.Sprintf(`Run a command with %s and return its exit code, stdout and stderr.

- The working directory persists between calls: a cd in one command applies to the next ones of this session. Environment variables and shell options do not persist.
- stdin is /dev/null and the environment is non-interactive (PAGER=cat, no git prompts): never run editors or commands that wait for input.
- Default timeout %d ms, max %d ms; on timeout the process group gets SIGTERM, then SIGKILL 5 s later.
- stdout and stderr are each cut at %d characters; redirect big output to a file and use view or grep on it.
- A non-zero exit code is reported as data, not as an error.
- For long-running processes (servers, watchers) use run_in_background: true, then task_output to read their output; the result gives the process group id so kill -TERM -<pgid> stops it.
- Prefer the grep, find and view tools over grep/find/cat in the shell for searching and reading files.`,
		cfg.Shell, defMs, MaxTimeoutMs, shell.MaxOutputChars)
	if cfg.Sandbox {
		desc += "\n- Commands run in a sandbox: they may write only inside the workspace and the temp directory (" + os.TempDir() + "), some paths are unreadable" + sandboxNetNote(cfg) + ". A refused operation fails with \"Permission denied\" (or \"Operation not permitted\"): that is the sandbox, not a transient error, so do not retry it or try other ways around it; work inside the workspace or the temp directory."
	}
	tune := func(s *jsonschema.Schema) { setDefault(s, "timeout", defMs) }
	if !cfg.AnthropicCompat {
		return define("bash", "Run a shell command", desc, false, tune,
			func(ctx context.Context, c *call, in *bashArgs) (*mcp.CallToolResult, error) {
				return runBash(ctx, c, in.Command, int64(in.Timeout), bool(in.RunInBackground), defMs)
			})
	}
	desc += "\n- restart: true ends every process your commands left running (background tasks included) and puts the working directory back to the initial one; command is then not needed."
	return defineAs[claudeBashArgs, claudeBashArgs]("bash", "Run a shell command", desc, false, tune,
		func(ctx context.Context, c *call, in *claudeBashArgs) (*mcp.CallToolResult, error) {
			if in.Restart {
				if err := c.sess.Restart(); err != nil {
					return nil, err
				}
				return textResult(dialect.ClaudeRestarted), nil
			}
			if strings.TrimSpace(in.Command) == "" {
				return nil, codes.Errorf(codes.BashEmptyCommand, "no command provided.")
			}
			return runBash(ctx, c, in.Command, int64(in.Timeout), bool(in.RunInBackground), defMs)
		})
}

// runBash runs a bash tool call: in the background, or in the foreground
// with its timeout, answering in boris's format.
func runBash(ctx context.Context, c *call, command string, timeoutMs int64, background bool, defMs int64) (*mcp.CallToolResult, error) {
	if strings.TrimSpace(command) == "" {
		return nil, codes.Errorf(codes.BashEmptyCommand, "command is empty: give the shell command to run")
	}
	if background {
		info, err := c.sess.StartBackground(command)
		if err != nil {
			return nil, err
		}
		return textResult(fmt.Sprintf("task_id: %s\npgid: %d\nThe command is running in the background. Read its output with task_output (task_id %q); stop it with: kill -TERM -%d",
			info.ID, info.Pgid, info.ID, info.Pgid)), nil
	}
	timeoutMs = clampTimeout(timeoutMs, defMs)
	res, err := c.sess.Run(ctx, session.Cmd{Script: command}, time.Duration(timeoutMs)*time.Millisecond, progressFunc(ctx, c.req))
	if err != nil {
		return nil, err
	}
	if res.TimedOut && c.deps.Observer != nil {
		c.deps.Observer.BashTimeout()
	}
	return textResult(formatRun(res, timeoutMs)), nil
}

// clampTimeout applies the default to a missing or non-positive timeout and
// caps it at MaxTimeoutMs.
func clampTimeout(ms, defMs int64) int64 {
	if ms <= 0 {
		ms = defMs
	}
	return min(ms, MaxTimeoutMs)
}

func sandboxNetNote(cfg *config.Config) string {
	switch cfg.SandboxNet {
	case config.SandboxNetDeny:
		return " and TCP connections are refused"
	case config.SandboxNetPorts:
		ports := make([]string, len(cfg.SandboxPorts))
		for i, p := range cfg.SandboxPorts {
			ports[i] = strconv.Itoa(int(p))
		}
		return " and TCP connections only reach ports " + strings.Join(ports, ", ")
	}
	return ""
}

// progressFunc sends the command's new output as progress notifications
// when the client asked for progress.
func progressFunc(ctx context.Context, req *mcp.CallToolRequest) func(string, int64) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return nil
	}
	return func(text string, total int64) {
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Message:       text,
			Progress:      float64(total),
		})
	}
}

func formatRun(res session.RunResult, timeoutMs int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "exit_code: %d\n", res.ExitCode)
	if res.TimedOut {
		fmt.Fprintf(&b, "timed out after %d ms: the process group was terminated (SIGTERM, then SIGKILL after 5 s)\n", timeoutMs)
	}
	if res.Canceled {
		b.WriteString("cancelled: the process group was terminated\n")
	}
	if res.Terminated {
		b.WriteString("terminated: the session was closed while the command ran\n")
	}
	if res.CwdReset != "" {
		fmt.Fprintf(&b, "note: the working directory %s no longer exists; the command ran in %s instead\n", res.CwdReset, res.RanIn)
	}
	writeStreams(&b, res.Stdout, res.Stderr)
	return b.String()
}

// writeStreams appends the stdout and stderr sections. Each section holds
// the output exactly; a newline separates a section that does not end in
// one from what follows.
func writeStreams(b *strings.Builder, stdout, stderr shell.Output) {
	sections := []struct {
		name string
		out  shell.Output
	}{{"stdout", stdout}, {"stderr", stderr}}
	var parts []string
	for _, s := range sections {
		if s.out.Chars == 0 {
			continue
		}
		text := s.name + ":\n" + s.out.Text
		if s.out.Truncated {
			if !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			text += fmt.Sprintf("[%s truncated: %d characters in total, the first %d shown; redirect the output to a file and use view or grep to read the rest]\n",
				s.name, s.out.Chars, shell.MaxOutputChars)
		}
		parts = append(parts, text)
	}
	for i, p := range parts {
		if i > 0 && !strings.HasSuffix(parts[i-1], "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(p)
	}
}

type taskOutputArgs struct {
	TaskID string `json:"task_id" jsonschema:"The task_id returned by a bash call with run_in_background."`
}

func taskOutputTool() (*def, error) {
	desc := `Read the output of a background bash task.

While the task runs: status: running and the output so far. Once it has finished: status: completed, its exit code and output; the task is then forgotten, so the final output can be read once.`
	return define("task_output", "Read a background task's output", desc, false, nil,
		func(_ context.Context, c *call, in *taskOutputArgs) (*mcp.CallToolResult, error) {
			if strings.TrimSpace(in.TaskID) == "" {
				return nil, codes.Errorf(codes.InvalidInput, "task_id is required: use the task_id a background bash call returned")
			}
			st, err := c.sess.TaskOutput(strings.TrimSpace(in.TaskID))
			if err != nil {
				return nil, err
			}
			var b strings.Builder
			if st.Running {
				fmt.Fprintf(&b, "status: running\ntask_id: %s\npgid: %d\n", st.ID, st.Pgid)
			} else {
				fmt.Fprintf(&b, "status: completed\ntask_id: %s\nexit_code: %d\n", st.ID, st.Result.ExitCode)
				if st.KilledByTimeout {
					fmt.Fprintf(&b, "killed: the task ran longer than --background-task-timeout (%s) and its process group was terminated\n", c.deps.Config.BackgroundTaskTimeout)
				}
			}
			writeStreams(&b, st.Result.Stdout, st.Result.Stderr)
			return textResult(b.String()), nil
		})
}
