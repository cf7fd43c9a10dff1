package files

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/patch"
	"github.com/boris-mcp/boris/internal/scope"
	"golang.org/x/sys/unix"
)

type viewedSet struct {
	mu sync.Mutex
	m  map[string]Stamp
}

func (v *viewedSet) MarkViewed(p string, st Stamp) { v.mu.Lock(); v.m[p] = st; v.mu.Unlock() }
func (v *viewedSet) ViewedStamp(p string) (Stamp, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	st, ok := v.m[p]
	return st, ok
}

func (v *viewedSet) has(p string) bool { _, ok := v.ViewedStamp(p); return ok }

// see records p as viewed as it is now, as a view of it would.
func (v *viewedSet) see(t testing.TB, p string) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	v.MarkViewed(p, StampOf(fi))
}

type fixture struct {
	dir    string
	svc    *Service
	viewed *viewedSet
	c      Ctx
}

func newFixture(t testing.TB, allow bool, deny ...string) *fixture {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var allowDirs []string
	if allow {
		allowDirs = []string{dir}
	}
	pol, err := scope.New(allowDirs, deny, dir)
	if err != nil {
		t.Fatal(err)
	}
	v := &viewedSet{m: map[string]Stamp{}}
	return &fixture{
		dir:    dir,
		svc:    New(Options{Policy: pol, MaxFileSize: 1 << 20, RequireViewBeforeEdit: true}),
		viewed: v,
		c:      Ctx{Cwd: dir, Viewed: v},
	}
}

