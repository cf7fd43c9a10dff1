package files

import (
	"fmt"
	"strings"
	"testing"
)

func BenchmarkViewSmallFile(b *testing.B) {
	f := newFixture(b, true)
	var s strings.Builder
	for i := range 40 {
		fmt.Fprintf(&s, "line %d of a small source file\n", i)
	}
	f.write(b, "deep/er/path/small.go", s.String())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.svc.View(f.c, "deep/er/path/small.go", nil, ViewLimits{MaxLines: 2000, MaxLineChars: 2000}); err != nil {
			b.Fatal(err)
		}
	}
}
