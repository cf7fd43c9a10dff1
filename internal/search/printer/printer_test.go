package printer

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

type line struct {
	n     int
	match bool
	text  string
}

// block renders lines for path through a FileWriter.
func block(opts Options, max int, path string, lines ...line) (*Block, bool) {
	w := NewFileWriter(opts, max)
	w.Reset(StaticPath(path))
	for _, l := range lines {
		var ok bool
		if l.match {
			ok = w.Match(l.n, []byte(l.text))
		} else {
			ok = w.Context(l.n, []byte(l.text))
		}
		if !ok {
			break
		}
	}
	return w.Block()
}

func TestContent(t *testing.T) {
	a := []line{{1, false, "one"}, {2, true, "two"}, {3, false, "three"}, {7, true, "seven"}}
	b := []line{{4, true, "four"}}
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"numbers and separators", Options{Mode: Content, LineNumbers: true, Separators: true},
			"a.go-1-one\na.go:2:two\na.go-3-three\n--\na.go:7:seven\n--\nb.go:4:four"},
		{"no separators without context", Options{Mode: Content, LineNumbers: true},
			"a.go-1-one\na.go:2:two\na.go-3-three\na.go:7:seven\nb.go:4:four"},
		{"no line numbers", Options{Mode: Content, Separators: true},
			"a.go-one\na.go:two\na.go-three\n--\na.go:seven\n--\nb.go:four"},
		{"offset counts separators", Options{Mode: Content, LineNumbers: true, Separators: true, Offset: 3, Limit: 3},
			"--\na.go:7:seven\n--"},
		{"limit", Options{Mode: Content, LineNumbers: true, Separators: true, Limit: 2},
			"a.go-1-one\na.go:2:two"},
		{"offset past the end", Options{Mode: Content, Separators: true, Offset: 50},
			"No results at offset 50: the result has 7 lines; use a smaller offset."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCollector(tt.opts)
			// Added out of order: output is by path.
			c.AddBlock(block(tt.opts, c.MaxFileLines(), "b.go", b...))
			c.AddBlock(block(tt.opts, c.MaxFileLines(), "a.go", a...))
			if got := c.Render(); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestFilesAndCounts(t *testing.T) {
	files := NewCollector(Options{Mode: FilesWithMatches})
	files.AddFile("old", 1)
	files.AddFile("new", 3)
	files.AddFile("mid-b", 2)
	files.AddFile("mid-a", 2)
	if got, want := files.Render(), "new\nmid-a\nmid-b\nold"; got != want {
		t.Errorf("files = %q, want %q", got, want)
	}
	paged := NewCollector(Options{Mode: FilesWithMatches, Offset: 1, Limit: 2})
	for i := range 10 {
		paged.AddFile(fmt.Sprintf("f%d", i), int64(i))
	}
	if got, want := paged.Render(), "f8\nf7"; got != want {
		t.Errorf("paged files = %q, want %q", got, want)
	}
	counts := NewCollector(Options{Mode: Count, Offset: 1})
	counts.AddCount("z", 1)
	counts.AddCount("a", 10)
	counts.AddCount("m", 2)
	if got, want := counts.Render(), "m:2\nz:1"; got != want {
		t.Errorf("counts = %q, want %q", got, want)
	}
	if got := NewCollector(Options{}).Render(); got != "No files found" {
		t.Errorf("empty files = %q", got)
	}
	if got := NewCollector(Options{Mode: Count}).Render(); got != "No matches found" {
		t.Errorf("empty count = %q", got)
	}
}

func TestCap(t *testing.T) {
	c := NewCollector(Options{Mode: FilesWithMatches})
	for i := range 5000 {
		c.AddFile(fmt.Sprintf("dir/file%05d.go", i), int64(i))
	}
	got := c.Render()
	body, note, ok := strings.Cut(got, "\n[Output truncated at 30000 characters: showing entries 1-")
	if !ok {
		t.Fatalf("no truncation note in %d chars", len(got))
	}
	if len(body) > MaxChars {
		t.Errorf("body is %d characters, over the cap", len(body))
	}
	n := strings.Count(body, "\n") + 1
	if !strings.HasPrefix(note, fmt.Sprintf("%d of 5000. Pass offset=%d", n, n)) {
		t.Errorf("note %q does not give %d shown entries", note, n)
	}
	if !strings.HasPrefix(body, "dir/file04999.go\n") {
		t.Errorf("not newest first: %.40q", body)
	}
}

func TestLongLine(t *testing.T) {
	long := strings.Repeat("é", MaxLineLen) // two bytes each
	got := string(AppendLine(nil, []byte(long)))
	if !strings.HasSuffix(got, fmt.Sprintf(" [… line truncated, %d characters in total]", len(long))) {
		t.Errorf("no truncation note: %.60q", got[len(got)-60:])
	}
	if strings.Contains(got, "\ufffd") || len(got) > MaxLineLen+60 {
		t.Errorf("bad cut")
	}
	if got := string(AppendLine(nil, []byte("crlf\r"))); got != "crlf" {
		t.Errorf("CR kept: %q", got)
	}
}

// TestRetention checks that keeping only what the page needs gives the
// same page as keeping everything, whatever the arrival order.
func TestRetention(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for iter := range 300 {
		opts := Options{Mode: Content, LineNumbers: true, Separators: r.Intn(2) == 0, Offset: r.Intn(40), Limit: r.Intn(15)}
		type file struct {
			path  string
			lines []line
		}
		var files []file
		for i := range r.Intn(30) {
			var ls []line
			n := 0
			for range 1 + r.Intn(8) {
				n += 1 + r.Intn(3)
				ls = append(ls, line{n, r.Intn(2) == 0, fmt.Sprintf("t%d", n)})
			}
			files = append(files, file{fmt.Sprintf("p%03d", i), ls})
		}
		// Reference: everything, in path order, paged by hand.
		var all []string
		for i, f := range files {
			if i > 0 && opts.Separators {
				all = append(all, "--")
			}
			last := 0
			for j, l := range f.lines {
				if opts.Separators && j > 0 && l.n != last+1 {
					all = append(all, "--")
				}
				last = l.n
				sep := "-"
				if l.match {
					sep = ":"
				}
				all = append(all, fmt.Sprintf("%s%s%d%s%s", f.path, sep, l.n, sep, l.text))
			}
		}
		want := page(all, opts.Offset, opts.Limit)
		c := NewCollector(opts)
		r.Shuffle(len(files), func(i, j int) { files[i], files[j] = files[j], files[i] })
		for _, f := range files {
			c.AddBlock(block(opts, c.MaxFileLines(), f.path, f.lines...))
		}
		got := c.Render()
		switch {
		case len(all) == 0:
			if got != "No matches found" {
				t.Fatalf("iter %d: got %q for no results", iter, got)
			}
		case len(want) == 0:
			if !strings.HasPrefix(got, "No results at offset") {
				t.Fatalf("iter %d: got %q past the end", iter, got)
			}
		case got != strings.Join(want, "\n"):
			t.Fatalf("iter %d %+v:\n got %q\nwant %q", iter, opts, got, want)
		}
	}
}

func FuzzRender(f *testing.F) {
	f.Add(uint8(0), true, true, 0, 0, "a.go", "line", 3)
	f.Add(uint8(1), false, false, 2, 1, "x/y", "", 1)
	f.Add(uint8(2), true, false, 0, 5, "p:q", "a\rb", 40)
	f.Fuzz(func(t *testing.T, mode uint8, numbers, seps bool, offset, limit int, path, text string, n int) {
		if offset < 0 || limit < 0 || offset > 1e6 || limit > 1e6 || n < 0 || n > 500 || strings.ContainsAny(path+text, "\n") {
			return
		}
		opts := Options{Mode: Mode(mode % 3), LineNumbers: numbers, Separators: seps, Offset: offset, Limit: limit}
		render := func(order []int) string {
			c := NewCollector(opts)
			for _, i := range order {
				p := fmt.Sprintf("%s%d", path, i)
				switch opts.Mode {
				case FilesWithMatches:
					c.AddFile(p, int64(i%3))
				case Count:
					c.AddCount(p, i+1)
				case Content:
					c.AddBlock(block(opts, c.MaxFileLines(), p, line{i + 1, true, text}, line{i + 3, false, text}))
				}
			}
			return c.Render()
		}
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		a := render(order)
		slices.Reverse(order)
		if b := render(order); a != b {
			t.Fatalf("order changes the output:\n%q\n%q", a, b)
		}
		body, _, _ := strings.Cut(a, "\n[Output truncated")
		if len(body) > MaxChars+len(path)+30+MaxLineLen+60 {
			t.Fatalf("output of %d characters", len(body))
		}
	})
}

// TestPageData: a page's data holds what its text shows — the same
// entries, or the same lines without the separators — and says whether
// the result goes on past it.
func TestPageData(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for iter := range 300 {
		opts := Options{Mode: Content, LineNumbers: r.Intn(2) == 0, Separators: r.Intn(2) == 0, Offset: r.Intn(20), Limit: r.Intn(15)}
		c := NewCollector(opts)
		for i := range r.Intn(12) {
			var ls []line
			n := 0
			for range 1 + r.Intn(6) {
				n += 1 + r.Intn(3)
				ls = append(ls, line{n, r.Intn(2) == 0, fmt.Sprintf("t%d:x", n)})
			}
			c.AddBlock(block(opts, c.MaxFileLines(), fmt.Sprintf("p:%02d", i), ls...))
		}
		pg := c.Page()
		if pg.Text != c.Render() {
			t.Fatalf("iter %d: Page().Text differs from Render()", iter)
		}
		var shown []string
		printed := 0
		if pg.Total > 0 && !strings.HasPrefix(pg.Text, "No results") {
			body, _, _ := strings.Cut(pg.Text, "\n[Output truncated")
			for _, l := range strings.Split(body, "\n") {
				printed++
				if l != "--" {
					shown = append(shown, l)
				}
			}
		}
		var fromData []string
		for _, l := range pg.Lines {
			sep := ":"
			if l.Context {
				sep = "-"
			}
			s := l.Path + sep
			if opts.LineNumbers {
				s += fmt.Sprint(l.N) + sep
			}
			fromData = append(fromData, s+l.Text)
		}
		if !slices.Equal(shown, fromData) {
			t.Fatalf("iter %d %+v: text lines %q, data %q", iter, opts, shown, fromData)
		}
		if more := opts.Offset+printed < pg.Total || (!pg.Exact && printed > 0); pg.Truncated != more || (more && pg.NextOffset != opts.Offset+printed) {
			t.Fatalf("iter %d %+v: truncated %v next %d, %d printed of %d", iter, opts, pg.Truncated, pg.NextOffset, printed, pg.Total)
		}
	}

	files := NewCollector(Options{Mode: FilesWithMatches})
	for i := range 5000 {
		files.AddFile(fmt.Sprintf("dir/file%05d.go", i), int64(i))
	}
	pg := files.Page()
	n := strings.Count(pg.Text, "\n") // the note's line is not an entry
	if len(pg.Entries) != n || pg.Entries[0].Path != "dir/file04999.go" || !pg.Truncated || pg.NextOffset != n || pg.Total != 5000 || !pg.Exact {
		t.Fatalf("capped file list: %d entries for %d lines, first %+v, truncated %v next %d total %d", len(pg.Entries), n, pg.Entries[0], pg.Truncated, pg.NextOffset, pg.Total)
	}
	counts := NewCollector(Options{Mode: Count, Offset: 1})
	counts.AddCount("z", 1)
	counts.AddCount("m", 2)
	if pg := counts.Page(); len(pg.Entries) != 1 || pg.Entries[0] != (Entry{Path: "z", Count: 1}) || pg.Truncated || pg.Offset != 1 || pg.Total != 2 {
		t.Fatalf("count page %+v", pg)
	}
}
