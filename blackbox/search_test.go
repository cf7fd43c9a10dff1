package blackbox

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestGrepAndFindThroughMCP(t *testing.T) {
	for _, compat := range []bool{false, true} {
		name := "default"
		var args []string
		findTool := "find"
		if compat {
			name, args, findTool = "compat", []string{"--anthropic-compat"}, "Glob"
		}
		t.Run(name, func(t *testing.T) {
			p := startInProcess(t, append(args, "--deny-dir=**/.env")...)
			writeTree(t, p.dir, map[string]string{
				"src/a.go":      "package src\n\nfunc Alpha() {}\n",
				"src/b.go":      "package src\n\nfunc Beta() {}\nfunc alphaHelper() {}\n",
				"docs/notes.md": "Alpha and beta\n",
				".env":          "SECRET=Alpha\n",
				".gitignore":    "build/\n",
				"build/gen.go":  "func AlphaGenerated() {}\n",
			})
			old := time.Now().Add(-time.Hour)
			os.Chtimes(filepath.Join(p.dir, "src/a.go"), old, old)
			cs := connectHTTP(t, p.url, "", nil)

			// Both parameter name sets work in either mode.
			got := mustOK(t, cs, "grep", map[string]any{"pattern": "alpha", "case_insensitive": true, "include": "*.go"})
			if got != "src/b.go\nsrc/a.go\n" && got != "src/b.go\nsrc/a.go" {
				t.Fatalf("files_with_matches newest first, .gitignore'd and denied files absent: %q", got)
			}
			got2 := mustOK(t, cs, "grep", map[string]any{"pattern": "alpha", "-i": true, "glob": "*.go"})
			if got2 != got {
				t.Fatalf("compat names gave %q, default names %q", got2, got)
			}
			got = mustOK(t, cs, "grep", map[string]any{"pattern": "func Beta", "output_mode": "content", "-A": 1, "path": "src"})
			if !strings.Contains(got, "b.go:3:func Beta() {}") || !strings.Contains(got, "b.go-4-func alphaHelper() {}") {
				t.Fatalf("content with context: %q", got)
			}
			got = mustOK(t, cs, "grep", map[string]any{"pattern": "func", "output_mode": "count", "type": "go"})
			if !strings.Contains(got, "src/b.go:2") || !strings.Contains(got, "src/a.go:1") || strings.Contains(got, "gen.go") {
				t.Fatalf("count: %q", got)
			}
			if got := mustOK(t, cs, "grep", map[string]any{"pattern": "absent-text-xyz"}); got != "No files found" {
				t.Fatalf("no match: %q", got)
			}
			// The error names the real default (files_with_matches).
			if text := mustErr(t, cs, "grep", map[string]any{"pattern": "x", "output_mode": "lines"}, "GREP_INVALID_OUTPUT_MODE"); !strings.Contains(text, `output_mode "lines" is not valid; use files_with_matches (the default), content or count`) {
				t.Fatalf("unknown output_mode: %q", text)
			}
			mustErr(t, cs, "grep", map[string]any{"pattern": "x", "type": "klingon"}, "GREP_INVALID_TYPE")
			mustErr(t, cs, "grep", map[string]any{"pattern": "func("}, "GREP_INVALID_PATTERN")
			mustErr(t, cs, "grep", map[string]any{"pattern": "x", "path": "missing"}, "PATH_NOT_FOUND")
			mustErr(t, cs, "grep", map[string]any{"pattern": "x", "path": ".env"}, "ACCESS_DENIED")
			mustErr(t, cs, "grep", map[string]any{"pattern": "x", "-B": -2}, "INVALID_INPUT")
			mustErr(t, cs, "grep", map[string]any{}, "INVALID_INPUT")

			got = mustOK(t, cs, findTool, map[string]any{"pattern": "*.go"})
			if got != "src/b.go\nsrc/a.go\n" && got != "src/b.go\nsrc/a.go" {
				t.Fatalf("find *.go: %q", got)
			}
			if got := mustOK(t, cs, findTool, map[string]any{"pattern": "*.rs"}); strings.TrimSpace(got) != "No files found" {
				t.Fatalf("find nothing: %q", got)
			}
			if got := mustOK(t, cs, findTool, map[string]any{"pattern": "*.go", "path": "missing"}); strings.TrimSpace(got) != "No files found" {
				t.Fatalf("find in a missing path: %q", got)
			}
			mustErr(t, cs, findTool, map[string]any{"pattern": "[unclosed"}, "FIND_INVALID_PATTERN")
			mustErr(t, cs, findTool, map[string]any{"pattern": ""}, "FIND_INVALID_PATTERN")
			if !compat {
				mustErr(t, cs, "find", map[string]any{"pattern": "*", "type": "socket"}, "FIND_INVALID_TYPE")
				if got := mustOK(t, cs, "find", map[string]any{"pattern": "*", "type": "directory"}); !strings.Contains(got, "src") || !strings.Contains(got, "docs") {
					t.Fatalf("find directories: %q", got)
				}
			}

			// Schemas: each mode shows its own names.
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tl := range res.Tools {
				b := schemaJSON(t, tl.InputSchema)
				switch tl.Name {
				case "grep":
					for _, k := range []string{`"-i"`, `"-n"`, `"-A"`, `"-B"`, `"-C"`, `"glob"`} {
						if strings.Contains(b, k) != compat {
							t.Fatalf("grep schema (compat=%v) and %s: %s", compat, k, b)
						}
					}
				case "Glob":
					// Claude's Glob schema, plus the session every tool has.
					props := propertyNames(t, tl.InputSchema)
					if !slices.Equal(props, []string{"path", "pattern", "session"}) {
						t.Fatalf("Glob has properties %v", props)
					}
				}
			}
		})
	}
}
