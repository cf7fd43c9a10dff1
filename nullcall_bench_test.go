package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkNullCallStdio is a tool call that does nothing (task_output of
// an unknown task) through boris's stdio transport over real pipes, with
// the go-sdk client in the same process: the fixed cost of a call, client
// included. -cpuprofile shows where it goes.
func BenchmarkNullCallStdio(b *testing.B) {
	for _, tc := range []struct{ name, tool string }{{"null", "task_output"}, {"view", "view"}} {
		b.Run(tc.name, func(b *testing.B) {
			dir := b.TempDir()
			os.WriteFile(dir+"/small.go", []byte("package x\n\nfunc A() {}\n"), 0o644)
			inR, inW, _ := os.Pipe()
			outR, outW, _ := os.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				_ = run(ctx, []string{"--transport=stdio", "--workdir=" + dir, "--log-level=error"}, func(string) string { return "" }, inR, outW, io.Discard)
				close(done)
			}()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "b", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
			if err != nil {
				b.Fatal(err)
			}
			args := map[string]any{"task_id": "none"}
			if tc.tool == "view" {
				args = map[string]any{"path": "small.go"}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: args}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			cs.Close()
			inW.Close()
			cancel()
			<-done
		})
	}
}

// BenchmarkNullCallStdioRaw is BenchmarkNullCallStdio with a client that
// only writes the request line and reads the answer line: boris's own
// share of a call.
func BenchmarkNullCallStdioRaw(b *testing.B) {
	for _, tc := range []struct{ name, call string }{
		{"null", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"task_output","arguments":{"task_id":"none"}}}`},
		{"view", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"view","arguments":{"path":"small.go"}}}`},
	} {
		b.Run(tc.name, func(b *testing.B) { rawCalls(b, tc.call) })
	}
}

func rawCalls(b *testing.B, call string) {
	dir := b.TempDir()
	var small []byte
	for i := range 40 {
		small = fmt.Appendf(small, "line %d of a small source file\n", i)
	}
	if err := os.WriteFile(dir+"/small.go", small, 0o644); err != nil {
		b.Fatal(err)
	}
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		_ = run(ctx, []string{"--transport=stdio", "--workdir=" + dir, "--log-level=error"}, func(string) string { return "" }, inR, outW, io.Discard)
		close(done)
	}()
	r := bufio.NewReader(outR)
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			b.Fatal(err)
		}
		if _, err := r.ReadString('\n'); err != nil {
			b.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	b.ReportAllocs()
	for b.Loop() {
		send(call)
	}
	b.StopTimer()
	inW.Close()
	cancel()
	<-done
}
