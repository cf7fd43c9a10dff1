package telemetry

import (
	"context"
	"strings"
	"testing"
)

// Setup is off unless an OTLP exporter is asked for, and refuses what it
// cannot do with a message naming the variable.
func TestSetupFromEnvironment(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		on      bool
		proto   string
		wantErr string
	}{
		{"nothing set", nil, false, "", ""},
		{"an endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}, true, "http/protobuf", ""},
		{"a traces endpoint over grpc", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:9", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, true, "grpc", ""},
		{"the traces protocol wins", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, true, "http/protobuf", ""},
		{"exporter none", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}, false, "", ""},
		{"SDK disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, false, "", ""},
		{"another exporter", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, false, "", "OTEL_TRACES_EXPORTER=zipkin"},
		{"http/json", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, false, "", "http/json"},
		{"a bad protocol", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "udp"}, false, "", "valid values are grpc and http/protobuf"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := Setup(context.Background(), func(k string) string { return tc.env[k] }, "test")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (tr != nil) != tc.on {
				t.Fatalf("tracing on = %v, want %v", tr != nil, tc.on)
			}
			if tr != nil {
				defer tr.Shutdown(context.Background())
				if tr.Protocol != tc.proto {
					t.Fatalf("protocol %q, want %q", tr.Protocol, tc.proto)
				}
			}
		})
	}
}

// Off, every method is a no-op that allocates nothing.
func TestOffCostsNothing(t *testing.T) {
	var tr *Tracing
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		c, s := tr.StartRequest(ctx, Request{Method: "tools/call", Target: "bash"})
		c, t2 := tr.StartTool(c, "bash")
		_, t3, env := tr.StartCommand(c, "bash")
		t3.SetInt("process.exit.code", 0)
		t3.End()
		t2.Fail("x", "y")
		t2.End()
		s.End()
		_ = env
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per call with tracing off", allocs)
	}
}
