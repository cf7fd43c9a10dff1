package term

import (
	"strings"
	"testing"
)

// FuzzFilter: whatever a program writes, in whatever chunks, the text has
// no escape or other control character but newlines and tabs, and the
// screen never panics.
func FuzzFilter(f *testing.F) {
	for _, s := range []string{"plain\n", "\x1b[31mred\x1b[0m\r\n", "10%\r20%\r\n", "\x1b]0;t\x07x", "a\bb", "\x1b", "\xc3", "\x1b[?1049h\x1b[2J\x1b[Hfull\x1b[?1049l"} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, data string, cut uint8) {
		var flt Filter
		scr := NewScreen(20, 5, nil)
		step := int(cut%16) + 1
		var out strings.Builder
		for i := 0; i < len(data); i += step {
			chunk := []byte(data[i:min(len(data), i+step)])
			out.WriteString(flt.Write(chunk))
			scr.Write(chunk)
		}
		for _, r := range out.String() {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f {
				t.Fatalf("control character %U in %q", r, out.String())
			}
		}
		snap := scr.Snapshot()
		if len(snap.Rows) != 5 || snap.Row < 1 || snap.Col < 1 {
			t.Fatalf("snapshot %+v", snap)
		}
	})
}
