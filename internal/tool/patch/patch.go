// Package patch is the family of apply_patch, the V4A patch tool of
// OpenAI's models, served in every dialect: the patch engine of package
// patch applies it through package files, all or nothing, and the answer
// is Codex's summary of the files it touched.
package patch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/dialect"
	"github.com/boris-mcp/boris/internal/files"
	"github.com/boris-mcp/boris/internal/patch"
	"github.com/boris-mcp/boris/internal/results"
	"github.com/boris-mcp/boris/internal/tool"
	lsptool "github.com/boris-mcp/boris/internal/tool/lsp"
)

// patchOperation is one operation of the OpenAI Responses API's built-in
// apply_patch tool, which the harness applies.
type patchOperation struct {
	Type string `json:"type" jsonschema:"create_file, update_file or delete_file."`
	Path string `json:"path" jsonschema:"The file's path, relative to the session's working directory (or absolute)."`
	Diff string `json:"diff,omitempty" jsonschema:"create_file: the file's lines, each prefixed with +. update_file: V4A hunks (@@ lines, then lines prefixed with space, - or +). Not used by delete_file."`
}

type applyPatchArgs struct {
	Input     *string         `json:"input,omitempty" jsonschema:"The entire contents of the apply_patch command: the whole patch, from *** Begin Patch to *** End Patch."`
	Operation *patchOperation `json:"operation,omitempty" jsonschema:"Instead of input: one operation of the Responses API apply_patch tool ({type, path, diff})."`
}

// Operation types of the Responses API apply_patch tool.
var patchOperations = []string{"create_file", "update_file", "delete_file"}

const applyPatchDesc = `Use the apply_patch tool to edit files.
Your patch language is a stripped-down, file-oriented diff format designed to be easy to parse and safe to apply. You can think of it as a high-level envelope:

*** Begin Patch
[ one or more file sections ]
*** End Patch

Within that envelope, you get a sequence of file operations.
You MUST include a header to specify the action you are taking.
Each operation starts with one of three headers:

*** Add File: <path> - create a new file. Every following line is a + line (the initial contents).
*** Delete File: <path> - remove an existing file. Nothing follows.
*** Update File: <path> - patch an existing file in place (optionally with a rename).

May be immediately followed by *** Move to: <new path> if you want to rename the file.
Then one or more "hunks", each introduced by @@ (optionally followed by a hunk header).
Within a hunk each line starts with a space (context), - (removed) or + (added).

For context:
- By default, show 3 lines of code immediately above and 3 lines immediately below each change. If a change is within 3 lines of a previous change, do NOT duplicate the first change's context_after lines in the second change's context_before lines.
- If 3 lines of context is insufficient to uniquely identify the snippet of code within the file, use the @@ operator to indicate the class or function to which the snippet belongs, e.g. "@@ class BaseClass".
- If a code block is repeated so many times in a class or function that even a single @@ statement and 3 lines of context cannot identify it, use several @@ statements to jump to the right context, e.g. "@@ class BaseClass" then "@@ 	def method():".
- "*** End of File" after a hunk's last line anchors the hunk at the end of the file.

Example:

*** Begin Patch
*** Add File: hello.txt
+Hello world
*** Update File: src/app.py
*** Move to: src/main.py
@@ def greet():
-print("Hi")
+print("Hello, world!")
*** Delete File: obsolete.txt
*** End Patch

It is important to remember:
- You must include a header with your intended action (Add/Delete/Update).
- You must prefix new lines with + even when creating a new file.
- File references are relative to the working directory (absolute paths are accepted too).

The patch applies all or nothing: if any section does not apply, no file is changed and the error says which hunk and shows the closest lines of the file. Harnesses using the Responses API's apply_patch tool can pass one operation ({type, path, diff}) as operation instead of input.`

// Name is the tool's name, and its --disable-tools name.
const Name = "apply_patch"

// Specs declares the family's tool: apply_patch, in every dialect.
func Specs() []tool.Spec {
	return []tool.Spec{{
		Names:   map[dialect.Mode]string{dialect.Boris: Name, dialect.Claude: Name, dialect.Codex: Name},
		Changes: func(json.RawMessage) bool { return true },
		Summary: summary,
		Acts:    acts,
		Hint:    map[dialect.Mode]string{dialect.Codex: "Edit files with apply_patch."},
		Build:   func(dialect.Mode) (*tool.Def, error) { return applyPatchTool() },
	}}
}

// acts are the files a patch changes (its moves' sources and targets,
// what it deletes), for the command rules' Edit rules. A patch that does
// not parse has none: it changes nothing.
func acts(args json.RawMessage, cwd string) []tool.Act {
	var in applyPatchArgs
	if json.Unmarshal(args, &in) != nil {
		return nil
	}
	p, err := patchOf(&in)
	if err != nil {
		return nil
	}
	var out []tool.Act
	for _, sec := range p.Sections {
		out = append(out, tool.Act{Tool: "Edit", Path: tool.AbsPath(sec.Path, cwd)})
		if sec.MoveTo != "" {
			out = append(out, tool.Act{Tool: "Edit", Path: tool.AbsPath(sec.MoveTo, cwd)})
		}
	}
	return out
}

