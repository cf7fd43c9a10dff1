package shell

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

const testSentinel = "__BORIS_CWD_0a1b2c3d__"

// feed writes data into a fresh capture split at the given cut points.
func feed(t testing.TB, limit int, sentinel string, data []byte, cuts []int) *capture {
	t.Helper()
	c := newCapture(limit, sentinel)
	prev := 0
	for _, cut := range cuts {
		if cut < prev || cut > len(data) {
			continue
		}
		c.Write(data[prev:cut])
		prev = cut
	}
	c.Write(data[prev:])
	return c
}

func TestCaptureSentinel(t *testing.T) {
	S := testSentinel
	tests := []struct {
		name     string
		stream   string
		wantText string
		wantDir  string
	}{
		{"plain", "hello\n" + S + "/tmp\n" + S, "hello\n", "/tmp"},
		{"no trailing newline kept exact", "abc" + S + "/x y\n" + S, "abc", "/x y"},
		{"blank lines kept", "\n\na\n\n" + S + "/\n" + S, "\n\na\n\n", "/"},
		{"empty output", S + "/home\n" + S, "", "/home"},
		{"missing sentinel", "killed before the end\n", "killed before the end\n", ""},
		{"only one sentinel", "x" + S + "/tmp\n", "x" + S + "/tmp\n", ""},
		{"old sentinel text left alone", "__BORIS_CWD__\n" + S + "/a\n" + S, "__BORIS_CWD__\n", "/a"},
		{"other nonce left alone", "__BORIS_CWD_ffffffff__\n" + S + "/a\n" + S, "__BORIS_CWD_ffffffff__\n", "/a"},
		{"late output after the pair", "out\n" + S + "/a\n" + S + "late\n", "out\nlate\n", "/a"},
		{"trap output after the pair", S + "/a\n" + S + "bye", "bye", "/a"},
		{"relative dir is not a sentinel", "o" + S + "rel\n" + S, "o" + S + "rel\n" + S, ""},
		{"user prints sentinel once before", S + "\nmid\n" + S + "/d\n" + S, S + "\nmid\n", "/d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.stream)
			// Every single split point, and byte-by-byte.
			for cut := 0; cut <= len(data); cut++ {
				c := feed(t, MaxOutputChars, S, data, []int{cut})
				out, dir := c.result()
				if out.Text != tt.wantText || dir != tt.wantDir {
					t.Fatalf("cut %d: got text %q dir %q, want %q %q", cut, out.Text, dir, tt.wantText, tt.wantDir)
				}
				if out.Chars != int64(utf8.RuneCountInString(tt.wantText)) || out.Truncated {
					t.Fatalf("cut %d: chars %d truncated %v, want %d false", cut, out.Chars, out.Truncated, utf8.RuneCountInString(tt.wantText))
				}
			}
			var cuts []int
			for i := range data {
				cuts = append(cuts, i)
			}
			out, dir := feed(t, MaxOutputChars, S, data, cuts).result()
			if out.Text != tt.wantText || dir != tt.wantDir {
				t.Fatalf("bytewise: got %q %q", out.Text, dir)
			}
		})
	}
}

func TestCaptureTruncates(t *testing.T) {
	S := testSentinel
	// 50,000 characters of two-byte runes, then the sentinel pair.
	user := strings.Repeat("é", 50000)
	c := feed(t, MaxOutputChars, S, []byte(user+S+"/w\n"+S), []int{7, 4096, 65536})
	out, dir := c.result()
	if dir != "/w" {
		t.Fatalf("dir %q", dir)
	}
	if !out.Truncated || out.Chars != 50000 || utf8.RuneCountInString(out.Text) != MaxOutputChars || !utf8.ValidString(out.Text) {
		t.Fatalf("truncated=%v chars=%d kept=%d valid=%v", out.Truncated, out.Chars, utf8.RuneCountInString(out.Text), utf8.ValidString(out.Text))
	}
	// Just under the limit is not truncated although the stream with the
	// sentinel is longer than the limit.
	user = strings.Repeat("a", MaxOutputChars-1)
	out, _ = feed(t, MaxOutputChars, S, []byte(user+S+"/w\n"+S), nil).result()
	if out.Truncated || out.Text != user {
		t.Fatalf("under the limit: truncated=%v len=%d", out.Truncated, len(out.Text))
	}
}

