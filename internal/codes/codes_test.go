package codes

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"testing"
)

// TestAllListsEveryCode: every Code constant declared in this package is in
// All (the enum of structured error results), once.
func TestAllListsEveryCode(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "codes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []Code
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || vs.Type == nil {
			return true
		}
		if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
			return true
		}
		for _, v := range vs.Values {
			if lit, ok := v.(*ast.BasicLit); ok {
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				declared = append(declared, Code(s))
			}
		}
		return true
	})
	if len(declared) < 20 {
		t.Fatalf("found only %d code constants", len(declared))
	}
	all := slices.Clone(All)
	slices.Sort(all)
	slices.Sort(declared)
	if !slices.Equal(all, declared) {
		t.Fatalf("All = %v\ndeclared = %v", all, declared)
	}
}
