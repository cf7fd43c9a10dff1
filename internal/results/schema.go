package results

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/boris-mcp/boris/internal/codes"
)

// Schema returns the outputSchema of a tool whose successful calls return
// one of shapes (zero values of this package's result types, e.g.
// Run{}) and whose failed calls return Error: an object that is exactly
// one of them. Each shape's schema is inferred from its Go struct (fields
// without omitempty are required, no other properties are allowed) and
// then given the enums its fields take. The schema keeps to keywords that
// draft-07 and 2020-12 validators read alike (no $schema, no $ref).
func Schema(shapes ...any) (json.RawMessage, error) {
	s := &jsonschema.Schema{Type: "object"}
	for _, sh := range append(shapes, Error{}) {
		t := reflect.TypeOf(sh)
		m, err := jsonschema.ForType(t, nil)
		if err != nil {
			return nil, fmt.Errorf("schema of %s: %w", t.Name(), err)
		}
		plain(m)
		m.Title, m.Description = t.Name(), shapeDescriptions[t.Name()]
		if d, ok := sh.(Described); ok {
			m.Description = d.ShapeDescription()
		}
		tune(m, sh)
		s.OneOf = append(s.OneOf, m)
	}
	return json.Marshal(s)
}

// Described is a shape that says in a line what it is, and which values
// its enum-like fields take: a tool family's own result type, declared
// where the tool is, implements it (this package's shapes are described
// in shapeDescriptions and shapeEnums below).
type Described interface {
	ShapeDescription() string
	// ShapeEnums are the values of the fields that take few, by JSON
	// name (nil: none beyond the common ones).
	ShapeEnums() map[string][]string
}

// shapeDescriptions say in a line what each shape is. The fields'
// descriptions (the jsonschema tags) stay out of the schemas: tools/list
// would triple for them, and docs/results.md documents every field.
var shapeDescriptions = map[string]string{
	"Run":         "A command's result, or a background task's status and new output.",
	"TaskList":    "The session's background tasks.",
	"Restarted":   "bash restart: the session's processes were ended.",
	"View":        "What a view found; a text file's lines are in the text content.",
	"Edit":        "What a str_replace did.",
	"Create":      "What a create did.",
	"Insert":      "What an insert did.",
	"Undo":        "What an undo_edit did.",
	"Patch":       "The files a patch added, modified, deleted and moved.",
	"GrepFiles":   "grep, files_with_matches: the matching files.",
	"GrepCounts":  "grep, count: matching lines per file.",
	"GrepContent": "grep, content: matching and context lines.",
	"Find":        "The matching paths.",
	"LSP":         "A language server's answer: locations, hover, symbols, calls or diagnostics.",
	"Checkpoint":  "A checkpoint action's answer: the checkpoint taken, the list, the differences, or what a restore did.",
	"Workspace":   "A workspace action's answer: the session's workspace, its diff or commit, the list, or what a removal did.",
	"Error":       "A failed call (isError): its code, message and facts.",
}

// plain turns the ["null", T] types inferred for pointers and slices into
// T, through the whole schema (a value boris leaves out is absent, never
// null), and drops the fields' descriptions.
func plain(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	s.Description = ""
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	for _, p := range s.Properties {
		plain(p)
	}
	plain(s.Items)
}

// enums are the values of the fields that take few; a field of that name
// anywhere in a shape gets them, except where a shape says otherwise.
var enums = map[string][]string{
	"status":        {StatusCompleted, StatusRunning},
	"session_ended": {"idle", "limit"},
	"skipped":       {"binary", "line_too_long"},
	"type":          {EntryFile, EntryDirectory, EntrySymlink},
	"severity":      {"error", "warning", "information", "hint"},
	"op":            {"added", "modified", "deleted"},
}

// shapeEnums are the enums of fields whose values depend on the shape.
var shapeEnums = map[string]map[string][]string{
	"View":        {"kind": {KindFile, KindDirectory, KindImage, KindBinary}},
	"Error":       {"code": codeNames()},
	"Checkpoint":  {"action": {"create", "list", "diff", "restore"}},
	"Workspace":   {"action": {"status", "diff", "commit", "list", "create", "open", "remove"}},
	"Task":        {"kind": {KindBackground, KindInteractive, KindTTY}},
	"GrepFiles":   {"mode": {ModeFiles}},
	"GrepCounts":  {"mode": {ModeCount}},
	"GrepContent": {"mode": {ModeContent}},
}

// tune sets the enums of a shape's fields, and of the objects it holds:
// the shape's own (sh's ShapeEnums, or shapeEnums), else the common ones.
func tune(s *jsonschema.Schema, sh any) {
	ownOf := func(shape string) map[string][]string {
		if d, ok := sh.(Described); ok && shape == s.Title {
			return d.ShapeEnums()
		}
		return shapeEnums[shape]
	}
	var walk func(s *jsonschema.Schema, shape string)
	walk = func(s *jsonschema.Schema, shape string) {
		if s == nil {
			return
		}
		for name, p := range s.Properties {
			values, ok := ownOf(shape)[name]
			if !ok {
				values, ok = enums[name]
			}
			if ok && p.Type == "string" {
				p.Enum = nil
				for _, v := range values {
					p.Enum = append(p.Enum, v)
				}
			}
			walk(p, "")
			if p.Items != nil {
				walk(p.Items, itemShape(shape, name))
			}
		}
	}
	walk(s, s.Title)
}

// itemShape names the shape of a list's items where it has enums of its
// own.
func itemShape(shape, list string) string {
	if shape == "TaskList" && list == "tasks" {
		return "Task"
	}
	return ""
}

func codeNames() []string {
	out := make([]string, len(codes.All))
	for i, c := range codes.All {
		out[i] = string(c)
	}
	return out
}
