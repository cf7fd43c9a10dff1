package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/strvals"
)

// The chart is linted and rendered with Helm's own Go packages (the version
// pinned in go.mod), as `helm lint --strict` and `helm template` do, so the
// suite needs no helm binary.

// chartDir is the chart under test (repoRoot is set by TestMain).
func chartDir() string { return filepath.Join(repoRoot, "helm", "boris") }

// chartValues merges values files (relative to the chart) and --set style
// assignments, later ones winning, as helm's -f and --set do.
func chartValues(files []string, set []string) (map[string]any, error) {
	vals := map[string]any{}
	for _, f := range files {
		v, err := chartutil.ReadValuesFile(filepath.Join(chartDir(), f))
		if err != nil {
			return nil, fmt.Errorf("values %s: %w", f, err)
		}
		vals = mergeValues(vals, v.AsMap())
	}
	for _, s := range set {
		if err := strvals.ParseInto(s, vals); err != nil {
			return nil, fmt.Errorf("--set %s: %w", s, err)
		}
	}
	return vals, nil
}

// mergeValues merges src into dst, maps recursively, as helm merges values
// files given one after another.
func mergeValues(dst, src map[string]any) map[string]any {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				dst[k] = mergeValues(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
	return dst
}

// helmLint is `helm lint --strict` of the chart in dir: any warning or error fails.
func helmLint(dir string, vals map[string]any) error {
	linter := lint.All(dir, vals, "agents", false)
	var problems []string
	for _, m := range linter.Messages {
		if m.Severity >= support.WarningSev {
			problems = append(problems, m.Error())
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("helm lint --strict:\n%s", strings.Join(problems, "\n"))
	}
	return nil
}

// helmRenderFiles renders the chart's templates as `helm template rel DIR
// --namespace agents` does, by template path (NOTES.txt included).
func helmRenderFiles(dir string, vals map[string]any) (map[string]string, error) {
	ch, err := loader.Load(dir)
	if err != nil {
		return nil, err
	}
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "rel", Namespace: "agents", Revision: 1, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	return engine.Render(ch, rv)
}

// helmRender is `helm template rel DIR --namespace agents`: the release's
// manifests, in install order, as one multi-document stream.
func helmRender(dir string, vals map[string]any) ([]byte, error) {
	caps := chartutil.DefaultCapabilities
	files, err := helmRenderFiles(dir, vals)
	if err != nil {
		return nil, err
	}
	for name := range files {
		if strings.HasSuffix(name, "/NOTES.txt") { // shown after install, not a manifest
			delete(files, name)
		}
	}
	_, manifests, err := releaseutil.SortManifests(files, caps.APIVersions, releaseutil.InstallOrder)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, m := range manifests {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", m.Name, m.Content)
	}
	return []byte(b.String()), nil
}

// helmTemplate lints the chart with the values files (strictly) and renders
// it, every object decoded strictly.
func helmTemplate(t *testing.T, values ...string) *rendered {
	t.Helper()
	return helmTemplateSet(t, values, nil)
}

// helmTemplateSet is helmTemplate with --set assignments after the files.
func helmTemplateSet(t *testing.T, values, set []string) *rendered {
	t.Helper()
	vals, err := chartValues(values, set)
	if err != nil {
		t.Fatal(err)
	}
	if err := helmLint(chartDir(), vals); err != nil {
		t.Fatalf("%v %v: %v", values, set, err)
	}
	out, err := helmRender(chartDir(), vals)
	if err != nil {
		t.Fatalf("helm template %v %v: %v", values, set, err)
	}
	r, err := decodeManifests(out)
	if err != nil {
		t.Fatalf("helm template %v %v: %v", values, set, err)
	}
	return r
}

// helmNotes renders the chart's NOTES.txt with --set assignments.
func helmNotes(t *testing.T, set ...string) string {
	t.Helper()
	vals, err := chartValues(nil, set)
	if err != nil {
		t.Fatal(err)
	}
	files, err := helmRenderFiles(chartDir(), vals)
	if err != nil {
		t.Fatalf("helm template %v: %v", set, err)
	}
	for name, content := range files {
		if strings.HasSuffix(name, "/NOTES.txt") {
			return content
		}
	}
	t.Fatal("the chart has no NOTES.txt")
	return ""
}

// helmTemplateFails renders with --set assignments and returns the error.
func helmTemplateFails(t *testing.T, set ...string) string {
	t.Helper()
	vals, err := chartValues(nil, set)
	if err != nil {
		t.Fatal(err)
	}
	out, err := helmRender(chartDir(), vals)
	if err == nil {
		t.Fatalf("helm template %v succeeded:\n%s", set, out)
	}
	return err.Error()
}

// TestHelmLintCatchesProblems: the in-process lint is strict, as the CLI's
// --strict is; a chart with a broken template fails it.
func TestHelmLintCatchesProblems(t *testing.T) {
	if err := helmLint(chartDir(), map[string]any{}); err != nil {
		t.Fatalf("the chart does not lint: %v", err)
	}
	broken := t.TempDir()
	if err := os.CopyFS(broken, os.DirFS(chartDir())); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "templates", "service.yaml"), []byte("{{ .Values.nope.deeper }}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := helmLint(broken, map[string]any{})
	if err == nil || !strings.Contains(err.Error(), "service.yaml") {
		t.Fatalf("a broken template passed lint: %v", err)
	}
}
