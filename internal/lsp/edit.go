package lsp

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"
)

// An edit made through boris's tools is reported to the file's language
// server as it happens, and the errors the server then reports for the
// file that it did not report before are the edit's "new errors". The
// server's view before the edit is usually known already: viewing a file
// opens it in its server (Warm), and the server publishes its diagnostics
// while the agent reads. Otherwise the edit opens it first and waits for
// that baseline within the same bounded time.

// Edit follows the files of one edit (BeginEdit before it is written,
// Finish after).
type Edit struct {
	m     *Manager
	files []*editFile
}

// editFile is one file of an edit.
type editFile struct {
	path   string
	before []byte // nil: it did not exist
	ready  chan struct{}

	// Set by prepare before ready is closed.
	c         *client
	langID    string
	note      string
	err       error
	beforeVer int
	since     uint64
}

// Report is what an edit's files' servers said after it.
type Report struct {
	// Files are the edit's files that have a server, in the order given.
	Files []FileReport
}

// FileReport is the outcome for one file.
type FileReport struct {
	Path   string
	Server string
	// Introduced are the new errors (none: the edit broke nothing the
	// server sees).
	Introduced []Diag
	// Late is set when the server had not reported on the file within the
	// wait; Indexing says what it was busy with, if it said.
	Late     bool
	Indexing string
	// Note is a restart note; Err a server that could not be had.
	Note string
	Err  error
}

// Empty reports whether the report has nothing to say.
func (r *Report) Empty() bool {
	for _, f := range r.Files {
		if len(f.Introduced) > 0 || f.Late || f.Note != "" || f.Err != nil {
			return false
		}
	}
	return true
}

// BeginEdit is called before an edit of the files at paths (absolute,
// resolved); files no server handles are left out at once, so an edit of
// those costs nothing. For the others it reads the content before the
// edit and, in the background, has the server hold it (starting the
// server if needed). It returns nil when no file has a server.
func (m *Manager) BeginEdit(paths ...string) *Edit {
	var e *Edit
	for _, p := range paths {
		if !m.Handles(p) {
			continue
		}
		if e == nil {
			e = &Edit{m: m}
		}
		m.mu.Lock()
		if m.edits == nil {
			m.edits = map[string]uint64{}
		}
		m.edits[p]++
		m.mu.Unlock()
		f := &editFile{path: p, ready: make(chan struct{})}
		if data, _, err := m.readChecked(p); err == nil {
			f.before = data
		}
		e.files = append(e.files, f)
		go m.prepare(f)
	}
	return e
}

// prepare has the file's server hold the content before the edit.
func (m *Manager) prepare(f *editFile) {
	defer close(f.ready)
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	c, langID, note, err := m.acquire(ctx, f.path)
	if err != nil {
		f.err = err
		return
	}
	defer m.release(c)
	f.c, f.langID, f.note = c, langID, note
	// The edited file itself is not read from the disk here: the edit
	// may be writing it right now.
	if err := c.refreshExcept(f.path); err != nil {
		f.err = m.serverErr(c, "sync", err)
		return
	}
	if f.before == nil {
		return // a new file: nothing was there before
	}
	f.since, _ = c.publishState()
	v, sent, err := c.open(f.path, f.before, stamp{}, langID, false)
	if err != nil {
		f.err = m.serverErr(c, "didOpen", err)
		return
	}
	if !sent {
		f.since = 0 // any publish about it is about this text
	}
	f.beforeVer = v
}

// Finish reports the edit's outcome to the servers and returns the errors
// it introduced, waiting at most wait for the servers to answer. Files
// the edit removed are closed.
func (e *Edit) Finish(ctx context.Context, wait time.Duration) *Report {
	if e == nil {
		return nil
	}
	deadline := time.Now().Add(wait)
	rep := &Report{Files: make([]FileReport, len(e.files))}
	var wg sync.WaitGroup
	for i, f := range e.files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep.Files[i] = e.m.finishFile(ctx, f, deadline)
		}()
	}
	wg.Wait()
	return rep
}

func (m *Manager) finishFile(ctx context.Context, f *editFile, deadline time.Time) FileReport {
	fr := FileReport{Path: f.path}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-f.ready:
	case <-timer.C:
		// The server is still starting; it keeps starting for the next
		// call, and learns the new content then.
		fr.Late = true
		return fr
	case <-ctx.Done():
		return fr
	}
	if f.err != nil {
		fr.Err = f.err
		return fr
	}
	c := f.c
	fr.Server, fr.Note = c.name, f.note
	if !m.hold(c) {
		// It died since, and its successor has not seen the text before.
		fr.Err = m.serverErr(c, "didChange", errDied)
		return fr
	}
	defer m.release(c)
	after, st, err := m.readChecked(f.path)
	if err != nil {
		if os.IsNotExist(err) {
			c.closeDoc(f.path) // deleted: nothing to report on
		}
		return fr
	}
	// The state before: what the server published for the old text.
	var before []diagnostic
	if f.before != nil {
		list, ok := c.waitDiagnostics(ctx, f.path, f.beforeVer, f.since, deadline)
		if !ok {
			// Without the state before, errors cannot be told new; the
			// new text is sent all the same.
			_, _, _ = c.open(f.path, after, st, f.langID, true)
			fr.Late, fr.Indexing = true, c.indexing()
			return fr
		}
		before = list
	}
	since, _ := c.publishState()
	v, sent, err := c.open(f.path, after, st, f.langID, true)
	if err != nil {
		fr.Err = m.serverErr(c, "didChange", err)
		return fr
	}
	if !sent {
		// It holds this text already (another call sent it): what it
		// published for this version, or since it was sent, is current.
		since = 0
	}
	list, ok := c.waitDiagnostics(ctx, f.path, v, since, deadline)
	if !ok {
		fr.Late, fr.Indexing = true, c.indexing()
		return fr
	}
	fr.Introduced = diags(introduced(before, f.before, list, after), after, c.utf8, f.path)
	return fr
}

