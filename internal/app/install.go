package app

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// installUsage is `boris install --help`.
const installUsage = `Usage: boris install DIR

Copy this boris binary to DIR/boris (mode 0755) and exit, so that another
image can run it without being rebuilt: boris is one static binary and needs
nothing from the image it runs in.

Docker (a volume filled from the boris image, then any image):
  docker volume create boris
  docker run --rm -v boris:/opt/boris boris:latest install /opt/boris
  docker run -v boris:/opt/boris:ro -v "$PWD:/workspace" -w /workspace \
    --user "$(id -u):$(id -g)" -e BORIS_TOKEN -e BORIS_HOST=0.0.0.0 -p 8080:8080 \
    --entrypoint /opt/boris/boris python:3.12

Kubernetes: an init container runs it into an emptyDir the workspace
container mounts (the Helm chart's toolchainImage value does this).
`

// runInstall is `boris install DIR`: the running binary copied to
// DIR/boris through a temporary file and a rename, so a container already
// running an older copy keeps it intact.
func runInstall(args []string, stdout io.Writer) error {
	if len(args) == 1 && (args[0] == "--help" || args[0] == "-h") {
		_, err := io.WriteString(stdout, installUsage)
		return err
	}
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		return fmt.Errorf("install: want one argument, the directory to copy boris into (boris install /opt/boris); got %q", args)
	}
	dir := args[0]
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("install: cannot find this binary: %w", err)
	}
	src, err := os.Open(self)
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	defer src.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("install: %w (the directory must be writable by uid %d: an emptyDir or a volume)", err, os.Getuid())
	}
	tmp, err := os.CreateTemp(dir, ".boris-install-*")
	if err != nil {
		return fmt.Errorf("install: %w (the directory must be writable by uid %d: an emptyDir or a volume)", err, os.Getuid())
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, src)
	if err == nil {
		err = tmp.Chmod(0o755)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	dst := filepath.Join(dir, "boris")
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		return fmt.Errorf("install: writing %s: %w", dst, err)
	}
	_, err = fmt.Fprintf(stdout, "boris %s installed as %s (%d bytes); run it in any image as %s\n", buildVersion(), dst, n, dst)
	return err
}
