package exec

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/results"
	"github.com/boris-mcp/boris/internal/session"
	"github.com/boris-mcp/boris/internal/tool"
)

// Codex's unified exec tools (--openai-compat): exec_command starts a
// command and answers after yield_time_ms with its output so far and, if
// it still runs, a session id; write_stdin writes to it (or just polls)
// and answers with the new output. Both are boris's background tasks.

// Defaults of Codex's unified exec.
const (
	execYieldMs      = 10000
	writeYieldMs     = 250
	execOutputTokens = 10000
)

type execCommandArgs struct {
	Cmd             string    `json:"cmd" jsonschema:"The shell command to execute."`
	Workdir         string    `json:"workdir,omitempty" jsonschema:"The working directory to execute the command in (absolute, or relative to the session's working directory)."`
	YieldTimeMs     *tool.Int `json:"yield_time_ms,omitempty" jsonschema:"How long to wait (in milliseconds) for output before yielding."`
	MaxOutputTokens tool.Int  `json:"max_output_tokens,omitempty" jsonschema:"Maximum number of tokens to return. Excess output will be truncated."`
	TTY             tool.Bool `json:"tty,omitempty" jsonschema:"Whether to allocate a TTY for the command. Defaults to false (plain pipes); set to true to open a PTY and access TTY process."`
}

type writeStdinArgs struct {
	SessionID       tool.Int  `json:"session_id" jsonschema:"Identifier of the running unified exec session."`
	Chars           string    `json:"chars,omitempty" jsonschema:"Bytes to write to stdin (may be empty to poll)."`
	YieldTimeMs     *tool.Int `json:"yield_time_ms,omitempty" jsonschema:"How long to wait (in milliseconds) for output before yielding."`
	MaxOutputTokens tool.Int  `json:"max_output_tokens,omitempty" jsonschema:"Maximum number of tokens to return. Excess output will be truncated."`
}

func execCommandTool(o Options) (*tool.Def, error) {
	desc := `Runs a command in a PTY (tty: true) or with plain pipes, returning output or a session ID for ongoing interaction.
- The command runs in the session's shell; a workdir may be given.
- The answer comes after yield_time_ms (default 10000) or when the command exits. A command still running answers with a session ID: poll it or type into it with write_stdin.
- Output longer than max_output_tokens (default 10000) keeps its beginning and its end.`
	return tool.Define(tool.Meta{Name: "exec_command", Title: "Run a command", Description: desc, Returns: tool.Returns(results.Exec{}),
		Tune: func(s *jsonschema.Schema) {
			tool.SetDefault(s, "yield_time_ms", execYieldMs)
			tool.SetDefault(s, "max_output_tokens", execOutputTokens)
		}},
		func(ctx context.Context, c *tool.Call, in *execCommandArgs) (*mcp.CallToolResult, error) {
			if strings.TrimSpace(in.Cmd) == "" {
				return nil, codes.Errorf(codes.CommandEmpty, "cmd is empty: give the command to run")
			}
			c.Rec.Command = in.Cmd
			dir, err := workdirOf(c, in.Workdir)
			if err != nil {
				return nil, err
			}
			if dir != "" {
				c.Rec.Paths = []string{dir}
			}
			_, span, env := startCommand(ctx, c, o)
			defer span.End()
			start := time.Now()
			info, err := c.Sess.StartTask(session.TaskOptions{Script: in.Cmd, Dir: dir, Env: env, TTY: bool(in.TTY), Interactive: bool(in.TTY), Merge: true, Cols: o.TTYCols, Rows: o.TTYRows, Judge: c.Gate().TaskJudge()})
			if err != nil {
				return nil, err
			}
			c.Rec.TaskID = info.ID
			st, err := c.Sess.TaskWait(info.ID, waitOf(in.YieldTimeMs, execYieldMs))
			if err != nil {
				return nil, err
			}
			taskEnded(c, st)
			return tool.Answer(unifiedExec(st, time.Since(start), in.MaxOutputTokens, c.Env.MaxAnswer)), nil
		})
}

func writeStdinTool() (*tool.Def, error) {
	desc := `Writes characters to an existing unified exec session and returns recent output.
- chars may be empty to poll for new output; "\u0003" is Ctrl-C, "\u0004" Ctrl-D.
- The answer comes after yield_time_ms (default 250) or when the command exits.`
	return tool.Define(tool.Meta{Name: "write_stdin", Title: "Write to a running command", Description: desc, Returns: tool.Returns(results.Exec{}),
		Tune: func(s *jsonschema.Schema) {
			tool.SetDefault(s, "yield_time_ms", writeYieldMs)
			tool.SetDefault(s, "max_output_tokens", execOutputTokens)
		}},
		func(_ context.Context, c *tool.Call, in *writeStdinArgs) (*mcp.CallToolResult, error) {
			if in.SessionID <= 0 {
				return nil, codes.Errorf(codes.InvalidInput, "session_id is required: the number an exec_command answer gave (\"Process running with session ID N\")")
			}
			id := "task_" + strconv.FormatInt(int64(in.SessionID), 10)
			c.Rec.TaskID, c.Rec.Input = id, in.Chars
			start := time.Now()
			st, err := c.Sess.TaskWrite(id, in.Chars, waitOf(in.YieldTimeMs, writeYieldMs))
			if err != nil {
				return nil, err
			}
			taskEnded(c, st)
			return tool.Answer(unifiedExec(st, time.Since(start), in.MaxOutputTokens, c.Env.MaxAnswer)), nil
		})
}

// unifiedExec renders a task in Codex's unified exec format, and as the
// structured result Codex's schema describes, with the same values.
func unifiedExec(st session.TaskStatus, wall time.Duration, maxTokens tool.Int, maxAnswer int) (string, any) {
	var id [3]byte
	_, _ = rand.Read(id[:])
	out := st.Stdout + st.Stderr
	tokens := int64(maxTokens)
	if tokens <= 0 {
		tokens = execOutputTokens
	}
	if maxAnswer > 0 {
		// An answer holds at most maxAnswer characters, whatever was asked.
		tokens = min(tokens, int64(maxAnswer-500)/4)
	}
	count := approxTokens(out)
	ex := &results.Exec{ChunkID: hex.EncodeToString(id[:]), WallTimeSeconds: wall.Seconds(), OriginalTokenCount: &count, Output: truncateTokens(out, tokens)}
	// Codex's schema is closed: what the guard saw (an OOM kill, a refused
	// fork) follows the output, as Codex's shell notes do.
	for _, n := range guardNotes(st.Guard, "") {
		ex.Output += "\n[note: " + n + "]"
	}
	var status string
	if st.Running {
		n, _ := strconv.Atoi(strings.TrimPrefix(st.ID, "task_"))
		ex.SessionID = &n
		status = "Process running with session ID " + strings.TrimPrefix(st.ID, "task_")
	} else {
		code := st.Result.ExitCode
		ex.ExitCode = &code
		status = fmt.Sprintf("Process exited with code %d", code)
	}
	text := fmt.Sprintf("Chunk ID: %s\nWall time: %.4f seconds\n%s\nOriginal token count: %d\nOutput:\n%s",
		ex.ChunkID, wall.Seconds(), status, count, ex.Output)
	if r := refusedLines(st.Refused, st.RefusedCount); r != "" {
		// Codex's schema is closed: the refusals are in the text only.
		text += "\n[" + strings.TrimSuffix(r, "\n") + "]"
	}
	return text, ex
}
