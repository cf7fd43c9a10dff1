// Package exec is the family of the tools that run commands: bash and the
// task tools (task_output, task_input, task_kill) in boris's and Claude's
// dialects, and Codex's shell, exec_command and write_stdin. They run
// commands through the session (package session) and answer in their
// dialect's words: boris's "exit_code: N" sections, Codex's exec format.
package exec

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/boris-mcp/boris/internal/dialect"
	"github.com/boris-mcp/boris/internal/shell"
	"github.com/boris-mcp/boris/internal/telemetry"
	"github.com/boris-mcp/boris/internal/tool"
)

// Options are the settings of the command tools.
type Options struct {
	// Shell is the absolute path of the shell commands run with; "" when
	// there is none, and then no command tool is served.
	Shell string
	// Timeout is a command's default timeout.
	Timeout time.Duration
	// TTYCols and TTYRows are the size of a tty command's terminal.
	TTYCols, TTYRows int
	// Sandbox is what the sandbox allows commands, for the tools'
	// descriptions (its zero value: no sandbox).
	Sandbox Sandbox
	// MaxOutput is how many characters of each stream an answer keeps
	// (the runner's MaxOutput; 0: shell.MaxOutputChars).
	MaxOutput int
}

func (o Options) maxOutput() int {
	if o.MaxOutput > 0 {
		return o.MaxOutput
	}
	return shell.MaxOutputChars
}

// Sandbox describes the sandbox commands run in.
type Sandbox struct {
	On bool
	// Deny is true when commands may open no TCP connection; Ports, when
	// not empty, are the only ports they may connect to.
	Deny  bool
	Ports []uint16
}

// Names of the family's tools in boris's dialect: the --disable-tools
// names of what they do.
const (
	Bash       = "bash"
	TaskOutput = "task_output"
	TaskInput  = "task_input"
	TaskKill   = "task_kill"
)

// Specs declares the family's tools.
func Specs(o Options) []tool.Spec {
	hasShell := func(*tool.Env) bool { return o.Shell != "" }
	both := func(name string) map[dialect.Mode]string {
		return map[dialect.Mode]string{dialect.Boris: name, dialect.Claude: name}
	}
	return []tool.Spec{
		{
			Names: both(Bash), Needs: hasShell, Changes: always, Summary: commandSummary("command"), Acts: tool.CommandActs("command", "timeout"),
			Moves: map[dialect.Mode]string{dialect.Boris: "cd in bash", dialect.Claude: "cd in bash"},
			Build: func(m dialect.Mode) (*tool.Def, error) { return bashTool(o, m) },
		},
		{
			Names: map[dialect.Mode]string{dialect.Codex: "shell"}, Keys: []string{Bash}, Needs: hasShell, Changes: always, Summary: commandSummary("command"), Acts: tool.CommandActs("command", "timeout_ms"),
			Moves: map[dialect.Mode]string{dialect.Codex: "a cd inside a bash -lc shell command"},
			Build: func(dialect.Mode) (*tool.Def, error) { return shellTool(o) },
		},
		{
			Names: both(TaskOutput), Requires: []string{Bash}, Needs: hasShell,
			Build: func(dialect.Mode) (*tool.Def, error) { return taskOutputTool() },
		},
		{
			Names: map[dialect.Mode]string{dialect.Codex: "exec_command"}, Keys: []string{TaskInput}, Requires: []string{Bash}, Needs: hasShell, Changes: always, Summary: commandSummary("cmd"), Acts: tool.CommandActs("cmd", ""),
			Build: func(dialect.Mode) (*tool.Def, error) { return execCommandTool(o) },
		},
		{
			Names: map[dialect.Mode]string{dialect.Codex: "write_stdin"}, Keys: []string{TaskInput}, Requires: []string{Bash}, Needs: hasShell, Changes: always, Summary: writeSummary,
			Build: func(dialect.Mode) (*tool.Def, error) { return writeStdinTool() },
		},
		{
			Names: both(TaskInput), Requires: []string{Bash}, Needs: hasShell, Changes: always, Summary: taskSummary,
			Build: func(dialect.Mode) (*tool.Def, error) { return taskInputTool() },
		},
		{
			Names: both(TaskKill), Requires: []string{Bash}, Needs: hasShell,
			Build: func(dialect.Mode) (*tool.Def, error) { return taskKillTool() },
		},
	}
}

// always marks a tool whose every call can change the workspace.
func always(json.RawMessage) bool { return true }

// commandSummary describes a call by the start of its command, found in
// the argument named arg (a string, or an argv array).
func commandSummary(arg string) func(json.RawMessage) string {
	return func(args json.RawMessage) string {
		var in map[string]json.RawMessage
		_ = json.Unmarshal(args, &in)
		var cmd string
		var argv []string
		switch {
		case json.Unmarshal(in[arg], &cmd) == nil:
		case json.Unmarshal(in[arg], &argv) == nil:
			cmd = strings.Join(argv, " ")
		}
		return "`" + tool.Head(cmd) + "`"
	}
}

// taskSummary describes a call by its task.
func taskSummary(args json.RawMessage) string {
	var in struct {
		TaskID string `json:"task_id"`
	}
	_ = json.Unmarshal(args, &in)
	return in.TaskID
}

// writeSummary describes a write_stdin call by its unified exec session.
func writeSummary(args json.RawMessage) string {
	var in struct {
		SessionID json.RawMessage `json:"session_id"`
	}
	_ = json.Unmarshal(args, &in)
	return "session " + strings.Trim(string(in.SessionID), `"`)
}

// startCommand starts the span of a command's run; env (TRACEPARENT)
// makes the command join the trace. All nil when tracing is off.
func startCommand(ctx context.Context, c *tool.Call, o Options) (context.Context, *telemetry.Span, []string) {
	return c.Env.Tracing.StartCommand(ctx, filepath.Base(o.Shell))
}

// ran records how a command ended, in the audit record and its span.
func ran(c *tool.Call, span *telemetry.Span, res shell.Result) {
	c.Rec.SetExit(res.ExitCode)
	c.Rec.TimedOut = res.TimedOut
	span.SetInt("process.exit.code", int64(res.ExitCode))
	if res.TimedOut {
		span.Fail("timeout", "the command timed out")
	}
}

// sandboxNote says in a sentence what the sandbox allows, for a tool's
// description ("" without a sandbox); refusal is how a refused operation
// fails.
func (s Sandbox) note(refusal string) string {
	if !s.On {
		return ""
	}
	net := ""
	switch {
	case s.Deny:
		net = " and TCP connections are refused"
	case len(s.Ports) > 0:
		ports := make([]string, len(s.Ports))
		for i, p := range s.Ports {
			ports[i] = strconv.Itoa(int(p))
		}
		net = " and TCP connections only reach ports " + strings.Join(ports, ", ")
	}
	return "\n- Commands run in a sandbox: they may write only inside the workspace and the temp directory (" + os.TempDir() + "), some paths are unreadable" + net + ". " + refusal
}
