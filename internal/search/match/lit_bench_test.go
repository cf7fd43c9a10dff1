package match

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/boris-mcp/boris/internal/search/internal/testtree"
)

// loadSample concatenates Go's runtime sources: a few megabytes of real
// code to scan.
func loadSample(b *testing.B) []byte {
	files, _ := filepath.Glob(filepath.Join(testtree.GoSrc(b), "runtime", "*.go"))
	var data []byte
	for _, f := range files {
		d, err := os.ReadFile(f)
		if err == nil {
			data = append(data, d...)
		}
	}
	if len(data) == 0 {
		b.Skip("no Go sources to scan")
	}
	return data
}

func benchFinder(b *testing.B, s string) {
	data := loadSample(b)
	f := newLitFinder(literal(s))
	b.SetBytes(int64(len(data)))
	n := 0
	for b.Loop() {
		var c litCursor
		c.reset()
		n = 0
		for from := 0; ; {
			p := f.find(data, from, len(data), &c)
			if p == none {
				break
			}
			n++
			from = p + 1
		}
	}
	b.ReportMetric(float64(n), "hits")
}

func benchIndex(b *testing.B, s string) {
	data := loadSample(b)
	b.SetBytes(int64(len(data)))
	n := 0
	for b.Loop() {
		n = 0
		for from := 0; ; {
			i := bytes.Index(data[from:], []byte(s))
			if i < 0 {
				break
			}
			n++
			from += i + 1
		}
	}
	b.ReportMetric(float64(n), "hits")
}

func literal(s string) lit { return lit{s: []byte(s)} }

func BenchmarkFinderFunc(b *testing.B)   { benchFinder(b, "func ") }
func BenchmarkIndexFunc(b *testing.B)    { benchIndex(b, "func ") }
func BenchmarkFinderReturn(b *testing.B) { benchFinder(b, "return") }
func BenchmarkIndexReturn(b *testing.B)  { benchIndex(b, "return") }
func BenchmarkFinderAbsent(b *testing.B) { benchFinder(b, "zqxjkvwq_not_there") }
func BenchmarkIndexAbsent(b *testing.B)  { benchIndex(b, "zqxjkvwq_not_there") }
func BenchmarkFinderMain(b *testing.B)   { benchFinder(b, "func main") }
func BenchmarkIndexMain(b *testing.B)    { benchIndex(b, "func main") }
func BenchmarkFinderStatic(b *testing.B) { benchFinder(b, " static int") }
func BenchmarkIndexStatic(b *testing.B)  { benchIndex(b, " static int") }
