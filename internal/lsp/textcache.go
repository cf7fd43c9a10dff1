package lsp

import (
	"bytes"
	"os"
	"sync"
)

// Answers show the source line of every location, so the files they point
// into are read; the same files come back call after call (the definition
// of a much-used function, the files of its references). Their texts are
// kept, with the offsets of their lines, and used again while a stat of the
// file finds it unchanged.

// text is a file's content and where its lines start.
type text struct {
	content []byte
	starts  []int
	st      stamp
	used    int64
}

func newText(content []byte, st stamp) *text {
	t := &text{content: content, st: st, starts: make([]int, 1, 64)}
	for i, b := range content {
		if b == '\n' {
			t.starts = append(t.starts, i+1)
		}
	}
	return t
}

// line returns line n (0-based) without its line ending.
func (t *text) line(n int) ([]byte, bool) {
	if n < 0 || n >= len(t.starts) {
		return nil, false
	}
	end := len(t.content)
	if n+1 < len(t.starts) {
		end = t.starts[n+1]
	}
	l := t.content[t.starts[n]:end]
	l = bytes.TrimSuffix(l, []byte{'\n'})
	return bytes.TrimSuffix(l, []byte{'\r'}), true
}

// Bounds of the text cache.
const (
	maxCachedTexts = 256
	maxCachedBytes = 32 << 20
)

// textCache holds recently read texts by path.
type textCache struct {
	mu    sync.Mutex
	m     map[string]*text
	bytes int
	clock int64
}

// get returns the cached text of path if it is still what the disk holds.
func (tc *textCache) get(path string) *text {
	fi, err := os.Stat(path)
	if err != nil || fi.IsDir() {
		return nil
	}
	st := stampOf(fi)
	tc.mu.Lock()
	defer tc.mu.Unlock()
	t := tc.m[path]
	if t == nil || t.st != st {
		return nil
	}
	tc.clock++
	t.used = tc.clock
	return t
}

// put caches a text, dropping the least recently used beyond the bounds.
func (tc *textCache) put(path string, t *text) {
	if len(t.content) > maxCachedBytes/8 {
		return
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.m == nil {
		tc.m = map[string]*text{}
	}
	if old := tc.m[path]; old != nil {
		tc.bytes -= len(old.content)
	}
	tc.clock++
	t.used = tc.clock
	tc.m[path] = t
	tc.bytes += len(t.content)
	for len(tc.m) > maxCachedTexts || tc.bytes > maxCachedBytes {
		var oldest string
		var at int64 = -1
		for p, x := range tc.m {
			if at < 0 || x.used < at {
				oldest, at = p, x.used
			}
		}
		tc.bytes -= len(tc.m[oldest].content)
		delete(tc.m, oldest)
	}
}
