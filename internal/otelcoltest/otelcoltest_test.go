package otelcoltest

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

const (
	traceID    = "5b8efff798038103d269b633813fc60c"
	rootSpanID = "eee19b7ec3c1b174"
	httpSpanID = "eee19b7ec3c1b173"
)

var spanStart = time.Date(2026, 11, 23, 12, 0, 0, 123456789, time.UTC)

// The collector takes a span over OTLP/HTTP JSON and another over
// OTLP/gRPC, and its file exporter writes both as sent.
func TestCollectorExportsWhatItReceives(t *testing.T) {
	c := Start(t)
	postJSON(t, c.HTTPEndpoint+"/v1/traces", httpRequestJSON)
	exportGRPC(t, c.GRPCEndpoint, grpcRequest())

	spans := c.WaitSpans(t, func(spans []Span) bool { return len(spans) == 2 }, 10*time.Second)
	byName := map[string]Span{}
	for _, s := range spans {
		byName[s.Name] = s
	}

	child := byName["tools/call bash"]
	want := Span{
		TraceID:      traceID,
		SpanID:       httpSpanID,
		ParentSpanID: rootSpanID,
		TraceState:   "vendor=x",
		Name:         "tools/call bash",
		Kind:         KindServer,
		Start:        spanStart,
		End:          spanStart.Add(1500 * time.Millisecond),
		Attributes: map[string]any{
			"mcp.tool":    "bash",
			"exit.code":   int64(-3),
			"big":         int64(math.MaxInt64),
			"ok":          false,
			"ratio":       0.25,
			"args":        []any{"-c", int64(7), true},
			"nested":      map[string]any{"k": "v"},
			"raw":         []byte{1, 2, 3},
			"empty.value": nil,
		},
		Events: []Event{{Name: "timeout", Time: spanStart.Add(time.Second), Attributes: map[string]any{"after.ms": int64(1000)}}},
		Status: Status{Code: StatusError, Message: "command timed out"},
		Resource: map[string]any{
			"service.name": "boris-otelcoltest",
			"host.cores":   int64(2),
		},
		ScopeName:    "github.com/boris-mcp/boris",
		ScopeVersion: "v0.0.0-test",
	}
	if !reflect.DeepEqual(child, want) {
		t.Errorf("span sent over HTTP:\n got %s\nwant %s", child, want)
	}
	if child.Str("mcp.tool") != "bash" || child.Int("exit.code") != -3 || child.Attr("ok") != false || child.Str("exit.code") != "" {
		t.Errorf("Str/Int/Attr of %s", child)
	}

	root := byName["session"]
	if root.TraceID != traceID || root.SpanID != rootSpanID || root.ParentSpanID != "" || root.Kind != KindInternal ||
		root.Str("transport") != "grpc" || root.Int("n") != 42 || root.Status.Code != StatusOK ||
		!root.Start.Equal(spanStart) || !root.End.Equal(spanStart.Add(2*time.Second)) ||
		root.Resource["service.name"] != "boris-grpc" || root.ScopeName != "grpc-scope" {
		t.Errorf("span sent over gRPC: %s", root)
	}
	if got := child.Kind.String() + " " + child.Status.Code.String(); got != "SPAN_KIND_SERVER STATUS_CODE_ERROR" {
		t.Errorf("names of kind and status: %s", got)
	}

	// WaitSpans fails the test, with what it saw, when the spans do not come.
	msg := fatalOf(t, func(tb testing.TB) {
		c.WaitSpans(tb, func(spans []Span) bool { return len(spans) > 2 }, 300*time.Millisecond)
	})
	if !strings.Contains(msg, "did not come within 300ms") || !strings.Contains(msg, "2 spans seen") || !strings.Contains(msg, `"tools/call bash" SPAN_KIND_SERVER`) {
		t.Errorf("WaitSpans on timeout: %q", msg)
	}
}

// postJSON sends an OTLP/HTTP JSON export request.
func postJSON(t *testing.T, url, body string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("POST %s: %s %s %s", url, resp.Status, resp.Header.Get("Content-Type"), b)
	}
}

