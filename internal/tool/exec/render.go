package exec

import (
	"fmt"
	"strings"
	"time"

	"github.com/boris-mcp/boris/internal/execcheck"
	"github.com/boris-mcp/boris/internal/guard"
	"github.com/boris-mcp/boris/internal/session"
	"github.com/boris-mcp/boris/internal/shell"
	"github.com/boris-mcp/boris/internal/term"
)

// The answers of the command tools in boris's and Claude's dialects (the
// same texts in both); Codex's are in codex.go.

func formatRun(res session.RunResult, timeoutMs int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "exit_code: %d\n", res.ExitCode)
	if res.TimedOut {
		fmt.Fprintf(&b, "timed out after %d ms: the process group was terminated (SIGTERM, then SIGKILL after 5 s)\n", timeoutMs)
	}
	if res.Canceled {
		b.WriteString("cancelled: the process group was terminated\n")
	}
	if res.Terminated {
		b.WriteString("terminated: the session was closed while the command ran\n")
	}
	if res.CwdReset != "" {
		fmt.Fprintf(&b, "note: the working directory %s no longer exists; the command ran in %s instead\n", res.CwdReset, res.RanIn)
	}
	for _, n := range guardNotes(res.Guard, leftRunningNote(res.LeftRunning)) {
		b.WriteString("note: " + n + "\n")
	}
	b.WriteString(refusedLines(res.Refused, res.RefusedCount))
	writeStreams(&b, res.Stdout, res.Stderr)
	return b.String()
}

// refusedLines says which execs of a command the command rules refused,
// a line each (the first 20), with the reason: "" when none were.
func refusedLines(list []execcheck.Refusal, total int) string {
	if total == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "refused: %d exec(s) the command rules do not allow; each failed with EPERM (Operation not permitted):\n", total)
	for _, r := range list {
		b.WriteString("  " + r.String() + "\n")
	}
	if total > len(list) {
		fmt.Fprintf(&b, "  … and %d more\n", total-len(list))
	}
	return b.String()
}

// leftRunningNote names the task that lists what a command left running.
func leftRunningNote(id string) string {
	if id == "" {
		return ""
	}
	return fmt.Sprintf("processes the command started are left running (listed as %s in the task list): task_kill %s, or bash with restart, ends them; they end with the session.", id, id)
}

// guardNotes says what the guard saw of a command (see package guard),
// then adds left (what it left running, if anything).
func guardNotes(o guard.Outcome, left string) []string {
	var notes []string
	if o.OOMKilled {
		limit := "unknown"
		if o.MemoryLimit > 0 {
			limit = guard.FormatBytes(o.MemoryLimit)
		}
		n := "killed by the kernel's OOM killer: the container's memory limit is " + limit
		if len(o.Victims) > 0 {
			// The command may have gone on and exited 0 (a pipeline
			// whose middle was killed): say which process it lost.
			n = o.Victims[0] + ", a process of this command, was killed by the kernel's OOM killer: the container's memory limit is " + limit
			if len(o.Victims) > 1 {
				n = strings.Join(o.Victims, ", ") + ", processes of this command, were killed by the kernel's OOM killer: the container's memory limit is " + limit
			}
			n += "; the command's output may be incomplete, whatever its exit code"
		}
		if o.GroupEnded {
			n += "; the command's other processes were ended too, so that the container's other work could go on"
		}
		notes = append(notes, n+". Use less memory at once (smaller inputs, fewer processes in parallel).")
	}
	if o.BudgetHit {
		notes = append(notes, fmt.Sprintf("a fork was refused: the command reached its process budget (%d processes it may add, below the container's process limit). End processes it no longer needs (task_kill, or bash with restart) or run fewer at once.", o.Budget))
	}
	if left != "" {
		notes = append(notes, left)
	}
	return notes
}

