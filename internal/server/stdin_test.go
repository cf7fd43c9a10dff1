package server

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// chunky returns its input in reads of random small sizes.
type chunky struct {
	r   io.Reader
	rnd *rand.Rand
}

func (c chunky) Read(p []byte) (int, error) {
	return c.r.Read(p[:min(len(p), 1+c.rnd.Intn(7))])
}

func TestStdinReaderPassesLinesThrough(t *testing.T) {
	input := "{\"a\":1}\n\n{\"b\":\"x y\"}\r\n" + strings.Repeat("z", 300) + "\n{\"last\":true}" // no final newline
	for seed := range 20 {
		var refused int
		r := newStdinReader(chunky{strings.NewReader(input), rand.New(rand.NewSource(int64(seed)))}, 1000, func([]byte, int64) { refused++ })
		r.releaseEOF()
		got, err := io.ReadAll(r)
		if err != nil || string(got) != input || refused != 0 {
			t.Fatalf("seed %d: %q, %v, %d refused", seed, got, err, refused)
		}
	}
	// The standard reader checks hold too.
	r := newStdinReader(strings.NewReader(input), 1000, func([]byte, int64) {})
	r.releaseEOF()
	if err := iotest.TestReader(r, []byte(input)); err != nil {
		t.Fatal(err)
	}
}

func TestStdinReaderRefusesLongLines(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"content":"` + strings.Repeat("x", 5000) + `"}}` + "\n"
	input := "{\"a\":1}\n" + long + "{\"b\":2}\n" + strings.Repeat("y", 3000) // the last one over the limit too, at EOF
	var heads []string
	var sizes []int64
	r := newStdinReader(strings.NewReader(input), 1024, func(head []byte, size int64) {
		heads = append(heads, string(head))
		sizes = append(sizes, size)
	})
	r.releaseEOF()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "{\"a\":1}\n{\"b\":2}\n" {
		t.Fatalf("passed through %q", got)
	}
	if len(sizes) != 2 || sizes[0] != int64(len(long)) || sizes[1] != 3000 {
		t.Fatalf("refused sizes %v", sizes)
	}
	if len(heads[0]) != headSize || !strings.HasPrefix(long, heads[0]) {
		t.Fatalf("head %q", heads[0])
	}
	var resp struct {
		ID    json.RawMessage
		Error struct {
			Code    int
			Message string
		}
	}
	if err := json.Unmarshal(tooLongResponse([]byte(heads[0]), sizes[0], 1024), &resp); err != nil {
		t.Fatal(err)
	}
	if string(resp.ID) != "7" || resp.Error.Code != -32600 || !strings.Contains(resp.Error.Message, "over the 1024-byte limit") {
		t.Fatalf("response %+v", resp)
	}
}

func TestStdinReaderHoldsTheEnd(t *testing.T) {
	r := newStdinReader(strings.NewReader("{\"a\":1}\n"), 1024, nil)
	buf := make([]byte, 100)
	if n, err := r.Read(buf); err != nil || string(buf[:n]) != "{\"a\":1}\n" {
		t.Fatalf("%q %v", buf[:n], err)
	}
	result := make(chan error, 1)
	go func() { _, err := r.Read(buf); result <- err }()
	select {
	case <-r.eof:
	case <-time.After(5 * time.Second):
		t.Fatal("the end was not reported")
	}
	select {
	case err := <-result:
		t.Fatalf("the end reached the reader before the release: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	r.releaseEOF()
	if err := <-result; err != io.EOF {
		t.Fatalf("after the release: %v", err)
	}
}

func TestRequestID(t *testing.T) {
	for head, want := range map[string]string{
		`{"jsonrpc":"2.0","id":12,"method":"x","params":{"a":"` + "…": `12`,
		`{"id":"abc","params":`:                       `"abc"`,
		`{"jsonrpc":"2.0","params":{"content":"xxxxx`: `null`, // params first, truncated
		`{"id":{"no":1}}`:                             `null`,
		`[1,2`:                                        `null`,
		``:                                            `null`,
	} {
		if got := string(requestID([]byte(head))); got != want {
			t.Errorf("requestID(%.30q) = %s, want %s", head, got, want)
		}
	}
	if !bytes.HasSuffix(tooLongResponse(nil, 1, 1), []byte("}\n")) {
		t.Fatal("the response is not one line")
	}
}