var httpRequestJSON = `{"resourceSpans":[{
  "resource":{"attributes":[
    {"key":"service.name","value":{"stringValue":"boris-otelcoltest"}},
    {"key":"host.cores","value":{"intValue":"2"}}]},
  "scopeSpans":[{
    "scope":{"name":"github.com/boris-mcp/boris","version":"v0.0.0-test"},
    "spans":[{
      "traceId":"` + traceID + `","spanId":"` + httpSpanID + `","parentSpanId":"` + rootSpanID + `",
      "traceState":"vendor=x","name":"tools/call bash","kind":2,
      "startTimeUnixNano":"` + fmt.Sprint(spanStart.UnixNano()) + `",
      "endTimeUnixNano":"` + fmt.Sprint(spanStart.Add(1500*time.Millisecond).UnixNano()) + `",
      "attributes":[
        {"key":"mcp.tool","value":{"stringValue":"bash"}},
        {"key":"exit.code","value":{"intValue":"-3"}},
        {"key":"big","value":{"intValue":"9223372036854775807"}},
        {"key":"ok","value":{"boolValue":false}},
        {"key":"ratio","value":{"doubleValue":0.25}},
        {"key":"args","value":{"arrayValue":{"values":[{"stringValue":"-c"},{"intValue":7},{"boolValue":true}]}}},
        {"key":"nested","value":{"kvlistValue":{"values":[{"key":"k","value":{"stringValue":"v"}}]}}},
        {"key":"raw","value":{"bytesValue":"AQID"}},
        {"key":"empty.value","value":{}}],
      "events":[{"timeUnixNano":"` + fmt.Sprint(spanStart.Add(time.Second).UnixNano()) + `","name":"timeout",
        "attributes":[{"key":"after.ms","value":{"intValue":"1000"}}]}],
      "status":{"code":2,"message":"command timed out"}}]}]}]}`

