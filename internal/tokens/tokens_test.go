package tokens

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  string
	}{
		{"alpha\n", []string{"alpha"}, ""},
		{"# agents\n\n  alpha  \r\n\tbeta\nalpha\n# gamma\n", []string{"alpha", "beta"}, ""},
		{"alpha\nbeta", []string{"alpha", "beta"}, ""},
		{"", nil, "holds no token"},
		{"# only a comment\n\n   \n", nil, "holds no token"},
		{"alpha\nbeta gamma\n", nil, "line 2 holds more than a token"},
		{"alpha,beta\n", nil, "line 1 holds more than a token"},
	} {
		got, err := Parse([]byte(c.in))
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want %q", c.in, err, c.err)
		case c.err == "" && (err != nil || !slices.Equal(got, c.want)):
			t.Errorf("%q: %q %v, want %q", c.in, got, err, c.want)
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// logs collects a Set's log lines.
type logs struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logs) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *logs) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func newSet(t *testing.T, static []string, file string) (*Set, *logs) {
	t.Helper()
	l := &logs{}
	s, err := New(Options{Static: static, File: file, Logger: slog.New(slog.NewTextHandler(l, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return s, l
}

func wantMatch(t *testing.T, s *Set, tok, cred string) {
	t.Helper()
	got, ok := s.Match(tok)
	if cred == "" && ok {
		t.Fatalf("%q accepted as %s", tok, got)
	}
	if cred != "" && (!ok || got != cred) {
		t.Fatalf("%q: %q %v, want %s", tok, got, ok, cred)
	}
}

// TestCredentialsAreStable: --token tokens come first, the file's next;
// a token keeps its credential across reloads, a removed one is
// revoked, and one added back gets a new number.
func TestCredentialsAreStable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	write(t, file, "# agents\nalpha\nbeta\nstatic\n")
	s, l := newSet(t, []string{"static", "other"}, file)
	wantMatch(t, s, "static", "token-1")
	wantMatch(t, s, "other", "token-2")
	wantMatch(t, s, "alpha", "token-3")
	wantMatch(t, s, "beta", "token-4")
	wantMatch(t, s, "gamma", "")
	wantMatch(t, s, "alph", "")
	if s.Len() != 4 {
		t.Fatalf("%d tokens, want 4", s.Len())
	}
	if got := s.Check(); got != nil {
		t.Fatalf("an unchanged file revoked %q", got)
	}

	// alpha and static leave the file: alpha is revoked, static stays
	// (it was given with --token); gamma is new.
	write(t, file, "beta\ngamma\n")
	if got := s.Check(); !slices.Equal(got, []string{"token-3"}) {
		t.Fatalf("revoked %q, want [token-3]", got)
	}
	wantMatch(t, s, "alpha", "")
	wantMatch(t, s, "beta", "token-4")
	wantMatch(t, s, "gamma", "token-5")
	wantMatch(t, s, "static", "token-1")
	if !strings.Contains(l.String(), `msg="token file reloaded"`) || !strings.Contains(l.String(), "added=token-5 removed=token-3") {
		t.Fatalf("log: %s", l)
	}
	if strings.Contains(l.String(), "alpha") || strings.Contains(l.String(), "gamma") {
		t.Fatalf("a token in the log: %s", l)
	}

	write(t, file, "beta\ngamma\nalpha\n")
	s.Check()
	wantMatch(t, s, "alpha", "token-6")
}

// TestBadReloadKeepsTheTokens: a file that is gone, empty or malformed
// leaves the tokens as they were, with one warning per problem.
func TestBadReloadKeepsTheTokens(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tokens")
	write(t, file, "alpha\n")
	s, l := newSet(t, nil, file)
	for _, c := range []struct {
		name   string
		change func()
		warn   string
	}{
		{"removed", func() { os.Remove(file) }, "no such file"},
		{"empty", func() { write(t, file, "\n# nothing\n") }, "holds no token"},
		{"malformed", func() { write(t, file, "alpha beta\n") }, "line 1 holds more than a token"},
		{"a directory", func() { os.Remove(file); os.Mkdir(file, 0o700) }, "is a directory"},
	} {
		c.change()
		for range 2 {
			if got := s.Check(); got != nil {
				t.Fatalf("%s: revoked %q", c.name, got)
			}
		}
		wantMatch(t, s, "alpha", "token-1")
		if n := strings.Count(l.String(), c.warn); n != 1 {
			t.Fatalf("%s: %d warnings naming %q, want 1:\n%s", c.name, n, c.warn, l)
		}
	}
	os.Remove(file)
	write(t, file, "beta\n")
	if got := s.Check(); !slices.Equal(got, []string{"token-1"}) {
		t.Fatalf("revoked %q once the file is good again", got)
	}
	wantMatch(t, s, "beta", "token-2")
}

func TestNewRefusesAnUnusableFile(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	write(t, empty, "# none yet\n")
	big := filepath.Join(dir, "big")
	write(t, big, strings.Repeat("x", MaxFileSize+1))
	for file, want := range map[string]string{
		filepath.Join(dir, "missing"): "no such file",
		empty:                         "holds no token",
		big:                           "larger than",
	} {
		if _, err := New(Options{File: file}); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), file) {
			t.Errorf("%s: %v, want an error naming the file and %q", file, err, want)
		}
	}
}

// TestWatchRevokes: Watch notices a removal by itself and reports it.
func TestWatchRevokes(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	write(t, file, "alpha\nbeta\n")
	s, _ := newSet(t, nil, file)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan []string, 1)
	done := make(chan struct{})
	go func() {
		s.Watch(ctx, 10*time.Millisecond, func(creds []string) { got <- creds })
		close(done)
	}()
	write(t, file, "beta\n")
	select {
	case creds := <-got:
		if !slices.Equal(creds, []string{"token-1"}) {
			t.Fatalf("revoked %q", creds)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the removal was not noticed")
	}
	wantMatch(t, s, "alpha", "")
	cancel()
	<-done
}
