// Package search is the family of the search tools: grep and find (Glob
// in Claude's dialect), answered by package search's walker, matcher and
// printer. Each dialect shows its own parameter spellings; one handler
// takes them all.
package search

import (
	"context"
	"errors"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/dialect"
	"github.com/boris-mcp/boris/internal/results"
	"github.com/boris-mcp/boris/internal/scope"
	"github.com/boris-mcp/boris/internal/search"
	"github.com/boris-mcp/boris/internal/search/glob"
	"github.com/boris-mcp/boris/internal/search/printer"
	"github.com/boris-mcp/boris/internal/tool"
)

// grepArgs accepts both parameter sets; only the schema differs by mode.
type grepArgs struct {
	Pattern         string     `json:"pattern"`
	Path            string     `json:"path"`
	Include         string     `json:"include"`
	Glob            string     `json:"glob"`
	Type            string     `json:"type"`
	OutputMode      string     `json:"output_mode"`
	CaseInsensitive tool.Bool  `json:"case_insensitive"`
	I               tool.Bool  `json:"-i"`
	LineNumbers     *tool.Bool `json:"line_numbers"`
	N               *tool.Bool `json:"-n"`
	ContextBefore   *tool.Int  `json:"context_before"`
	B               *tool.Int  `json:"-B"`
	ContextAfter    *tool.Int  `json:"context_after"`
	A               *tool.Int  `json:"-A"`
	Context         *tool.Int  `json:"context"`
	C               *tool.Int  `json:"-C"`
	Multiline       tool.Bool  `json:"multiline"`
	HeadLimit       tool.Int   `json:"head_limit"`
	Offset          tool.Int   `json:"offset"`
}

type grepDefaultSchema struct {
	Pattern         string    `json:"pattern" jsonschema:"Regular expression to search for (RE2 syntax, as Go's regexp; e.g. func \\w+Handler or log.*Error)."`
	Path            string    `json:"path,omitempty" jsonschema:"File or directory to search (default: the session's working directory)."`
	Include         string    `json:"include,omitempty" jsonschema:"Only files matching this glob, tried against the path relative to the search root and then the base name (e.g. *.py, *.{ts,tsx}, src/**/*.go)."`
	Type            string    `json:"type,omitempty" jsonschema:"Only files of this type (go, py, js, ts, rust, java, c, cpp, …); faster than include for standard types."`
	OutputMode      string    `json:"output_mode,omitempty" jsonschema:"files_with_matches (default: paths, newest first), content (matching lines) or count (matches per file)."`
	CaseInsensitive tool.Bool `json:"case_insensitive,omitempty" jsonschema:"Ignore letter case."`
	LineNumbers     tool.Bool `json:"line_numbers,omitempty" jsonschema:"Show line numbers in content mode (default true)."`
	ContextBefore   tool.Int  `json:"context_before,omitempty" jsonschema:"Lines to show before each match (content mode)."`
	ContextAfter    tool.Int  `json:"context_after,omitempty" jsonschema:"Lines to show after each match (content mode)."`
	Context         tool.Int  `json:"context,omitempty" jsonschema:"Lines to show before and after each match (content mode); context_before/context_after override it for their side."`
	Multiline       tool.Bool `json:"multiline,omitempty" jsonschema:"Let . match newlines and patterns span lines."`
	HeadLimit       tool.Int  `json:"head_limit,omitempty" jsonschema:"Return at most this many lines (content) or entries (other modes); 0 for all."`
	Offset          tool.Int  `json:"offset,omitempty" jsonschema:"Skip this many lines or entries first (for paging with head_limit)."`
}

type grepCompatSchema struct {
	Pattern    string    `json:"pattern" jsonschema:"The regular expression pattern to search for in file contents"`
	Path       string    `json:"path,omitempty" jsonschema:"File or directory to search in. Defaults to current working directory."`
	Glob       string    `json:"glob,omitempty" jsonschema:"Glob pattern to filter files (e.g. \"*.js\", \"*.{ts,tsx}\")"`
	Type       string    `json:"type,omitempty" jsonschema:"File type to search (e.g. js, py, rust, go, java). More efficient than glob for standard file types."`
	OutputMode string    `json:"output_mode,omitempty" jsonschema:"Output mode: \"content\" shows matching lines, \"files_with_matches\" shows file paths (default), \"count\" shows match counts."`
	I          tool.Bool `json:"-i,omitempty" jsonschema:"Case insensitive search"`
	N          tool.Bool `json:"-n,omitempty" jsonschema:"Show line numbers in output (content mode; default true)."`
	B          tool.Int  `json:"-B,omitempty" jsonschema:"Number of lines to show before each match (content mode)."`
	A          tool.Int  `json:"-A,omitempty" jsonschema:"Number of lines to show after each match (content mode)."`
	C          tool.Int  `json:"-C,omitempty" jsonschema:"Number of lines to show before and after each match (content mode)."`
	Multiline  tool.Bool `json:"multiline,omitempty" jsonschema:"Enable multiline mode where . matches newlines and patterns can span lines."`
	HeadLimit  tool.Int  `json:"head_limit,omitempty" jsonschema:"Limit output to the first N lines/entries; 0 for all."`
	Offset     tool.Int  `json:"offset,omitempty" jsonschema:"Skip the first N lines/entries before applying head_limit."`
}