// exportGRPC calls TraceService/Export over gRPC, spoken by hand: HTTP/2
// without TLS, one length-prefixed protobuf message, the status in the
// trailers.
func exportGRPC(t *testing.T, addr string, request []byte) {
	t.Helper()
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	transport := &http.Transport{Protocols: &protocols}
	defer transport.CloseIdleConnections()

	body := binary.BigEndian.AppendUint32([]byte{0}, uint32(len(request)))
	body = append(body, request...)
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/opentelemetry.proto.collector.trace.v1.TraceService/Export", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	resp, err := transport.RoundTrip(req)
	if err != nil {
		t.Fatalf("gRPC Export to %s: %v", addr, err)
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(resp.Body) // the trailers arrive after the body
	if err != nil {
		t.Fatalf("gRPC Export reply: %v", err)
	}
	status := resp.Trailer.Get("Grpc-Status")
	if status == "" {
		status = resp.Header.Get("Grpc-Status") // a reply without a message has no trailers
	}
	if resp.ProtoMajor != 2 || resp.StatusCode != http.StatusOK || status != "0" || len(reply) < 5 {
		t.Fatalf("gRPC Export: %s %s, grpc-status %q %q, reply %x", resp.Proto, resp.Status, status,
			resp.Trailer.Get("Grpc-Message")+resp.Header.Get("Grpc-Message"), reply)
	}
}

// grpcRequest is an ExportTraceServiceRequest with the root span, encoded
// with the field numbers of opentelemetry-proto's trace.proto.
func grpcRequest() []byte {
	kv := func(key string, value []byte) []byte { return pb(nil).str(1, key).msg(2, value) }
	str := func(s string) []byte { return pb(nil).str(1, s) }
	integer := func(n int64) []byte { return pb(nil).varint(3, uint64(n)) }
	id := func(h string) []byte {
		b, _ := hex.DecodeString(h)
		return b
	}
	span := pb(nil).
		msg(1, id(traceID)).
		msg(2, id(rootSpanID)).
		str(5, "session").
		varint(6, uint64(KindInternal)).
		fixed64(7, uint64(spanStart.UnixNano())).
		fixed64(8, uint64(spanStart.Add(2*time.Second).UnixNano())).
		msg(9, kv("transport", str("grpc"))).
		msg(9, kv("n", integer(42))).
		msg(15, pb(nil).varint(3, uint64(StatusOK)))
	resource := pb(nil).msg(1, kv("service.name", str("boris-grpc")))
	scope := pb(nil).str(1, "grpc-scope")
	resourceSpans := pb(nil).msg(1, resource).msg(2, pb(nil).msg(1, scope).msg(2, span))
	return pb(nil).msg(1, resourceSpans)
}

// pb appends protobuf fields.
type pb []byte

func (b pb) tag(field, wire int) pb { return binary.AppendUvarint(b, uint64(field<<3|wire)) }

func (b pb) varint(field int, v uint64) pb { return binary.AppendUvarint(b.tag(field, 0), v) }

func (b pb) fixed64(field int, v uint64) pb {
	return binary.LittleEndian.AppendUint64(b.tag(field, 1), v)
}

func (b pb) msg(field int, v []byte) pb {
	return append(binary.AppendUvarint(b.tag(field, 2), uint64(len(v))), v...)
}

func (b pb) str(field int, s string) pb { return b.msg(field, []byte(s)) }

// fatalTB records a Fatalf instead of failing the test.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// fatalOf runs fn and returns what it passed to Fatalf; it fails t if fn
// returned without calling it.
func fatalOf(t *testing.T, fn func(testing.TB)) string {
	t.Helper()
	tb := &fatalTB{TB: t}
	done := make(chan bool)
	go func() {
		returned := false
		defer func() { done <- returned }()
		fn(tb)
		returned = true
	}()
	if <-done {
		t.Fatal("returned without failing")
	}
	return tb.msg
}

func TestParseSpans(t *testing.T) {
	line := func(attr string) string {
		return `{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"s","attributes":[{"key":"a","value":` + attr + `}]}]}]}]}` + "\n"
	}
	for _, tc := range []struct {
		name, data string
		want       any
		wantErr    string
	}{
		{name: "string", data: line(`{"stringValue":"x"}`), want: "x"},
		{name: "empty string", data: line(`{"stringValue":""}`), want: ""},
		{name: "int as string", data: line(`{"intValue":"-12"}`), want: int64(-12)},
		{name: "int as number", data: line(`{"intValue":12}`), want: int64(12)},
		{name: "double", data: line(`{"doubleValue":1e300}`), want: 1e300},
		{name: "double as string", data: line(`{"doubleValue":"-Infinity"}`), want: math.Inf(-1)},
		{name: "bool", data: line(`{"boolValue":true}`), want: true},
		{name: "bytes", data: line(`{"bytesValue":"/w=="}`), want: []byte{0xff}},
		{name: "empty array", data: line(`{"arrayValue":{}}`), want: []any{}},
		{name: "kvlist in array", data: line(`{"arrayValue":{"values":[{"kvlistValue":{"values":[{"key":"k","value":{"intValue":"1"}}]}}]}}`), want: []any{map[string]any{"k": int64(1)}}},
		{name: "no value", data: line(`{}`), want: nil},
		{name: "a line still being written is left for later", data: line(`{"stringValue":"x"}`) + `{"resourceSpans":[{"scopeSpans":[{"spa`, want: "x"},
		{name: "bad int", data: line(`{"intValue":"1.5"}`), wantErr: `line 1: span "s": attribute "a": intValue "1.5"`},
		{name: "bad line", data: line(`{"stringValue":"x"}`) + "{\n", wantErr: "line 2: unexpected end of JSON input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spans, err := parseSpans([]byte(tc.data))
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(spans) != 1 || !reflect.DeepEqual(spans[0].Attr("a"), tc.want) {
				t.Fatalf("got %v, want a=%#v", spans, tc.want)
			}
		})
	}
}

func TestParseSpansEnumNames(t *testing.T) {
	spans, err := parseSpans([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"kind":"SPAN_KIND_CLIENT","status":{"code":"STATUS_CODE_OK"}},{"kind":9}]}]}]}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(spans) != 2 || spans[0].Kind != KindClient || spans[0].Status.Code != StatusOK || spans[1].Kind.String() != "9" {
		t.Fatalf("got %v", spans)
	}
	if _, err := parseSpans([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"kind":"SERVER"}]}]}]}` + "\n")); err == nil || !strings.Contains(err.Error(), `unknown enum value "SERVER"`) {
		t.Fatalf("kind SERVER: %v", err)
	}
}
