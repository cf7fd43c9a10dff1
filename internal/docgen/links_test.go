package docgen

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSlug(t *testing.T) {
	for _, c := range []struct{ heading, want string }{
		{"Connecting a client", "connecting-a-client"},
		{"Claude (`--anthropic-compat`)", "claude---anthropic-compat"},
		{"Traces (OpenTelemetry)", "traces-opentelemetry"},
		{"boris's tools (default)", "boriss-tools-default"},
		{"One agent cannot hurt another, or boris: the command guard", "one-agent-cannot-hurt-another-or-boris-the-command-guard"},
		{"task_output and [links](x.md)", "task_output-and-links"},
		{"Ünïcode stays", "ünïcode-stays"},
	} {
		if got := Slug(c.heading); got != c.want {
			t.Errorf("Slug(%q) = %q, want %q", c.heading, got, c.want)
		}
	}
}

func TestAnchorsNumberDuplicatesAndSkipFences(t *testing.T) {
	doc := "# Title\n## Usage\n```sh\n# not a heading\n```\n## Usage\n### Usage\n<a name=\"custom\"></a>\n"
	got := Anchors(doc)
	for _, want := range []string{"title", "usage", "usage-1", "usage-2", "custom"} {
		if !got[want] {
			t.Errorf("anchor %q missing from %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("a comment in a code fence was taken for a heading")
	}
}

func TestCheckLinksFindsBrokenOnes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# Top\n[ok](docs/a.md#part-two) [gone](docs/missing.md) [bad](docs/a.md#nope) [self](#top) [selfbad](#x)\n`[code](nowhere.md)` [web](https://example.com/x)\n```\n[fenced](nowhere.md)\n```\n")
	write("docs/a.md", "# A\n## Part two\n[up](../README.md#top)\n")
	problems, err := CheckLinks(dir, []string{"README.md", "docs/a.md"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"docs/missing.md", "#nope", "#x"}
	if len(problems) != len(want) {
		t.Fatalf("problems = %q, want %d naming %q", problems, len(want), want)
	}
	for i, w := range want {
		if !strings.Contains(problems[i], w) {
			t.Errorf("problem %d = %q, want it to name %q", i, problems[i], w)
		}
	}
}

// TestDocLinks checks every relative link and anchor of README.md,
// SECURITY.md and docs/*.md.
func TestDocLinks(t *testing.T) {
	files := []string{"README.md", "SECURITY.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		files = append(files, "docs/"+filepath.Base(d))
	}
	slices.Sort(files[2:])
	if len(files) < 6 {
		t.Fatalf("found only %v", files)
	}
	problems, err := CheckLinks(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}
