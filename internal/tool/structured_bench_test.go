package tool

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
	notFound := codes.Errorf(codes.TaskNotFound, "no background task %q in this session (this session has no background tasks); a finished task's output can be read once", "none")
	ran := session.RunResult{Result: shell.Result{Stdout: shell.Output{Text: "ok\n", Chars: 3}, Duration: 2 * time.Millisecond}}
	cases := []struct {
		name   string
		answer func(structured bool) *mcp.CallToolResult
	}{
		{"null", func(structured bool) *mcp.CallToolResult {
			r := ErrorResult(notFound)
			r.StructuredContent = results.ErrorOf(notFound)
			return finish(r, structured, false, nil)
		}},
		{"view", func(structured bool) *mcp.CallToolResult {
			res, err := fs.View(files.Ctx{Cwd: dir}, "small.go", nil, files.ViewLimits{MaxLines: 2000, MaxLineChars: 2000, Hidden: true})
			if err != nil {
				b.Fatal(err)
			}
			return finish(Answer(catN(res), results.FromView(res)), structured, false, nil)
		}},
		{"bash", func(structured bool) *mcp.CallToolResult {
			return finish(Answer("exit_code: 0\nstdout:\n"+ran.Stdout.Text, results.FromRun(ran, dir)), structured, false, nil)
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

// catN numbers a view's lines as boris's view does (the text is not what
// is measured: its size is).
func catN(res *files.ViewResult) string {
	var out []byte
	for i := 0; i < res.Lines.Len(); i++ {
		text, _ := res.Lines.Line(i)
		out = append(AppendLineNo(out, res.Lines.Start+i), text...)
		out = append(out, '\n')
	}
	return string(out)
}
