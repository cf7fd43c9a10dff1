package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/dialect"
	"github.com/boris-mcp/boris/internal/files"
	"github.com/boris-mcp/boris/internal/results"
	"github.com/boris-mcp/boris/internal/scope"
	"github.com/boris-mcp/boris/internal/session"
	"github.com/boris-mcp/boris/internal/shell"
)

// BenchmarkStructuredAnswer is what structured content adds to an answer,
// free of the noise of a whole call: making the data and encoding the
// result as the SDK does (encoding/json, no HTML escaping), for the null
// call's error, a view of a 40-line file and a bash call's result; each
// case beside the same answer as text only. Divide the difference by a
// call's time (bench/overhead) for its share.
func BenchmarkStructuredAnswer(b *testing.B) {
	dir := b.TempDir()
	var small []byte
	for i := range 40 {
		small = fmt.Appendf(small, "line %d of a small source file\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "small.go"), small, 0o644); err != nil {
		b.Fatal(err)
	}
	pol, err := scope.New(nil, nil, dir)
	if err != nil {
		b.Fatal(err)
	}
	fs := files.New(files.Options{Policy: pol, MaxFileSize: 1 << 20})
	notFound := codes.Errorf(codes.BashTaskNotFound, "no background task %q in this session (this session has no background tasks); a finished task's output can be read once", "none")
	ran := session.RunResult{Result: shell.Result{Stdout: shell.Output{Text: "ok\n", Chars: 3}, Duration: 2 * time.Millisecond}}
	cases := []struct {
		name   string
		answer func(structured bool) *mcp.CallToolResult
	}{
		{"null", func(structured bool) *mcp.CallToolResult {
			r := errorResult(notFound)
			r.StructuredContent = results.ErrorOf(notFound)
			return finish(r, structured, false, nil)
		}},
		{"view", func(structured bool) *mcp.CallToolResult {
			res, err := fs.View(files.Ctx{Cwd: dir}, "small.go", nil, dialect.BorisViewLimits(nil))
			if err != nil {
				b.Fatal(err)
			}
			return finish(answer(dialect.BorisView(res, nil), results.FromView(res)), structured, false, nil)
		}},
		{"bash", func(structured bool) *mcp.CallToolResult {
			return finish(answer(formatRun(ran, 1000), results.FromRun(ran, dir)), structured, false, nil)
		}},
	}
	for _, c := range cases {
		for _, structured := range []bool{true, false} {
			name := c.name
			if !structured {
				name += "-text-only"
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				var buf bytes.Buffer
				for b.Loop() {
					buf.Reset()
					enc := json.NewEncoder(&buf)
					enc.SetEscapeHTML(false)
					if err := enc.Encode(c.answer(structured)); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
