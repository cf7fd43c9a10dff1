package lsp

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/boris-mcp/boris/internal/codes"
)

// An edit made through boris's tools is reported to the file's language
// server as it happens, and the errors the server then reports for the
// file that it did not report before are the edit's "new errors". The
// server's view before the edit is usually known already: viewing a file
// opens it in its server (Warm), and the server publishes its diagnostics
// while the agent reads. Otherwise the edit opens it first and waits for
// that baseline.
//
// The edit's answer waits for all this only a short while (Finish's
// wait). What is not known by then is finished in the background: the
// answer names those files as pending, and what they come to is taken
// from the session's Inbox by its next answer. A later edit of a file
// whose earlier edit is not known yet sends its text at once, and takes as
// its baseline what the server said after the earlier edit — or, if the
// server skipped that text, what it said before it: the later report then
// counts both edits' errors. Reports are matched to the exact text they
// are about, never to another. While an edit waits for the server's report
// on the text before it, the document is not refreshed from the disk, and
// the lsp tool's requests about it wait.

// lateTimeout bounds the background wait for an edit's diagnostics (the
// server's start included); after it the edit's report says the server
// did not report.
const lateTimeout = 2 * time.Minute

// Edit follows the files of one edit (BeginEdit before it is written,
// Finish after).
type Edit struct {
	m     *Manager
	files []*editFile
}

// editFile is one file of an edit, from BeginEdit until its report is
// known.
type editFile struct {
	m      *Manager
	path   string
	before []byte // nil: it did not exist
	ready  chan struct{}

	// Set by prepare before ready is closed.
	c         *client
	langID    string
	note      string
	err       error
	beforeVer int
	// chained: an earlier edit of the file was not known yet, so prepare
	// sent nothing (that edit sends the text).
	chained bool

	// Set by Finish.
	prev  *editFile // the file's earlier edit, not known yet then
	start time.Time
	done  chan struct{} // closed once rep is final

	mu        sync.Mutex // held by step, and for what follows
	state     int
	busy      bool // holds c (Manager.hold)
	held      bool // holds the document (client.hold)
	baseKnown bool // the server's report on baseText
	baseText  []byte
	baseList  []diagnostic
	noBase    bool // that report could not be had
	merged    int
	afterText []byte
	afterVer  int
	afterList []diagnostic
	after     bool // afterList is the server's report on afterText
	rep       FileReport
}

// States of an editFile.
const (
	stReady = iota // waiting for prepare
	stBase         // waiting for the server's report on the text before
	stSend         // to send the text after
	stAfter        // waiting for the server's report on it (and for the file's earlier edit, the baseline)
	stDone
)

// Report is what an edit's files' servers said after it.
type Report struct {
	// Files are the edit's files that have a server, in the order given.
	Files []FileReport
	// Late follows the files still pending when the report was made
	// (nil when none): an Inbox takes it, and gives what they come to.
	Late *Late
	// Delayed is set on a report of an Inbox: about files of earlier
	// edits that were pending in those edits' answers.
	Delayed bool
}

// FileReport is the outcome for one file.
type FileReport struct {
	Path   string
	Server string
	// Introduced are the new errors (none: the edit broke nothing the
	// server sees).
	Introduced []Diag
	// Pending is set when the server had not reported on the file when the
	// answer went out: its errors come later (Report.Late). Indexing says
	// what the server was busy with, if it said.
	Pending  bool
	Indexing string
	// Merged counts the earlier edits of the file whose errors were still
	// unknown when this one needed them: Introduced counts their errors too.
	Merged int
	// Superseded is set when the file's text changed again before the
	// server reported on this edit's: its errors are reported with that
	// change (an edit's), or by the lsp tool's diagnostics operation.
	Superseded bool
	// Unknown is set when the server's report on the text before the edit
	// could not be had: which of its errors are new cannot be told.
	Unknown bool
	// Late is set when the server did not report within Waited of the
	// edit; nothing more will come.
	Late   bool
	Waited time.Duration
	// Note is a restart note; Err a server that could not be had.
	Note string
	Err  error
}

