// Package lsp is the family of the lsp tool (LSP in Claude's dialect):
// Claude Code's code-intelligence operations answered by the language
// servers of package lsp, and the block of new errors that ends an edit's
// answer (BeginEdit, WithDiagnostics), which the edit and patch families
// use.
package lsp

import (
	"context"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/dialect"
	"github.com/boris-mcp/boris/internal/lsp"
	"github.com/boris-mcp/boris/internal/results"
	"github.com/boris-mcp/boris/internal/tool"
)

// lspArgs are Claude Code's LSP tool parameters.
type lspArgs struct {
	Operation string    `json:"operation" jsonschema:"The operation: goToDefinition, findReferences, hover, documentSymbol, workspaceSymbol, goToImplementation, prepareCallHierarchy, incomingCalls, outgoingCalls, or diagnostics."`
	FilePath  string    `json:"filePath" jsonschema:"The file to operate on: absolute, or relative to the session's working directory."`
	Line      *tool.Int `json:"line,omitempty" jsonschema:"The line number (1-based, as shown in editors and by view)."`
	Character *tool.Int `json:"character,omitempty" jsonschema:"The character offset on the line (1-based, as shown in editors)."`
	Query     string    `json:"query,omitempty" jsonschema:"workspaceSymbol only: the symbol name or part of it to search for (without it, the name at line and character is searched)."`
}

// claudeLSPArgs is the same with Claude Code's required parameters: every
// operation takes filePath, line and character.
type claudeLSPArgs struct {
	Operation string   `json:"operation" jsonschema:"The LSP operation to perform."`
	FilePath  string   `json:"filePath" jsonschema:"The absolute or relative path to the file."`
	Line      tool.Int `json:"line" jsonschema:"The line number (1-based, as shown in editors)."`
	Character tool.Int `json:"character" jsonschema:"The character offset (1-based, as shown in editors)."`
	Query     string   `json:"query,omitempty" jsonschema:"The symbol name or partial name to search for (workspaceSymbol)."`
}

const lspDesc = `Ask the language server of a file's language about code: definitions, references, types and callers by meaning, not by text.

Operations:
- goToDefinition: where the symbol at filePath:line:character is defined
- findReferences: every reference to that symbol, grouped by file
- hover: its type and documentation
- documentSymbol: the outline of filePath (functions, types, fields) with line numbers
- workspaceSymbol: symbols across the workspace whose name matches query
- goToImplementation: the implementations of an interface or abstract method
- prepareCallHierarchy: the function or method at the position
- incomingCalls: the functions that call the function at the position, and where
- outgoingCalls: the functions the function at the position calls, and where
- diagnostics: the errors and warnings the server reports for filePath now

line and character are 1-based, as view shows lines and editors count characters; documentSymbol and diagnostics need no position, workspaceSymbol needs query (or a position on the name to search). Locations come back as path:line:character with the source line, paths relative to the session's working directory. Servers (gopls, clangd, pyright or pylsp, typescript-language-server, rust-analyzer) start on the first question about a file of their language and then stay warm; edits made by any tool or command are seen by the next call.`

// Name is the tool's name in boris's dialect, and its --disable-tools name.
const Name = "lsp"

// Specs declares the family's tool: lsp (LSP in Claude's dialect), served
// where language servers are on.
func Specs() []tool.Spec {
	return []tool.Spec{{
		Names: map[dialect.Mode]string{dialect.Boris: Name, dialect.Claude: "LSP"},
		Needs: func(env *tool.Env) bool { return env.LSP != nil },
		// It shows the file's code (hover, symbols, definitions).
		Acts:  tool.PathActs("Read", "filePath"),
		Build: lspTool,
	}}
}

func lspTool(m dialect.Mode) (*tool.Def, error) {
	meta := tool.Meta{Name: Name, Title: "Code intelligence (language server)", Description: lspDesc, ReadOnly: true, Returns: tool.Returns(results.LSP{}),
		Tune: func(s *jsonschema.Schema) { tool.SetEnum(s, "operation", lsp.Operations...) }}
	h := func(ctx context.Context, c *tool.Call, in *lspArgs) (*mcp.CallToolResult, error) {
		op := strings.TrimSpace(in.Operation)
		c.Rec.Operation, c.Rec.Paths = op, []string{in.FilePath}
		q := lsp.Query{Op: op, Cwd: c.Sess.Cwd(), Path: in.FilePath, Query: in.Query, Policy: c.Env.Policy}
		if in.Line != nil {
			q.Line = int(*in.Line)
		}
		if in.Character != nil {
			q.Character = int(*in.Character)
		}
		res, err := c.Env.LSP.Do(ctx, q)
		if err != nil {
			return nil, err
		}
		return tool.Answer(answerText(res, c.Sess.Cwd()), results.FromLSP(res)), nil
	}
	if m == dialect.Claude {
		meta.Name = "LSP"
		return tool.DefineAs[claudeLSPArgs](meta, h)
	}
	return tool.Define(meta, h)
}
