package blackbox

import (
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// docBlocks returns the fenced blocks of docs/sessions.md's curl section,
// split at the handshake era's paragraph: the sh blocks to run and the
// text blocks that show their answers, each era's in order.
func docBlocks(t *testing.T) (run, answers [2][]string) {
	t.Helper()
	b, err := os.ReadFile("../docs/sessions.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "\n## By hand, with curl\n")
	if start < 0 {
		t.Fatal("docs/sessions.md has no section \"By hand, with curl\"")
	}
	doc = doc[start:]
	if end := strings.Index(doc[1:], "\n## "); end >= 0 {
		doc = doc[:end+1]
	}
	era := 0
	lines := strings.Split(doc, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "**Handshake era**") {
			era = 1
		}
		if l != "```sh" && l != "```text" {
			continue
		}
		var block []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			block = append(block, lines[i])
		}
		if l == "```sh" {
			run[era] = append(run[era], strings.Join(block, "\n"))
		} else {
			answers[era] = append(answers[era], strings.Join(block, "\n"))
		}
	}
	for e, name := range []string{"2026-07-28", "handshake era"} {
		if len(run[e]) < 2 || len(answers[e]) < 1 {
			t.Fatalf("%s: %d blocks to run, %d answers", name, len(run[e]), len(answers[e]))
		}
	}
	return run, answers
}

// TestSessionsDocCurl runs docs/sessions.md's curl exchanges exactly as
// written, each era's blocks in order in one shell, against the built
// binary with a token, and checks that every answer the page shows is
// what boris answers (the "…" in a shown answer stands for any text).
// After the handshake era's DELETE its session is gone.
func TestSessionsDocCurl(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is needed (scripts/deps.sh installs it)")
	}
	run, answers := docBlocks(t)
	const token = "sessions-doc-token"
	url, logs := serveBinary(t, exec.Command(binPath, "--port=0", "--workdir="+tempDir(t), "--token="+token))
	for e, name := range []string{"2026-07-28", "handshake era"} {
		script := "set -euo pipefail\n" + strings.Join(run[e], "\n") + "\n"
		if e == 1 {
			script += `echo "SID=$SID"` + "\n"
		}
		cmd := exec.Command("bash", "-c", script)
		cmd.Env = append(os.Environ(), "BORIS="+url+"/mcp", "TOKEN="+token)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: the documented requests failed: %v\n%s\nlog:\n%s", name, err, out, logs)
		}
		got := string(out)
		for _, a := range answers[e] {
			at := 0
			for _, piece := range strings.Split(a, "…") {
				i := strings.Index(got[at:], piece)
				if i < 0 {
					t.Fatalf("%s: the page shows %q, boris answered:\n%s", name, piece, got)
				}
				at += i + len(piece)
			}
		}
		if e == 1 {
			sid := got[strings.LastIndex(got, "SID=")+len("SID="):]
			sid = strings.TrimSpace(sid)
			if sid == "" || !strings.Contains(got, "session "+sid+"\n") {
				t.Fatalf("no session id from initialize:\n%s", got)
			}
			req, _ := http.NewRequest("POST", url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`))
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Fatalf("a request in the session after its DELETE: %d, want 404", resp.StatusCode)
			}
		}
	}
}
