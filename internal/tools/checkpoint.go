package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/checkpoint"
	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/dialect"
	"github.com/boris-mcp/boris/internal/results"
	"github.com/boris-mcp/boris/internal/session"
)

// The checkpoint tool, and the automatic checkpoints taken before every
// call that can change the workspace.

var checkpointActions = []string{"create", "list", "diff", "restore"}

type checkpointArgs struct {
	Action string   `json:"action" jsonschema:"create, list, diff or restore."`
	Label  string   `json:"label,omitempty" jsonschema:"create: a name for the checkpoint, shown by list."`
	ID     string   `json:"id,omitempty" jsonschema:"restore: the checkpoint to go back to, e.g. c12 (see list)."`
	From   string   `json:"from,omitempty" jsonschema:"diff: the checkpoint to compare from (default: this session's first checkpoint)."`
	To     string   `json:"to,omitempty" jsonschema:"diff: the checkpoint to compare to, or now (the default: the workspace as it is now)."`
	Paths  []string `json:"paths,omitempty" jsonschema:"diff and restore: only these files or directories (absolute, or relative to the session's working directory)."`
}

var checkpointDesc = fmt.Sprintf(`Review and undo changes to the workspace: everything changed by any tool — edits, patches and the commands you run (sed -i, rm -rf, code generators, formatters) — is recorded.

- A checkpoint is taken automatically before every call that can change the workspace (bash, task input, edits, patches), when something changed since the last one; create takes one on request (label names it).
- list shows the checkpoints of every session: id, time, session, what came next, how many files changed.
- diff shows what changed between two checkpoints, by default from this session's first checkpoint to now: added, modified and deleted files, mode changes and symlinks, with a unified diff of text files (binary files named with their sizes); paths narrows it. Answers are cut at %d characters.
- restore puts the workspace (or only paths) back exactly as it was at checkpoint id: contents, executable bits, symlinks; files added since are removed, files deleted since come back. All or nothing; the state before the restore is checkpointed first, so a restore can be undone by restoring that checkpoint.
- Not recorded: .git, node_modules and what .gitignore excludes (restore leaves those alone), and the content of files over the size cap. Checkpoints are not a replacement for git commits.`, checkpoint.MaxDiffChars)

func checkpointTool() (*def, error) {
	return define("checkpoint", "Checkpoints of the workspace", checkpointDesc, false, returns(results.Checkpoint{}),
		func(s *jsonschema.Schema) { setEnum(s, "action", checkpointActions...) },
		func(_ context.Context, c *call, in *checkpointArgs) (*mcp.CallToolResult, error) {
			c.rec.Operation = in.Action
			sv := c.deps.Checkpoints
			if sv == nil {
				why := c.deps.Config.CheckpointUnavailable
				if why == "" {
					why = "the checkpoint store could not be opened (see boris's log)"
				}
				return nil, codes.Errorf(codes.CheckpointDisabled, "checkpoints are off: %s", why)
			}
			paths := make([]string, 0, len(in.Paths))
			cwd := c.sess.Cwd()
			for _, p := range in.Paths {
				if strings.TrimSpace(p) == "" {
					continue
				}
				if !filepath.IsAbs(p) {
					p = filepath.Join(cwd, p)
				}
				paths = append(paths, filepath.Clean(p))
			}
			c.rec.Paths = paths
			switch in.Action {
			case "create":
				res, err := sv.Create(c.sess, in.Label)
				if err != nil {
					return nil, err
				}
				return answer(dialect.CheckpointCreated(res, sv.Roots()), results.FromCheckpointCreated(res)), nil
			case "list":
				res, err := sv.List(c.sess)
				if err != nil {
					return nil, err
				}
				return answer(dialect.CheckpointList(res, time.Now()), results.FromCheckpointList(res)), nil
			case "diff":
				res, err := sv.Diff(c.sess, strings.TrimSpace(in.From), strings.TrimSpace(in.To), paths)
				if err != nil {
					return nil, err
				}
				return answer(dialect.CheckpointDiff(res), results.FromCheckpointDiff(res)), nil
			case "restore":
				if strings.TrimSpace(in.ID) == "" {
					return nil, codes.Errorf(codes.InvalidInput, "restore needs id: the checkpoint to go back to (action \"list\" shows them)")
				}
				res, err := sv.Restore(c.sess, in.ID, paths)
				if err != nil {
					return nil, err
				}
				return answer(dialect.CheckpointRestored(res, sv.Roots()), results.FromCheckpointRestored(res)), nil
			}
			return nil, codes.Errorf(codes.InvalidInput, "unknown action %q: valid actions are %s", in.Action, strings.Join(checkpointActions, ", "))
		})
}

// always marks a tool whose every call can change the workspace.
func always(json.RawMessage) bool { return true }

