package shell

import (
	"context"
	"os"
	"os/exec"
	"testing"
)

// BenchmarkRunTrue and BenchmarkBareSpawn compare a runner call with what
// it wraps; their ratio is the runner's overhead.
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

func benchmarkBareSpawnNeedsNoReaper(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/bash", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
