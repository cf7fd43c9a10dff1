package term

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestFilter(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   []string // what each chunk adds
	}{
		{"plain", []string{"hello\nworld"}, []string{"hello\nworld"}},
		{"crlf from the terminal", []string{"a\r\nb\r\n"}, []string{"a\nb\n"}},
		{"colour removed", []string{"\x1b[1;31merror\x1b[0m: bad\n"}, []string{"error: bad\n"}},
		{"title and OSC 8 link", []string{"\x1b]0;title\x07x\x1b]8;;http://e\x1b\\link\x1b]8;;\x1b\\\n"}, []string{"xlink\n"}},
		{"progress bar collapses", []string{"10%\r20%\r100%\ndone\n"}, []string{"100%\ndone\n"}},
		{"overwrite keeps the tail", []string{"abcdef\r12\n"}, []string{"12cdef\n"}},
		{"backspace", []string{"ab\bc\n"}, []string{"ac\n"}},
		{"cursor movement and erase ignored", []string{"a\x1b[2K\x1b[1Gb\x1b[?25l\n"}, []string{"ab\n"}},
		{"charset designation", []string{"\x1b(Bx\x1b)0y\n"}, []string{"xy\n"}},
		{"bell and other controls", []string{"a\x07\x00b\n"}, []string{"ab\n"}},
		{"a sequence split between chunks", []string{"red\x1b[3", "1mtext\n"}, []string{"red", "text\n"}},
		{"a character split between chunks", []string{"caf\xc3", "\xa9\n"}, []string{"caf", "é\n"}},
		{"a prompt without newline is returned at once", []string{">>> ", "1+2\r\n3\r\n>>> "}, []string{">>> ", "1+2\n3\n>>> "}},
		{"a line rewritten after it was returned comes again", []string{"10%", "\r20%", "\r30%\n"}, []string{"10%", "\n20%", "\n30%\n"}},
		{"appending after a return is not a rewrite", []string{"abc", "def\n"}, []string{"abc", "def\n"}},
		{"rewriting with the same text is not a rewrite", []string{"abc", "\rabcd\n"}, []string{"abc", "d\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f Filter
			for i, c := range tt.chunks {
				if got := f.Write([]byte(c)); got != tt.want[i] {
					t.Fatalf("chunk %d %q: got %q, want %q", i, c, got, tt.want[i])
				}
			}
		})
	}
}

func TestScreen(t *testing.T) {
	var replies bytes.Buffer
	s := NewScreen(20, 5, &replies)
	// Clear, draw on rows 1 and 3, put the cursor at row 3 column 5, and
	// ask where the cursor is.
	s.Write([]byte("\x1b[2J\x1b[Hfirst\x1b[3;1Hthird\x1b[3;5H"))
	s.Write([]byte("\x1b[6n"))
	// A character split between writes.
	s.Write([]byte("\x1b[5;1Hé\xc3"))
	s.Write([]byte("\xa9"))
	snap := s.Snapshot()
	if snap.Rows[0] != "first" || snap.Rows[2] != "third" || snap.Rows[4] != "éé" {
		t.Fatalf("rows %q", snap.Rows)
	}
	if snap.Row != 5 || snap.Col != 3 {
		t.Fatalf("cursor at row %d col %d", snap.Row, snap.Col)
	}
	if !strings.Contains(replies.String(), "\x1b[3;5R") {
		t.Fatalf("no cursor position report: %q", replies.String())
	}
	if got := snap.Text(); got != "first\n\nthird\n\néé\n" {
		t.Fatalf("text %q", got)
	}
}

// A line that never ends is cut at MaxLine: the filter holds no more.
func TestFilterLongLine(t *testing.T) {
	var f Filter
	got := f.Write([]byte(strings.Repeat("x", 2*MaxLine+5)))
	if got != strings.Repeat("x", MaxLine)+"\n"+strings.Repeat("x", MaxLine)+"\n"+"xxxxx" || len(f.line) > MaxLine {
		t.Fatalf("%d bytes, line %d", len(got), len(f.line))
	}
}

// A flood of output is not emulated as it comes; the screen still shows
// its end exactly when read, and the program's later output.
func TestScreenFlood(t *testing.T) {
	s := NewScreen(40, 5, nil)
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, "line %d\r\n", i) // as a terminal gets it
	}
	flood := b.String() // ~190 KB, far past FloodBytes in one second
	for i := 0; i < len(flood); i += 4096 {
		s.Write([]byte(flood[i:min(len(flood), i+4096)]))
	}
	if !s.stale || !s.lost || len(s.backlog) > FloodBytes {
		t.Fatalf("stale %v lost %v backlog %d", s.stale, s.lost, len(s.backlog))
	}
	snap := s.Snapshot()
	if snap.Rows[3] != "line 19999" || snap.Row != 5 {
		t.Fatalf("rows %q cursor row %d", snap.Rows, snap.Row)
	}
	s.Write([]byte("after"))
	if got := s.Snapshot().Rows[4]; got != "after" {
		t.Fatalf("after the flood: %q", got)
	}
}
