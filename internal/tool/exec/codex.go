package exec

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/boris-mcp/boris/internal/shell"
)

// The Codex dialect answers as OpenAI's Codex CLI does: apply_patch with
// its success summary, shell with the exec output format of
// codex-rs/core/src/tools/mod.rs (format_exec_output_for_model).

// codexExitTimedOut is the exit code Codex reports for a command that ran
// out of time.
const codexExitTimedOut = 124

// codexExec renders a finished command as Codex does:
//
//	Exit code: 0
//	Wall time: 0.4 seconds
//	Total output lines: 1200   (only when the output was cut)
//	Output:
//	<stdout and stderr, interleaved as written>
//
// A command that timed out has exit code 124 and its output begins with
// "command timed out after N milliseconds". Output over the limit keeps its
// head and its tail around a "…N chars truncated…" marker.
func codexExec(res shell.Result) string {
	exit, text := codexExecOutput(res)
	var b strings.Builder
	fmt.Fprintf(&b, "Exit code: %d\nWall time: %s seconds\n", exit, wallTime(res.Duration))
	if res.Stdout.Truncated {
		fmt.Fprintf(&b, "Total output lines: %d\n", res.Stdout.Lines)
	}
	b.WriteString("Output:\n")
	b.WriteString(text)
	return b.String()
}

// codexExecOutput is the exit code and the output codexExec shows: 124
// and a first line saying so for a command that timed out, the output's
// head and tail around a marker when it was cut.
func codexExecOutput(res shell.Result) (exit int, output string) {
	out := res.Stdout
	text := out.Text
	if out.Truncated {
		head := firstChars(text, out.Limit/2)
		removed := out.Chars - int64(utf8.RuneCountInString(head)) - int64(utf8.RuneCountInString(out.Tail))
		text = head + "…" + strconv.FormatInt(removed, 10) + " chars truncated…" + out.Tail
	}
	exit = res.ExitCode
	if res.TimedOut {
		exit = codexExitTimedOut
		text = fmt.Sprintf("command timed out after %d milliseconds\n", res.Duration.Milliseconds()) + text
	}
	return exit, text
}

// wallTime formats a duration as Codex does: seconds rounded to a tenth,
// printed as the shortest decimal (0, 0.4, 12).
func wallTime(d time.Duration) string {
	tenths := (d + 50*time.Millisecond) / (100 * time.Millisecond)
	return strconv.FormatFloat(float64(tenths)/10, 'f', -1, 64)
}

// firstChars returns the first n characters of s.
func firstChars(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// approxTokens is Codex's estimate of a text's tokens: a token per four
// bytes, rounded up.
func approxTokens(s string) int64 { return (int64(len(s)) + 3) / 4 }

// truncateTokens keeps text within a budget of tokens (four bytes each) as
// Codex does: its beginning and its end, on character boundaries, around a
// "…N tokens truncated…" marker.
func truncateTokens(s string, tokens int64) string {
	budget := int(tokens * 4)
	if len(s) <= budget {
		return s
	}
	head := budget / 2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	tail := len(s) - (budget - budget/2)
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + fmt.Sprintf("…%d tokens truncated…", approxTokens(s[head:tail])) + s[tail:]
}