// Warm opens a file in its server in the background, starting the server
// if needed, so a later edit finds the state before it known. The text is
// read now, as the view that warms it saw it; an edit of the file begun
// before the background work gets to it wins (the server is not given
// the older text). Files no server handles are ignored.
func (m *Manager) Warm(path string) {
	if !m.Handles(path) {
		return
	}
	gen := m.editGen(path)
	data, st, err := m.readChecked(path)
	if err != nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		c, langID, _, err := m.acquire(ctx, path)
		if err != nil {
			return
		}
		defer m.release(c)
		if c.refreshExcept(path) != nil {
			return
		}
		c.docMu.Lock()
		defer c.docMu.Unlock()
		if m.editGen(path) == gen {
			_, _, _ = c.openLocked(path, data, st, langID, false)
		}
	}()
}

// editGen counts the edits begun on a file.
func (m *Manager) editGen(path string) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.edits[path]
}

// lineNumbers in messages ("redefinition of unused 'x' from line 3") move
// with the code; they are not part of what a diagnostic is.
var lineNumbers = regexp.MustCompile(`\blines? \d+`)

// diagKey is what makes two diagnostics the same one, wherever they are.
func diagKey(d diagnostic) string {
	sev := d.Severity
	if sev == 0 {
		sev = SeverityError
	}
	return string(rune('0'+sev)) + "\x00" + d.codeString() + "\x00" + d.Source + "\x00" + lineNumbers.ReplaceAllString(strings.TrimSpace(d.Message), "line #")
}

// introduced returns the errors of after that are not in before. An edit
// moves lines: the texts before and after are compared to find the region
// it changed, and a diagnostic counts as the same one when it has the same
// severity, code, source and message and either sits where the old one
// lands (outside the changed region, shifted by the lines the edit added or
// removed; anywhere inside it for one that was inside it), or on a line
// with the same text, or — matched last — anywhere, as long as an old one
// with that key is left over.
func introduced(before []diagnostic, beforeText []byte, after []diagnostic, afterText []byte) []diagnostic {
	var errs []diagnostic
	for _, d := range after {
		if d.Severity == 0 || d.Severity == SeverityError {
			errs = append(errs, d)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	oldLines := splitLines(beforeText)
	newLines := splitLines(afterText)
	p, s := commonEnds(oldLines, newLines)
	oldEnd, newEnd := len(oldLines)-s, len(newLines)-s
	shift := len(newLines) - len(oldLines)
	lineText := func(lines [][]byte, n int) string {
		if n >= 0 && n < len(lines) {
			return string(bytes.TrimSpace(lines[n]))
		}
		return ""
	}
	used := make([]bool, len(before))
	matched := make([]bool, len(errs))
	passes := []func(b diagnostic, a diagnostic) bool{
		func(b, a diagnostic) bool { // where it lands
			bl, al := b.Range.Start.Line, a.Range.Start.Line
			switch {
			case bl < p:
				return al == bl && a.Range.Start.Character == b.Range.Start.Character
			case bl >= oldEnd:
				return al == bl+shift && a.Range.Start.Character == b.Range.Start.Character
			}
			return al >= p && al < max(newEnd, p+1)
		},
		func(b, a diagnostic) bool { // on the same text
			t := lineText(oldLines, b.Range.Start.Line)
			return t != "" && t == lineText(newLines, a.Range.Start.Line)
		},
		func(b, a diagnostic) bool { return true },
	}
	for _, same := range passes {
		for i, a := range errs {
			if matched[i] {
				continue
			}
			ka := diagKey(a)
			for j, b := range before {
				if used[j] || diagKey(b) != ka || !same(b, a) {
					continue
				}
				used[j], matched[i] = true, true
				break
			}
		}
	}
	var out []diagnostic
	for i, a := range errs {
		if !matched[i] {
			out = append(out, a)
		}
	}
	return out
}

func splitLines(b []byte) [][]byte {
	if len(b) == 0 {
		return nil
	}
	return bytes.Split(b, []byte{'\n'})
}

// commonEnds returns how many lines a and b share at the start and, after
// those, at the end.
func commonEnds(a, b [][]byte) (prefix, suffix int) {
	for prefix < len(a) && prefix < len(b) && bytes.Equal(a[prefix], b[prefix]) {
		prefix++
	}
	for suffix < len(a)-prefix && suffix < len(b)-prefix && bytes.Equal(a[len(a)-1-suffix], b[len(b)-1-suffix]) {
		suffix++
	}
	return prefix, suffix
}
