package search

import (
	"context"
	"testing"

	"github.com/boris-mcp/boris/internal/search/internal/testtree"
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