const grepDesc = `Search file contents with a regular expression (RE2 syntax), fast, across a whole tree.

- Output modes: files_with_matches (default) lists matching files, newest first; content shows "path:line:text" for matches and "path-line-text" for context lines, groups separated by "--"; count shows "path:N" (matching lines).
- Filter files with a glob (*.py, *.{ts,tsx}, src/**/*.go) and/or a type (go, py, js, ts, rust, java, c, cpp, …).
- Paths in the output are relative to the searched directory. Hidden files are searched; .git, node_modules, binary files and anything .gitignore'd are skipped.
- Use head_limit and offset to page through big results; output is capped at 30,000 characters.
- Literal braces, parentheses and dots need escaping: interface\{\}, fmt\.Println\(.`

// Names of the family's tools in boris's dialect, and their
// --disable-tools names.
const (
	Grep = "grep"
	Find = "find"
)

// Specs declares the family's tools.
func Specs() []tool.Spec {
	return []tool.Spec{
		{Names: map[dialect.Mode]string{dialect.Boris: Grep, dialect.Claude: Grep}, Acts: tool.PathActs("Read", "path"), Build: grepTool},
		{Names: map[dialect.Mode]string{dialect.Boris: Find, dialect.Claude: "Glob"}, Acts: tool.PathActs("Read", "path"), Build: findTool},
	}
}

func grepTool(m dialect.Mode) (*tool.Def, error) {
	meta := tool.Meta{Name: Grep, Title: "Search file contents", Description: grepDesc, ReadOnly: true,
		Returns: tool.Returns(results.GrepFiles{}, results.GrepContent{}, results.GrepCounts{}),
		Tune: func(s *jsonschema.Schema) {
			tool.SetEnum(s, "output_mode", "files_with_matches", "content", "count")
			tool.SetDefault(s, "output_mode", "files_with_matches")
		}}
	handler := func(ctx context.Context, c *tool.Call, in *grepArgs) (*mcp.CallToolResult, error) {
		searched(c, in.Pattern, in.Path)
		req := search.GrepRequest{
			Pattern:         in.Pattern,
			Include:         firstNonEmpty(in.Include, in.Glob),
			Type:            in.Type,
			OutputMode:      in.OutputMode,
			CaseInsensitive: bool(in.CaseInsensitive || in.I),
			LineNumbers:     boolOr(true, in.LineNumbers, in.N),
			Multiline:       bool(in.Multiline),
			HeadLimit:       int(in.HeadLimit),
			Offset:          int(in.Offset),
			MaxChars:        answerChars(c),
		}
		var err error
		if req.Before, err = optInt("context_before", in.ContextBefore, in.B); err != nil {
			return nil, err
		}
		if req.After, err = optInt("context_after", in.ContextAfter, in.A); err != nil {
			return nil, err
		}
		ctxLines, err := optInt("context", in.Context, in.C)
		if err != nil {
			return nil, err
		}
		req.Context = max(ctxLines, 0)
		root, display, err := searchRoot(c, in.Path)
		if err != nil {
			return nil, err
		}
		req.Root, req.DisplayRoot = root, display
		res, err := search.GrepResult(ctx, c.Env.Policy, req)
		if err != nil {
			return nil, searchError(ctx, err)
		}
		return tool.Answer(res.Text, results.FromGrep(res)), nil
	}
	if m == dialect.Claude {
		return tool.DefineAs[grepCompatSchema](meta, handler)
	}
	return tool.DefineAs[grepDefaultSchema](meta, handler)
}

type findArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
	Type    string `json:"type"`
}

type findDefaultSchema struct {
	Pattern string `json:"pattern" jsonschema:"Glob to match: *, **, ?, {a,b}, [abc], [a-z], [!abc]. Matched against the path relative to the search root and against the base name, so *.go finds Go files at any depth and src/**/*.ts only under src."`
	Path    string `json:"path,omitempty" jsonschema:"Directory to search (default: the session's working directory)."`
	Type    string `json:"type,omitempty" jsonschema:"file (default) or directory."`
}

