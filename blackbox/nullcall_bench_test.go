package blackbox

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/app"
)

// stdioServer runs boris in process over stdio on real pipes, in a
// directory holding small.go (40 lines), and returns the client's ends:
// what to write requests to and where answers come from. stop ends it.
func stdioServer(b *testing.B, args ...string) (requests io.WriteCloser, answers io.Reader, stop func()) {
	dir := b.TempDir()
	var small []byte
	for i := range 40 {
		small = fmt.Appendf(small, "line %d of a small source file\n", i)
	}
	if err := os.WriteFile(dir+"/small.go", small, 0o644); err != nil {
		b.Fatal(err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		_ = app.Run(ctx, append([]string{"--transport=stdio", "--workdir=" + dir, "--log-level=error"}, args...), func(string) string { return "" }, inR, outW, io.Discard)
		close(done)
	}()
	return inW, outR, func() {
		inW.Close()
		cancel()
		<-done
	}
}

// BenchmarkNullCallStdio is a tool call that does nothing (task_output of
// an unknown task), and a view of a 40-line file, through boris's stdio
// transport over real pipes, with the go-sdk client in the same process:
// the fixed cost of a call, client included. -cpuprofile shows where it
// goes.
func BenchmarkNullCallStdio(b *testing.B) {
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
	}{{"null", "task_output", map[string]any{"task_id": "none"}}, {"view", "view", map[string]any{"path": "small.go"}}} {
		b.Run(tc.name, func(b *testing.B) {
			requests, answers, stop := stdioServer(b)
			defer stop()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "b", Version: "1"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: io.NopCloser(answers), Writer: requests}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
		})
	}
}

// BenchmarkNullCallStdioRaw is BenchmarkNullCallStdio with a client that
// only writes the request line and reads the answer line: boris's own
// share of a call. The text-only cases answer without structuredContent
// (--structured-content off): the difference is what making and encoding
// it costs.
func BenchmarkNullCallStdioRaw(b *testing.B) {
	for _, tc := range []struct {
		name, call string
		args       []string
	}{
		{"null", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"task_output","arguments":{"task_id":"none"}}}`, nil},
		{"view", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"view","arguments":{"path":"small.go"}}}`, nil},
		{"null-text-only", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"task_output","arguments":{"task_id":"none"}}}`, []string{"--structured-content=off"}},
		{"view-text-only", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"view","arguments":{"path":"small.go"}}}`, []string{"--structured-content=off"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			requests, answers, stop := stdioServer(b, tc.args...)
			defer stop()
			r := bufio.NewReader(answers)
			send := func(s string) {
				if _, err := io.WriteString(requests, s+"\n"); err != nil {
					b.Fatal(err)
				}
				if _, err := r.ReadString('\n'); err != nil {
					b.Fatal(err)
				}
			}
			send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
			if _, err := io.WriteString(requests, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				send(tc.call)
			}
			b.StopTimer()
			// CPU time holds still on a busy machine where wall time does not.
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the CPU time this process has used (user and system), in
// nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
