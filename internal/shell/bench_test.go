package shell

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// BenchmarkRunTrue is one command through the Runner: process group,
// wrapper, sentinel and cwd, capture. Compare with BenchmarkBareBashTrue
// (go test -bench 'True' ./internal/shell) for what the Runner adds to a
// spawn.
func BenchmarkRunTrue(b *testing.B) {
	r := NewRunner("/bin/bash", Environ(os.Environ()), Options{})
	dir := b.TempDir()
	for b.Loop() {
		p, err := r.Start(Command{Script: "true", Dir: dir, Sentinel: testSentinel})
		if err != nil {
			b.Fatal(err)
		}
		if res := p.Wait(context.Background(), 0); res.ExitCode != 0 {
			b.Fatalf("exit %d", res.ExitCode)
		}
		p.Close()
	}
}

// BenchmarkBareBashTrue is the spawn alone: bash -c true, waited for.
// (The reaper this package's tests run may collect the exit status first;
// then Wait reports ECHILD once the child is gone, which is as good.)
func BenchmarkBareBashTrue(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/bash", "-c", "true").Run(); err != nil && !errors.Is(err, syscall.ECHILD) {
			b.Fatal(err)
		}
	}
}