func (f *fixture) write(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(f.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func (f *fixture) read(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantCode(t testing.TB, err error, code codes.Code, contains ...string) {
	t.Helper()
	e, ok := codes.As(err)
	if !ok || e.Code != code {
		t.Fatalf("got error %v, want code %s", err, code)
	}
	for _, c := range contains {
		if !strings.Contains(e.Message, c) {
			t.Fatalf("message %q does not mention %q", e.Message, c)
		}
	}
}

// borisLimits are the default mode's view limits.
func borisLimits(rng *Range) ViewLimits {
	lim := ViewLimits{MaxLineChars: 2000, Hidden: true}
	if rng == nil {
		lim.MaxLines = 2000
	}
	return lim
}

// shown returns a view's lines, each as "N:text" (with "/full" when the
// line was cut), to compare with want.
func shown(res *ViewResult) []string {
	var out []string
	for i := 0; i < res.Lines.Len(); i++ {
		text, chars := res.Lines.Line(i)
		l := fmt.Sprintf("%d:%s", res.Lines.Start+i, text)
		if chars != len([]rune(string(text))) {
			l += fmt.Sprintf("/%d", chars)
		}
		out = append(out, l)
	}
	return out
}

func TestViewText(t *testing.T) {
	f := newFixture(t, true)
	f.write(t, "five.txt", "one\ntwo\n\nfour\nfive\n")
	f.write(t, "noeol.txt", "a\nb")
	f.write(t, "crlf.txt", "x\r\ny\r\n")
	f.write(t, "empty.txt", "")
	long := strings.Repeat("é", 2500)
	f.write(t, "long.txt", long+"\nshort\n")
	tests := []struct {
		name  string
		path  string
		rng   *Range
		lim   ViewLimits
		want  []string
		total int
		more  bool
	}{
		{"whole file", "five.txt", nil, borisLimits(nil), []string{"1:one", "2:two", "3:", "4:four", "5:five"}, 5, false},
		{"no final newline", "noeol.txt", nil, borisLimits(nil), []string{"1:a", "2:b"}, 2, false},
		{"crlf shown without \\r", "crlf.txt", nil, borisLimits(nil), []string{"1:x", "2:y"}, 2, false},
		{"range", "five.txt", &Range{2, 3}, borisLimits(nil), []string{"2:two", "3:"}, 5, false},
		{"range to end", "five.txt", &Range{4, -1}, borisLimits(nil), []string{"4:four", "5:five"}, 5, false},
		{"end clamped", "five.txt", &Range{5, 99}, borisLimits(nil), []string{"5:five"}, 5, false},
		{"long line cut", "long.txt", nil, borisLimits(nil), []string{"1:" + strings.Repeat("é", 2000) + "/2500", "2:short"}, 2, false},
		{"max lines", "five.txt", nil, ViewLimits{MaxLines: 2}, []string{"1:one", "2:two"}, 5, true},
		// The newline-split count: an empty line after the final newline.
		{"split", "five.txt", nil, ViewLimits{SplitLines: true}, []string{"1:one", "2:two", "3:", "4:four", "5:five", "6:"}, 6, false},
		{"split range names the last empty line", "five.txt", &Range{6, 6}, ViewLimits{SplitLines: true}, []string{"6:"}, 6, false},
		{"split without final newline", "noeol.txt", nil, ViewLimits{SplitLines: true}, []string{"1:a", "2:b"}, 2, false},
		{"split empty file", "empty.txt", nil, ViewLimits{SplitLines: true}, []string{"1:"}, 1, false},
		// MaxChars keeps the line that crosses the limit to one character past it.
		{"max chars", "five.txt", nil, ViewLimits{SplitLines: true, MaxChars: 9}, []string{"1:one", "2:two", "3:", "4:f/4"}, 6, true},
		{"max chars cuts a line", "five.txt", nil, ViewLimits{MaxChars: 5}, []string{"1:one", "2:tw/3"}, 5, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := f.svc.View(f.c, tt.path, tt.rng, tt.lim)
			if err != nil {
				t.Fatal(err)
			}
			if got := shown(res); strings.Join(got, "|") != strings.Join(tt.want, "|") || res.Lines.Total != tt.total || res.Lines.More != tt.more {
				t.Fatalf("got %q total %d more %v, want %q total %d more %v", got, res.Lines.Total, res.Lines.More, tt.want, tt.total, tt.more)
			}
		})
	}
	res, err := f.svc.View(f.c, "empty.txt", nil, borisLimits(nil))
	if err != nil || res.Kind != ViewEmpty || res.Lines.Len() != 0 {
		t.Fatalf("empty file: %v %+v", err, res)
	}
	for _, rng := range []Range{{0, 2}, {3, 2}, {6, 9}, {-1, -1}} {
		_, err := f.svc.View(f.c, "five.txt", &rng, borisLimits(&rng))
		wantCode(t, err, codes.InvalidInput)
		e, _ := codes.As(err)
		if fact, ok := e.Fact.(FactRange); !ok || fact.Lines != 5 || fact.Range != rng {
			t.Fatalf("%v: fact %#v", rng, e.Fact)
		}
		if rng.Start == 6 {
			wantCode(t, err, codes.InvalidInput, "5 lines")
		}
	}
	// The split count has a sixth line; a seventh is past the end.
	_, err = f.svc.View(f.c, "five.txt", &Range{7, 7}, ViewLimits{SplitLines: true})
	wantCode(t, err, codes.InvalidInput, "6 lines")
}

func TestViewManyLines(t *testing.T) {
	f := newFixture(t, true)
	var b strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	f.write(t, "big.txt", b.String())
	res, err := f.svc.View(f.c, "big.txt", nil, borisLimits(nil))
	if err != nil {
		t.Fatal(err)
	}
	got := shown(res)
	if len(got) != 2000 || got[1999] != "2000:line 2000" || !res.Lines.More || res.Lines.Total != 2500 {
		t.Fatalf("%d lines, last %q, more %v, total %d", len(got), got[len(got)-1], res.Lines.More, res.Lines.Total)
	}
	rng := &Range{2400, -1}
	res, err = f.svc.View(f.c, "big.txt", rng, borisLimits(rng))
	if got := shown(res); err != nil || len(got) != 101 || got[0] != "2400:line 2400" || got[100] != "2500:line 2500" {
		t.Fatalf("range view: %v %q", err, got)
	}
}

func TestViewBinaryImageAndLimits(t *testing.T) {
	f := newFixture(t, true)
	var pngBuf bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{255, 0, 0, 255})
	if err := png.Encode(&pngBuf, img); err != nil {
		t.Fatal(err)
	}
	f.write(t, "pic.dat", pngBuf.String()) // sniffed, not by extension
	f.write(t, "logo.svg", `<svg xmlns="http://www.w3.org/2000/svg"/>`)
	f.write(t, "blob.bin", "abc\x00def")
	f.write(t, "huge.txt", strings.Repeat("x", 2<<20))

	res, err := f.svc.View(f.c, "pic.dat", nil, borisLimits(nil))
	if err != nil || res.Kind != ViewImage || res.MIMEType != "image/png" || !bytes.Equal(res.Image, pngBuf.Bytes()) {
		t.Fatalf("png: %v %q", err, res.MIMEType)
	}
	res, err = f.svc.View(f.c, "logo.svg", nil, borisLimits(nil))
	if err != nil || res.MIMEType != "image/svg+xml" {
		t.Fatalf("svg: %v %+v", err, res)
	}
	res, err = f.svc.View(f.c, "blob.bin", nil, borisLimits(nil))
	if err != nil || res.Kind != ViewBinary || res.Size != 7 || res.Path != filepath.Join(f.dir, "blob.bin") {
		t.Fatalf("binary: %v %+v", err, res)
	}
	_, err = f.svc.View(f.c, "huge.txt", nil, borisLimits(nil))
	wantCode(t, err, codes.FileTooLarge, "2.0 MB", "1.0 MB")
	_, err = f.svc.View(f.c, "missing.txt", nil, borisLimits(nil))
	wantCode(t, err, codes.PathNotFound)
	f.write(t, "Readme.md", "x")
	_, err = f.svc.View(f.c, "readme.md", nil, borisLimits(nil))
	wantCode(t, err, codes.PathNotFound, "Readme.md")
	if e, _ := codes.As(err); e.Fact.(FactMissing).Suggest == "" {
		t.Fatalf("no suggestion in the fact: %#v", e.Fact)
	}
}

func TestViewDirectory(t *testing.T) {
	f := newFixture(t, true, "**/secret.txt")
	for _, p := range []string{"src/main.go", "src/pkg/deep/x.go", ".github/ci.yml", ".git/HEAD", "node_modules/m/i.js", "README.md", "secret.txt"} {
		f.write(t, p, "x")
	}
	if err := os.Symlink("src/main.go", filepath.Join(f.dir, "link")); err != nil {
		t.Fatal(err)
	}
	list := func(res *ViewResult) string {
		var out []string
		for _, e := range res.Dir.Entries {
			switch {
			case e.Symlink:
				out = append(out, e.Rel+" -> "+e.Target)
			case e.Dir:
				out = append(out, e.Rel+"/")
			default:
				out = append(out, e.Rel)
			}
		}
		return strings.Join(out, "\n")
	}
	res, err := f.svc.View(f.c, ".", nil, borisLimits(nil))
	if err != nil || res.Kind != ViewDir {
		t.Fatal(err)
	}
	want := strings.Join([]string{".github/", ".github/ci.yml", "README.md", "link -> src/main.go", "src/", "src/main.go", "src/pkg/"}, "\n")
	if got := list(res); got != want {
		t.Fatalf("listing:\n%s\nwant:\n%s", got, want)
	}
	res, err = f.svc.View(f.c, ".", nil, ViewLimits{})
	if want := strings.Join([]string{"README.md", "link -> src/main.go", "src/", "src/main.go", "src/pkg/"}, "\n"); err != nil || list(res) != want {
		t.Fatalf("without hidden entries:\n%s", list(res))
	}
	_, err = f.svc.View(f.c, ".", &Range{1, 2}, borisLimits(nil))
	wantCode(t, err, codes.InvalidInput, "directory")
	if len(f.viewed.m) != 0 {
		t.Fatal("a directory listing marked files viewed")
	}
}

func TestViewMarksResolvedPath(t *testing.T) {
	f := newFixture(t, true)
	real := f.write(t, "real.txt", "x\n")
	if err := os.Symlink("real.txt", filepath.Join(f.dir, "alias.txt")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.View(f.c, "missing", nil, borisLimits(nil)); err == nil || len(f.viewed.m) != 0 {
		t.Fatal("a failed view marked something")
	}
	if _, err := f.svc.View(f.c, "alias.txt", nil, borisLimits(nil)); err != nil {
		t.Fatal(err)
	}
	if !f.viewed.has(real) {
		t.Fatalf("viewed set %v lacks %s", f.viewed.m, real)
	}
	// So editing through the real name works without another view.
	if _, err := f.svc.StrReplace(f.c, "real.txt", "x", "y", false); err != nil {
		t.Fatal(err)
	}
}

func TestStrReplace(t *testing.T) {
	f := newFixture(t, true)
	p := f.write(t, "a.go", "package a\n\nfunc A() {\n\treturn\n}\n\nfunc B() {\n\treturn\n}\n")

	_, err := f.svc.StrReplace(f.c, "a.go", "func A", "func AA", false)
	wantCode(t, err, codes.FileNotViewed, "view")
	if _, err := f.svc.View(f.c, "a.go", nil, borisLimits(nil)); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	out, err := f.svc.StrReplace(f.c, "a.go", "func A()", "func Alpha()", false)
	if err != nil {
		t.Fatal(err)
	}
	if out.Line != 3 || out.Count != 1 || out.Content != f.read(t, "a.go") || !strings.Contains(out.Content, "func Alpha() {\n") || out.Path != p {
		t.Fatalf("result: %+v", out)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode changed to %v", fi.Mode().Perm())
	}

	_, err = f.svc.StrReplace(f.c, "a.go", "\treturn\n", "\treturn nil\n", false)
	wantCode(t, err, codes.StrReplaceAmbiguous, "2 times", "lines 4, 8", "replace_all")
	if e, _ := codes.As(err); fmt.Sprint(e.Fact.(FactAmbiguous).SameLine) != "[]" || e.Fact.(FactAmbiguous).Count != 2 {
		t.Fatalf("fact %#v", e.Fact) // old_str spans lines: no single line holds it
	}
	_, err = f.svc.StrReplace(f.c, "a.go", "\treturn", "\treturn nil", false)
	if e, _ := codes.As(err); fmt.Sprint(e.Fact.(FactAmbiguous).SameLine) != "[4 8]" {
		t.Fatalf("fact %#v", e.Fact)
	}
	out, err = f.svc.StrReplace(f.c, "a.go", "\treturn\n", "\treturn nil\n", true)
	if err != nil || out.Count != 2 || out.Line != 4 {
		t.Fatalf("replace_all: %v %+v", err, out)
	}
	if got := f.read(t, "a.go"); strings.Count(got, "return nil") != 2 {
		t.Fatalf("content %q", got)
	}

	_, err = f.svc.StrReplace(f.c, "a.go", "func  Alpha()  {", "x", false)
	wantCode(t, err, codes.StrReplaceNotFound, "line 3", "func Alpha() {")
	if e, _ := codes.As(err); !strings.Contains(e.Fact.(FactNoMatch).Near, "line 3") || e.Fact.(FactNoMatch).Old != "func  Alpha()  {" {
		t.Fatalf("fact %#v", e.Fact)
	}
	_, err = f.svc.StrReplace(f.c, "a.go", "absent", "x", true)
	wantCode(t, err, codes.StrReplaceNotFound)
	_, err = f.svc.StrReplace(f.c, "a.go", "same", "same", false)
	wantCode(t, err, codes.InvalidInput)
	_, err = f.svc.StrReplace(f.c, "a.go", "", "x", false)
	wantCode(t, err, codes.InvalidInput)
	_, err = f.svc.StrReplace(f.c, "nope.go", "a", "b", false)
	wantCode(t, err, codes.PathNotFound, "create_file")

	// Deleting: new_str empty.
	if _, err := f.svc.StrReplace(f.c, "a.go", "\nfunc B() {\n\treturn nil\n}\n", "", false); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, "a.go"); strings.Contains(got, "func B") {
		t.Fatalf("not deleted: %q", got)
	}
}

func TestStrReplaceKeepsCRLF(t *testing.T) {
	f := newFixture(t, false)
	f.write(t, "w.txt", "one\r\ntwo\r\nthree\r\n")
	if _, err := f.svc.View(f.c, "w.txt", nil, borisLimits(nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.StrReplace(f.c, "w.txt", "one\ntwo\n", "1\n2\n2.5\n", false); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, "w.txt"); got != "1\r\n2\r\n2.5\r\nthree\r\n" {
		t.Fatalf("got %q", got)
	}
	if _, err := f.svc.Insert(f.c, "w.txt", 0, "top\nnext"); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, "w.txt"); got != "top\r\nnext\r\n1\r\n2\r\n2.5\r\nthree\r\n" {
		t.Fatalf("after insert %q", got)
	}
}

func TestCreate(t *testing.T) {
	f := newFixture(t, true)
	out, err := f.svc.Create(f.c, "new/dir/file.txt", "hello\n")
	if err != nil || out.Existed || out.Size != 6 || out.Path != filepath.Join(f.dir, "new/dir/file.txt") {
		t.Fatalf("%v %+v", err, out)
	}
	fi, _ := os.Stat(filepath.Join(f.dir, "new/dir/file.txt"))
	di, _ := os.Stat(filepath.Join(f.dir, "new/dir"))
	if fi.Mode().Perm() != 0o644 || di.Mode().Perm()&0o700 != 0o700 {
		t.Fatalf("modes %v %v", fi.Mode(), di.Mode())
	}
	// Created by this session: counts as viewed.
	if out, err := f.svc.Create(f.c, "new/dir/file.txt", "again\n"); err != nil || !out.Existed {
		t.Fatalf("%v %+v", err, out)
	}
	p := f.write(t, "existing.sh", "#!/bin/sh\n")
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.Create(f.c, "existing.sh", "x")
	wantCode(t, err, codes.FileNotViewed)
	if e, _ := codes.As(err); e.Fact != (FactOverwriteUnviewed{Path: p}) {
		t.Fatalf("fact %#v", e.Fact)
	}
	f.viewed.see(t, p)
	if _, err := f.svc.Create(f.c, "existing.sh", "#!/bin/sh\necho hi\n"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o755 {
		t.Fatalf("mode %v", fi.Mode().Perm())
	}
	_, err = f.svc.Create(f.c, "toolarge.txt", strings.Repeat("x", 1<<20+1))
	wantCode(t, err, codes.FileTooLarge)
	if _, err := os.Stat(filepath.Join(f.dir, "toolarge.txt")); err == nil {
		t.Fatal("a too-large file was written")
	}
	_, err = f.svc.Create(f.c, "new", "x")
	wantCode(t, err, codes.InvalidInput, "directory")
	_, err = f.svc.Create(f.c, "/etc/boris-test", "x")
	wantCode(t, err, codes.AccessDenied)
}

// TestInsert: lines are the newline-split of the file (so a file ending in
// a newline has an empty last line), and the text becomes lines of its own.
func TestInsert(t *testing.T) {
	f := newFixture(t, true)
	f.write(t, "f.txt", "a\nb")
	f.write(t, "g.txt", "a\nb\n")
	f.viewed.see(t, filepath.Join(f.dir, "f.txt"))
	f.viewed.see(t, filepath.Join(f.dir, "g.txt"))
	tests := []struct {
		file  string
		after int
		text  string
		want  string
		lines int
	}{
		{"f.txt", 0, "top", "top\na\nb", 1},
		{"f.txt", 1, "mid\n", "top\nmid\n\na\nb", 2},
		{"f.txt", 5, "end", "top\nmid\n\na\nb\nend", 1},
		{"f.txt", 6, "", "top\nmid\n\na\nb\nend\n", 1},
		{"g.txt", 2, "c", "a\nb\nc\n", 1},
		{"g.txt", 4, "d", "a\nb\nc\n\nd", 1},
	}
	for _, tt := range tests {
		res, err := f.svc.Insert(f.c, tt.file, tt.after, tt.text)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.read(t, tt.file); got != tt.want || res.Content != got || res.After != tt.after || res.Lines != tt.lines {
			t.Fatalf("%s after %d: got %q %+v, want %q", tt.file, tt.after, got, res, tt.want)
		}
	}
	_, err := f.svc.Insert(f.c, "f.txt", 9, "x")
	wantCode(t, err, codes.InvalidInput, "has 7 lines")
	if e, _ := codes.As(err); e.Fact != (FactInsertLine{Path: filepath.Join(f.dir, "f.txt"), Line: 9, Max: 7}) {
		t.Fatalf("fact %#v", e.Fact)
	}
	_, err = f.svc.Insert(f.c, "f.txt", -1, "x")
	wantCode(t, err, codes.InvalidInput)
	_, err = f.svc.Insert(f.c, "none.txt", 0, "x")
	wantCode(t, err, codes.PathNotFound)
}

func TestDenied(t *testing.T) {
	f := newFixture(t, true, "**/.env")
	f.write(t, ".env", "TOKEN=secret")
	if err := os.Symlink(".env", filepath.Join(f.dir, "harmless")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".env", "harmless", "/etc/passwd", "../../etc/passwd"} {
		_, err := f.svc.View(f.c, p, nil, borisLimits(nil))
		wantCode(t, err, codes.AccessDenied)
		_, err = f.svc.Create(f.c, p, "x")
		wantCode(t, err, codes.AccessDenied)
		_, err = f.svc.StrReplace(f.c, p, "a", "b", false)
		wantCode(t, err, codes.AccessDenied)
	}
	if got := f.read(t, ".env"); got != "TOKEN=secret" {
		t.Fatalf(".env changed: %q", got)
	}
}

// A reader racing str_replace sees the old content or the new one, never a
// mix or an empty file.
func TestReaderNeverSeesPartialWrite(t *testing.T) {
	f := newFixture(t, true)
	a := strings.Repeat("A", 256<<10)
	b := strings.Repeat("B", 256<<10)
	p := f.write(t, "big.txt", a)
	f.viewed.see(t, p)
	var stop atomic.Bool
	var bad atomic.Value
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for !stop.Load() {
				got, err := os.ReadFile(p)
				if err != nil {
					bad.Store(err.Error())
					return
				}
				if s := string(got); s != a && s != b {
					bad.Store(fmt.Sprintf("read %d bytes of mixed content", len(got)))
					return
				}
			}
		})
	}
	cur, next := a, b
	for range 200 {
		if _, err := f.svc.StrReplace(f.c, "big.txt", cur, next, false); err != nil {
			t.Fatal(err)
		}
		cur, next = next, cur
	}
	stop.Store(true)
	wg.Wait()
	if v := bad.Load(); v != nil {
		t.Fatal(v)
	}
}

