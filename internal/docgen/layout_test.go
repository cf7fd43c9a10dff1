package docgen

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestLayoutDocumented: docs/development.md's layout names every package
// of the main module under internal/, and nothing that is not there.
func TestLayoutDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/development.md")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^(internal/\S+)`).FindAllSubmatch(doc, -1) {
		named[strings.TrimSuffix(string(m[1]), "/")] = true
	}
	packages := map[string]bool{}
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			packages["internal/"+filepath.ToSlash(filepath.Dir(strings.TrimPrefix(path, "../")))] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range packages {
		if !named[p] {
			t.Errorf("package %s is not in docs/development.md's layout", p)
		}
	}
	for p := range named {
		if !packages[p] {
			t.Errorf("docs/development.md's layout names %s, which is not a package", p)
		}
	}
}
