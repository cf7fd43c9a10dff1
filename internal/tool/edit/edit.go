// Package edit is the family of the file tools: boris's view,
// str_replace and create_file, and Claude's str_replace_editor, which
// offers the same operations (and insert, undo_edit) under one name. All
// call the operations of package files; each renders the result in its
// dialect (boris.go, claude.go).
package edit

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/dialect"
	"github.com/boris-mcp/boris/internal/files"
	"github.com/boris-mcp/boris/internal/results"
	"github.com/boris-mcp/boris/internal/tool"
	lsptool "github.com/boris-mcp/boris/internal/tool/lsp"
)

// viewRange turns a view_range argument into a range (nil when absent).
func viewRange(v []tool.Int) (*files.Range, bool) {
	switch {
	case v == nil:
		return nil, true
	case len(v) != 2:
		return nil, false
	}
	return &files.Range{Start: int(v[0]), End: int(v[1])}, true
}

// imageResult returns an image view as MCP image content.
func imageResult(res *files.ViewResult) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: res.Image, MIMEType: res.MIMEType}}, StructuredContent: results.FromView(res)}
}

type viewArgs struct {
	Path      string     `json:"path" jsonschema:"File or directory to view. Absolute, or relative to the session's working directory."`
	ViewRange []tool.Int `json:"view_range,omitempty" jsonschema:"Optional [start, end] line range, 1-based and inclusive; end -1 means to the end of the file."`
}

var viewDesc = fmt.Sprintf(`View a file or list a directory.

- Files are shown with line numbers (cat -n format). Without view_range at most the first %d lines are shown; lines over %d characters are cut.
- Images (PNG, JPEG, GIF, WebP, SVG, …) are returned as images; other binary files are only described.
- A directory is listed two levels deep (hidden files included; .git and node_modules skipped).
- Viewing a file is required before editing it with str_replace or overwriting it with create_file.`, maxViewLines, maxLineChars)

// Names of the family's tools in boris's dialect: the --disable-tools
// names of what they do.
const (
	View       = "view"
	StrReplace = "str_replace"
	CreateFile = "create_file"
)

// viewHint is what the server's instructions say of the file tools.
const viewHint = "View a file before editing it."