// Swapping a directory for a symlink to the outside while view and create
// run never yields outside content or writes outside.
func TestSymlinkSwapNeverEscapes(t *testing.T) {
	f := newFixture(t, true)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("OUTSIDE"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(f.dir, "d")
	swap := filepath.Join(f.dir, "d.swap")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, swap); err != nil {
		t.Fatal(err)
	}
	f.svc.opts.RequireViewBeforeEdit = false

	// RENAME_EXCHANGE swaps the directory and the symlink in one system
	// call, so "d" flips between them fast and evenly.
	var stop atomic.Bool
	var flips atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			if err := unix.Renameat2(unix.AT_FDCWD, dir, unix.AT_FDCWD, swap, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("exchange: %v", err)
				return
			}
			flips.Add(1)
			spin(10 * time.Microsecond)
		}
	})
	leaks, escapes := 0, 0
	for i := range 3000 {
		if res, err := f.svc.View(f.c, "d/secret.txt", nil, borisLimits(nil)); err == nil && res.Lines.Len() > 0 && strings.Contains(string(res.Lines.buf), "OUTSIDE") {
			leaks++
		}
		_, _ = f.svc.Create(f.c, "d/secret.txt", "inside")
		_, _ = f.svc.Create(f.c, fmt.Sprintf("d/new-%d.txt", i), "x")
	}
	stop.Store(true)
	wg.Wait()
	if flips.Load() < 1000 {
		t.Fatalf("only %d swaps happened; the race was not exercised", flips.Load())
	}
	entries, _ := os.ReadDir(outside)
	for _, e := range entries {
		if e.Name() != "secret.txt" {
			escapes++
		}
	}
	if got, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(got) != "OUTSIDE" {
		escapes++
	}
	if leaks > 0 || escapes > 0 {
		t.Fatalf("%d reads leaked outside content, %d writes escaped", leaks, escapes)
	}
}

