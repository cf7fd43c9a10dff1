package blackbox

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/app"
	"github.com/boris-mcp/boris/internal/otelcoltest"
)

// The client's span that boris's spans must join.
const (
	clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpan  = "00f067aa0ba902b7"
	headerTrace = "0af7651916cd43dd8448eb211c80319c"
	headerSpan  = "b7ad6b7169203331"
)

// spanTree indexes exported spans.
type spanTree struct {
	t     *testing.T
	spans []otelcoltest.Span
}

// one finds the only span named name in trace.
func (s spanTree) one(trace, name string) otelcoltest.Span {
	s.t.Helper()
	var found []otelcoltest.Span
	for _, sp := range s.spans {
		if sp.TraceID == trace && sp.Name == name {
			found = append(found, sp)
		}
	}
	if len(found) != 1 {
		s.t.Fatalf("%d spans %q in trace %s; all spans:\n%v", len(found), name, trace, s.spans)
	}
	return found[0]
}

func hasSpan(trace, name string) func([]otelcoltest.Span) bool {
	return func(spans []otelcoltest.Span) bool {
		for _, sp := range spans {
			if sp.TraceID == trace && sp.Name == name {
				return true
			}
		}
		return false
	}
}

// checkAttrs fails unless the span has each attribute with that value.
func checkAttrs(t *testing.T, sp otelcoltest.Span, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if got := sp.Attr(k); got != v {
			t.Fatalf("span %q: %s = %#v, want %#v\n%v", sp.Name, k, got, v, sp)
		}
	}
}

// traceEnv points boris at the collector over protocol.
func traceEnv(c *otelcoltest.Collector, protocol string) []string {
	env := append(os.Environ(), "OTEL_SERVICE_NAME=boris-under-test", "OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_EXPORTER_OTLP_PROTOCOL="+protocol)
	if protocol == "grpc" {
		return append(env, "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+c.GRPCEndpoint, "OTEL_EXPORTER_OTLP_INSECURE=true")
	}
	return append(env, "OTEL_EXPORTER_OTLP_ENDPOINT="+c.HTTPEndpoint)
}

// TestTracingHTTP: boris over HTTP exports to a real collector over
// OTLP/HTTP. A tool call whose _meta carries the client's traceparent
// makes the tree client → tools/call bash (SERVER) → execute_tool bash →
// command, with the MCP and GenAI attributes, and the command sees
// TRACEPARENT naming its span; a traceparent header is used when _meta
// has none; a failed call marks its spans with error.type.
func TestTracingHTTP(t *testing.T) {
	for _, era := range []string{statelessEra, handshakeEra} {
		t.Run(era, func(t *testing.T) {
			col := otelcoltest.Start(t)
			dir := tempDir(t)
			cmd := exec.Command(binPath, "--port=0", "--workdir="+dir)
			cmd.Env = traceEnv(col, "http/protobuf")
			url, logs := serveBinary(t, cmd)
			if !strings.Contains(logs.String(), "tracing on") {
				t.Fatalf("no start-up line about tracing:\n%s", logs)
			}
			// A client whose HTTP requests carry another trace's header.
			hc := &http.Client{Transport: headerTransport{"traceparent": "00-" + headerTrace + "-" + headerSpan + "-01"}}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "tracer", Version: "1"}, nil).
				Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: era})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()

			meta := mcp.Meta{"traceparent": "00-" + clientTrace + "-" + clientSpan + "-01", "tracestate": "vendor=x"}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Meta: meta,
				Arguments: map[string]any{"command": `printf %s "$TRACEPARENT" > tp.txt; exit 2`}})
			if err != nil || res.IsError {
				t.Fatalf("bash: %v %v", err, res)
			}
			mustErr(t, cs, "view", map[string]any{"path": "missing.txt"}, "PATH_NOT_FOUND")

			spans := spanTree{t, col.WaitSpans(t, func(s []otelcoltest.Span) bool {
				return hasSpan(clientTrace, "command")(s) && hasSpan(headerTrace, "execute_tool view")(s)
			}, 15*time.Second)}
			req := spans.one(clientTrace, "tools/call bash")
			tool := spans.one(clientTrace, "execute_tool bash")
			run := spans.one(clientTrace, "command")
			if req.ParentSpanID != clientSpan || tool.ParentSpanID != req.SpanID || run.ParentSpanID != tool.SpanID {
				t.Fatalf("not the tree client → request → tool → command:\n%v\n%v\n%v", req, tool, run)
			}
			if req.Kind != otelcoltest.KindServer || tool.Kind != otelcoltest.KindInternal || req.TraceState != "vendor=x" {
				t.Fatalf("kinds %v %v, tracestate %q", req.Kind, tool.Kind, req.TraceState)
			}
			checkAttrs(t, req, map[string]any{"mcp.method.name": "tools/call", "gen_ai.tool.name": "bash", "gen_ai.operation.name": "execute_tool",
				"mcp.protocol.version": era, "network.transport": "tcp", "network.protocol.name": "http"})
			checkAttrs(t, tool, map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash", "gen_ai.tool.type": "function"})
			checkAttrs(t, run, map[string]any{"process.executable.name": "bash", "process.exit.code": int64(2)})
			if tool.Str("boris.session.id") == "" || req.Resource["service.name"] != "boris-under-test" {
				t.Fatalf("session %q, resource %v", tool.Str("boris.session.id"), req.Resource)
			}
			if era == handshakeEra && req.Str("mcp.session.id") == "" {
				t.Fatalf("no mcp.session.id on a handshake-era request: %v", req)
			}
			tp, err := os.ReadFile(filepath.Join(dir, "tp.txt"))
			if err != nil || string(tp) != "00-"+clientTrace+"-"+run.SpanID+"-01" {
				t.Fatalf("the command's TRACEPARENT %q (%v), its span %s", tp, err, run.SpanID)
			}

			// No traceparent in _meta: the HTTP header's trace.
			failedReq := spans.one(headerTrace, "tools/call view")
			failedTool := spans.one(headerTrace, "execute_tool view")
			if failedReq.ParentSpanID != headerSpan || failedTool.ParentSpanID != failedReq.SpanID {
				t.Fatalf("the header's trace: %v %v", failedReq, failedTool)
			}
			checkAttrs(t, failedReq, map[string]any{"error.type": "tool_error"})
			checkAttrs(t, failedTool, map[string]any{"error.type": "PATH_NOT_FOUND"})
			if failedTool.Status.Code != otelcoltest.StatusError {
				t.Fatalf("the failed tool span's status: %v", failedTool.Status)
			}
		})
	}
}

