package shell

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitFor reads new output until it contains want.
func waitFor(t *testing.T, p *Process, want string) string {
	t.Helper()
	var got strings.Builder
	deadline := time.After(10 * time.Second)
	for {
		ch := p.Changed()
		out, errOut := p.TakeNew()
		got.Write(out)
		got.Write(errOut)
		if strings.Contains(got.String(), want) {
			return got.String()
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no %q in %q", want, got.String())
		}
	}
}

// TestPipeInput: a command with a stdin pipe reads what Input writes, and
// end of file once CloseInput closes it.
func TestPipeInput(t *testing.T) {
	r := testRunner(t, "/bin/sh", Options{})
	p, err := r.Start(Command{Script: `read line; echo "got $line"; cat; echo eof`, Dir: t.TempDir(), Stdin: StdinPipe, Window: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Input([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p, "got hello\n")
	if err := p.Input([]byte("more\n")); err != nil {
		t.Fatal(err)
	}
	if got := waitFor(t, p, "more\n"); got != "more\n" {
		t.Fatalf("TakeNew repeated output: %q", got)
	}
	if err := p.CloseInput(); err != nil {
		t.Fatal(err)
	}
	res := p.Wait(context.Background(), 10*time.Second)
	if res.ExitCode != 0 || !strings.HasSuffix(res.Stdout.Text, "eof\n") {
		t.Fatalf("%+v", res)
	}
	if err := p.Input([]byte("late")); err != ErrNoInput {
		t.Fatalf("input after close: %v", err)
	}
}

// TestTTY: under a pseudo-terminal stdin and stdout are terminals of the
// asked size, stderr goes to the same stream, and ^C interrupts.
func TestTTY(t *testing.T) {
	r := testRunner(t, "/bin/bash", Options{})
	p, err := r.Start(Command{Script: `test -t 0 && test -t 1 && echo tty-yes; stty size; echo to-stderr >&2; echo "TERM=$TERM"; sleep 100; echo after-sleep`, Dir: t.TempDir(), Stdin: StdinTTY, Cols: 90, Rows: 30, Window: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	got := waitFor(t, p, "TERM=")
	for _, want := range []string{"tty-yes\r\n", "30 90\r\n", "to-stderr\r\n", "TERM=xterm-256color"} {
		if !strings.Contains(got, want) {
			t.Fatalf("no %q in %q", want, got)
		}
	}
	if err := p.Input([]byte{0x03}); err != nil {
		t.Fatal(err)
	}
	res := p.Wait(context.Background(), 10*time.Second)
	if res.TimedOut || strings.Contains(res.Stdout.Text, "after-sleep") {
		t.Fatalf("^C did not interrupt: %+v", res)
	}
}

// TestTakeNewWindow: unread output beyond the window is dropped, and the
// next read says how much.
func TestTakeNewWindow(t *testing.T) {
	r := testRunner(t, "/bin/sh", Options{})
	p, err := r.Start(Command{Script: `head -c 100000 /dev/zero | tr '\0' x; echo; echo end`, Dir: t.TempDir(), Window: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.Wait(context.Background(), 10*time.Second)
	n := p.TakeNewCounted()
	out := n.Stdout
	if !strings.HasPrefix(string(out), "[... ") || !strings.Contains(string(out), "bytes of output dropped") || !strings.HasSuffix(string(out), "end\n") || len(out) > 2200 {
		t.Fatalf("%d bytes: %.200q", len(out), out)
	}
	// The count is the note's number; the note and what is kept hold the rest.
	if want := fmt.Sprintf("[... %d bytes of output dropped", n.StdoutDropped); n.StdoutDropped < 98000 || !strings.HasPrefix(string(out), want) || n.StderrDropped != 0 {
		t.Fatalf("dropped %d/%d, output %.80q", n.StdoutDropped, n.StderrDropped, out)
	}
	if again := p.TakeNewCounted(); again.StdoutDropped != 0 || len(again.Stdout) != 0 {
		t.Fatalf("a second read: %+v", again)
	}
}

// TestResultSignal: a shell ended by a signal says which, besides the
// 128+N exit code; one that exits says none.
func TestResultSignal(t *testing.T) {
	r := testRunner(t, "/bin/sh", Options{})
	p, err := r.Start(Command{Script: "sleep 100", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if res := p.Wait(context.Background(), 10*time.Second); res.Signal != "KILL" || res.ExitCode != 137 {
		t.Fatalf("killed: signal %q, exit %d", res.Signal, res.ExitCode)
	}
	if res := run(t, r, t.TempDir(), "exit 137", 10*time.Second); res.Signal != "" || res.ExitCode != 137 {
		t.Fatalf("exit 137: signal %q, exit %d", res.Signal, res.ExitCode)
	}
}

// TestPrestart: a prestarted shell given its command later behaves as a
// started one: exit code, output, the directory it ends in, the stderr of
// a syntax error, the environment, and a command it never gets.
func TestPrestart(t *testing.T) {
	r := testRunner(t, "/bin/bash", Options{})
	dir, other := t.TempDir(), t.TempDir()
	scripts := []string{
		"echo out; echo err >&2; exit 3",
		"cd /; pwd",
		"if then fi",
		"echo \"$PWD|$OLDPWD|$0|$#\"; set -x; true",
		"printf 'no newline'",
		"cat <<EOF\nheredoc\nEOF\n# trailing comment",
	}
	for _, script := range scripts {
		p, err := r.Start(Command{Script: script, Dir: other, Sentinel: testSentinel})
		if err != nil {
			t.Fatal(err)
		}
		want := p.Wait(context.Background(), 10*time.Second)
		p.Close()

		q, err := r.Prestart(dir, testSentinel)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Begin(Command{Script: script, Dir: other}); err != nil {
			t.Fatal(err)
		}
		got := q.Wait(context.Background(), 10*time.Second)
		q.Close()
		if got.ExitCode != want.ExitCode || got.Stdout.Text != want.Stdout.Text || got.Stderr.Text != want.Stderr.Text || got.Dir != want.Dir {
			t.Fatalf("%q:\nprestarted %d %q %q %q\nstarted    %d %q %q %q", script, got.ExitCode, got.Stdout.Text, got.Stderr.Text, got.Dir, want.ExitCode, want.Stdout.Text, want.Stderr.Text, want.Dir)
		}
	}
	q, err := r.Prestart(dir, testSentinel)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Begin(Command{Script: "a\x00b", Dir: dir}); err != ErrNotPrestartable {
		t.Fatalf("NUL: %v", err)
	}
	q.Terminate()
	<-q.Terminated()
	q.Close()
	// Never given a command, it ends once closed.
	q, err = r.Prestart(dir, testSentinel)
	if err != nil {
		t.Fatal(err)
	}
	q.Close()
	if res := q.Wait(context.Background(), 5*time.Second); res.TimedOut {
		t.Fatal("an unused prestarted shell did not end")
	}
}

// TestCommandEnv: a command's own variables reach it, started or
// prestarted, values with spaces, quotes and newlines intact, and the
// prestarted shell's reading leaves no variable of its own behind.
func TestCommandEnv(t *testing.T) {
	r := testRunner(t, "/bin/bash", Options{})
	dir := t.TempDir()
	env := []string{"TRACEPARENT=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "ODD=a b'c\"d\ne$f"}
	script := `printf '%s|%s|%s' "$TRACEPARENT" "$ODD" "${__boris_v-unset}"`
	want := env[0][len("TRACEPARENT="):] + "|" + env[1][len("ODD="):] + "|unset"
	p, err := r.Start(Command{Script: script, Dir: dir, Env: env, Sentinel: testSentinel})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Wait(context.Background(), 10*time.Second).Stdout.Text; got != want {
		t.Fatalf("started: %q, want %q", got, want)
	}
	p.Close()
	for _, e := range [][]string{env, nil} {
		q, err := r.Prestart(dir, testSentinel)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Begin(Command{Script: script, Dir: dir, Env: e}); err != nil {
			t.Fatal(err)
		}
		got := q.Wait(context.Background(), 10*time.Second).Stdout.Text
		q.Close()
		w := want
		if e == nil {
			w = "||unset"
		}
		if got != w {
			t.Fatalf("prestarted with %q: %q, want %q", e, got, w)
		}
	}
}
