package lsp

import (
	"regexp"
	"strings"
	"sync"
)

// A language server that fails inside a request often still answers it —
// with nothing: pylsp whose jedi cannot write its cache logs a traceback and
// returns no definition. Such an empty answer is the server's failure, not
// a fact about the code, so boris watches what servers report as errors
// (stderr lines, window/logMessage and showMessage of type Error) and turns
// an empty answer given while errors were reported into LSP_SERVER_ERROR.

// errorLineRe matches a stderr line that reports a failure: a Python
// traceback or exception, a logger's ERROR/FATAL line, a Go panic, a
// failure in words.
var errorLineRe = regexp.MustCompile(`(?i)(^traceback \(most recent call last\)|^[a-z_.]*(error|exception)\b.*:|\b(error|fatal|critical|panic|failed|failure)\b)`)

// boilerplateRe are lines of a traceback that say nothing themselves.
var boilerplateRe = regexp.MustCompile(`(?i)^(traceback \(most recent call last\):|during handling of the above exception, another exception occurred:|the above exception was the direct cause of the following exception:)$`)

// maxErrLines bounds the error lines kept per server.
const maxErrLines = 8

// errLog counts the errors a server reported and keeps the last few lines.
type errLog struct {
	mu    sync.Mutex
	seq   uint64
	lines []errLine
}

type errLine struct {
	seq  uint64
	text string
}

// stderrLine looks at one line the server wrote to stderr.
func (e *errLog) stderrLine(l string) {
	if !errorLineRe.MatchString(l) {
		return
	}
	e.add(l, !boilerplateRe.MatchString(l))
}

// message looks at a window/logMessage or showMessage: type 1 is Error,
// 2 Warning (counted when it reports a failure in words).
func (e *errLog) message(typ int, msg string) {
	msg = strings.TrimSpace(msg)
	if typ == 1 || (typ == 2 && errorLineRe.MatchString(msg)) {
		first, _, _ := strings.Cut(msg, "\n")
		e.add(first, true)
	}
}

// add counts an error; shown lines are kept for the answer.
func (e *errLog) add(text string, shown bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seq++
	if !shown {
		return
	}
	if len(text) > 300 {
		text = text[:300] + "…"
	}
	// A line said again moves to the end with its new count, so each
	// request that fails the same way shows it.
	for i, l := range e.lines {
		if l.text == text {
			e.lines = append(e.lines[:i], e.lines[i+1:]...)
			break
		}
	}
	e.lines = append(e.lines, errLine{e.seq, text})
	if len(e.lines) > maxErrLines {
		e.lines = e.lines[len(e.lines)-maxErrLines:]
	}
}

// mark is the count of errors so far.
func (e *errLog) mark() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.seq
}

// since returns the lines of the errors reported after mark (and whether
// there were any, shown or not).
func (e *errLog) since(mark uint64) (lines []string, any bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, l := range e.lines {
		if l.seq > mark {
			lines = append(lines, l.text)
		}
	}
	return lines, e.seq > mark
}
