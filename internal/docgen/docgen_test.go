package docgen

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
