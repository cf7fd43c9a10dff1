package blackbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstall: `boris install DIR` copies the running binary to DIR/boris,
// executable, replacing an older copy; the copy runs. Without a directory
// it fails saying what it wants.
func TestInstall(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "opt", "boris")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "boris"), []byte("#!/bin/sh\necho old\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(binPath, "install", dir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "installed as "+filepath.Join(dir, "boris")) {
		t.Fatalf("install: %v %s", err, out)
	}
	fi, err := os.Stat(filepath.Join(dir, "boris"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("installed binary: %v %v", fi, err)
	}
	want, _ := exec.Command(binPath, "--version").Output()
	got, err := exec.Command(filepath.Join(dir, "boris"), "--version").Output()
	if err != nil || string(got) != string(want) || len(want) == 0 {
		t.Fatalf("the copy says %q (%v), the original %q", got, err, want)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".boris-install-*")); len(leftovers) > 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}
	out, err = exec.Command(binPath, "install").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "boris install /opt/boris") {
		t.Fatalf("install without a directory: %v %s", err, out)
	}
}