// Specs declares the family's tools.
func Specs() []tool.Spec {
	hint := map[dialect.Mode]string{dialect.Boris: viewHint}
	return []tool.Spec{
		{Names: map[dialect.Mode]string{dialect.Boris: View}, Hint: hint, Acts: tool.PathActs("Read", "path"), Build: func(dialect.Mode) (*tool.Def, error) { return viewTool() }},
		{Names: map[dialect.Mode]string{dialect.Boris: StrReplace}, Hint: hint, Changes: always, Acts: tool.PathActs("Edit", "path"), Build: func(dialect.Mode) (*tool.Def, error) { return strReplaceTool() }},
		{Names: map[dialect.Mode]string{dialect.Boris: CreateFile}, Changes: always, Acts: tool.PathActs("Edit", "path"), Build: func(dialect.Mode) (*tool.Def, error) { return createFileTool() }},
		{
			Names: map[dialect.Mode]string{dialect.Claude: "str_replace_editor"}, Keys: []string{View, StrReplace, CreateFile},
			Hint: map[dialect.Mode]string{dialect.Claude: viewHint}, Changes: editorChanges, Summary: editorSummary, Acts: editorActs,
			Build: func(dialect.Mode) (*tool.Def, error) { return editorTool() },
		},
	}
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

// editorActs are what the command rules judge of an editor call: a view
// reads its path, every other command edits it.
func editorActs(args json.RawMessage, cwd string) []tool.Act {
	if editorChanges(args) {
		return tool.PathActs("Edit", "path")(args, cwd)
	}
	return tool.PathActs("Read", "path")(args, cwd)
}

// editorSummary describes an editor call by its command and path.
func editorSummary(args json.RawMessage) string {
	var in struct {
		Command, Path string
	}
	_ = json.Unmarshal(args, &in)
	return in.Command + " " + in.Path
}

func viewTool() (*tool.Def, error) {
	return tool.Define(tool.Meta{Name: View, Title: "View a file or directory", Description: viewDesc, ReadOnly: true, Returns: tool.Returns(results.View{})},
		func(_ context.Context, c *tool.Call, in *viewArgs) (*mcp.CallToolResult, error) {
			rng, ok := viewRange(in.ViewRange)
			if !ok {
				return nil, codes.Errorf(codes.InvalidInput, "view_range must be two numbers [start, end] (1-based, inclusive; end -1 means the end of the file), got %d", len(in.ViewRange))
			}
			c.Rec.Paths = []string{in.Path}
			res, err := c.Env.Files.View(c.FileCtx(), in.Path, rng, borisViewLimits(rng, c.Env.MaxAnswer))
			if err != nil {
				return nil, err
			}
			if res.Kind == files.ViewImage {
				return imageResult(res), nil
			}
			lsptool.Warm(c, in.Path)
			cut := borisFit(res, c.Env.MaxAnswer)
			return tool.Answer(borisView(res, rng, cut, c.Env.MaxAnswer), results.FromView(res)), nil
		})
}

type strReplaceArgs struct {
	Path       string    `json:"path" jsonschema:"File to edit. Absolute, or relative to the session's working directory."`
	OldStr     string    `json:"old_str" jsonschema:"The exact text to replace, including whitespace and indentation. It must occur exactly once unless replace_all is true."`
	NewStr     string    `json:"new_str,omitempty" jsonschema:"The replacement text; empty or omitted deletes old_str."`
	ReplaceAll tool.Bool `json:"replace_all,omitempty" jsonschema:"Replace every occurrence of old_str instead of requiring a unique match."`
}

const strReplaceDesc = `Replace text in a file.

- old_str must match the file exactly (whitespace and indentation included) and occur exactly once; add surrounding lines to make it unique, or set replace_all to change every occurrence.
- The file must have been viewed in this session first.
- Line endings are kept: in a CRLF file, newlines in old_str and new_str stand for CRLF.
- The file is replaced atomically and keeps its permissions. The result shows the edited lines.`

func strReplaceTool() (*tool.Def, error) {
	return tool.Define(tool.Meta{Name: StrReplace, Title: "Edit a file", Description: strReplaceDesc, Returns: tool.Returns(results.Edit{})},
		func(ctx context.Context, c *tool.Call, in *strReplaceArgs) (*mcp.CallToolResult, error) {
			c.Rec.Paths = []string{in.Path}
			ed := lsptool.BeginEdit(c, in.Path)
			res, err := c.Env.Files.StrReplace(c.FileCtx(), in.Path, in.OldStr, in.NewStr, bool(in.ReplaceAll))
			if err != nil {
				return nil, err
			}
			c.Rec.BytesWritten = int64(len(res.Content))
			return lsptool.WithDiagnostics(ctx, c, ed, tool.Answer(borisReplace(res, bool(in.ReplaceAll)), results.FromReplace(res))), nil
		})
}

type createFileArgs struct {
	Path    string `json:"path" jsonschema:"File to create or overwrite. Absolute, or relative to the session's working directory."`
	Content string `json:"content" jsonschema:"The complete content of the file."`
}

const createDesc = `Create a file, or overwrite one, with the given content.

- Missing parent directories are created.
- Overwriting an existing file requires viewing it in this session first; prefer str_replace for changes to existing files.
- The write is atomic; an existing file keeps its permissions, a new one gets 0644.`

func createFileTool() (*tool.Def, error) {
	return tool.Define(tool.Meta{Name: CreateFile, Title: "Create or overwrite a file", Description: createDesc, Returns: tool.Returns(results.Create{})},
		func(ctx context.Context, c *tool.Call, in *createFileArgs) (*mcp.CallToolResult, error) {
			c.Rec.Paths = []string{in.Path}
			ed := lsptool.BeginEdit(c, in.Path)
			res, err := c.Env.Files.Create(c.FileCtx(), in.Path, in.Content)
			if err != nil {
				return nil, err
			}
			c.Rec.BytesWritten = int64(res.Size)
			return lsptool.WithDiagnostics(ctx, c, ed, tool.Answer(borisCreate(res), results.FromCreate(res, in.Content))), nil
		})
}

// Commands of str_replace_editor.
var editorCommands = []string{"view", "create", "str_replace", "insert", "undo_edit"}

type editorArgs struct {
	Command    string     `json:"command" jsonschema:"The command to run: view, create, str_replace, insert or undo_edit."`
	Path       string     `json:"path" jsonschema:"Absolute path to file or directory, e.g. /repo/file.py or /repo (a relative path resolves against the session's working directory)."`
	ViewRange  []tool.Int `json:"view_range,omitempty" jsonschema:"Optional parameter of the view command when path points to a file. If none is given, the full file is shown. If provided, the file will be shown in the indicated line number range, e.g. [11, 12] will show lines 11 and 12. Indexing at 1 to start. Setting [start_line, -1] shows all lines from start_line to the end of the file."`
	OldStr     *string    `json:"old_str,omitempty" jsonschema:"Required parameter of the str_replace command containing the string in path to replace."`
	NewStr     *string    `json:"new_str,omitempty" jsonschema:"Optional parameter of the str_replace command containing the new string (if not given, no string will be added). Required parameter of the insert command containing the string to insert."`
	ReplaceAll tool.Bool  `json:"replace_all,omitempty" jsonschema:"Optional parameter of the str_replace command: replace every occurrence of old_str instead of requiring it to be unique."`
	FileText   *string    `json:"file_text,omitempty" jsonschema:"Required parameter of the create command, with the content of the file to be created."`
	InsertLine *tool.Int  `json:"insert_line,omitempty" jsonschema:"Required parameter of the insert command. The new_str will be inserted AFTER the line insert_line of path."`
}

const editorDesc = `Custom editing tool for viewing, creating and editing files
* State is persistent across command calls and discussions with the user
* If path is a file, view displays the result of applying cat -n. If path is a directory, view lists non-hidden files and directories up to 2 levels deep
* The create command cannot be used if the specified path already exists as a file, unless you have viewed it in this session
* If a command generates a long output, it will be truncated and marked with <response clipped>
* The undo_edit command will revert the last edit made to the file at path

Notes for using the str_replace command:
* The old_str parameter should match EXACTLY one or more consecutive lines from the original file. Be mindful of whitespaces!
* If the old_str parameter is not unique in the file, the replacement will not be performed. Make sure to include enough context in old_str to make it unique, or set replace_all
* The new_str parameter should contain the edited lines that should replace the old_str
* A file must have been viewed in this session before it is edited; edits are atomic and keep permissions, tabs and line endings`

// claudeMissing is the reference's error for a parameter a command needs.
func claudeMissing(param, command string) error {
	return codes.Errorf(codes.InvalidInput, "%s is required for the %s command", param, command).
		WithFact(claudeSentence(fmt.Sprintf("Parameter `%s` is required for command: %s", param, command)))
}

func editorTool() (*tool.Def, error) {
	d, err := tool.Define(tool.Meta{Name: "str_replace_editor", Title: "View, create and edit files", Description: editorDesc,
		Returns: tool.Returns(results.View{}, results.Edit{}, results.Create{}, results.Insert{}, results.Undo{}),
		Tune:    func(s *jsonschema.Schema) { tool.SetEnum(s, "command", editorCommands...) }},
		func(ctx context.Context, c *tool.Call, in *editorArgs) (*mcp.CallToolResult, error) {
			fc := c.FileCtx()
			c.Rec.Operation, c.Rec.Paths = in.Command, []string{in.Path}
			switch in.Command {
			case "view":
				rng, ok := viewRange(in.ViewRange)
				if !ok {
					return nil, codes.Errorf(codes.InvalidInput, "view_range must be two numbers [start, end], got %d", len(in.ViewRange)).
						WithFact(claudeSentence("Invalid `view_range`. It should be a list of two integers."))
				}
				res, err := c.Env.Files.View(fc, in.Path, rng, claudeViewLimits())
				if err != nil {
					return nil, err
				}
				if res.Kind == files.ViewImage {
					return imageResult(res), nil
				}
				lsptool.Warm(c, in.Path)
				return tool.Answer(claudeView(res), results.FromView(res).Fit(c.Env.MaxAnswer)), nil
			case "create":
				if in.FileText == nil {
					return nil, claudeMissing("file_text", "create")
				}
				ed := lsptool.BeginEdit(c, in.Path)
				res, err := c.Env.Files.Create(fc, in.Path, *in.FileText)
				if err != nil {
					return nil, err
				}
				c.Rec.BytesWritten = int64(res.Size)
				return lsptool.WithDiagnostics(ctx, c, ed, tool.Answer(claudeCreate(res), results.FromCreate(res, *in.FileText))), nil
			case "str_replace":
				if in.OldStr == nil {
					return nil, claudeMissing("old_str", "str_replace")
				}
				newStr := ""
				if in.NewStr != nil {
					newStr = *in.NewStr
				}
				ed := lsptool.BeginEdit(c, in.Path)
				res, err := c.Env.Files.StrReplace(fc, in.Path, *in.OldStr, newStr, bool(in.ReplaceAll))
				if err != nil {
					return nil, err
				}
				c.Rec.BytesWritten = int64(len(res.Content))
				return lsptool.WithDiagnostics(ctx, c, ed, tool.Answer(claudeReplace(res, bool(in.ReplaceAll)), results.FromReplace(res))), nil
			case "insert":
				if in.InsertLine == nil {
					return nil, claudeMissing("insert_line", "insert")
				}
				if in.NewStr == nil {
					return nil, claudeMissing("new_str", "insert")
				}
				ed := lsptool.BeginEdit(c, in.Path)
				res, err := c.Env.Files.Insert(fc, in.Path, int(*in.InsertLine), *in.NewStr)
				if err != nil {
					return nil, err
				}
				c.Rec.BytesWritten = int64(len(res.Content))
				return lsptool.WithDiagnostics(ctx, c, ed, tool.Answer(claudeInsert(res), results.FromInsert(res))), nil
			case "undo_edit":
				ed := lsptool.BeginEdit(c, in.Path)
				res, err := c.Env.Files.Undo(fc, in.Path)
				if err != nil {
					return nil, err
				}
				c.Rec.BytesWritten = int64(len(res.Content))
				return lsptool.WithDiagnostics(ctx, c, ed, tool.Answer(claudeUndo(res), results.FromUndo(res))), nil
			}
			return nil, codes.Errorf(codes.EditorInvalidCommand, "unknown command %q: valid commands are %s", in.Command, strings.Join(editorCommands, ", ")).
				WithValid("command", editorCommands...).WithFact(claudeSentence(fmt.Sprintf("Unrecognized command %s. The allowed commands for the str_replace_editor tool are: %s", in.Command, strings.Join(editorCommands, ", "))))
		})
	if err != nil {
		return nil, err
	}
	return d.WithErrors(claudeError), nil
}
