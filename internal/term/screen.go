package term

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hinshun/vt10x"
)

// Default size of a terminal.
const (
	DefaultCols = 120
	DefaultRows = 40
)

// Screen is a terminal emulator fed with what a program writes to its
// terminal, so the screen it has drawn can be read at any time — the only
// readable form of a full-screen program (less, top, vi). Answers the
// program asks of its terminal (a cursor position report, say) go to reply.
//
// Emulating costs some 50 ns a byte, so a flood of output is not emulated
// as it comes: past FloodBytes within a second, the screen keeps only the
// last FloodBytes written and brings itself up to date from them when it is
// next read, or written after the flood. What is drawn after a flood (a
// full-screen program's redraw, the last lines of a log) shows exactly;
// only what scrolled away in it is lost, which the screen could not show
// anyway. Its memory is fixed. It is safe for concurrent use.
type Screen struct {
	mu         sync.Mutex
	cols, rows int
	reply      io.Writer
	vt         vt10x.Terminal
	pending    []byte // an incomplete UTF-8 character

	second  time.Time // start of the current second of output
	inSec   int       // bytes written in it
	stale   bool      // output since the flood began is only in backlog
	lost    bool      // backlog no longer holds all of it
	backlog []byte    // the last FloodBytes written while stale
}

// FloodBytes is how much output a second a Screen emulates as it comes,
// and how much of a flood it keeps.
const FloodBytes = 64 << 10

// NewScreen returns a cols×rows screen.
func NewScreen(cols, rows int, reply io.Writer) *Screen {
	if reply == nil {
		reply = io.Discard
	}
	s := &Screen{cols: cols, rows: rows, reply: reply}
	s.vt = s.newVT()
	return s
}

func (s *Screen) newVT() vt10x.Terminal {
	return vt10x.New(vt10x.WithSize(s.cols, s.rows), vt10x.WithWriter(s.reply))
}

// Write feeds the emulator; it never fails.
func (s *Screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if now.Sub(s.second) >= time.Second {
		s.second, s.inSec = now, 0
		s.catchUp() // a new second: whatever flood there was is over
	}
	s.inSec += len(p)
	if s.stale || s.inSec > FloodBytes {
		s.stale = true
		s.backlog = append(s.backlog, p...)
		if over := len(s.backlog) - FloodBytes; over > 0 {
			s.backlog = append(s.backlog[:0], s.backlog[over:]...)
			s.lost = true
		}
		return len(p), nil
	}
	s.feed(p)
	return len(p), nil
}

// catchUp brings a stale screen up to date from the backlog: fed on top of
// what it shows when the backlog holds all the flood, onto a fresh screen
// when it does not.
func (s *Screen) catchUp() {
	if !s.stale {
		return
	}
	if s.lost {
		s.vt, s.pending = s.newVT(), nil
		// Start on a line boundary where there is one.
		if i := bytes.IndexByte(s.backlog, '\n'); i >= 0 && i < len(s.backlog)-1 {
			s.backlog = s.backlog[i+1:]
		}
	}
	s.feed(s.backlog)
	s.backlog, s.stale, s.lost = nil, false, false
}

// feed writes to the emulator, keeping a character split between writes
// for the next one (the emulator stops before it).
func (s *Screen) feed(p []byte) {
	data := p
	if len(s.pending) > 0 {
		data = append(s.pending, p...)
		s.pending = nil
	}
	if n, _ := s.vt.Write(data); n < len(data) && !utf8.FullRune(data[n:]) {
		s.pending = append([]byte(nil), data[n:]...)
	}
}

// Snapshot is a screen as a terminal shows it.
type Snapshot struct {
	// Rows are the screen's lines, trailing blanks removed.
	Rows []string
	// Row and Col are the cursor's position, 1-based.
	Row, Col int
}

// Snapshot returns the screen now.
func (s *Screen) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.catchUp()
	s.vt.Lock()
	defer s.vt.Unlock()
	cols, rows := s.vt.Size()
	snap := Snapshot{Rows: make([]string, rows)}
	var b strings.Builder
	for y := range rows {
		b.Reset()
		for x := range cols {
			c := s.vt.Cell(x, y).Char
			if c == 0 {
				c = ' '
			}
			b.WriteRune(c)
		}
		snap.Rows[y] = strings.TrimRight(b.String(), " ")
	}
	cur := s.vt.Cursor()
	snap.Row, snap.Col = cur.Y+1, cur.X+1
	return snap
}

// Text renders a snapshot's rows, one per line, trailing empty rows
// dropped.
func (s Snapshot) Text() string {
	last := len(s.Rows)
	for last > 0 && s.Rows[last-1] == "" {
		last--
	}
	var b strings.Builder
	for _, r := range s.Rows[:last] {
		b.WriteString(r)
		b.WriteByte('\n')
	}
	return b.String()
}