func spin(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

// On a really full file system (a 64 KiB tmpfs), str_replace and
// create_file fail with IO_ERROR and change nothing.
func TestDiskFull(t *testing.T) {
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v); TestWriteFailureLeavesOriginal in internal/scope covers this with an injected ENOSPC", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	pol, _ := scope.New([]string{dir}, nil, dir)
	v := &viewedSet{m: map[string]Stamp{}}
	svc := New(Options{Policy: pol, MaxFileSize: 1 << 20, RequireViewBeforeEdit: false})
	c := Ctx{Cwd: dir, Viewed: v}
	orig := strings.Repeat("original line\n", 1500) // ~21 KB
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	filler := bytes.Repeat([]byte("x"), 64<<10)
	_ = os.WriteFile(filepath.Join(dir, "filler"), filler, 0o644) // fills what is left (short write is fine)

	_, err := svc.StrReplace(c, "f.txt", "original line\n", "a longer replacement line\n", true)
	wantCode(t, err, codes.IOError, "no space left")
	if got, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(got) != orig {
		t.Fatal("the original changed")
	}
	_, err = svc.Create(c, "new.txt", strings.Repeat("y", 30000))
	wantCode(t, err, codes.IOError, "no space left")
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "f.txt" && e.Name() != "filler" {
			t.Fatalf("left behind: %s", e.Name())
		}
	}
}

