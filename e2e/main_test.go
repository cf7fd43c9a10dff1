// Package e2e checks boris where it is deployed: its container images under a
// real Docker engine (started with testcontainers-go, driven over MCP with the
// official go-sdk client), docker compose, and the Helm chart.
//
// The first container test builds the images with `make images` (offline:
// nothing is pulled) unless BORIS_E2E_SKIP_BUILD is set. Without a Docker
// engine the container tests are skipped, except under CI (CI set), where
// that fails them.
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	imageLatest     = "boris:latest"     // Dockerfile: scratch + busybox /bin/sh
	imageDistroless = "boris:distroless" // Dockerfile.distroless: no shell
	imageBash       = "boris-e2e:bash"   // boris:latest plus a static /bin/bash
)

var (
	// repoRoot is the boris repository, the parent of this module.
	repoRoot string

	imagesOnce sync.Once
	// dockerErr says why no Docker engine is usable (nil: there is one);
	// imagesErr why the images could not be built.
	dockerErr, imagesErr error
	// bashImageErr says why imageBash could not be built.
	bashImageErr error
)

func TestMain(m *testing.M) {
	// No reaper container: it would have to be pulled, and every test
	// removes its own containers.
	os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	root, err := filepath.Abs("..")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	repoRoot = root
	code := m.Run()
	stopCluster()
	os.Exit(code)
}

func inCI() bool { return os.Getenv("CI") != "" }

// requireImages is called by every test that needs Docker. The first call
// checks the engine and builds the images; without an engine the test is
// skipped, or fails under CI.
func requireImages(t *testing.T) {
	t.Helper()
	imagesOnce.Do(func() {
		if dockerErr = checkDocker(); dockerErr != nil {
			return
		}
		if os.Getenv("BORIS_E2E_SKIP_BUILD") == "" {
			imagesErr = buildImages()
		}
		if imagesErr == nil {
			bashImageErr = buildBashImage()
		}
	})
	switch {
	case dockerErr != nil && inCI():
		t.Fatalf("CI is set and no Docker engine is usable: %v", dockerErr)
	case dockerErr != nil:
		t.Skipf("no Docker engine: %v", dockerErr)
	case imagesErr != nil:
		t.Fatal(imagesErr)
	}
}

func checkDocker() error {
	if _, err := exec.LookPath("docker"); err != nil {
		return fmt.Errorf("docker CLI not found: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "version", "--format", "{{.Server.Version}}").CombinedOutput()
	if err != nil {
		return fmt.Errorf("docker version: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// buildImages runs the same offline build as `make images`.
func buildImages() error {
	start := time.Now()
	cmd := exec.Command("make", "--no-print-directory", "-C", repoRoot, "images")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("make images: %v\n%s", err, out)
	}
	fmt.Fprintf(os.Stderr, "e2e: built %s and %s in %s\n", imageLatest, imageDistroless, time.Since(start).Round(time.Second))
	return nil
}

// buildBashImage adds Debian's static bash (package bash-static) to
// boris:latest as /bin/bash, for the shell-detection test.
func buildBashImage() error {
	src := os.Getenv("BASH_STATIC")
	if src == "" {
		src = "/bin/bash-static"
	}
	bin, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("bash image: %w (install Debian's bash-static or set BASH_STATIC)", err)
	}
	dir, err := os.MkdirTemp("", "boris-e2e-bash")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "bash"), bin, 0o755); err != nil {
		return err
	}
	out, err := exec.Command("docker", "build", "--pull=false", "-q",
		"-f", filepath.Join(repoRoot, "e2e", "testdata", "bash.Dockerfile"),
		"--build-arg", "BASE="+imageLatest, "-t", imageBash, dir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("build %s: %v\n%s", imageBash, err, out)
	}
	return nil
}