// writeStreams appends the stdout and stderr sections. Each section holds
// the output exactly; a newline separates a section that does not end in
// one from what follows.
func writeStreams(b *strings.Builder, stdout, stderr shell.Output) {
	sections := []struct {
		name string
		out  shell.Output
	}{{"stdout", stdout}, {"stderr", stderr}}
	var parts []string
	for _, s := range sections {
		if s.out.Chars == 0 {
			continue
		}
		text := s.name + ":\n" + s.out.Text
		if s.out.Truncated {
			if !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			text += fmt.Sprintf("[%s truncated: %d characters in total, the first %d shown; redirect the output to a file and use view or grep to read the rest]\n",
				s.name, s.out.Chars, s.out.Limit)
		}
		parts = append(parts, text)
	}
	for i, p := range parts {
		if i > 0 && !strings.HasSuffix(parts[i-1], "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(p)
	}
}

// formatTask renders a task's status and new output.
func formatTask(st session.TaskStatus, hint string) string {
	var b strings.Builder
	writeTaskStatus(&b, st)
	if hint != "" && st.Running {
		b.WriteString(hint)
		b.WriteByte('\n')
	}
	switch {
	case st.Stdout == "" && st.Stderr == "":
		b.WriteString("(no new output)\n")
	case st.TTY:
		b.WriteString("output:\n")
		b.WriteString(st.Stdout)
		if !strings.HasSuffix(st.Stdout, "\n") {
			b.WriteByte('\n')
		}
	default:
		writeStreams(&b, shell.Output{Text: st.Stdout, Chars: int64(len(st.Stdout))}, shell.Output{Text: st.Stderr, Chars: int64(len(st.Stderr))})
	}
	if st.More {
		if !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[more output is waiting: an answer holds only part of it (--max-answer); call task_output with task_id %s again for the next part]\n", st.ID)
	}
	return b.String()
}

// writeTaskStatus writes the status lines of a task.
func writeTaskStatus(b *strings.Builder, st session.TaskStatus) {
	if st.Running {
		fmt.Fprintf(b, "status: running\ntask_id: %s\npgid: %d\n", st.ID, st.Pgid)
	} else {
		fmt.Fprintf(b, "status: completed\ntask_id: %s\nexit_code: %d\n", st.ID, st.Result.ExitCode)
		if st.KilledByTimeout {
			b.WriteString("killed: the task ran out of time (its timeout, or --background-task-timeout) and its process group was terminated\n")
		}
	}
	// A running task has a note only when it is what a command left
	// running whose forks its budget refused.
	for _, n := range guardNotes(st.Guard, "") {
		b.WriteString("note: " + n + "\n")
	}
	b.WriteString(refusedLines(st.Refused, st.RefusedCount))
}

// formatTaskList renders the session's tasks, one per line.
func formatTaskList(list []session.TaskStatus) string {
	if len(list) == 0 {
		return "No background tasks in this session.\n"
	}
	var b strings.Builder
	for _, st := range list {
		state := "running"
		if !st.Running {
			state = fmt.Sprintf("exited %d", st.Result.ExitCode)
		}
		if st.Guard.BudgetHit {
			state += ", forks refused (process budget)"
		}
		kind := "background"
		switch {
		case st.Leftover:
			kind = "left running by"
		case st.TTY:
			kind = "tty"
		case st.Interactive:
			kind = "interactive"
		}
		cmd := strings.Join(strings.Fields(st.Command), " ")
		if r := []rune(cmd); len(r) > 80 {
			cmd = string(r[:79]) + "…"
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\n", st.ID, state, kind, st.Age.Round(time.Second), cmd)
	}
	return b.String()
}

// formatScreen renders a terminal task's screen and status.
func formatScreen(snap term.Snapshot, st session.TaskStatus) string {
	var b strings.Builder
	writeTaskStatus(&b, st)
	fmt.Fprintf(&b, "screen (%d rows; cursor at row %d, column %d):\n", len(snap.Rows), snap.Row, snap.Col)
	b.WriteString(snap.Text())
	return b.String()
}