// A file replaced by a directory between view and edit gives a clear error.
func TestFileBecameDirectory(t *testing.T) {
	f := newFixture(t, true)
	p := f.write(t, "x", "content\n")
	if _, err := f.svc.View(f.c, "x", nil, borisLimits(nil)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := f.svc.StrReplace(f.c, "x", "content", "new", false)
	wantCode(t, err, codes.InvalidInput, "directory")
	_, err = f.svc.Create(f.c, "x", "new")
	wantCode(t, err, codes.InvalidInput, "directory")
}

// TestEditRefusesStaleView: an edit needs the file as this session last saw
// it; a change on disk since (a command, another client) is refused until
// the file is viewed again, and nothing is written.
func TestEditRefusesStaleView(t *testing.T) {
	f := newFixture(t, true)
	p := f.write(t, "f.txt", "one\ntwo\n")
	view := func() {
		t.Helper()
		if _, err := f.svc.View(f.c, "f.txt", nil, borisLimits(nil)); err != nil {
			t.Fatal(err)
		}
	}
	view()
	changes := []struct {
		name   string
		change func()
		msg    string
	}{
		{"rewritten longer", func() { writeFile(t, p, "one\ntwo\nthree\n") }, "bytes then"},
		{"replaced by rename", func() {
			writeFile(t, p+".tmp", "one\nTWO\n")
			if err := os.Rename(p+".tmp", p); err != nil {
				t.Fatal(err)
			}
		}, "was replaced"},
		{"same size, new time", func() {
			writeFile(t, p, "one\nTwo\n")
			if err := os.Chtimes(p, time.Now(), time.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}, "modification time"},
	}
	for _, c := range changes {
		view()
		c.change()
		before := f.read(t, "f.txt")
		_, err := f.svc.StrReplace(f.c, "f.txt", "one", "1", false)
		wantCode(t, err, codes.FileChangedSinceView, c.msg)
		_, err = f.svc.Insert(f.c, "f.txt", 0, "x")
		wantCode(t, err, codes.FileChangedSinceView)
		_, err = f.svc.Create(f.c, "f.txt", "overwritten\n")
		wantCode(t, err, codes.FileChangedSinceView)
		if f.read(t, "f.txt") != before {
			t.Fatalf("%s: a refused edit changed the file", c.name)
		}
	}
	// Viewed again: edits work, and the session's own edits keep it fresh.
	view()
	for _, edit := range []func() error{
		func() error { _, err := f.svc.StrReplace(f.c, "f.txt", "one", "1", false); return err },
		func() error { _, err := f.svc.Insert(f.c, "f.txt", 0, "top"); return err },
		func() error { _, err := f.svc.Create(f.c, "f.txt", "fresh\n"); return err },
		func() error { _, err := f.svc.StrReplace(f.c, "f.txt", "fresh", "again", false); return err },
	} {
		if err := edit(); err != nil {
			t.Fatalf("edit after the session's own edit: %v", err)
		}
	}
	// Without view-before-edit, nothing is checked.
	loose := New(Options{Policy: f.svc.opts.Policy, MaxFileSize: 1 << 20})
	writeFile(t, p, "changed behind its back\n")
	if _, err := loose.StrReplace(f.c, "f.txt", "changed", "edited", false); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// history is an unbounded files.History for tests.
type history struct{ steps map[string][]Change }

func (h *history) Record(p string, ch Change) { h.steps[p] = append(h.steps[p], ch) }
func (h *history) Forget(p string)            { delete(h.steps, p) }
func (h *history) Last(p string) (Change, bool) {
	s := h.steps[p]
	if len(s) == 0 {
		return Change{}, false
	}
	return s[len(s)-1], true
}
func (h *history) Undone(p string, now Stamp) {
	s := h.steps[p][:len(h.steps[p])-1]
	if len(s) > 0 {
		s[len(s)-1].After = now
	}
	h.steps[p] = s
}

func mustParse(t *testing.T, text string) *patch.Patch {
	t.Helper()
	p, err := patch.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestApplyPatch: sections apply together, the result names the files as
// the patch does, and every change is in the history for undo.
func TestApplyPatch(t *testing.T) {
	f := newFixture(t, true)
	f.write(t, "a.txt", "one\ntwo\n")
	f.write(t, "gone.txt", "bye\n")
	h := &history{steps: map[string][]Change{}}
	f.c.History = h
	res, err := f.svc.ApplyPatch(f.c, mustParse(t, "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b/a.txt\n@@\n one\n-two\n+2\n*** Delete File: gone.txt\n*** Add File: new.txt\n+new\n*** End Patch"))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.Added, res.Modified, res.Deleted, res.Moved) != "[new.txt] [b/a.txt] [gone.txt] [{a.txt b/a.txt}]" {
		t.Fatalf("result %+v", res)
	}
	if f.read(t, "b/a.txt") != "one\n2\n" || f.read(t, "new.txt") != "new\n" {
		t.Fatal("not applied")
	}
	for _, p := range []string{"a.txt", "gone.txt"} {
		if _, err := os.Stat(filepath.Join(f.dir, p)); !os.IsNotExist(err) {
			t.Fatalf("%s still there", p)
		}
	}
	if len(h.steps) != 4 {
		t.Fatalf("history has %d files, want 4 (a.txt, b/a.txt, gone.txt, new.txt)", len(h.steps))
	}
	// Undo puts a moved file back under its old name.
	for _, p := range []string{"b/a.txt", "a.txt"} {
		if _, err := f.svc.Undo(f.c, p); err != nil {
			t.Fatalf("undo %s: %v", p, err)
		}
	}
	if f.read(t, "a.txt") != "one\ntwo\n" {
		t.Fatal("undo did not restore a.txt")
	}
	if _, err := os.Stat(filepath.Join(f.dir, "b/a.txt")); !os.IsNotExist(err) {
		t.Fatal("undo did not remove b/a.txt")
	}
}

// TestApplyPatchRollsBack: a write that fails during the commit puts back
// the files already written, and says so.
func TestApplyPatchRollsBack(t *testing.T) {
	f := newFixture(t, true)
	f.write(t, "a.txt", "one\n")
	f.write(t, "gone.txt", "bye\n")
	f.write(t, "b.txt", "b\n")
	testHookCommit = func(i int) error {
		if i == 3 {
			return errors.New("no space left on device")
		}
		return nil
	}
	t.Cleanup(func() { testHookCommit = func(int) error { return nil } })
	_, err := f.svc.ApplyPatch(f.c, mustParse(t, "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+1\n*** Add File: fresh.txt\n+x\n*** Delete File: gone.txt\n*** Update File: b.txt\n@@\n-b\n+B\n*** End Patch"))
	wantCode(t, err, codes.IOError, "the patch was not applied: the 3 files already written were restored")
	if f.read(t, "a.txt") != "one\n" || f.read(t, "gone.txt") != "bye\n" || f.read(t, "b.txt") != "b\n" {
		t.Fatal("not restored")
	}
	if _, err := os.Stat(filepath.Join(f.dir, "fresh.txt")); !os.IsNotExist(err) {
		t.Fatal("fresh.txt not removed")
	}
	testHookCommit = func(int) error { return nil }

	// A path that cannot be created is found before anything is written.
	f.write(t, "blocker", "a file where the patch wants a directory\n")
	_, err = f.svc.ApplyPatch(f.c, mustParse(t, "*** Begin Patch\n*** Add File: fresh.txt\n+x\n*** Add File: blocker/inside.txt\n+x\n*** End Patch"))
	wantCode(t, err, codes.InvalidInput, "blocker is a file")
	if _, err := os.Stat(filepath.Join(f.dir, "fresh.txt")); !os.IsNotExist(err) {
		t.Fatal("fresh.txt written")
	}
}

// TestApplyPatchScope: a patch naming one path outside the scope or denied
// — as a target, a file to add or a move's destination — is refused before
// anything is written, the in-scope files of the same patch included.
func TestApplyPatchScope(t *testing.T) {
	f := newFixture(t, true, "**/.env")
	f.write(t, "a.txt", "one\n")
	outside := filepath.Join(filepath.Dir(f.dir), filepath.Base(f.dir)+"-outside.txt")
	t.Cleanup(func() { os.Remove(outside) })
	for name, second := range map[string]string{
		"add outside":  "*** Add File: " + outside + "\n+x\n",
		"add denied":   "*** Add File: sub/.env\n+SECRET=1\n",
		"move outside": "*** Update File: a.txt\n*** Move to: ../" + filepath.Base(outside) + "\n@@\n-one\n+1\n",
		"escape by ..": "*** Add File: ../" + filepath.Base(outside) + "\n+x\n",
	} {
		patch := "*** Begin Patch\n*** Add File: fresh.txt\n+x\n" + second + "*** End Patch"
		_, err := f.svc.ApplyPatch(f.c, mustParse(t, patch))
		if e, ok := codes.As(err); !ok || e.Code != codes.AccessDenied {
			t.Errorf("%s: %v, want %s", name, err, codes.AccessDenied)
		}
		if _, err := os.Stat(filepath.Join(f.dir, "fresh.txt")); !os.IsNotExist(err) {
			t.Fatalf("%s: the in-scope file was written", name)
		}
		if _, err := os.Stat(outside); !os.IsNotExist(err) {
			t.Fatalf("%s: wrote outside the scope", name)
		}
		if f.read(t, "a.txt") != "one\n" {
			t.Fatalf("%s: a.txt changed", name)
		}
	}
	if _, err := os.Stat(filepath.Join(f.dir, "sub", ".env")); !os.IsNotExist(err) {
		t.Fatal("the denied file was written")
	}
}