func TestCaptureBoundedMemory(t *testing.T) {
	c := newCapture(MaxOutputChars, testSentinel)
	chunk := bytes.Repeat([]byte("0123456789abcdef\n"), 4096)
	for range 2000 { // ~140 MB
		c.Write(chunk)
	}
	c.Write([]byte(testSentinel + "/end\n" + testSentinel))
	out, dir := c.result()
	if dir != "/end" || !out.Truncated || out.Chars != int64(len(chunk))*2000 {
		t.Fatalf("dir %q truncated %v chars %d", dir, out.Truncated, out.Chars)
	}
	if cap(c.head) > c.headCap*2 {
		t.Fatalf("head grew to %d bytes", cap(c.head))
	}
}

// FuzzCapture checks that whatever the user prints (without the real
// sentinel) and however the stream is split, the sentinel pair is found and
// the user's bytes come back exactly.
func FuzzCapture(f *testing.F) {
	f.Add([]byte("hello\n"), []byte("/tmp"), []byte(""), uint64(1))
	f.Add([]byte("__BORIS_CWD_0a1b2c3d_"), []byte("/"), []byte("late"), uint64(7))
	f.Add([]byte("_"), []byte("/a\nb"), []byte("__"), uint64(3))
	f.Fuzz(func(t *testing.T, user, dir, late []byte, seed uint64) {
		S := testSentinel
		if bytes.Contains(append(append(append([]byte{}, user...), dir...), late...), []byte("BORIS_CWD")) {
			t.Skip()
		}
		if len(dir) == 0 || dir[0] != '/' || len(dir) > 1000 || bytes.HasSuffix(dir, []byte("\n")) {
			dir = append([]byte("/"), bytes.ReplaceAll(dir, []byte("\n"), nil)...)
			if len(dir) > 1000 {
				dir = dir[:1000]
			}
		}
		stream := append(append(append(append(append(append([]byte{}, user...), S...), dir...), '\n'), S...), late...)
		r := rand.New(rand.NewPCG(seed, seed))
		var cuts []int
		for i := 0; i < 8 && len(stream) > 0; i++ {
			cuts = append(cuts, r.IntN(len(stream)+1))
		}
		sortInts(cuts)
		out, gotDir := feed(t, 1<<20, S, stream, cuts).result()
		want := string(user) + string(late)
		if gotDir != string(dir) || out.Text != want {
			t.Fatalf("got dir %q text %q; want %q %q", gotDir, out.Text, dir, want)
		}

		// Progress taken after every write hands out exactly the output
		// before the sentinel, never a byte of it.
		c := newCapture(1<<20, S)
		c.enableProgress(maxProgressBytes)
		var progress []byte
		prev := 0
		for _, cut := range append(cuts, len(stream)) {
			if cut < prev {
				continue
			}
			c.Write(stream[prev:cut])
			prev = cut
			progress = append(progress, c.takeProgress()...)
		}
		if string(progress) != string(user) {
			t.Fatalf("progress %q, want %q", progress, user)
		}
	})
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// TestProgressHoldsBackOnlyASentinelPrefix: output shorter than the sentinel
// goes out at once; only a tail that really is the sentinel's start waits.
func TestProgressHoldsBackOnlyASentinelPrefix(t *testing.T) {
	S := testSentinel
	steps := []struct {
		write, want string
	}{
		{"line1\n", "line1\n"},
		{"", ""},
		{"x_", "x"},            // "_" may begin the sentinel
		{"y\n", "_y\n"},        // it did not
		{S[:7], ""},            // a long sentinel prefix waits whole
		{"!", S[:7] + "!"},     // and goes out when it is not one
		{"ok" + S[:3], "ok"},   // across the sentinel's own shape
		{S[3:] + "/tmp\n", ""}, // the sentinel itself never goes out
		{"after\n", ""},        // nor anything after it
	}
	c := newCapture(1<<20, S)
	c.enableProgress(maxProgressBytes)
	for i, st := range steps {
		c.Write([]byte(st.write))
		if got := string(c.takeProgress()); got != st.want {
			t.Fatalf("step %d: wrote %q, progress %q, want %q", i, st.write, got, st.want)
		}
	}
}
