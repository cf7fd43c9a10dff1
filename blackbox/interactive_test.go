package blackbox

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var taskIDRe = regexp.MustCompile(`task_id: (task_\d+)\n`)

// startTask runs a bash call that starts a task and returns its id and
// the call's answer.
func startTask(t *testing.T, cs *mcp.ClientSession, args map[string]any) (string, string) {
	t.Helper()
	out := mustOK(t, cs, "bash", args)
	m := taskIDRe.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no task_id in %q", out)
	}
	return m[1], out
}

// converse sends input to a task until its answers (accumulated) contain
// want; reads with task_output when the answer is slow.
func converse(t *testing.T, cs *mcp.ClientSession, id, input, want string) string {
	t.Helper()
	got := mustOK(t, cs, "task_input", map[string]any{"task_id": id, "input": input, "wait_ms": 5000})
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(got, want) {
		if time.Now().After(deadline) {
			t.Fatalf("after %q: no %q in %q", input, want, got)
		}
		got += mustOK(t, cs, "task_output", map[string]any{"task_id": id, "wait_ms": 2000})
	}
	return got
}

// untilDone reads a task until it has ended and returns all it read.
func untilDone(t *testing.T, cs *mcp.ClientSession, id string) string {
	t.Helper()
	var all strings.Builder
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		out, isErr := call(t, cs, "task_output", map[string]any{"task_id": id, "wait_ms": 2000})
		if isErr {
			t.Fatalf("task_output: %s (read so far: %q)", out, all.String())
		}
		all.WriteString(out)
		if strings.HasPrefix(out, "status: completed") {
			return all.String()
		}
	}
	t.Fatalf("task %s did not end: %q", id, all.String())
	return ""
}

// outputText joins the output sections of task answers read one after
// another: under load a task's output can arrive split across reads, each
// with its own status lines.
func outputText(answers string) string {
	var b strings.Builder
	for _, part := range strings.Split(answers, "output:\n")[1:] {
		if i := strings.Index(part, "status: "); i >= 0 {
			part = part[:i]
		}
		b.WriteString(part)
	}
	return b.String()
}

