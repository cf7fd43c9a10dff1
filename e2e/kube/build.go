package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Binaries returns the directory holding the Kubernetes binaries of the
// release pinned in moduleDir/go.mod (the k8sbin module), building them
// there first if they are not already: the first build compiles
// Kubernetes (minutes); later ones find the binaries in the user's cache
// directory, or relink from Go's build cache.
func Binaries(ctx context.Context, moduleDir string, log io.Writer) (string, error) {
	version, err := pinnedVersion(filepath.Join(moduleDir, "go.mod"), "k8s.io/kubernetes")
	if err != nil {
		return "", err
	}
	minor := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	if len(minor) < 2 {
		return "", fmt.Errorf("cannot read the version %q", version)
	}
	// Without these a from-source build calls itself v0.0.0-master, and
	// Helm's kubeVersion checks see that.
	ldflags := fmt.Sprintf("-s -w -X k8s.io/component-base/version.gitVersion=%s -X k8s.io/component-base/version.gitMajor=%s -X k8s.io/component-base/version.gitMinor=%s -X k8s.io/component-base/version.gitTreeState=clean",
		version, minor[0], minor[1])
	var pkgs []string
	for _, b := range components {
		pkgs = append(pkgs, "k8s.io/kubernetes/cmd/"+b)
	}
	fmt.Fprintf(log, "kube: Kubernetes %s (the first build takes minutes)\n", version)
	return buildCached(ctx, moduleDir, version, ldflags, pkgs)
}

// SandboxController returns the agent-sandbox controller of the release
// pinned in moduleDir/go.mod (the sandboxbin module), built from the
// module proxy the first time and kept in the user's cache directory.
func SandboxController(ctx context.Context, moduleDir string, log io.Writer) (string, error) {
	version, err := pinnedVersion(filepath.Join(moduleDir, "go.mod"), SandboxModule)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(log, "kube: agent-sandbox controller %s\n", version)
	dir, err := buildCached(ctx, moduleDir, "agent-sandbox-"+version, "-s -w", []string{SandboxModule + "/cmd/agent-sandbox-controller"})
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "agent-sandbox-controller"), nil
}

// SandboxModule is agent-sandbox's Go module: its CRDs are read from it
// (k8s/crds) and its controller built from it.
const SandboxModule = "sigs.k8s.io/agent-sandbox"

// buildCached builds the main packages pkgs of the module in moduleDir
// into the user's cache directory under boris-kube/key, unless every one
// of them is already there, and returns that directory.
func buildCached(ctx context.Context, moduleDir, key, ldflags string, pkgs []string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "boris-kube", key)
	missing := false
	for _, p := range pkgs {
		if _, err := os.Stat(filepath.Join(dir, filepath.Base(p))); err != nil {
			missing = true
		}
	}
	if !missing {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-trimpath", "-ldflags", ldflags, "-o", dir + "/"}, pkgs...)...)
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building %s in %s: %v\n%s", strings.Join(pkgs, " "), moduleDir, err, out.String())
	}
	return dir, nil
}

// pinnedVersion reads the requirement of module in a go.mod.
func pinnedVersion(gomod, module string) (string, error) {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "require" && f[1] == module {
			return f[2], nil
		}
		if len(f) >= 2 && f[0] == module && strings.HasPrefix(f[1], "v") {
			return f[1], nil
		}
	}
	return "", errors.New(gomod + " does not require " + module)
}

// AgentImage is the sidecar agent the tests put next to boris: the image
// the chart's ci/sidecar-values.yaml names, built here from
// e2e/kube/agent.
const AgentImage = "ghcr.io/example/coding-agent:1.2.3"

// localPause is the Docker tag of the pause image built here.
const localPause = "boris-kube/pause:local"

// BuildImages builds, as static binaries in scratch images, the pause
// image and the agent (from e2eDir/kube/pause and e2eDir/kube/agent), and
// returns them as Options.Images wants them.
func BuildImages(ctx context.Context, e2eDir string, log io.Writer) (map[string][]string, error) {
	for _, img := range []struct{ tag, pkg, path string }{
		{localPause, "./kube/pause", "/pause"},
		{AgentImage, "./kube/agent", "/usr/local/bin/agent"},
	} {
		tmp, err := os.MkdirTemp("", "boris-kube-image")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(tmp, "bin"), img.pkg)
		build.Dir = e2eDir
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s: %v\n%s", img.pkg, err, out)
		}
		dockerfile := fmt.Sprintf("FROM scratch\nCOPY bin %s\nUSER 65532:65532\nENTRYPOINT [%q]\n", img.path, img.path)
		if err := os.WriteFile(filepath.Join(tmp, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
			return nil, err
		}
		docker := exec.CommandContext(ctx, "docker", "build", "-q", "-t", img.tag, tmp)
		if out, err := docker.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("docker build %s: %v\n%s", img.tag, err, out)
		}
		fmt.Fprintf(log, "kube: built %s\n", img.tag)
	}
	return map[string][]string{localPause: {PauseImage}, AgentImage: nil}, nil
}

// BorisImages maps the images `make images` builds to the names the
// chart at chartDir uses by default (ghcr.io/boris-mcp/boris:<appVersion>
// and its -distroless variant), so that the chart installs unchanged.
func BorisImages(chartDir string) (map[string][]string, error) {
	b, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		return nil, err
	}
	version := ""
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "appVersion:"); ok {
			version = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	if version == "" {
		return nil, errors.New(chartDir + "/Chart.yaml has no appVersion")
	}
	return map[string][]string{
		"boris:latest":     {"ghcr.io/boris-mcp/boris:" + version},
		"boris:distroless": {"ghcr.io/boris-mcp/boris:" + version + "-distroless"},
	}, nil
}
