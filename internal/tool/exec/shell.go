package exec

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/patch"
	"github.com/boris-mcp/boris/internal/results"
	"github.com/boris-mcp/boris/internal/session"
	"github.com/boris-mcp/boris/internal/shell"
	"github.com/boris-mcp/boris/internal/tool"
	patchtool "github.com/boris-mcp/boris/internal/tool/patch"
)

// Argv is a command as an argv array. A plain string is accepted too, as
// models sometimes send one; it runs as ["bash", "-lc", string].
type Argv []string

// UnmarshalJSON implements json.Unmarshaler.
func (a *Argv) UnmarshalJSON(b []byte) error {
	var list []string
	if err := json.Unmarshal(b, &list); err == nil {
		*a = list
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*a = Argv{"bash", "-lc", s}
		return nil
	}
	return tool.BadValue("expected an array of strings (the argv), e.g. [\"bash\", \"-lc\", \"ls -la\"]")
}

type shellArgs struct {
	Command   Argv     `json:"command" jsonschema:"The command to execute, as an argv array, e.g. [\"bash\", \"-lc\", \"ls -la\"]."`
	Workdir   string   `json:"workdir,omitempty" jsonschema:"The working directory to execute the command in (absolute, or relative to the session's working directory)."`
	TimeoutMs tool.Int `json:"timeout_ms,omitempty" jsonschema:"The timeout for the command in milliseconds."`
}

func shellTool(o Options) (*tool.Def, error) {
	defMs := o.Timeout.Milliseconds()
	desc := fmt.Sprintf(`Runs a shell command and returns its output.
- The arguments to shell are passed to execvp(). Most terminal commands should be prefixed with ["bash", "-lc"].
- Always set the workdir param when using the shell function. Do not use cd unless absolutely necessary (a cd inside bash -lc does persist to later calls of this session).
- stdin is closed and the environment is non-interactive (no pager, no prompts): do not run commands that wait for input.
- The default timeout is %d ms and at most %d ms can be asked for with timeout_ms; on timeout the whole process group is terminated.
- stdout and stderr come back together, as written; very long output keeps its beginning and its end.
- To edit files, use the apply_patch tool.`, defMs, MaxTimeoutMs)
	desc += o.Sandbox.note("A refused operation fails with \"Permission denied\" (or \"Operation not permitted\"): that is the sandbox; do not retry it.")
	return tool.Define(tool.Meta{Name: "shell", Title: "Run a command", Description: desc, Returns: tool.Returns(results.Exec{}),
		Tune: func(s *jsonschema.Schema) {
			if p := s.Properties["command"]; p != nil {
				p.Type, p.Types, p.Items = "array", nil, &jsonschema.Schema{Type: "string"}
			}
			tool.SetDefault(s, "timeout_ms", defMs)
		}},
		func(ctx context.Context, c *tool.Call, in *shellArgs) (*mcp.CallToolResult, error) {
			argv := []string(in.Command)
			if len(argv) == 0 || strings.TrimSpace(strings.Join(argv, "")) == "" {
				return nil, codes.Errorf(codes.CommandEmpty, "command is empty: give the argv to run, e.g. [\"bash\", \"-lc\", \"ls -la\"]")
			}
			c.Rec.Command = strings.Join(argv, " ")
			dir, err := workdirOf(c, in.Workdir)
			if err != nil {
				return nil, err
			}
			if dir != "" {
				c.Rec.Paths = []string{dir}
			}
			script, isScript := shellScript(argv)
			if r, ok, err := interceptApplyPatch(c, argv, script, isScript, dir); ok || err != nil {
				return r, err
			}
			timeoutMs := clampTimeout(int64(in.TimeoutMs), defMs)
			ctx, span, env := startCommand(ctx, c, o)
			defer span.End()
			cmd := session.Cmd{Argv: argv, Dir: dir, Env: env, Merge: true, Tail: true, Judge: c.Gate().Judge()}
			if isScript {
				cmd = session.Cmd{Script: script, Dir: dir, Env: env, Merge: true, Tail: true, Judge: c.Gate().Judge()}
			}
			res, err := c.Sess.Run(ctx, cmd, time.Duration(timeoutMs)*time.Millisecond, progressFunc(c))
			if err != nil {
				return nil, err
			}
			if res.TimedOut && c.Env.Observer != nil {
				c.Env.Observer.BashTimeout()
			}
			ran(c, span, res.Result)
			text := codexExec(res.Result)
			if res.CwdReset != "" {
				text += fmt.Sprintf("\n[note: the working directory %s no longer exists; the command ran in %s instead]", res.CwdReset, res.RanIn)
			}
			left := ""
			if res.LeftRunning != "" {
				left = fmt.Sprintf("processes the command started are left running in its process group %d: kill -TERM -- -%d ends them; they end with the session.", res.LeftPgid, res.LeftPgid)
			}
			for _, n := range guardNotes(res.Guard, left) {
				text += "\n[note: " + n + "]"
			}
			if r := refusedLines(res.Refused, res.RefusedCount); r != "" {
				text += "\n[" + strings.TrimSuffix(r, "\n") + "]"
			}
			return tool.Answer(text, execData(res.Result)), nil
		})
}

