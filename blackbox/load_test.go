package blackbox

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLoadReturnsToBaseline runs the load harness briefly against the
// binary: 20 concurrent HTTP sessions mixing every tool, zero failed calls,
// and after they close the server's goroutines, descriptors and child
// processes back at the idle baseline (the harness exits non-zero
// otherwise). `go run ./bench/load` is the full-size run with figures.
func TestLoadReturnsToBaseline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the load harness")
	}
	load := exec.Command("go", "run", "./bench/load", "-bin", binPath, "-sessions", "20", "-duration", "3s", "-idle", "0", "-startups", "0")
	load.Dir = moduleRoot
	out, err := load.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("load harness: %v", err)
	}
	if !strings.Contains(string(out), " 0 failed") || strings.Contains(string(out), "FAIL") {
		t.Fatal("the harness reported failures")
	}
}