// summary names a call's files, for the checkpoint list.
func summary(args json.RawMessage) string {
	var in struct {
		Input     string          `json:"input"`
		Operation *patchOperation `json:"operation"`
	}
	_ = json.Unmarshal(args, &in)
	if in.Operation != nil {
		return in.Operation.Type + " " + in.Operation.Path
	}
	var files []string
	for _, l := range strings.Split(in.Input, "\n") {
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

func applyPatchTool() (*tool.Def, error) {
	return tool.Define(tool.Meta{Name: Name, Title: "Apply a patch", Description: applyPatchDesc, Returns: tool.Returns(results.Patch{}),
		Tune: func(s *jsonschema.Schema) {
			if op := s.Properties["operation"]; op != nil {
				tool.SetEnum(op, "type", patchOperations...)
			}
		}},
		func(ctx context.Context, c *tool.Call, in *applyPatchArgs) (*mcp.CallToolResult, error) {
			p, err := patchOf(in)
			if err != nil {
				return nil, err
			}
			ed := lsptool.BeginEdit(c, patchedPaths(p)...)
			res, err := c.Env.Files.ApplyPatch(c.FileCtx(), p)
			if err != nil {
				return nil, err
			}
			Record(c, res)
			return lsptool.WithDiagnostics(ctx, c, ed, tool.Answer(SummaryWithin(res, c.Env.MaxAnswer), results.FromPatch(res).Fit(c.Env.MaxAnswer))), nil
		})
}

// patchedPaths are the files a patch writes: added and updated ones, and
// the new names of moved ones.
func patchedPaths(p *patch.Patch) []string {
	var out []string
	for _, sec := range p.Sections {
		switch {
		case sec.Kind == patch.Delete:
		case sec.MoveTo != "":
			out = append(out, sec.MoveTo)
		default:
			out = append(out, sec.Path)
		}
	}
	return out
}

// Record puts a patch's files (A, M, D) and what it wrote in the call's
// audit record.
func Record(c *tool.Call, res *files.PatchResult) {
	for _, set := range []struct {
		mark  string
		paths []string
	}{{"A ", res.Added}, {"M ", res.Modified}, {"D ", res.Deleted}} {
		for _, p := range set.paths {
			c.Rec.Files = append(c.Rec.Files, set.mark+p)
		}
	}
	c.Rec.BytesWritten = res.Written
}

// patchOf turns the arguments into a parsed patch.
func patchOf(in *applyPatchArgs) (*patch.Patch, error) {
	switch {
	case in.Input != nil && in.Operation != nil:
		return nil, codes.Errorf(codes.InvalidInput, "give either input (a whole patch) or operation (one {type, path, diff}), not both")
	case in.Input != nil:
		p, err := patch.Parse(*in.Input)
		if err != nil {
			return nil, Invalid(err)
		}
		return p, nil
	case in.Operation != nil:
		return operationPatch(in.Operation)
	}
	return nil, codes.Errorf(codes.InvalidInput, "missing the patch: pass input (the whole patch, *** Begin Patch ... *** End Patch) or operation ({type, path, diff})")
}

// operationPatch makes a one-section patch of a Responses-API operation.
func operationPatch(op *patchOperation) (*patch.Patch, error) {
	path := strings.TrimSpace(op.Path)
	if path == "" {
		return nil, codes.Errorf(codes.InvalidInput, "operation.path is required")
	}
	sec := patch.Section{Path: path, Line: 1}
	switch op.Type {
	case "create_file":
		content, err := patch.ParseAddBody(op.Diff)
		if err != nil {
			return nil, Invalid(err)
		}
		sec.Kind, sec.Contents = patch.Add, content
	case "update_file":
		hunks, err := patch.ParseHunks(op.Diff)
		if err != nil {
			return nil, Invalid(err)
		}
		sec.Kind, sec.Hunks = patch.Update, hunks
	case "delete_file":
		sec.Kind = patch.Delete
	default:
		return nil, codes.Errorf(codes.InvalidInput, "unknown operation.type %q: valid types are %s", op.Type, strings.Join(patchOperations, ", ")).WithValid("operation.type", patchOperations...)
	}
	return &patch.Patch{Sections: []patch.Section{sec}}, nil
}

// Invalid words a parse error: where, what was expected there, and
// that nothing was written.
func Invalid(err error) error {
	var pe *patch.ParseError
	if errors.As(err, &pe) {
		return codes.Errorf(codes.PatchInvalid, "invalid patch at line %d: %s. Nothing was written; fix the patch and send it again", pe.Line, strings.TrimSuffix(pe.Msg, "."))
	}
	return codes.Errorf(codes.PatchInvalid, "invalid patch: %v. Nothing was written", err)
}

// Summary is apply_patch's success text: the files added, then
// modified, then deleted, one per line.
func Summary(r *files.PatchResult) string { return SummaryWithin(r, 0) }

// SummaryWithin is Summary in at most maxChars characters (0: no bound):
// past them, a last line says how many files it leaves out.
func SummaryWithin(r *files.PatchResult, maxChars int) string {
	var b strings.Builder
	b.WriteString("Success. Updated the following files:\n")
	left := 0
	for _, group := range []struct {
		tag   string
		paths []string
	}{{"A", r.Added}, {"M", r.Modified}, {"D", r.Deleted}} {
		for _, p := range group.paths {
			if left > 0 || maxChars > 0 && b.Len()+len(p)+3 > maxChars-200 {
				left++
				continue
			}
			b.WriteString(group.tag)
			b.WriteByte(' ')
			b.WriteString(p)
			b.WriteByte('\n')
		}
	}
	if left > 0 {
		fmt.Fprintf(&b, "… and %d more files (an answer holds at most %d characters: --max-answer)\n", left, maxChars)
	}
	return b.String()
}
