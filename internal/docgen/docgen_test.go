package docgen

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/boris-mcp/boris/internal/config"
	"github.com/boris-mcp/boris/internal/dialect"
	"github.com/boris-mcp/boris/internal/tool/catalog"
)

// root is the repository root, seen from this package's directory.
const root = "../.."

// TestGeneratedDocsUpToDate regenerates the reference pages in memory and
// fails when the committed ones differ: a flag or a tool changed without
// `make docs`.
func TestGeneratedDocsUpToDate(t *testing.T) {
	pages, err := Pages()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range sortedKeys(pages) {
		got, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Errorf("%s: %v; run make docs", name, err)
			continue
		}
		if !bytes.Equal(got, pages[name]) {
			t.Errorf("%s differs from what the code generates (first difference at line %d); run make docs and commit the result", name, firstDiff(got, pages[name]))
		}
	}
}

func firstDiff(a, b []byte) int {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}

// TestFlagsPageCoversEveryFlag checks the page against the parser itself:
// every visible flag and its variable appear, the hidden spellings do not.
func TestFlagsPageCoversEveryFlag(t *testing.T) {
	page, err := FlagsPage()
	if err != nil {
		t.Fatal(err)
	}
	flags, err := config.Flags(Program)
	if err != nil {
		t.Fatal(err)
	}
	if len(flags) < 40 {
		t.Fatalf("config.Flags gave %d flags; expected every flag of the cli struct", len(flags))
	}
	for _, f := range flags {
		if !bytes.Contains(page, []byte("| `--"+f.Name)) {
			t.Errorf("no row for --%s", f.Name)
		}
		if f.Env != "" && !bytes.Contains(page, []byte("`"+f.Env+"`")) {
			t.Errorf("--%s: its variable %s is missing", f.Name, f.Env)
		}
	}
	for _, hidden := range []string{"| `--no-bash", "| `--bg-timeout", "| `--help"} {
		if bytes.Contains(page, []byte(hidden)) {
			t.Errorf("the page lists %s, which is not to be shown", hidden)
		}
	}
}

// TestToolsPageListsEachModesTools checks that each mode's section holds
// every tool its declarations give that mode (the page's configuration
// can serve them all) and none that only another mode has.
func TestToolsPageListsEachModesTools(t *testing.T) {
	specs := catalog.Specs(catalog.Options{})
	for _, m := range dialect.Modes {
		ts, err := ListTools(t.Context(), m)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, tool := range ts {
			got[tool.Name] = true
			if tool.Description == "" {
				t.Errorf("%s %s: no description", m, tool.Name)
			}
		}
		mine := map[string]bool{}
		for _, sp := range specs {
			if name, ok := sp.Names[m]; ok {
				mine[name] = true
				if !got[name] {
					t.Errorf("mode %s: %s not registered", m, name)
				}
			}
		}
		for _, sp := range specs {
			for _, name := range sp.Names {
				if got[name] && !mine[name] {
					t.Errorf("mode %s: %s registered", m, name)
				}
			}
		}
		if len(got) != len(mine) {
			t.Errorf("mode %s: %d tools registered, %d declared", m, len(got), len(mine))
		}
	}
	page, err := ToolsPage()
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"\n### bash\n", "\n### str_replace_editor (anthropic-compat)\n", "\n### exec_command (openai-compat)\n", "| `command` | string |"} {
		if !bytes.Contains(page, []byte(h)) {
			t.Errorf("tools page lacks %q", h)
		}
	}
}

// TestEveryAnswerDocumented: the answer shapes of every tool of every
// dialect (their outputSchema, derived from the tools' declarations) say
// in a line what they are, and docs/results.md names every field: the
// wire schemas leave the fields' descriptions to that page.
func TestEveryAnswerDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/results.md")
	if err != nil {
		t.Fatal(err)
	}
	// Codex's exec shape is declared as Codex declares it, descriptions
	// included; boris's own shapes carry none.
	var walk func(where string, m *jsonschema.Schema, ours bool)
	walk = func(where string, m *jsonschema.Schema, ours bool) {
		for name, p := range m.Properties {
			if !strings.Contains(string(doc), "`"+name+"`") {
				t.Errorf("%s.%s is not in docs/results.md", where, name)
			}
			if ours && p.Description != "" {
				t.Errorf("%s.%s has a description on the wire", where, name)
			}
			walk(where+"."+name, p, ours)
			if p.Items != nil {
				walk(where+"."+name+"[]", p.Items, ours)
			}
		}
	}
	for _, m := range dialect.Modes {
		ts, err := ListTools(t.Context(), m)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range ts {
			if tl.OutputSchema == nil {
				continue
			}
			raw, err := json.Marshal(tl.OutputSchema)
			if err != nil {
				t.Fatal(err)
			}
			var s jsonschema.Schema
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatal(err)
			}
			shapes := s.OneOf
			if len(shapes) == 0 {
				shapes = []*jsonschema.Schema{&s} // Codex's exec shape, as Codex declares it
			}
			for _, sh := range shapes {
				if len(s.OneOf) > 0 && sh.Description == "" {
					t.Errorf("%s %s: shape %s has no description", m, tl.Name, sh.Title)
				}
				walk(tl.Name+"."+sh.Title, sh, len(s.OneOf) > 0)
			}
		}
	}
}