// Empty reports whether the report has nothing to say: no new errors,
// nothing pending, nothing wrong. A delayed report always has something
// to say (what the pending files came to).
func (r *Report) Empty() bool {
	if r == nil {
		return true
	}
	if r.Delayed {
		return len(r.Files) == 0
	}
	for _, f := range r.Files {
		if len(f.Introduced) > 0 || f.Pending || f.Superseded || f.Unknown || f.Late || f.Note != "" || f.Err != nil {
			return false
		}
	}
	return true
}

// BeginEdit is called before an edit of the files at paths (absolute,
// resolved); files no server handles are left out at once, so an edit of
// those costs nothing. For the others it reads the content before the
// edit and, in the background, has the server hold it (starting the
// server if needed). It returns nil when no file has a server. An Edit
// whose Finish is never called (the edit failed) leaves nothing behind.
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
		f := &editFile{m: m, path: p, ready: make(chan struct{}), done: make(chan struct{})}
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
	ctx, cancel := context.WithTimeout(m.bg, startTimeout)
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
	if m.pendingEdit(f.path) != nil {
		f.chained = true
		return
	}
	if f.before == nil {
		return // a new file: nothing was there before
	}
	v, _, err := c.open(f.path, f.before, stamp{}, langID, false)
	if err != nil {
		f.err = m.serverErr(c, "didOpen", err)
		return
	}
	f.beforeVer = v
}

// pendingEdit returns the edit of path whose report is not known yet, if
// any.
func (m *Manager) pendingEdit(path string) *editFile {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.chain[path]
}

