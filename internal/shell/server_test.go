package shell

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for the stderr goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestServerPipesAndStop(t *testing.T) {
	var started []string
	r := NewRunner("", Environ(os.Environ()), Options{Grace: 200 * time.Millisecond, Start: func(c *exec.Cmd) error {
		started = append(started, c.Args[0])
		return c.Start()
	}})
	stderr := &lockedBuffer{}
	dir := t.TempDir()
	// A server that echoes lines, says hello on stderr, ignores TERM and
	// leaves a child in its group.
	s, err := r.StartServer(ServerSpec{
		Argv:   []string{"sh", "-c", `trap '' TERM; echo hello >&2; sleep 300 & while IFS= read -r l; do echo "got $l in $PWD"; done`},
		Dir:    dir,
		Stderr: stderr,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(started) != 1 || started[0] != "sh" {
		t.Fatalf("the runner's Start hook was not used: %v", started)
	}
	if _, err := s.Stdin().Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(s.Stdout()).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if want := "got ping in " + dir + "\n"; line != want {
		t.Fatalf("stdout %q, want %q", line, want)
	}
	pgid := s.Pid()
	if !GroupAlive(pgid) {
		t.Fatal("group not alive")
	}
	t0 := time.Now()
	s.Stop()
	if GroupAlive(pgid) {
		t.Fatal("the group outlived Stop")
	}
	if d := time.Since(t0); d < 150*time.Millisecond {
		t.Fatalf("Stop returned after %v: the TERM-ignoring server should have lasted the grace period", d)
	}
	select {
	case <-s.Exited():
	default:
		t.Fatal("Exited not closed after Stop")
	}
	// Stop closes stdin first: the loop ends on EOF, its TERM-ignoring
	// child needed the KILL.
	if s.ExitCode() != 0 {
		t.Fatalf("exit code %d, want 0 (the read loop's end)", s.ExitCode())
	}
	s.WaitStderr()
	if !strings.Contains(stderr.String(), "hello") {
		t.Fatalf("stderr %q", stderr.String())
	}
	s.Stop() // idempotent
}

func TestServerExitsOnItsOwn(t *testing.T) {
	r := NewRunner("", Environ(os.Environ()), Options{})
	s, err := r.StartServer(ServerSpec{Argv: []string{"sh", "-c", "exit 3"}, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("not reaped")
	}
	if s.ExitCode() != 3 {
		t.Fatalf("exit code %d", s.ExitCode())
	}
	s.Stop()
}

func TestServerNotFound(t *testing.T) {
	r := NewRunner("", Environ(os.Environ()), Options{})
	_, err := r.StartServer(ServerSpec{Argv: []string{"no-such-language-server-here"}, Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "not in PATH") {
		t.Fatalf("err = %v", err)
	}
}

// What a server wrote to stderr before an answer on stdout is in the
// stderr sink once SettleStderr returns, though the two pipes are read
// by different goroutines; and the stream ends intact.
func TestServerSettleStderr(t *testing.T) {
	r := NewRunner("", Environ(os.Environ()), Options{Grace: 200 * time.Millisecond})
	stderr := &lockedBuffer{}
	// For each line read: a line on stderr, then the answer on stdout.
	s, err := r.StartServer(ServerSpec{
		Argv:   []string{"sh", "-c", `while read l; do echo "err $l" >&2; echo "out $l"; done`},
		Dir:    t.TempDir(),
		Stderr: stderr,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	out := bufio.NewReader(s.Stdout())
	for i := range 200 {
		if _, err := s.Stdin().Write([]byte(strings.Repeat("x", i%7) + "\n")); err != nil {
			t.Fatal(err)
		}
		if _, err := out.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		s.SettleStderr()
		if n := strings.Count(stderr.String(), "\n"); n != i+1 {
			t.Fatalf("after answer %d the sink holds %d stderr lines", i+1, n)
		}
	}
	s.Stdin().Close()
	<-s.Exited()
	s.WaitStderr()
	if n := strings.Count(stderr.String(), "err "); n != 200 {
		t.Fatalf("%d stderr lines in all, want 200", n)
	}
}
