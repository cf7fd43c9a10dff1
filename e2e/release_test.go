package e2e

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/goreleaser/goreleaser/v2/pkg/config"
)

// The release check. goreleaser.yaml is loaded with GoReleaser's own config
// package at the version pinned in go.mod (strict: an unknown or misspelt key
// fails, as `goreleaser check` does; a deprecated key fails too), and then
// the snapshot release it describes is built: every goos/goarch of every
// build with the build's env, flags and ldflags, an archive per target named
// by the archive's name_template holding the binary and the listed files, and
// checksums.txt. What is checked is what a user downloads: four archives, each
// with a boris binary, checksums that verify, a static linux binary that
// reports the version. Publishing and the images (a registry, buildx) are out
// of reach here; `make release` runs the real GoReleaser for a tagged release.

// loadReleaseConfig reads goreleaser.yaml as the pinned GoReleaser would.
func loadReleaseConfig(data []byte) (config.Project, error) {
	p, err := config.LoadReader(bytes.NewReader(data))
	if err != nil {
		return p, err
	}
	if p.Version != 2 {
		return p, fmt.Errorf("version: %d, GoReleaser v2 reads version: 2", p.Version)
	}
	if dep := deprecatedFields(reflect.ValueOf(p), "config"); len(dep) > 0 {
		return p, fmt.Errorf("deprecated keys set: %s", strings.Join(dep, ", "))
	}
	return p, nil
}

// deprecatedFields lists the set fields whose schema tag marks them
// deprecated, as `goreleaser check` warns about them.
func deprecatedFields(v reflect.Value, path string) []string {
	var out []string
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			out = append(out, deprecatedFields(v.Elem(), path)...)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			out = append(out, deprecatedFields(v.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name := path + "." + strings.Split(f.Tag.Get("yaml"), ",")[0]
			if strings.Contains(f.Tag.Get("jsonschema"), "deprecated=true") && !v.Field(i).IsZero() {
				out = append(out, name)
				continue
			}
			out = append(out, deprecatedFields(v.Field(i), name)...)
		}
	}
	return out
}