type findCompatSchema struct {
	Pattern string `json:"pattern" jsonschema:"The glob pattern to match files against"`
	Path    string `json:"path,omitempty" jsonschema:"The directory to search in. If not specified, the current working directory will be used."`
}

const findDesc = `Find files by glob pattern (*.go, **/*.{ts,tsx}, src/**/test_*.py), newest modification first.

- The pattern is matched against each path relative to the search directory and against its base name.
- Hidden files are included; .git, node_modules and .gitignore'd files are skipped; symlinked directories are not descended.
- Output is one relative path per line, capped at 30,000 characters; "No files found" when nothing matches.`

func findTool(m dialect.Mode) (*tool.Def, error) {
	handler := func(ctx context.Context, c *tool.Call, in *findArgs) (*mcp.CallToolResult, error) {
		searched(c, in.Pattern, in.Path)
		root, display, err := searchRoot(c, in.Path)
		if err != nil {
			return nil, err
		}
		res, err := search.FindResult(ctx, c.Env.Policy, search.FindRequest{Pattern: in.Pattern, Type: in.Type, Root: root, DisplayRoot: display, MaxChars: answerChars(c)})
		if err != nil {
			return nil, searchError(ctx, err)
		}
		return tool.Answer(res.Text, results.FromFind(res)), nil
	}
	meta := tool.Meta{Name: Find, Title: "Find files", Description: findDesc, ReadOnly: true, Returns: tool.Returns(results.Find{})}
	if m == dialect.Claude {
		meta.Name = "Glob"
		return tool.DefineAs[findCompatSchema](meta, handler)
	}
	meta.Tune = func(s *jsonschema.Schema) { tool.SetEnum(s, "type", findTypes...) }
	return tool.DefineAs[findDefaultSchema](meta, handler)
}

// answerChars is the cap of a search's text: the printer's own, or less
// where an answer holds less (with room for the printer's note on how to
// go on).
func answerChars(c *tool.Call) int {
	const note = 300
	if m := c.Env.MaxAnswer; m > 0 && m-note < printer.MaxChars {
		return m - note
	}
	return printer.MaxChars
}

// searched records a search's pattern and path.
func searched(c *tool.Call, pattern, path string) {
	c.Rec.Pattern = pattern
	if path != "" {
		c.Rec.Paths = []string{path}
	}
}

// searchRoot resolves and checks a search path. A path that does not exist
// is passed on: grep reports PATH_NOT_FOUND, find "No files found".
func searchRoot(c *tool.Call, path string) (root, display string, err error) {
	display = path
	if strings.TrimSpace(path) == "" {
		path, display = c.Sess.Cwd(), "."
	}
	t, err := c.Env.Policy.Locate(c.Sess.Cwd(), path)
	if err != nil {
		var denied *scope.DeniedError
		if errors.As(err, &denied) {
			return "", "", codes.Errorf(codes.AccessDenied, "access to %s is denied: %s", denied.Path, denied.Reason)
		}
		return "", "", codes.Errorf(codes.InvalidInput, "%s: %v", path, err)
	}
	return t.Resolved, display, nil
}

// findTypes are the values of find's type.
var findTypes = []string{"file", "directory"}

// searchError maps the search package's errors to codes, with the valid
// values of the parameter at fault.
func searchError(ctx context.Context, err error) error {
	var se *search.Error
	if errors.As(err, &se) {
		e := codes.Errorf(se.Kind.Code(), "%s", se.Msg)
		switch se.Kind {
		case search.KindInvalidOutputMode:
			e.WithValid("output_mode", printer.Modes...)
		case search.KindInvalidType:
			e.WithValid("type", glob.TypeNames()...)
		case search.KindInvalidFindType:
			e.WithValid("type", findTypes...)
		}
		return e
	}
	if ctx.Err() != nil {
		return codes.Errorf(codes.InvalidInput, "the search was cancelled")
	}
	return codes.Errorf(codes.IOError, "search failed: %v", err)
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// boolOr returns the first given value, or def.
func boolOr(def bool, vals ...*tool.Bool) bool {
	for _, v := range vals {
		if v != nil {
			return bool(*v)
		}
	}
	return def
}

// optInt returns the first given value, -1 when none is given, and an
// error for a negative one.
func optInt(name string, vals ...*tool.Int) (int, error) {
	for _, v := range vals {
		if v != nil {
			if *v < 0 {
				return 0, codes.Errorf(codes.InvalidInput, "%s must not be negative (got %d)", name, *v)
			}
			return int(*v), nil
		}
	}
	return -1, nil
}
