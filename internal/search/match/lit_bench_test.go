package match

import (
	"bytes"
	"os"
	"testing"
)

func loadSample(b *testing.B) []byte {
	data, err := os.ReadFile("/tmp/lb/sample.c")
	if err != nil {
		b.Skip(err)
	}
	return data
}

func benchFinder(b *testing.B, lit string) {
	data := loadSample(b)
	f := newLitFinder(lit_(lit))
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

func benchIndex(b *testing.B, lit string) {
	data := loadSample(b)
	b.SetBytes(int64(len(data)))
	n := 0
	for b.Loop() {
		n = 0
		for from := 0; ; {
			i := bytes.Index(data[from:], []byte(lit))
			if i < 0 {
				break
			}
			n++
			from += i + 1
		}
	}
	b.ReportMetric(float64(n), "hits")
}

func lit_(s string) lit { return lit{s: []byte(s)} }

func BenchmarkFinderFunc(b *testing.B)    { benchFinder(b, "func ") }
func BenchmarkIndexFunc(b *testing.B)     { benchIndex(b, "func ") }
func BenchmarkFinderReturn(b *testing.B)  { benchFinder(b, "return") }
func BenchmarkIndexReturn(b *testing.B)   { benchIndex(b, "return") }
func BenchmarkFinderAbsent(b *testing.B)  { benchFinder(b, "zqxjkvwq_not_there") }
func BenchmarkIndexAbsent(b *testing.B)   { benchIndex(b, "zqxjkvwq_not_there") }
func BenchmarkFinderMain(b *testing.B)    { benchFinder(b, "func main") }
func BenchmarkIndexMain(b *testing.B)     { benchIndex(b, "func main") }
func BenchmarkFinderStatic(b *testing.B)  { benchFinder(b, " static int") }
func BenchmarkIndexStatic(b *testing.B)   { benchIndex(b, " static int") }
