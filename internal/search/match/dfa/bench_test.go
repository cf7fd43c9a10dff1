package dfa

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/boris-mcp/boris/internal/search/internal/testtree"
)

// goSource returns up to 32 MiB of the Go distribution's .go files, for
// throughput benchmarks.
func goSource(b *testing.B) []byte {
	var buf []byte
	root := testtree.GoSrc(b)
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || len(buf) > 32<<20 {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, ".go") {
			data, _ := os.ReadFile(path)
			buf = append(buf, data...)
		}
		return nil
	})
	if len(buf) == 0 {
		b.Fatal("no Go source found")
	}
	return buf
}

// BenchmarkLines scans the buffer for every matching line, with the DFA
// and with regexp line by line, and reports MB/s.
func BenchmarkLines(b *testing.B) {
	text := goSource(b)
	for _, pat := range []string{`[A-Z_]{24,}`, `\w+\(`, `return\s+nil,\s+\w+Error\b`, `(?i)unlock_[a-z]+`, `\b\w+_lock\b`, `mutex|spinlock|semaphore|rwlock|waitgroup`} {
		p, ref, err := compilePair(pat, Lines, strings.HasPrefix(pat, "(?i)"))
		if err != nil {
			b.Fatal(err)
		}
		b.Run("dfa/"+pat, func(b *testing.B) {
			c := p.NewCache(0)
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				n := 0
				for from := 0; from < len(text); {
					i, err := c.NextLine(text, from, len(text))
					if err != nil {
						b.Fatal(err)
					}
					if i < 0 {
						break
					}
					n++
					e := bytes.IndexByte(text[i:], '\n')
					if e < 0 {
						break
					}
					from = i + e + 1
				}
			}
		})
		b.Run("regexp/"+pat, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				countLines(ref, text)
			}
		})
	}
}

func countLines(re *regexp.Regexp, text []byte) (n int) {
	for len(text) > 0 {
		e := bytes.IndexByte(text, '\n')
		line := text
		if e >= 0 {
			line, text = text[:e], text[e+1:]
		} else {
			text = nil
		}
		if re.Match(line) {
			n++
		}
	}
	return n
}