// TestInteractiveThroughMCP drives interactive commands as an agent would,
// over stdio and HTTP at both protocol eras: a Python REPL under a
// terminal, a prompt answered through a pipe and a terminal, ^C and ^D, a
// terminal's text output, less's screen, incremental and waiting reads,
// yield_ms, the task list and task_kill.
func TestInteractiveThroughMCP(t *testing.T) {
	for _, a := range agents(t) {
		t.Run(a.name, func(t *testing.T) {
			cs := a.cs
			// A Python REPL under a terminal.
			repl, first := startTask(t, cs, map[string]any{"command": "python3 -i -q", "tty": true})
			if !strings.Contains(first, ">>> ") {
				converse(t, cs, repl, "", ">>> ")
			}
			converse(t, cs, repl, "1+2\n", "3\n")
			converse(t, cs, repl, "def sq(x):\n", "... ")
			converse(t, cs, repl, "    return x*x\n", "... ")
			converse(t, cs, repl, "\n", ">>> ")
			converse(t, cs, repl, "sq(7)\n", "49\n")
			if got := converse(t, cs, repl, "exit()\n", "status: completed"); !strings.Contains(got, "exit_code: 0") {
				t.Fatalf("exit(): %q", got)
			}

			// A prompt, answered through a pipe and under a terminal.
			for _, mode := range []string{"interactive", "tty"} {
				id, _ := startTask(t, cs, map[string]any{"command": `read -p 'Name: ' n; echo "hello $n"`, mode: true})
				got := converse(t, cs, id, "boris\n", "hello boris")
				if !strings.Contains(got, "status: completed") {
					got += untilDone(t, cs, id)
				}
				if !strings.Contains(got, "exit_code: 0") {
					t.Fatalf("%s prompt: %q", mode, got)
				}
			}

			// ^C interrupts a command in an interactive shell, whose prompt
			// comes back; ^D ends cat.
			shellTask, first := startTask(t, cs, map[string]any{"command": "PS1='PROMPT> ' bash --norc --noprofile -i", "tty": true})
			if !strings.Contains(first, "PROMPT> ") {
				converse(t, cs, shellTask, "", "PROMPT> ")
			}
			converse(t, cs, shellTask, "sleep 100; echo not-interrupted\n", "sleep 100")
			if got := converse(t, cs, shellTask, "\u0003", "PROMPT> "); strings.Contains(got, "not-interrupted") || !strings.Contains(got, "status: running") {
				t.Fatalf("^C: %q", got)
			}
			mustOK(t, cs, "task_kill", map[string]any{"task_id": shellTask})
			catTask, _ := startTask(t, cs, map[string]any{"command": "cat", "tty": true})
			converse(t, cs, catTask, "meow\n", "meow\nmeow\n")
			if got := converse(t, cs, catTask, "\u0004", "status: completed"); !strings.Contains(got, "exit_code: 0") {
				t.Fatalf("^D: %q", got)
			}

			// isatty under tty and not without; colour removed, a progress
			// bar in its final state.
			script := `test -t 1 && echo tty-yes || echo tty-no; printf '\033[32mgreen\033[0m\n'; for i in 1 2 3; do printf '\r%d%%' $((i*33)); done; echo`
			id, got := startTask(t, cs, map[string]any{"command": script, "tty": true, "wait_ms": 3000})
			if !strings.Contains(got, "status: completed") {
				got += untilDone(t, cs, id)
			}
			if text := outputText(got); !strings.Contains(text, "tty-yes\ngreen\n99%\n") || strings.Contains(text, "\x1b") {
				t.Fatalf("terminal text: %q", got)
			}
			if out := mustOK(t, cs, "bash", map[string]any{"command": "test -t 1 && echo tty-yes || echo tty-no"}); !strings.Contains(out, "tty-no") {
				t.Fatalf("without tty: %q", out)
			}

			// less of a 200-line file: its screen shows the first page; q
			// ends it.
			var lines strings.Builder
			for i := 1; i <= 200; i++ {
				lines.WriteString("line " + strconv.Itoa(i) + "\n")
			}
			writeFile(t, filepath.Join(a.dir, "long.txt"), lines.String())
			lessTask, _ := startTask(t, cs, map[string]any{"command": "less long.txt", "tty": true})
			var screen string
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				screen = mustOK(t, cs, "task_output", map[string]any{"task_id": lessTask, "screen": true})
				if strings.Contains(screen, "\nline 39\n") {
					break
				}
			}
			if !strings.Contains(screen, "screen (40 rows") || !strings.Contains(screen, "\nline 1\nline 2\n") || !strings.Contains(screen, "\nline 39\n") || strings.Contains(screen, "line 41\n") {
				t.Fatalf("less screen: %q", screen)
			}
			converse(t, cs, lessTask, "q", "status: completed")

			// Incremental reads never repeat output; a waiting read returns
			// as soon as output comes.
			ticker, _ := startTask(t, cs, map[string]any{"command": "for i in 1 2 3; do echo tick$i; sleep 0.4; done", "run_in_background": true})
			seen := map[string]int{}
			start := time.Now()
			read := untilDone(t, cs, ticker)
			for _, w := range strings.Fields(read) {
				if strings.HasPrefix(w, "tick") {
					seen[w]++
				}
			}
			if seen["tick1"] != 1 || seen["tick2"] != 1 || seen["tick3"] != 1 || time.Since(start) > 30*time.Second {
				t.Fatalf("reads %q (%v)", read, seen)
			}
			waitStart := time.Now()
			// A read that waited for its wait_ms or for the task would
			// take 60 s; one that returns at "late" no loaded machine
			// keeps for 30.
			slow, _ := startTask(t, cs, map[string]any{"command": "sleep 0.3; echo late; sleep 60", "run_in_background": true})
			out := mustOK(t, cs, "task_output", map[string]any{"task_id": slow, "wait_ms": 60000})
			if !strings.Contains(out, "late") || time.Since(waitStart) > 30*time.Second {
				t.Fatalf("waiting read: %q after %v", out, time.Since(waitStart))
			}

			// yield_ms: a long command becomes a task that completes.
			yielded := mustOK(t, cs, "bash", map[string]any{"command": "echo begun; sleep 0.6; echo finished", "yield_ms": 200})
			m := taskIDRe.FindStringSubmatch(yielded)
			if m == nil || !strings.Contains(yielded, "begun") || !strings.Contains(yielded, "status: running") {
				t.Fatalf("yield: %q", yielded)
			}
			if got := untilDone(t, cs, m[1]); !strings.Contains(got, "finished") || strings.Contains(got, "begun") || !strings.Contains(got, "exit_code: 0") {
				t.Fatalf("yielded task: %q", got)
			}

			// The list, and task_kill.
			list := mustOK(t, cs, "task_output", map[string]any{})
			if !strings.Contains(list, slow+"\trunning\tbackground\t") {
				t.Fatalf("list %q", list)
			}
			if got := mustOK(t, cs, "task_kill", map[string]any{"task_id": slow}); !strings.Contains(got, "status: completed") || !strings.Contains(got, "exit_code: 143") {
				t.Fatalf("task_kill: %q", got)
			}
			if got := mustOK(t, cs, "task_output", map[string]any{}); got != "No background tasks in this session.\n" {
				t.Fatalf("list after kill: %q", got)
			}
			mustErr(t, cs, "task_input", map[string]any{"task_id": slow, "input": "x"}, "BASH_TASK_NOT_FOUND")
			plain, _ := startTask(t, cs, map[string]any{"command": "sleep 5", "run_in_background": true})
			mustErr(t, cs, "task_input", map[string]any{"task_id": plain, "input": "x"}, "INVALID_INPUT")
			mustErr(t, cs, "task_output", map[string]any{"task_id": plain, "screen": true}, "INVALID_INPUT")
			mustErr(t, cs, "task_kill", map[string]any{"task_id": plain, "signal": "NOPE"}, "INVALID_INPUT")
			mustOK(t, cs, "task_kill", map[string]any{"task_id": plain, "signal": "SIGKILL"})
		})
	}
}