// editorChanges is true for the str_replace_editor commands that write.
func editorChanges(args json.RawMessage) bool {
	var in struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(args, &in)
	return in.Command != "view"
}

// autoCheckpoint checkpoints the workspace before a call that can change
// it. A failure does not stop the call (the model asked for the call, not
// the checkpoint); it is told once per session and kind of failure, in a
// note after the call's answer.
// While the start-up checkpoint is still being taken, the call waits for
// what is left of it, and a client that gave a progress token is told so.
func (s *Set) autoCheckpoint(ctx context.Context, req *mcp.CallToolRequest, sess *session.Session, tool string, args json.RawMessage) string {
	stop := baselineProgress(ctx, req, s.deps.Checkpoints)
	err := s.deps.Checkpoints.Auto(sess, func() string { return callReason(tool, args) })
	stop()
	if err == nil {
		sess.NoteCheckpointFailure("")
		return ""
	}
	// Told once per kind of failure (its code), not at every call.
	kind := "failed"
	if e, ok := codes.As(err); ok {
		kind = string(e.Code)
	}
	if !sess.NoteCheckpointFailure(kind) {
		return ""
	}
	msg := err.Error()
	s.deps.Logger.Warn("checkpoint: the automatic checkpoint failed", "session", sess.ID(), "tool", tool, "err", err)
	return "note: no checkpoint was taken before this call (checkpoints cannot undo it): " + msg + "\n"
}

// baselineProgress sends progress notifications while a call waits for
// the start-up checkpoint (once at once, then every second), when the
// client gave a progress token; the function it returns stops them. The
// progress is the fraction read (below 1, so that the call's own
// progress, counted from 1 up, keeps increasing).
func baselineProgress(ctx context.Context, req *mcp.CallToolRequest, sv *checkpoint.Service) func() {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return func() {}
	}
	if done, _, _ := sv.Baseline(); done {
		return func() {}
	}
	stop := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		last := -1.0
		for {
			done, read, total := sv.Baseline()
			if done {
				return
			}
			msg := "waiting for the start-up checkpoint of the workspace (listing it) before this call: calls that can change the workspace wait until it is recorded"
			p := 0.0
			if total > 0 {
				msg = fmt.Sprintf("waiting for the start-up checkpoint of the workspace before this call: %d of %d files read", read, total)
				p = 0.99 * float64(read) / float64(total)
			}
			if p <= last {
				p = last + 1e-6
			}
			last = p
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Message: msg, Progress: p})
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(stop)
		<-finished
	}
}

// callReason says in a few words what call follows a checkpoint, for
// list: "before bash: `make test`".
func callReason(tool string, args json.RawMessage) string {
	var in struct {
		Command   json.RawMessage  `json:"command"`
		Cmd       string           `json:"cmd"`
		Path      string           `json:"path"`
		TaskID    string           `json:"task_id"`
		SessionID json.RawMessage  `json:"session_id"`
		Input     string           `json:"input"`
		Operation *patchOperation  `json:"operation"`
		Chars     *json.RawMessage `json:"chars"`
	}
	_ = json.Unmarshal(args, &in)
	what := ""
	var cmd string
	var argv []string
	switch {
	case json.Unmarshal(in.Command, &cmd) == nil:
	case json.Unmarshal(in.Command, &argv) == nil:
		cmd = strings.Join(argv, " ")
	}
	switch tool {
	case "bash", "shell":
		what = "`" + head(cmd) + "`"
	case "exec_command":
		what = "`" + head(in.Cmd) + "`"
	case "str_replace_editor":
		what = cmd + " " + in.Path
	case "task_input":
		what = in.TaskID
	case "write_stdin":
		what = "session " + string(bytes.Trim(in.SessionID, `"`))
	case "apply_patch":
		switch {
		case in.Operation != nil:
			what = in.Operation.Type + " " + in.Operation.Path
		default:
			what = patchFiles(in.Input)
		}
	default:
		what = in.Path
	}
	return strings.TrimSpace("before " + tool + ": " + what)
}

// head is the start of a command: its first line, at most 60 characters.
func head(s string) string {
	s = strings.TrimSpace(s)
	cut := false
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, cut = s[:i], true
	}
	if r := []rune(s); len(r) > 60 {
		s, cut = string(r[:60]), true
	}
	if cut {
		s += "…"
	}
	return s
}

// patchFiles names the files of a patch text.
func patchFiles(p string) string {
	var files []string
	for _, l := range strings.Split(p, "\n") {
		for _, pre := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: "} {
			if strings.HasPrefix(l, pre) {
				files = append(files, strings.TrimSpace(strings.TrimPrefix(l, pre)))
			}
		}
	}
	if len(files) > 3 {
		files = append(files[:3], fmt.Sprintf("and %d more", len(files)-3))
	}
	return strings.Join(files, ", ")
}
