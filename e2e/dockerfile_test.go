package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDockerfilesBuildOffline checks, without Docker, what lets both
// Dockerfiles build offline and with the legacy builder: every base image is
// a build argument (or scratch, or an earlier stage), the build stage is the
// same in both files, no BuildKit-only syntax is used, and the platform
// argument still reaches the build stage under BuildKit.
func TestDockerfilesBuildOffline(t *testing.T) {
	var buildStages []string
	for _, name := range []string{"Dockerfile", "Dockerfile.distroless"} {
		raw, err := os.ReadFile(filepath.Join(repoRoot, name))
		if err != nil {
			t.Fatal(err)
		}
		src := string(raw)
		stages := map[string]bool{}
		for _, m := range regexp.MustCompile(`(?m)^FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?`).FindAllStringSubmatch(src, -1) {
			base := m[1]
			if base != "scratch" && !stages[base] && !regexp.MustCompile(`^\$\{[A-Z_]+_IMAGE\}$`).MatchString(base) {
				t.Errorf("%s: FROM %s is neither scratch, a stage nor a ${..._IMAGE} build argument", name, base)
			}
			if m[2] != "" {
				stages[m[2]] = true
			}
		}
		code := regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(src, "")
		for _, bad := range []string{"RUN --mount", "COPY --chmod", "COPY --link", "<<EOF", "<<-"} {
			if strings.Contains(code, bad) {
				t.Errorf("%s uses %q, which the legacy builder does not know", name, bad)
			}
		}
		// BuildKit sets TARGETPLATFORM only for an ARG declared without a
		// default (docker/buildx#510); PREBUILT's $TARGETPLATFORM/boris
		// lookup depends on it.
		if regexp.MustCompile(`(?m)^ARG TARGETPLATFORM=`).MatchString(code) {
			t.Errorf("%s: ARG TARGETPLATFORM must have no default", name)
		}
		start := strings.Index(src, "# --- build")
		end := strings.Index(src, "# --- end build ---")
		if start < 0 || end < start {
			t.Fatalf("%s: no build stage markers", name)
		}
		buildStages = append(buildStages, src[start:end])
	}
	if buildStages[0] != buildStages[1] {
		t.Errorf("the build stages of Dockerfile and Dockerfile.distroless differ:\n%s\n---\n%s", buildStages[0], buildStages[1])
	}
}