// TestTTYTasksEndWithTheSession: closing a session (stdio EOF) and
// SIGTERM to the server leave no process of a terminal task behind.
func TestTTYTasksEndWithTheSession(t *testing.T) {
	dir := tempDir(t)
	cs, cmd, _ := connectStdio(t, dir)
	startTask(t, cs, map[string]any{"command": "echo $$ > tty.pid; trap '' TERM HUP; exec sleep 300", "tty": true})
	startTask(t, cs, map[string]any{"command": "echo $$ > pipe.pid; exec sleep 300", "interactive": true})
	pids := []int{readPid(t, filepath.Join(dir, "tty.pid")), readPid(t, filepath.Join(dir, "pipe.pid"))}
	cs.Close()
	_ = cmd.Wait()
	waitGone(t, 15*time.Second, pids...)

	// The server interrupted: it and the task end (the client transport
	// reaps the server, so this test only watches pids).
	dir = tempDir(t)
	cs, cmd, _ = connectStdio(t, dir)
	defer cs.Close()
	startTask(t, cs, map[string]any{"command": "echo $$ > tty.pid; exec sleep 300", "tty": true})
	pid := readPid(t, filepath.Join(dir, "tty.pid"))
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waitGone(t, 15*time.Second, cmd.Process.Pid, pid)
}

