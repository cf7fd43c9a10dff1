package blackbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// answerBound is the --max-answer of TestAnswersAreBounded: small, so
// that every tool meets it.
const answerBound = 8000

// boundedCall calls a tool and checks that its answer — the text, and the
// structured content a host may show instead — holds at most bound
// characters (a note past it is allowed a line); it returns the text.
func boundedCall(t *testing.T, cs *mcp.ClientSession, bound int, name string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	text := resultText(res)
	if n := utf8.RuneCountInString(text); n > bound+400 {
		t.Errorf("%s %v: %d characters of text, bound %d:\n%.300s…", name, args, n, bound, text)
	}
	if res.StructuredContent != nil {
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if n := utf8.RuneCount(raw); n > 2*bound+2000 {
			t.Errorf("%s %v: %d characters of structured content, bound %d", name, args, n, bound)
		}
	}
	if res.IsError {
		t.Fatalf("%s %v failed: %.500s", name, args, text)
	}
	return text
}

// bigTree writes the files that make answers long: 400,000 short lines,
// 2,000 lines of 3,000 characters, and a directory of 3,000 long names.
func bigTree(t *testing.T, dir string) {
	t.Helper()
	var b strings.Builder
	for i := 1; i <= 400000; i++ {
		fmt.Fprintf(&b, "line %d of a big file\n", i)
	}
	writeFile(t, filepath.Join(dir, "big.txt"), b.String())
	b.Reset()
	wide := strings.Repeat("w", 3000)
	for range 2000 {
		b.WriteString(wide + "\n")
	}
	writeFile(t, filepath.Join(dir, "wide.txt"), b.String())
	many := filepath.Join(dir, "many")
	if err := os.Mkdir(many, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		name := fmt.Sprintf("%04d-%s.txt", i, strings.Repeat("n", 90))
		if err := os.WriteFile(filepath.Join(many, name), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAnswersAreBounded: no tool of any dialect answers with more than
// --max-answer characters, however much there is to say, and a cut answer
// says how to get the next part — and that next part is there.
func TestAnswersAreBounded(t *testing.T) {
	t.Run("boris", func(t *testing.T) {
		p := startInProcess(t, fmt.Sprintf("--max-answer=%d", answerBound))
		bigTree(t, p.dir)
		cs := connectHTTP(t, p.url, "", nil)
		// A whole file asked for: the first lines, and where the next
		// part starts; asking for it gives it.
		text := boundedCall(t, cs, answerBound, "view", map[string]any{"path": "big.txt", "view_range": []int{1, -1}})
		m := regexp.MustCompile(`Showing lines 1-(\d+) of 400000: .*Use view_range \[(\d+), (\d+)\]`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("no next part named in %q", text[len(text)-300:])
		}
		last, _ := strconv.Atoi(m[1])
		if next, _ := strconv.Atoi(m[2]); next != last+1 || !strings.Contains(text, fmt.Sprintf("line %d of a big file\n", last)) {
			t.Fatalf("showed up to %d, next part from %s", last, m[2])
		}
		text = boundedCall(t, cs, answerBound, "view", map[string]any{"path": "big.txt", "view_range": []int{last + 1, -1}})
		if !strings.HasPrefix(strings.TrimLeft(text, " "), fmt.Sprintf("%d\tline %d of a big file\n", last+1, last+1)) {
			t.Fatalf("the next part starts %.60q", text)
		}
		if text := boundedCall(t, cs, answerBound, "view", map[string]any{"path": "wide.txt"}); !strings.Contains(text, "Use view_range [") {
			t.Fatalf("wide file: no next part in %q", text[len(text)-200:])
		}
		if text := boundedCall(t, cs, answerBound, "view", map[string]any{"path": "many"}); !strings.Contains(text, "view a subdirectory or use find") {
			t.Fatalf("listing: %q", text[len(text)-200:])
		}
		boundedCall(t, cs, answerBound, "grep", map[string]any{"pattern": "line", "path": "big.txt", "output_mode": "content"})
		boundedCall(t, cs, answerBound, "find", map[string]any{"pattern": "*.txt"})
		boundedCall(t, cs, answerBound, "bash", map[string]any{"command": "head -c 2000000 /dev/zero | tr '\\0' x; head -c 2000000 /dev/zero | tr '\\0' y >&2"})
		boundedCall(t, cs, answerBound, "bash", map[string]any{"command": "sed -i 's/big/BIG/' big.txt wide.txt"})
		boundedCall(t, cs, answerBound, "checkpoint", map[string]any{"action": "diff"})
		var patch strings.Builder
		patch.WriteString("*** Begin Patch\n")
		for i := range 400 {
			fmt.Fprintf(&patch, "*** Add File: added/%03d-%s.txt\n+x\n", i, strings.Repeat("p", 80))
		}
		patch.WriteString("*** End Patch\n")
		boundedCall(t, cs, answerBound, "apply_patch", map[string]any{"input": patch.String()})

		// A task's output comes in parts, each within the bound, all of it
		// in the end.
		text = boundedCall(t, cs, answerBound, "bash", map[string]any{"command": "seq 1 60000", "run_in_background": true})
		id := regexp.MustCompile(`task_id: (task_\d+)`).FindStringSubmatch(text)[1]
		boundedCall(t, cs, answerBound, "task_output", map[string]any{"task_id": id, "wait_ms": 30000})
		var got strings.Builder
		for parts := 0; ; parts++ {
			if parts > 200 {
				t.Fatal("the task's output never ended")
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "task_output", Arguments: map[string]any{"task_id": id, "wait_ms": 5000}})
			if err != nil || res.IsError {
				t.Fatalf("task_output: %v %s", err, resultText(res))
			}
			text := resultText(res)
			if utf8.RuneCountInString(text) > answerBound+400 {
				t.Fatalf("task_output: %d characters", utf8.RuneCountInString(text))
			}
			var data struct {
				Status string `json:"status"`
				Stdout string `json:"stdout"`
				More   bool   `json:"more"`
			}
			raw, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(raw, &data); err != nil {
				t.Fatal(err)
			}
			got.WriteString(data.Stdout)
			if data.More != strings.Contains(text, "call task_output with task_id "+id+" again") {
				t.Fatalf("more %v, but the text says %q", data.More, text[max(0, len(text)-200):])
			}
			if data.Status == "completed" && !data.More {
				break
			}
		}
		var want strings.Builder
		for i := 1; i <= 60000; i++ {
			fmt.Fprintf(&want, "%d\n", i)
		}
		if !strings.HasSuffix(want.String(), got.String()) || got.Len() < want.Len()/2 {
			t.Fatalf("the parts hold %d of the output's %d bytes, or not its end", got.Len(), want.Len())
		}
	})
	t.Run("claude", func(t *testing.T) {
		p := startInProcess(t, fmt.Sprintf("--max-answer=%d", answerBound), "--anthropic-compat", "--structured-content=on")
		bigTree(t, p.dir)
		cs := connectHTTP(t, p.url, "", nil)
		boundedCall(t, cs, answerBound, "str_replace_editor", map[string]any{"command": "view", "path": filepath.Join(p.dir, "big.txt"), "view_range": []int{1, -1}})
		boundedCall(t, cs, answerBound, "str_replace_editor", map[string]any{"command": "view", "path": filepath.Join(p.dir, "many")})
		boundedCall(t, cs, answerBound, "grep", map[string]any{"pattern": "line", "path": "big.txt", "output_mode": "content"})
		boundedCall(t, cs, answerBound, "Glob", map[string]any{"pattern": "**/*.txt"})
		boundedCall(t, cs, answerBound, "bash", map[string]any{"command": "seq 1 100000"})
	})
	t.Run("codex", func(t *testing.T) {
		p := startInProcess(t, fmt.Sprintf("--max-answer=%d", answerBound), "--openai-compat")
		cs := connectHTTP(t, p.url, "", nil)
		boundedCall(t, cs, answerBound, "shell", map[string]any{"command": []string{"bash", "-lc", "seq 1 100000"}})
		boundedCall(t, cs, answerBound, "exec_command", map[string]any{"cmd": "seq 1 100000", "max_output_tokens": 1000000, "yield_time_ms": 20000})
	})
	// At the default bound, the 400,000-line file asked for whole is an
	// answer of at most 100,000 characters.
	t.Run("default", func(t *testing.T) {
		p := startInProcess(t)
		bigTree(t, p.dir)
		cs := connectHTTP(t, p.url, "", nil)
		boundedCall(t, cs, 100000, "view", map[string]any{"path": "big.txt", "view_range": []int{1, -1}})
		boundedCall(t, cs, 100000, "view", map[string]any{"path": "wide.txt", "view_range": []int{1, 2000}})
	})
}

// A --max-answer too small to say what was left out is refused at start.
func TestMaxAnswerTooSmall(t *testing.T) {
	out, err := exec.Command(binPath, "--max-answer=100", "--transport=stdio", "--workdir="+t.TempDir()).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "invalid --max-answer 100") {
		t.Fatalf("err %v, output %q", err, out)
	}
}
