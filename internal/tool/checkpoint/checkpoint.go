// Package checkpoint is the family of the checkpoint tool: create, list,
// diff and restore over package checkpoint's store. (The automatic
// checkpoint before a call that can change the workspace is the kernel's:
// package tool takes it for every tool declared as changing.)
package checkpoint

import (
	"context"
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
	"github.com/boris-mcp/boris/internal/tool"
)

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

// Name is the tool's name, and its --disable-tools name.
const Name = "checkpoint"

// Options are the settings of the checkpoint tool.
type Options struct {
	// On is --checkpoints on: the tool is served.
	On bool
	// Unavailable, when set, says why no checkpoint store could be
	// opened: the tool then answers CHECKPOINT_DISABLED with it.
	Unavailable string
}

// Specs declares the family's tool, in every dialect.
func Specs(o Options) []tool.Spec {
	return []tool.Spec{{
		Names: map[dialect.Mode]string{dialect.Boris: Name, dialect.Claude: Name, dialect.Codex: Name},
		Needs: func(*tool.Env) bool { return o.On },
		Build: func(dialect.Mode) (*tool.Def, error) { return checkpointTool(o) },
	}}
}

func checkpointTool(o Options) (*tool.Def, error) {
	return tool.Define(tool.Meta{Name: Name, Title: "Checkpoints of the workspace", Description: checkpointDesc, Returns: tool.Returns(results.Checkpoint{}),
		Tune: func(s *jsonschema.Schema) { tool.SetEnum(s, "action", checkpointActions...) }},
		func(_ context.Context, c *tool.Call, in *checkpointArgs) (*mcp.CallToolResult, error) {
			c.Rec.Operation = in.Action
			sv := c.Env.Checkpoints
			if sv == nil {
				why := o.Unavailable
				if why == "" {
					why = "the checkpoint store could not be opened (see boris's log)"
				}
				return nil, codes.Errorf(codes.CheckpointDisabled, "checkpoints are off: %s", why)
			}
			paths := make([]string, 0, len(in.Paths))
			cwd := c.Sess.Cwd()
			for _, p := range in.Paths {
				if strings.TrimSpace(p) == "" {
					continue
				}
				if !filepath.IsAbs(p) {
					p = filepath.Join(cwd, p)
				}
				paths = append(paths, filepath.Clean(p))
			}
			c.Rec.Paths = paths
			switch in.Action {
			case "create":
				res, err := sv.Create(c.Sess, in.Label)
				if err != nil {
					return nil, err
				}
				return tool.Answer(renderCreated(res, sv.Roots()), results.FromCheckpointCreated(res)), nil
			case "list":
				res, err := sv.List(c.Sess)
				if err != nil {
					return nil, err
				}
				return tool.Answer(renderList(res, time.Now()), results.FromCheckpointList(res)), nil
			case "diff":
				res, err := sv.Diff(c.Sess, strings.TrimSpace(in.From), strings.TrimSpace(in.To), paths)
				if err != nil {
					return nil, err
				}
				return tool.Answer(renderDiff(res), results.FromCheckpointDiff(res)), nil
			case "restore":
				if strings.TrimSpace(in.ID) == "" {
					return nil, codes.Errorf(codes.InvalidInput, "restore needs id: the checkpoint to go back to (action \"list\" shows them)")
				}
				res, err := sv.Restore(c.Sess, in.ID, paths)
				if err != nil {
					return nil, err
				}
				return tool.Answer(renderRestored(res, sv.Roots()), results.FromCheckpointRestored(res)), nil
			}
			return nil, codes.Errorf(codes.InvalidInput, "unknown action %q: valid actions are %s", in.Action, strings.Join(checkpointActions, ", "))
		})
}