// Finish reports the edit's outcome to the servers and returns the errors
// it introduced, waiting at most wait for the servers to answer; the files
// not known by then are pending (Report.Late), finished in the
// background. Files the edit removed are closed.
func (e *Edit) Finish(ctx context.Context, wait time.Duration) *Report {
	if e == nil {
		return nil
	}
	m := e.m
	now := time.Now()
	m.mu.Lock()
	if m.chain == nil {
		m.chain = map[string]*editFile{}
	}
	for _, f := range e.files {
		f.start = now
		f.prev = m.chain[f.path]
		m.chain[f.path] = f
	}
	closed := m.closed
	if !closed {
		m.wg.Add(len(e.files))
	}
	m.mu.Unlock()
	for _, f := range e.files {
		if closed {
			f.resolveLocked(FileReport{Err: errShutdown()})
			continue
		}
		go f.run()
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
wait:
	for _, f := range e.files {
		select {
		case <-f.done:
		case <-timer.C:
			break wait
		case <-ctx.Done():
			break wait
		}
	}
	rep := &Report{Files: make([]FileReport, len(e.files))}
	var late []*editFile
	for i, f := range e.files {
		f.poll()
		f.mu.Lock()
		if f.state == stDone {
			rep.Files[i] = f.rep
		} else {
			rep.Files[i] = FileReport{Path: f.path, Server: f.serverName(), Pending: true, Indexing: f.indexing()}
			late = append(late, f)
		}
		f.mu.Unlock()
	}
	if late != nil {
		rep.Late = &Late{files: late}
	}
	return rep
}

// run moves f along as the server reports, until it is known or
// lateTimeout has passed (counted again from the end of the wait for the
// file's earlier edit).
func (f *editFile) run() {
	defer f.m.wg.Done()
	timer := time.NewTimer(lateTimeout - time.Since(f.start))
	defer timer.Stop()
	waitingPrev := f.prev != nil
	for {
		// What can move f along, taken before looking: nothing that
		// happens while step looks is missed.
		ready := f.ready
		var bell, dead, prev <-chan struct{}
		select {
		case <-f.ready:
			ready = nil
			if f.c != nil {
				bell, dead = f.c.bell(), f.c.dead
			}
		default:
		}
		if f.prev != nil {
			select {
			case <-f.prev.done:
				if waitingPrev {
					waitingPrev = false
					timer.Reset(lateTimeout)
				}
			default:
				prev = f.prev.done
			}
		}
		if f.step() {
			return
		}
		select {
		case <-ready:
		case <-bell:
		case <-dead:
		case <-prev:
		case <-timer.C:
			f.giveUp()
			return
		case <-f.m.bg.Done():
			f.resolveLocked(FileReport{Err: errShutdown()})
			return
		}
	}
}

// poll moves f along as far as it can without waiting.
func (f *editFile) poll() { f.step() }

// step moves f along as far as what the server said allows, and reports
// whether f is known.
func (f *editFile) step() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for {
		if f.state == stBase || f.state == stAfter {
			if !f.c.alive() {
				f.resolve(FileReport{Err: f.m.serverErr(f.c, "diagnostics", errDied)})
				continue
			}
		}
		switch f.state {
		case stDone:
			return true
		case stReady:
			select {
			case <-f.ready:
			default:
				return false
			}
			if f.err != nil {
				f.resolve(FileReport{Err: f.err})
				continue
			}
			c := f.c
			if !f.m.hold(c) {
				// It died since, and its successor has not seen the text before.
				f.resolve(FileReport{Err: f.m.serverErr(c, "didChange", errDied)})
				continue
			}
			f.busy = true
			switch {
			case f.prev != nil:
				// The text before is the earlier edit's: what the server
				// said after that edit is the baseline, taken once that
				// edit is known. This one's text goes at once.
				f.state = stSend
			case f.before == nil:
				f.baseKnown = true // a new file: nothing before
				f.state = stSend
			default:
				if f.chained || f.beforeVer == 0 {
					// Prepare left it to an earlier edit, known since.
					v, _, err := c.open(f.path, f.before, stamp{}, f.langID, false)
					if err != nil {
						f.resolve(FileReport{Err: f.m.serverErr(c, "didOpen", err)})
						continue
					}
					f.beforeVer = v
				}
				// Until the server's report on the text before is had,
				// the text after is not sent by anyone else.
				f.held = c.hold(f.path)
				f.state = stBase
			}
		case stBase:
			list, st := f.c.diagnosticsAt(f.path, f.beforeVer)
			switch st {
			case diagsNone:
				return false
			case diagsCurrent:
				f.baseText, f.baseList, f.baseKnown = f.before, list, true
			default:
				f.noBase = true
			}
			f.state = stSend
		case stSend:
			c := f.c
			after, st, err := f.m.readChecked(f.path)
			f.unholdDoc()
			if err != nil {
				if os.IsNotExist(err) {
					c.closeDoc(f.path) // deleted: nothing to report on
				}
				f.resolve(FileReport{})
				continue
			}
			v, _, err := c.open(f.path, after, st, f.langID, true)
			if err != nil {
				f.resolve(FileReport{Err: f.m.serverErr(c, "didChange", err)})
				continue
			}
			f.afterText, f.afterVer = after, v
			f.state = stAfter
		case stAfter:
			if f.prev != nil && !f.baseKnown && !f.noBase {
				select {
				case <-f.prev.done:
				default:
					return false
				}
				f.fromPrev()
			}
			list, st := f.c.diagnosticsAt(f.path, f.afterVer)
			switch st {
			case diagsNone:
				return false
			case diagsNewer:
				f.resolve(FileReport{Superseded: true, Merged: f.merged})
				continue
			}
			f.afterList, f.after = list, true
			if f.noBase {
				f.resolve(FileReport{Unknown: true, Merged: f.merged})
				continue
			}
			f.resolve(FileReport{Merged: f.merged, Introduced: diags(introduced(f.baseList, f.baseText, list, f.afterText), f.afterText, f.c.utf8, f.path)})
		}
	}
}