func TestReleaseConfigIsStrict(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(repoRoot, "goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := loadReleaseConfig(good); err != nil {
		t.Fatalf("goreleaser.yaml: %v", err)
	}
	for name, bad := range map[string]string{
		"misspelt key": strings.Replace(string(good), "name_template: checksums.txt", "name_templat: checksums.txt", 1),
		"deprecated":   strings.Replace(string(good), "formats: [tar.gz]", "format: tar.gz", 1),
		"version 1":    strings.Replace(string(good), "version: 2", "version: 1", 1),
	} {
		if bad == string(good) {
			t.Fatalf("%s: the replacement did not apply", name)
		}
		if _, err := loadReleaseConfig([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// releaseTemplate renders a GoReleaser name template; a field the data does
// not have is an error, not an empty string.
func releaseTemplate(text string, data map[string]string) (string, error) {
	tmpl, err := template.New("").Option("missingkey=error").Funcs(template.FuncMap{
		"envOrDefault": func(name, def string) string {
			if v, ok := os.LookupEnv(name); ok {
				return v
			}
			return def
		},
	}).Parse(text)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// snapshotVars are the template fields of a snapshot release of HEAD.
func snapshotVars(t *testing.T, project string) map[string]string {
	t.Helper()
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", repoRoot}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	short := git("rev-parse", "--short", "HEAD")
	return map[string]string{
		"ProjectName":     project,
		"Version":         "0.0.0-SNAPSHOT-" + short,
		"ShortCommit":     short,
		"FullCommit":      git("rev-parse", "HEAD"),
		"CommitTimestamp": git("log", "-1", "--format=%ct"),
	}
}

type releaseTarget struct{ goos, goarch string }

func TestRelease(t *testing.T) {
	t.Parallel() // builds four targets: overlap with the container tests
	raw, err := os.ReadFile(filepath.Join(repoRoot, "goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := loadReleaseConfig(raw)
	if err != nil {
		t.Fatalf("goreleaser.yaml: %v", err)
	}
	vars := snapshotVars(t, p.ProjectName)
	dist := t.TempDir()

	// Builds: path of the binary per build id and target.
	binaries := map[string]map[releaseTarget]string{}
	for _, b := range p.Builds {
		ldflags, err := releaseTemplate(strings.Join(b.Ldflags, " "), vars)
		if err != nil {
			t.Fatalf("build %s ldflags: %v", b.ID, err)
		}
		mtime, err := releaseTemplate(b.ModTimestamp, vars)
		if err != nil {
			t.Fatalf("build %s mod_timestamp: %v", b.ID, err)
		}
		binaries[b.ID] = map[releaseTarget]string{}
		for _, goos := range b.Goos {
			for _, goarch := range b.Goarch {
				if slices.ContainsFunc(b.Ignore, func(ig config.IgnoredBuild) bool { return ig.Goos == goos && ig.Goarch == goarch }) {
					continue
				}
				out := filepath.Join(dist, b.ID+"_"+goos+"_"+goarch, b.Binary)
				args := append([]string{"build"}, b.Flags...)
				args = append(args, "-ldflags", ldflags, "-o", out, b.Main)
				cmd := exec.Command("go", args...)
				cmd.Dir = filepath.Join(repoRoot, b.Dir)
				cmd.Env = append(append(os.Environ(), b.Env...), "GOOS="+goos, "GOARCH="+goarch)
				if msg, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("go %v (%s/%s): %v\n%s", args, goos, goarch, err, msg)
				}
				if mtime != "" {
					sec, err := strconv.ParseInt(mtime, 10, 64)
					if err != nil {
						t.Fatalf("mod_timestamp %q: %v", mtime, err)
					}
					if err := os.Chtimes(out, time.Unix(sec, 0), time.Unix(sec, 0)); err != nil {
						t.Fatal(err)
					}
				}
				binaries[b.ID][releaseTarget{goos, goarch}] = out
			}
		}
	}

	// Archives and checksums.
	var archives []string
	for _, a := range p.Archives {
		if !slices.Equal(a.Formats, []string{"tar.gz"}) {
			t.Fatalf("archive %s: formats %v; this check writes tar.gz only", a.ID, a.Formats)
		}
		for _, id := range a.IDs {
			for target, bin := range binaries[id] {
				v := map[string]string{"Os": target.goos, "Arch": target.goarch}
				for k, s := range vars {
					v[k] = s
				}
				name, err := releaseTemplate(a.NameTemplate, v)
				if err != nil {
					t.Fatalf("archive %s name_template: %v", a.ID, err)
				}
				files := []string{bin}
				for _, f := range a.Files {
					files = append(files, filepath.Join(repoRoot, f.Source))
				}
				archive := name + ".tar.gz"
				if err := writeTarGz(filepath.Join(dist, archive), files); err != nil {
					t.Fatal(err)
				}
				archives = append(archives, archive)
			}
		}
	}
	slices.Sort(archives)
	checksums, err := releaseTemplate(p.Checksum.NameTemplate, vars)
	if err != nil {
		t.Fatal(err)
	}
	if p.Checksum.Algorithm != "sha256" {
		t.Fatalf("checksum algorithm %q, want sha256", p.Checksum.Algorithm)
	}
	var sums strings.Builder
	for _, a := range archives {
		data, err := os.ReadFile(filepath.Join(dist, a))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sums, "%x  %s\n", sha256.Sum256(data), a)
	}
	if err := os.WriteFile(filepath.Join(dist, checksums), []byte(sums.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	// What a user downloads.
	version := vars["Version"]
	var want []string
	for _, target := range []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64"} {
		want = append(want, fmt.Sprintf("boris_%s_%s.tar.gz", version, target))
	}
	slices.Sort(want)
	if !slices.Equal(archives, want) {
		t.Fatalf("archives %v, want %v", archives, want)
	}
	verifyChecksums(t, dist, checksums, want)
	for _, a := range archives {
		names := tarNames(t, filepath.Join(dist, a))
		for _, n := range []string{"boris", "README.md", "deploy.md"} {
			if !slices.Contains(names, n) {
				t.Errorf("%s holds %v, no %s", a, names, n)
			}
		}
	}
	linux := filepath.Join(t.TempDir(), "boris")
	extractTarFile(t, filepath.Join(dist, fmt.Sprintf("boris_%s_linux_amd64.tar.gz", version)), "boris", linux)
	f, err := elf.Open(linux)
	if err != nil {
		t.Fatal(err)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP || prog.Type == elf.PT_DYNAMIC {
			t.Errorf("the linux binary is not static: it has %v", prog.Type)
		}
	}
	f.Close()
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		out, err := exec.Command(linux, "--version").CombinedOutput()
		if err != nil || !strings.Contains(string(out), version) {
			t.Fatalf("boris --version: %q, %v; want %s", out, err, version)
		}
	}
}

// writeTarGz writes files (flat, by base name) into a gzipped tar, keeping
// each file's mode and modification time.
func writeTarGz(path string, files []string) (err error) {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	gz := gzip.NewWriter(out)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(fi, "")
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// verifyChecksums is `sha256sum --check --strict`: exactly the wanted files,
// each line well formed and matching.
func verifyChecksums(t *testing.T, dir, name string, want []string) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var listed []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, file, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("%s: malformed line %q", name, sc.Text())
		}
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		got := sha256.Sum256(data)
		if hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: %s does not match", name, file)
		}
		listed = append(listed, file)
	}
	slices.Sort(listed)
	if !slices.Equal(listed, want) {
		t.Errorf("%s lists %v, want %v", name, listed, want)
	}
}

// tarNames lists a gzipped tar's entries.
func tarNames(t *testing.T, path string) []string {
	t.Helper()
	var names []string
	walkTarGz(t, path, func(h *tar.Header, _ io.Reader) { names = append(names, h.Name) })
	return names
}

// extractTarFile writes one entry of a gzipped tar to dst.
func extractTarFile(t *testing.T, path, name, dst string) {
	t.Helper()
	found := false
	walkTarGz(t, path, func(h *tar.Header, r io.Reader) {
		if h.Name != name {
			return
		}
		data, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o755); err != nil {
			t.Fatal(err)
		}
		found = true
	})
	if !found {
		t.Fatalf("%s holds no %s", path, name)
	}
}

func walkTarGz(t *testing.T, path string, fn func(*tar.Header, io.Reader)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		fn(h, tr)
	}
}
