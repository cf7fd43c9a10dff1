// Package term turns what a program writes to a terminal into what a
// model can read: plain text without escape sequences, lines rewritten with
// carriage returns shown in their final state (Filter), and the terminal's
// screen as a terminal would show it (Screen), for full-screen programs
// whose stream is not readable text.
package term

import (
	"unicode/utf8"
)

// Filter turns a terminal's output stream into plain text, chunk by chunk.
// It removes escape sequences (colour, cursor movement, titles, …) and
// other control characters, and applies carriage returns and backspaces
// the way a terminal does to the line they rewrite, so a progress bar
// drawn with "\r" shows only its last state. A sequence or a character
// split between two chunks is completed in the next one. The zero Filter
// is ready to use; it is not safe for concurrent use.
type Filter struct {
	esc     escState
	pending []byte // an incomplete UTF-8 character
	line    []rune // the current line as a terminal shows it
	col     int    // the cursor's column in line
	shown   int    // runes of line already returned
	dirty   bool   // a rune before shown was rewritten
	out     []byte // the text of the Write under way
}

type escState uint8

const (
	escNone    escState = iota
	escStart            // after ESC
	escCSI              // ESC [ parameters…
	escString           // ESC ] … (OSC), ESC P … (DCS), ESC X/^/_ (SOS, PM, APC), until BEL or ST
	escStrEsc           // ESC inside a string: ST (ESC \) ends it
	escCharset          // ESC ( ) * + and a charset designator
)

// Write filters a chunk and returns the text it adds. A line a later chunk
// rewrites after part of it was returned comes again, whole, on a line of
// its own.
func (f *Filter) Write(p []byte) string {
	f.out = make([]byte, 0, len(p))
	if len(f.pending) > 0 {
		p = append(f.pending, p...)
		f.pending = nil
	}
	for i := 0; i < len(p); {
		c := p[i]
		if f.esc != escNone {
			f.escape(c)
			i++
			continue
		}
		switch {
		case c == 0x1b:
			f.esc = escStart
			i++
		case c == '\n':
			f.newline()
			i++
		case c == '\r':
			f.col = 0
			i++
		case c == '\b':
			if f.col > 0 {
				f.col--
			}
			i++
		case c == '\t':
			f.put('\t')
			i++
		case c < 0x20 || c == 0x7f:
			i++ // bells and other controls: nothing to read
		default:
			r, size := utf8.DecodeRune(p[i:])
			if r == utf8.RuneError && size == 1 && !utf8.FullRune(p[i:]) {
				f.pending = append(f.pending[:0], p[i:]...)
				i = len(p)
				continue
			}
			f.put(r)
			i += size
		}
	}
	f.flush()
	out := string(f.out)
	f.out = nil
	return out
}

// newline ends the current line.
func (f *Filter) newline() {
	f.flush()
	f.out = append(f.out, '\n')
	f.line, f.col, f.shown, f.dirty = f.line[:0], 0, 0, false
}

// MaxLine is the longest line a Filter holds: a longer one is continued on
// a new line, as a terminal wraps it, so a program that never ends its line
// costs bounded memory.
const MaxLine = 8192

// put writes a rune at the cursor, over what is there.
func (f *Filter) put(r rune) {
	if f.col >= MaxLine {
		f.newline()
	}
	if f.col < len(f.line) {
		if f.col < f.shown && f.line[f.col] != r {
			f.dirty = true
		}
		f.line[f.col] = r
	} else {
		f.line = append(f.line, r)
	}
	f.col++
}

// flush adds to the output what of the current line has not been
// returned.
func (f *Filter) flush() {
	from := f.shown
	if f.dirty {
		f.out = append(f.out, '\n')
		from = 0
	}
	for _, r := range f.line[from:] {
		f.out = utf8.AppendRune(f.out, r)
	}
	f.shown, f.dirty = len(f.line), false
}

// escape consumes one byte of an escape sequence.
func (f *Filter) escape(c byte) {
	switch f.esc {
	case escStart:
		switch c {
		case '[':
			f.esc = escCSI
		case ']', 'P', 'X', '^', '_':
			f.esc = escString
		case '(', ')', '*', '+', '-', '.', '/', '#', '%', ' ':
			f.esc = escCharset
		default:
			f.esc = escNone // a two-byte sequence (ESC 7, ESC =, ESC M, …)
		}
	case escCSI:
		if c >= 0x40 && c <= 0x7e {
			f.esc = escNone
		}
	case escString:
		switch c {
		case 0x07:
			f.esc = escNone
		case 0x1b:
			f.esc = escStrEsc
		}
	case escStrEsc:
		if c == '\\' {
			f.esc = escNone
		} else {
			f.esc = escString
		}
	case escCharset:
		f.esc = escNone
	}
}