// fromPrev takes the baseline from the file's earlier edit, known now: what
// the server said after it or, when it never said (it skipped that text,
// or did not report in time), what it said before it — this edit's report
// then counts that edit's errors with its own.
func (f *editFile) fromPrev() {
	p := f.prev
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.after:
		f.baseText, f.baseList, f.baseKnown = p.afterText, p.afterList, true
	case p.baseKnown:
		f.baseText, f.baseList, f.baseKnown = p.baseText, p.baseList, true
		f.merged = p.merged + 1
	default:
		f.noBase = true
	}
}

// errShutdown is the outcome of edits pending when boris stops.
func errShutdown() error {
	return codes.Errorf(codes.SessionClosed, "boris is shutting down; its language servers are stopped")
}

// resolve makes fr f's report (with its path, server and note), lets go
// of what f holds, and closes done. f.mu is held.
func (f *editFile) resolve(fr FileReport) {
	fr.Path = f.path
	fr.Server, fr.Note = f.serverName(), f.note
	f.rep = fr
	f.state = stDone
	f.unholdDoc()
	if f.busy {
		f.busy = false
		f.m.release(f.c)
	}
	f.m.mu.Lock()
	if f.m.chain[f.path] == f {
		delete(f.m.chain, f.path)
	}
	f.m.mu.Unlock()
	close(f.done)
}

// resolveLocked is resolve taking f.mu, unless f is known already.
func (f *editFile) resolveLocked(fr FileReport) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.state != stDone {
		f.resolve(fr)
	}
}

// giveUp ends the wait for a server that did not report in time.
func (f *editFile) giveUp() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.state == stDone {
		return
	}
	if f.state == stBase {
		// The new text is sent all the same.
		f.unholdDoc()
		if f.c != nil {
			if after, st, err := f.m.readChecked(f.path); err == nil {
				_, _, _ = f.c.open(f.path, after, st, f.langID, true)
			}
		}
	}
	f.resolve(FileReport{Late: true, Waited: time.Since(f.start).Round(time.Second), Indexing: f.indexing()})
}

func (f *editFile) unholdDoc() {
	if f.held {
		f.held = false
		f.c.unhold(f.path)
	}
}

// serverName is the server's name, once prepare has it.
func (f *editFile) serverName() string {
	select {
	case <-f.ready:
		if f.c != nil {
			return f.c.name
		}
	default:
	}
	return ""
}

// indexing is what the file's server said it is busy with.
func (f *editFile) indexing() string {
	select {
	case <-f.ready:
		if f.c != nil {
			return f.c.indexing()
		}
	default:
	}
	return ""
}

// Late is the part of an edit's report not known when its answer went out.
type Late struct {
	files []*editFile
}

// Inbox holds the pending parts of a session's edits until their next
// answer takes what they came to. The zero Inbox is ready to use.
type Inbox struct {
	mu    sync.Mutex
	files []*editFile
}

// Add keeps what an edit's answer left pending (nothing when l is nil).
func (b *Inbox) Add(l *Late) {
	if l == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.files = append(b.files, l.files...)
}

// Take returns what the pending files have come to since — each once, in
// the order of their edits, as a Delayed report — and keeps those still
// pending. It waits for nothing: what the servers have reported is taken
// into account first. nil when none is known yet.
func (b *Inbox) Take() *Report {
	b.mu.Lock()
	defer b.mu.Unlock()
	var rep *Report
	keep := b.files[:0]
	for _, f := range b.files {
		f.poll()
		f.mu.Lock()
		known, fr := f.state == stDone, f.rep
		f.mu.Unlock()
		if !known {
			keep = append(keep, f)
			continue
		}
		if rep == nil {
			rep = &Report{Delayed: true}
		}
		rep.Files = append(rep.Files, fr)
	}
	clear(b.files[len(keep):])
	b.files = keep
	return rep
}

// Pending returns the paths still pending.
func (b *Inbox) Pending() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, f := range b.files {
		out = append(out, f.path)
	}
	return out
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
		ctx, cancel := context.WithTimeout(m.bg, startTimeout)
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