// TestUnifiedExecThroughMCP: --openai-compat's exec_command and
// write_stdin (Codex's unified exec) start a command, answer after the
// yield with a session id while it runs, type into a terminal, poll, and
// report the exit code, in Codex's format.
func TestUnifiedExecThroughMCP(t *testing.T) {
	head := regexp.MustCompile(`^Chunk ID: [0-9a-f]{6}\nWall time: \d+\.\d{4} seconds\n(Process exited with code (\d+)|Process running with session ID (\d+))\nOriginal token count: \d+\nOutput:\n`)
	parse := func(t *testing.T, text string) (exit, session, output string) {
		t.Helper()
		m := head.FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("not Codex's unified exec format: %q", text)
		}
		return m[2], m[3], text[len(m[0]):]
	}
	for _, a := range agents(t, "--openai-compat") {
		t.Run(a.name, func(t *testing.T) {
			if exit, _, out := parse(t, mustOK(t, a.cs, "exec_command", map[string]any{"cmd": "echo hi; echo err >&2; exit 3"})); exit != "3" || out != "hi\nerr\n" {
				t.Fatalf("quick command: %s %q", exit, out)
			}
			_, sid, _ := parse(t, mustOK(t, a.cs, "exec_command", map[string]any{"cmd": "python3 -i -q", "tty": true, "yield_time_ms": 1500}))
			if sid == "" {
				t.Fatal("the REPL has no session id")
			}
			n, _ := strconv.Atoi(sid)
			var got string
			for deadline := time.Now().Add(10 * time.Second); !strings.Contains(got, "3\n") && time.Now().Before(deadline); {
				_, _, out := parse(t, mustOK(t, a.cs, "write_stdin", map[string]any{"session_id": n, "chars": map[bool]string{true: "1+2\n", false: ""}[got == ""], "yield_time_ms": 500}))
				got += out
			}
			if !strings.Contains(got, "3\n") {
				t.Fatalf("REPL answer: %q", got)
			}
			exitText := ""
			for deadline := time.Now().Add(10 * time.Second); exitText == "" && time.Now().Before(deadline); {
				chars := ""
				if time.Until(deadline) > 9*time.Second {
					chars = "exit()\n"
				}
				exitText, _, _ = parse(t, mustOK(t, a.cs, "write_stdin", map[string]any{"session_id": n, "chars": chars, "yield_time_ms": 1000}))
			}
			if exitText != "0" {
				t.Fatalf("exit() ended with %q", exitText)
			}
			_, sid, _ = parse(t, mustOK(t, a.cs, "exec_command", map[string]any{"cmd": "sleep 0.5; echo done", "yield_time_ms": 100}))
			n, _ = strconv.Atoi(sid)
			mustErr(t, a.cs, "write_stdin", map[string]any{"session_id": n, "chars": "x"}, "INVALID_INPUT")
			if exit, _, out := parse(t, mustOK(t, a.cs, "write_stdin", map[string]any{"session_id": n, "yield_time_ms": 5000})); exit != "0" || out != "done\n" {
				t.Fatalf("poll: %s %q", exit, out)
			}
			mustErr(t, a.cs, "write_stdin", map[string]any{"session_id": n}, "BASH_TASK_NOT_FOUND")
		})
	}
}

// TestTaskOutputBounded: a task printing 250 MB costs boris a fixed window
// (the read says how much was dropped), and a terminal task runs inside the
// sandbox.
func TestTaskOutputBounded(t *testing.T) {
	dir := tempDir(t)
	cs, cmd, _ := connectStdio(t, dir)
	defer cs.Close()
	id, first := startTask(t, cs, map[string]any{"command": "head -c 250000000 /dev/zero | tr '\\0' x; echo; echo end", "tty": true})
	// The notice of dropped output comes with the read after the drop:
	// the last one or, on a fast machine, an earlier one.
	var out string
	dropped := strings.Contains(first, "bytes of output dropped")
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		out = mustOK(t, cs, "task_output", map[string]any{"task_id": id, "wait_ms": 5000})
		dropped = dropped || strings.Contains(out, "bytes of output dropped")
		// A read holds at most an answer's worth; the rest waits.
		if strings.HasPrefix(out, "status: completed") && !strings.Contains(out, "[more output is waiting") {
			break
		}
	}
	if !dropped || !strings.HasSuffix(out, "end\n") {
		t.Fatalf("dropped notice seen: %v; final read %.300q … %q", dropped, out, out[max(0, len(out)-100):])
	}
	hwm := peakRSS(t, cmd.Process.Pid)
	t.Logf("peak RSS of boris after a task printed 250 MB: %.1f MB", float64(hwm)/(1<<20))
	// Holding the output would take 250 MB and more; the bound leaves
	// room for the collector's slack (GOGC=200) over a 1 MiB window.
	if hwm > 128<<20 {
		t.Fatalf("peak RSS %d MB exceeds 128 MB: output is being held", hwm>>20)
	}

	l := newSBLayout(t)
	sb, _ := startSandboxed(t, l, nil, "--sandbox=on")
	_, got := startTask(t, sb, map[string]any{"command": "touch " + l.outside + "/from-tty; echo rc=$?; touch from-tty; echo ok=$?", "tty": true, "wait_ms": 3000})
	if !strings.Contains(got, "Permission denied") || !strings.Contains(got, "rc=1") || !strings.Contains(got, "ok=0") {
		t.Fatalf("sandboxed tty command: %q", got)
	}
	if _, err := os.Stat(filepath.Join(l.outside, "from-tty")); err == nil {
		t.Fatal("a tty command wrote outside the sandbox")
	}
}
