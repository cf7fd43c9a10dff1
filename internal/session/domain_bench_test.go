//go:build linux

package session

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/boris-mcp/boris/internal/sandbox"
	"github.com/boris-mcp/boris/internal/shell"
)

// BenchmarkFirstCommand is a fresh session's first command (bash -c true,
// no prestarted shell yet), session made and closed included: with the
// sandbox's shared domain, and in a domain of the session's own, made at
// that command. The two alternate within each iteration, so that a busy
// machine weighs on both alike; the figures are the mean of each and
// their ratio.
func BenchmarkFirstCommand(b *testing.B) {
	dir := b.TempDir()
	sb, err := sandbox.New(sandbox.Config{Writable: []string{dir, os.TempDir()}})
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	runner := shell.NewRunner("/bin/bash", shell.Environ(os.Environ()), shell.Options{Start: sb.Start})
	shared := Options{Workdir: dir, Runner: runner}
	own := shared
	own.NewDomain = func() (Domain, error) {
		return sb.NewDomain()
	}
	first := func(opts Options) time.Duration {
		t0 := time.Now()
		s := New("bench", opts)
		res, err := s.Run(context.Background(), Cmd{Script: "true"}, 10*time.Second, nil)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%v %+v", err, res)
		}
		s.Close()
		return time.Since(t0)
	}
	var tShared, tOwn time.Duration
	n := 0
	for b.Loop() {
		tShared += first(shared)
		tOwn += first(own)
		n++
	}
	b.ReportMetric(float64(tShared.Microseconds())/float64(n), "µs-shared-domain")
	b.ReportMetric(float64(tOwn.Microseconds())/float64(n), "µs-own-domain")
	b.ReportMetric(float64(tOwn)/float64(tShared), "ratio")
}
