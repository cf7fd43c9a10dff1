package search

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/boris-mcp/boris/internal/search/glob"
	"github.com/boris-mcp/boris/internal/search/internal/testtree"
	"github.com/boris-mcp/boris/internal/walk"
)

// benchTree is the tree the benchmarks search: $BORIS_BENCH_TREE, or Go's
// own source tree.
func benchTree(b *testing.B) string { return testtree.Tree(b) }

func benchGrep(b *testing.B, req GrepRequest) {
	req.Root = benchTree(b)
	req.LineNumbers, req.Before, req.After = true, -1, -1
	ctx := context.Background()
	if _, err := Grep(ctx, nil, req); err != nil { // warm the cache
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Grep(ctx, nil, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGrepLiteral(b *testing.B) { benchGrep(b, GrepRequest{Pattern: "func main"}) }

func BenchmarkGrepRegex(b *testing.B) { benchGrep(b, GrepRequest{Pattern: `func [A-Z][a-z]+\(`}) }

func BenchmarkGrepCaseInsensitive(b *testing.B) {
	benchGrep(b, GrepRequest{Pattern: "func main", CaseInsensitive: true})
}

func BenchmarkGrepAbsent(b *testing.B) { benchGrep(b, GrepRequest{Pattern: "zqxjkvwq_not_there"}) }

func BenchmarkGrepInclude(b *testing.B) {
	benchGrep(b, GrepRequest{Pattern: "TODO", Include: "*.go"})
}

func BenchmarkGrepCount(b *testing.B) {
	benchGrep(b, GrepRequest{Pattern: "return", OutputMode: "count"})
}

func BenchmarkGrepContent(b *testing.B) {
	benchGrep(b, GrepRequest{Pattern: "return nil", OutputMode: "content", Context: 1})
}

func BenchmarkGrepNoLiteral(b *testing.B) { benchGrep(b, GrepRequest{Pattern: `\w+\s*:=\s*\d{3,}`}) }

// BenchmarkGrepClassRun has no literal at all: the DFA scans every byte.
func BenchmarkGrepClassRun(b *testing.B) { benchGrep(b, GrepRequest{Pattern: `[A-Z_]{24,}`}) }

func benchFind(b *testing.B, pattern string) {
	root := benchTree(b)
	ctx := context.Background()
	if _, err := Find(ctx, nil, FindRequest{Pattern: pattern, Root: root}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Find(ctx, nil, FindRequest{Pattern: pattern, Root: root}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFindGo(b *testing.B) { benchFind(b, "*.go") }

func BenchmarkFindAll(b *testing.B) { benchFind(b, "*") }

// BenchmarkFindParts splits a find of the tree's source files (*.c in a
// kernel tree, *.go elsewhere) into its parts: the walk with the glob
// match alone (all fd does), the walk with the stat of each match that
// newest-first ordering needs, and the whole Find (sorting and rendering
// the list too).
//
//	BORIS_BENCH_TREE=/tmp/linux/linux-source-6.1 go test ./internal/search -run '^$' -bench FindParts
func BenchmarkFindParts(b *testing.B) {
	root := benchTree(b)
	pattern := "*.go"
	if _, err := os.Stat(filepath.Join(root, "Kbuild")); err == nil {
		pattern = "*.c"
	}
	m, err := glob.Compile(pattern)
	if err != nil {
		b.Fatal(err)
	}
	walkOnly := func(stat bool) func() int {
		return func() int {
			var n atomic.Int64
			err := walk.Walk(context.Background(), walk.Options{Root: root, InlineFiles: true}, func() func(*walk.Entry) {
				return func(e *walk.Entry) {
					if e.Kind != walk.KindFile || !m.Match(e.Name, e.Name) {
						return
					}
					if stat {
						if _, err := e.ModTime(); err != nil {
							return
						}
					}
					n.Add(1)
				}
			})
			if err != nil {
				b.Fatal(err)
			}
			return int(n.Load())
		}
	}
	whole := func() int {
		out, err := Find(context.Background(), nil, FindRequest{Pattern: pattern, Root: root})
		if err != nil {
			b.Fatal(err)
		}
		return strings.Count(out, "\n")
	}
	for _, part := range []struct {
		name string
		run  func() int
	}{{"walk+match", walkOnly(false)}, {"walk+match+stat", walkOnly(true)}, {"find", whole}} {
		b.Run(part.name, func(b *testing.B) {
			part.run() // warm the cache
			for b.Loop() {
				if part.run() == 0 {
					b.Fatal("nothing found")
				}
			}
		})
	}
}