// headerTransport adds headers to every request.
type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestTracingStdioGRPC: over stdio, exported over OTLP/gRPC, a call's
// spans join the client's trace from _meta; network.transport is pipe.
func TestTracingStdioGRPC(t *testing.T) {
	col := otelcoltest.Start(t)
	dir := tempDir(t)
	cmd := exec.Command(binPath, "--transport=stdio", "--workdir="+dir)
	cmd.Env = traceEnv(col, "grpc")
	cs, _ := connectCmd(t, cmd, defaultClient, nil)
	meta := mcp.Meta{"traceparent": "00-" + clientTrace + "-" + clientSpan + "-01"}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Meta: meta, Arguments: map[string]any{"command": "true"}}); err != nil {
		t.Fatal(err)
	}
	spans := spanTree{t, col.WaitSpans(t, hasSpan(clientTrace, "command"), 15*time.Second)}
	req := spans.one(clientTrace, "tools/call bash")
	if req.ParentSpanID != clientSpan {
		t.Fatalf("parent %s, want the client's %s", req.ParentSpanID, clientSpan)
	}
	checkAttrs(t, req, map[string]any{"network.transport": "pipe", "mcp.protocol.version": statelessEra})
	spans.one(clientTrace, "execute_tool bash")
	// The last spans are exported when boris ends (stdin closed).
	cs.Close()
}

// TestTracingBareMessages: with tracing on, messages without params (an
// initialized notification, tools/list, ping, as line clients send them)
// are traced and answered; the server does not fall over (it did: a nil
// params pointer).
func TestTracingBareMessages(t *testing.T) {
	col := otelcoltest.Start(t)
	cmd, stdin, stdout := startStdioPipes(t, tempDir(t), traceEnv(col, "http/protobuf")[len(os.Environ()):]...)
	in := bufio.NewReader(stdout)
	for i, line := range []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"line","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
	} {
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if i == 1 {
			continue // a notification has no answer
		}
		answer, err := in.ReadString('\n')
		if err != nil || !strings.Contains(answer, `"result"`) {
			t.Fatalf("line %d: %q %v", i, answer, err)
		}
	}
	col.WaitSpans(t, func(s []otelcoltest.Span) bool {
		names := map[string]bool{}
		for _, sp := range s {
			names[sp.Name] = true
		}
		return names["notifications/initialized"] && names["tools/list"] && names["ping"]
	}, 15*time.Second)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("boris exited with %v", err)
	}
}

// TestTracingOffStartsNothing: with no OTEL_* configuration boris starts
// no exporter and no span processor: no goroutine of OpenTelemetry's SDK
// runs in the process, while one does when an exporter is configured.
func TestTracingOffStartsNothing(t *testing.T) {
	otelGoroutines := func(env map[string]string) bool {
		t.Helper()
		dir := tempDir(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		logs := &logWriter{}
		go func() {
			done <- app.Run(ctx, []string{"--transport=stdio", "--workdir=" + dir}, func(k string) string { return env[k] }, blockingReader{ctx}, io.Discard, logs)
		}()
		// "boris starting" comes after tracing is set up: whatever it
		// starts runs by then, however slow the machine.
		for deadline := time.Now().Add(20 * time.Second); !strings.Contains(logs.String(), `msg="boris starting"`); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("boris did not start:\n%s", logs)
			}
		}
		var dump bytes.Buffer
		_ = pprof.Lookup("goroutine").WriteTo(&dump, 2)
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		return strings.Contains(dump.String(), "go.opentelemetry.io/otel/sdk")
	}
	if otelGoroutines(nil) {
		t.Fatal("an OpenTelemetry goroutine runs with nothing configured")
	}
	if !otelGoroutines(map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}) {
		t.Fatal("no OpenTelemetry goroutine with an exporter configured: the check above proves nothing")
	}
}

// blockingReader is a stdin that has nothing until ctx ends, then ends.
type blockingReader struct{ ctx context.Context }

func (b blockingReader) Read([]byte) (int, error) {
	<-b.ctx.Done()
	return 0, io.EOF
}
