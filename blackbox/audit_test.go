package blackbox

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// auditRecords are the audit records among a JSON log's lines.
func auditRecords(t *testing.T, log string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, `"audit":"tool_call"`) {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("an audit record that is not JSON: %v\n%s", err, line)
		}
		out = append(out, rec)
	}
	return out
}

// waitRecords waits until the log holds n audit records.
func waitRecords(t *testing.T, logs *logBuffer, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		recs := auditRecords(t, logs.String())
		if len(recs) >= n {
			return recs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d audit records, want %d:\n%s", len(recs), n, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startBinaryHTTP starts the boris binary over HTTP on a free port and
// returns its URL and its log (its start-up lines may be filtered out by
// the log level, so the port is chosen here).
func startBinaryHTTP(t *testing.T, dir string, args ...string) (string, *logBuffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(binPath, append([]string{"--port=" + strconv.Itoa(port), "--workdir=" + dir}, args...)...)
	logs := collectLogs(t, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(url + "/health")
		if err == nil {
			resp.Body.Close()
			return url, logs
		}
		if time.Now().After(deadline) {
			t.Fatalf("boris does not answer on %s: %v\n%s", url, err, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAuditHTTP: every tool call over HTTP, in both protocol eras, has one
// JSON record at info (written though --log-level is warn) naming the
// token by its position, the session, era, transport and client, the
// call's essentials and its outcome; the outcome counts agree with
// boris_tool_calls_total; no log line holds a token.
func TestAuditHTTP(t *testing.T) {
	for _, era := range []string{statelessEra, handshakeEra} {
		t.Run(era, func(t *testing.T) {
			dir := tempDir(t)
			const first, second = "first-token-abcdef0123456789", "second-token-abcdef0123456789"
			url, logs := startBinaryHTTP(t, dir, "--token="+first, "--token="+second, "--log-format=json", "--log-level=warn")
			cs := connectHTTPAt(t, url, second, era, nil)

			mustOK(t, cs, "bash", map[string]any{"command": "echo hi; exit 3"})
			mustOK(t, cs, "bash", map[string]any{"command": "sleep 5", "timeout": 300})
			mustOK(t, cs, "create_file", map[string]any{"path": "a.txt", "content": "hello\n"})
			mustOK(t, cs, "view", map[string]any{"path": "a.txt"})
			mustOK(t, cs, "str_replace", map[string]any{"path": "a.txt", "old_str": "hello", "new_str": "goodbye"})
			mustOK(t, cs, "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: b.txt\n+new\n*** Update File: a.txt\n@@\n-goodbye\n+bye\n*** End Patch\n"})
			mustOK(t, cs, "grep", map[string]any{"pattern": "by[e]", "path": "."})
			mustOK(t, cs, "find", map[string]any{"pattern": "*.txt"})
			mustErr(t, cs, "view", map[string]any{"path": "missing.txt"}, "PATH_NOT_FOUND")
			started := mustOK(t, cs, "bash", map[string]any{"command": "sleep 30", "run_in_background": true})
			task := regexp.MustCompile(`task_id: (\S+)`).FindStringSubmatch(started)[1]
			mustOK(t, cs, "task_kill", map[string]any{"task_id": task})
			long := "echo " + strings.Repeat("x", 3000)
			mustOK(t, cs, "bash", map[string]any{"command": long})

			recs := waitRecords(t, logs, 12)
			byTool := func(i int, tool string) map[string]any {
				t.Helper()
				if recs[i]["tool"] != tool {
					t.Fatalf("record %d is of %v, want %s: %v", i, recs[i]["tool"], tool, recs[i])
				}
				return recs[i]
			}
			wantEra := map[string]string{statelessEra: "stateless", handshakeEra: "handshake"}[era]
			for i, r := range recs {
				if r["level"] != "INFO" || r["msg"] != "tool call" || r["credential"] != "token-2" || r["era"] != wantEra ||
					r["transport"] != "http" || r["client"] != "boris-test 1" || r["session"] == "" || r["session"] == "-" {
					t.Fatalf("record %d: %v", i, r)
				}
				if d, ok := r["duration_ms"].(float64); !ok || d < 0 {
					t.Fatalf("record %d has no duration: %v", i, r)
				}
			}
			check := func(r map[string]any, want map[string]any) {
				t.Helper()
				for k, v := range want {
					if fmt.Sprint(r[k]) != fmt.Sprint(v) {
						t.Fatalf("%s: %s = %v, want %v (record %v)", r["tool"], k, r[k], v, r)
					}
				}
			}
			check(byTool(0, "bash"), map[string]any{"command": "echo hi; exit 3", "exit_code": 3, "outcome": "ok"})
			check(byTool(1, "bash"), map[string]any{"command": "sleep 5", "timed_out": true})
			check(byTool(2, "create_file"), map[string]any{"paths": []any{"a.txt"}, "bytes_written": 6})
			check(byTool(3, "view"), map[string]any{"paths": []any{"a.txt"}, "bytes_written": nil})
			check(byTool(4, "str_replace"), map[string]any{"paths": []any{"a.txt"}, "bytes_written": 8})
			check(byTool(5, "apply_patch"), map[string]any{"files": []any{"A b.txt", "M a.txt"}, "bytes_written": 8})
			check(byTool(6, "grep"), map[string]any{"pattern": "by[e]", "paths": []any{"."}})
			check(byTool(7, "find"), map[string]any{"pattern": "*.txt"})
			check(byTool(8, "view"), map[string]any{"outcome": "tool_error", "error_code": "PATH_NOT_FOUND", "paths": []any{"missing.txt"}})
			check(byTool(9, "bash"), map[string]any{"command": "sleep 30", "task_id": task})
			check(byTool(10, "task_kill"), map[string]any{"task_id": task, "outcome": "ok"})
			check(byTool(11, "bash"), map[string]any{"command": long[:2048], "command_len": len(long), "exit_code": 0})

			// The client goes away in the middle of a call: still a record.
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo $$ > gone.pid; sleep 30 # gone"}})
			}()
			readPid(t, filepath.Join(dir, "gone.pid")) // the call runs
			cancel()
			<-done
			recs = waitRecords(t, logs, 13)
			check(byTool(12, "bash"), map[string]any{"command": "echo $$ > gone.pid; sleep 30 # gone", "canceled": true})

			// One source: the outcome counts of the records are the
			// metrics' counts.
			counted := map[string]int{}
			for _, r := range recs {
				counted[r["tool"].(string)+"/"+r["outcome"].(string)]++
			}
			metrics := toolCallMetrics(t, url)
			if fmt.Sprint(metrics) != fmt.Sprint(counted) {
				t.Fatalf("boris_tool_calls_total %v, the audit records %v", metrics, counted)
			}
			if all := logs.String(); strings.Contains(all, first) || strings.Contains(all, second) {
				t.Fatalf("a token is in the log:\n%s", all)
			}
		})
	}
}

// toolCallMetrics reads boris_tool_calls_total as tool/outcome → count.
func toolCallMetrics(t *testing.T, url string) map[string]int {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	re := regexp.MustCompile(`^boris_tool_calls_total\{outcome="([^"]+)",tool="([^"]+)"\} (\d+)$`)
	out := map[string]int{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			n, _ := strconv.Atoi(m[3])
			out[m[2]+"/"+m[1]] = n
		}
	}
	return out
}

// TestAuditStdioPaths: over stdio with --audit paths, a record has the
// paths, the exit code and the outcome, and no command or input text —
// neither the record nor any other line.
func TestAuditStdioPaths(t *testing.T) {
	dir := tempDir(t)
	cs, _, logs := connectStdio(t, dir, "--audit=paths", "--log-format=json")
	mustOK(t, cs, "bash", map[string]any{"command": "echo secret-command-text > out.txt; exit 4"})
	started := mustOK(t, cs, "bash", map[string]any{"command": "read l; echo $l", "interactive": true})
	task := regexp.MustCompile(`task_id: (\S+)`).FindStringSubmatch(started)[1]
	mustOK(t, cs, "task_input", map[string]any{"task_id": task, "input": "secret-input-text\n"})
	mustOK(t, cs, "grep", map[string]any{"pattern": "secret-pattern-text", "path": "out.txt"})
	recs := waitRecords(t, logs, 4)
	r := recs[0]
	if r["tool"] != "bash" || r["exit_code"] != float64(4) || r["transport"] != "stdio" || r["credential"] != "none" || r["era"] != "stateless" {
		t.Fatalf("the bash record: %v", r)
	}
	if recs[2]["task_id"] != task || recs[3]["paths"] == nil {
		t.Fatalf("records: %v", recs)
	}
	all := logs.String()
	for _, secret := range []string{"secret-command-text", "secret-input-text", "secret-pattern-text"} {
		if strings.Contains(all, secret) {
			t.Fatalf("--audit paths logged %q:\n%s", secret, all)
		}
	}
}

// TestAuditOff: --audit off writes no record.
func TestAuditOff(t *testing.T) {
	dir := tempDir(t)
	cs, cmd, logs := connectStdio(t, dir, "--audit=off", "--log-format=json")
	mustOK(t, cs, "bash", map[string]any{"command": "true"})
	cs.Close()
	_ = cmd.Wait()
	if recs := auditRecords(t, logs.String()); len(recs) != 0 {
		t.Fatalf("records with --audit off: %v", recs)
	}
}
