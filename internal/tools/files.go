package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/files"
)

// The operations below serve both the split tools (view, str_replace,
// create_file) and the combined str_replace_editor, so the two give the same
// results by construction.

func doView(c *call, path string, viewRange []Int) (*mcp.CallToolResult, error) {
	var rng *files.Range
	if viewRange != nil {
		if len(viewRange) != 2 {
			return nil, codes.Errorf(codes.InvalidInput, "view_range must be two numbers [start, end] (1-based, inclusive; end -1 means the end of the file), got %d", len(viewRange))
		}
		rng = &files.Range{Start: int(viewRange[0]), End: int(viewRange[1])}
	}
	res, err := c.deps.Files.View(c.fctx(), path, rng)
	if err != nil {
		return nil, err
	}
	if res.Image != nil {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: res.Image, MIMEType: res.MIMEType}}}, nil
	}
	return textResult(res.Text), nil
}

func doStrReplace(c *call, path, old, new string, all bool) (*mcp.CallToolResult, error) {
	out, err := c.deps.Files.StrReplace(c.fctx(), path, old, new, all)
	if err != nil {
		return nil, err
	}
	return textResult(out), nil
}

func doCreate(c *call, path, content string) (*mcp.CallToolResult, error) {
	out, err := c.deps.Files.Create(c.fctx(), path, content)
	if err != nil {
		return nil, err
	}
	return textResult(out), nil
}

type viewArgs struct {
	Path      string `json:"path" jsonschema:"File or directory to view. Absolute, or relative to the session's working directory."`
	ViewRange []Int  `json:"view_range,omitempty" jsonschema:"Optional [start, end] line range, 1-based and inclusive; end -1 means to the end of the file."`
}

var viewDesc = fmt.Sprintf(`View a file or list a directory.

- Files are shown with line numbers (cat -n format). Without view_range at most the first %d lines are shown; lines over %d characters are cut.
- Images (PNG, JPEG, GIF, WebP, SVG, …) are returned as images; other binary files are only described.
- A directory is listed two levels deep (hidden files included; .git and node_modules skipped).
- Viewing a file is required before editing it with str_replace or overwriting it with create_file.`, files.MaxViewLines, files.MaxLineChars)

func viewTool() (*def, error) {
	return define("view", "View a file or directory", viewDesc, true, nil,
		func(_ context.Context, c *call, in *viewArgs) (*mcp.CallToolResult, error) {
			return doView(c, in.Path, in.ViewRange)
		})
}

type strReplaceArgs struct {
	Path       string `json:"path" jsonschema:"File to edit. Absolute, or relative to the session's working directory."`
	OldStr     string `json:"old_str" jsonschema:"The exact text to replace, including whitespace and indentation. It must occur exactly once unless replace_all is true."`
	NewStr     string `json:"new_str,omitempty" jsonschema:"The replacement text; empty or omitted deletes old_str."`
	ReplaceAll Bool   `json:"replace_all,omitempty" jsonschema:"Replace every occurrence of old_str instead of requiring a unique match."`
}

const strReplaceDesc = `Replace text in a file.

- old_str must match the file exactly (whitespace and indentation included) and occur exactly once; add surrounding lines to make it unique, or set replace_all to change every occurrence.
- The file must have been viewed in this session first.
- Line endings are kept: in a CRLF file, newlines in old_str and new_str stand for CRLF.
- The file is replaced atomically and keeps its permissions. The result shows the edited lines.`

func strReplaceTool() (*def, error) {
	return define("str_replace", "Edit a file", strReplaceDesc, false, nil,
		func(_ context.Context, c *call, in *strReplaceArgs) (*mcp.CallToolResult, error) {
			return doStrReplace(c, in.Path, in.OldStr, in.NewStr, bool(in.ReplaceAll))
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

func createFileTool() (*def, error) {
	return define("create_file", "Create or overwrite a file", createDesc, false, nil,
		func(_ context.Context, c *call, in *createFileArgs) (*mcp.CallToolResult, error) {
			return doCreate(c, in.Path, in.Content)
		})
}

// Commands of str_replace_editor.
var editorCommands = []string{"view", "create", "str_replace", "insert"}

type editorArgs struct {
	Command    string  `json:"command" jsonschema:"The operation: view, create, str_replace or insert."`
	Path       string  `json:"path" jsonschema:"Absolute path to the file or directory (relative paths resolve against the session's working directory)."`
	ViewRange  []Int   `json:"view_range,omitempty" jsonschema:"For view: optional [start, end] line range, 1-based; end -1 means to the end."`
	OldStr     *string `json:"old_str,omitempty" jsonschema:"For str_replace: the exact text to replace."`
	NewStr     *string `json:"new_str,omitempty" jsonschema:"For str_replace: the replacement (empty deletes). For insert: the text to insert."`
	ReplaceAll Bool    `json:"replace_all,omitempty" jsonschema:"For str_replace: replace every occurrence."`
	FileText   *string `json:"file_text,omitempty" jsonschema:"For create: the content of the file."`
	InsertLine *Int    `json:"insert_line,omitempty" jsonschema:"For insert: the line after which to insert new_str (0 inserts at the top)."`
}

const editorDesc = `View, create and edit files.

- view: show a file with line numbers (optionally a view_range) or list a directory two levels deep; images are returned as images.
- create: write file_text to path (parents created; overwriting needs a prior view).
- str_replace: replace old_str, which must occur exactly once (or every occurrence with replace_all), with new_str. The file must have been viewed first.
- insert: insert new_str after line insert_line (0 = top).
Edits are atomic, keep permissions and line endings.`

func editorTool() (*def, error) {
	return define("str_replace_editor", "View, create and edit files", editorDesc, false,
		func(s *jsonschema.Schema) { setEnum(s, "command", editorCommands...) },
		func(_ context.Context, c *call, in *editorArgs) (*mcp.CallToolResult, error) {
			str := func(p *string) string {
				if p == nil {
					return ""
				}
				return *p
			}
			need := func(ok bool, param, cmd string) error {
				if ok {
					return nil
				}
				return codes.Errorf(codes.InvalidInput, "%s is required for the %s command", param, cmd)
			}
			switch in.Command {
			case "view":
				return doView(c, in.Path, in.ViewRange)
			case "create":
				if err := need(in.FileText != nil, "file_text", "create"); err != nil {
					return nil, err
				}
				return doCreate(c, in.Path, *in.FileText)
			case "str_replace":
				if err := need(in.OldStr != nil, "old_str", "str_replace"); err != nil {
					return nil, err
				}
				return doStrReplace(c, in.Path, *in.OldStr, str(in.NewStr), bool(in.ReplaceAll))
			case "insert":
				if err := need(in.InsertLine != nil, "insert_line", "insert"); err != nil {
					return nil, err
				}
				if err := need(in.NewStr != nil, "new_str", "insert"); err != nil {
					return nil, err
				}
				out, err := c.deps.Files.Insert(c.fctx(), in.Path, int(*in.InsertLine), *in.NewStr)
				if err != nil {
					return nil, err
				}
				return textResult(out), nil
			}
			return nil, codes.Errorf(codes.EditorInvalidCommand, "unknown command %q: valid commands are %s", in.Command, strings.Join(editorCommands, ", "))
		})
}