// workdirOf resolves the workdir argument against the session's directory;
// "" when none was given.
func workdirOf(c *tool.Call, workdir string) (string, error) {
	if strings.TrimSpace(workdir) == "" {
		return "", nil
	}
	dir := workdir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(c.Sess.Cwd(), dir)
	}
	dir = filepath.Clean(dir)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", codes.Errorf(codes.InvalidInput, "workdir %s is not an existing directory; give a directory that exists (or omit workdir to run in %s)", dir, c.Sess.Cwd())
	}
	return dir, nil
}

// shellScript recognises ["bash", "-lc", script] and its kin (sh, zsh;
// -c): such a call runs script with the session's shell, so a cd in it
// persists as it does for the bash tool. Other argvs run directly.
func shellScript(argv []string) (string, bool) {
	if len(argv) != 3 {
		return "", false
	}
	switch filepath.Base(argv[0]) {
	case "bash", "sh", "zsh", "dash", "ksh":
	default:
		return "", false
	}
	if argv[1] != "-lc" && argv[1] != "-c" {
		return "", false
	}
	return argv[2], true
}

// interceptApplyPatch applies a patch a model passes to shell the way
// Codex's models learned to: ["apply_patch", patch], or a bash -lc script
// "apply_patch <<'EOF' ... EOF" (optionally after "cd <dir> &&"). As Codex
// does, the patch is applied by the patch engine, not run as a program, and
// the answer has the exec format.
func interceptApplyPatch(c *tool.Call, argv []string, script string, isScript bool, dir string) (*mcp.CallToolResult, bool, error) {
	var text string
	switch {
	case len(argv) == 2 && (argv[0] == "apply_patch" || argv[0] == "applypatch"):
		text = argv[1]
	case isScript:
		s := strings.TrimSpace(script)
		if rest, ok := strings.CutPrefix(s, "cd "); ok {
			target, after, found := strings.Cut(rest, "&&")
			if !found {
				return nil, false, nil
			}
			target = strings.Trim(strings.TrimSpace(target), `'"`)
			if !filepath.IsAbs(target) {
				base := dir
				if base == "" {
					base = c.Sess.Cwd()
				}
				target = filepath.Join(base, target)
			}
			dir, s = target, strings.TrimSpace(after)
		}
		if !strings.HasPrefix(s, "apply_patch ") && !strings.HasPrefix(s, "applypatch ") {
			return nil, false, nil
		}
		text = s
	default:
		return nil, false, nil
	}
	start := time.Now()
	p, err := patch.Parse(text)
	if err != nil {
		return nil, true, patchtool.Invalid(err)
	}
	fc := c.FileCtx()
	if dir != "" {
		fc.Cwd = dir
	}
	res, err := c.Env.Files.ApplyPatch(fc, p)
	if err != nil {
		return nil, true, err
	}
	patchtool.Record(c, res)
	ran := execOf(patchtool.Summary(res), time.Since(start))
	return tool.Answer(codexExec(ran), execData(ran)), true, nil
}

// execData is a finished command as Codex's exec result, with the values
// its text shows.
func execData(res shell.Result) *results.Exec {
	exit, output := codexExecOutput(res)
	return &results.Exec{WallTimeSeconds: res.Duration.Seconds(), ExitCode: &exit, Output: output}
}

// execOf is a command result holding out, for answers in the exec format
// that no process produced.
func execOf(out string, d time.Duration) shell.Result {
	return shell.Result{Stdout: shell.Output{Text: out, Chars: int64(utf8.RuneCountInString(out))}, Duration: d}
}
