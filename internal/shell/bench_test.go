package shell

import (
	"context"
	"os"
	"testing"
)

// BenchmarkRunTrue times one runner call of `true`; compare it with a bare
// spawn measured outside this process (hyperfine -N '/bin/bash -c true'),
// since this package's tests reap children themselves.
func BenchmarkRunTrue(b *testing.B) {
	r := NewRunner("/bin/bash", Environ(os.Environ()), Options{})
	dir := b.TempDir()
	for b.Loop() {
		p, err := r.Start(Command{Script: "true", Dir: dir, Sentinel: testSentinel})
		if err != nil {
			b.Fatal(err)
		}
		res := p.Wait(context.Background(), 0)
		p.Close()
		if res.ExitCode != 0 {
			b.Fatal(res)
		}
	}
}
