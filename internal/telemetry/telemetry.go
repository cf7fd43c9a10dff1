// Package telemetry traces boris with OpenTelemetry: a span per MCP
// request (named and attributed as OpenTelemetry's MCP semantic
// conventions say), a child span per tool call (the GenAI execute_tool
// span) and a child of that per command run, exported over OTLP.
//
// It is configured the standard way, from the OTEL_* environment
// variables, and is off unless an OTLP exporter is asked for: then Setup
// returns a nil *Tracing, whose methods do nothing and allocate nothing —
// no exporter, no goroutine.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Tracing creates boris's spans. A nil *Tracing is tracing off.
type Tracing struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
	prop   propagation.TraceContext
	// Protocol and Endpoint say where spans go, for the start-up log.
	Protocol, Endpoint string
}

// Setup reads the standard environment: tracing is on when
// OTEL_TRACES_EXPORTER is "otlp", or is unset and an OTLP endpoint is set
// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT);
// OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn it off. The
// protocol is OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or
// OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf (the default) or grpc. The
// exporter reads its endpoint, headers, TLS and timeout settings, and the
// SDK the sampler (OTEL_TRACES_SAMPLER), the batching (OTEL_BSP_*) and the
// resource (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES), from the
// process's environment themselves.
func Setup(ctx context.Context, getenv func(string) string, version string) (*Tracing, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return nil, nil
	}
	endpoint := firstSet(getenv, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
	switch exp := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))); exp {
	case "":
		if endpoint == "" {
			return nil, nil
		}
	case "none":
		return nil, nil
	case "otlp":
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: boris exports traces over OTLP only (otlp or none)", exp)
	}
	proto := strings.ToLower(firstSet(getenv, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"))
	var (
		exporter sdktrace.SpanExporter
		err      error
	)
	switch proto {
	case "", "http/protobuf":
		proto = "http/protobuf"
		exporter, err = otlptracehttp.New(ctx)
	case "grpc":
		exporter, err = otlptracegrpc.New(ctx)
	case "http/json":
		return nil, errors.New("OTEL_EXPORTER_OTLP_PROTOCOL=http/json: the OTLP exporters support grpc and http/protobuf")
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: valid values are grpc and http/protobuf", proto)
	}
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "boris"), attribute.String("service.version", version)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
		resource.WithTelemetrySDK(),
	)
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	if endpoint == "" {
		endpoint = "the exporter's default"
	}
	return &Tracing{
		tp:       tp,
		tracer:   tp.Tracer("github.com/boris-mcp/boris", trace.WithInstrumentationVersion(version)),
		Protocol: proto,
		Endpoint: endpoint,
	}, nil
}

func firstSet(getenv func(string) string, keys ...string) string {
	for _, k := range keys {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v
		}
	}
	return ""
}

// Shutdown exports what is left and stops the exporter.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.tp.Shutdown(ctx)
}

// Request describes an MCP request for its span.
type Request struct {
	Method          string
	Target          string // the tool's name for tools/call, else ""
	ProtocolVersion string
	SessionID       string // the Mcp-Session-Id of a handshake-era HTTP connection
	Transport       string // "stdio" or "http"
	// Meta is the request's params._meta; Header its HTTP request's
	// headers (nil over stdio). A traceparent in Meta wins over one in
	// Header.
	Meta   map[string]any
	Header http.Header
}

// Span is one of boris's spans. A nil *Span does nothing.
type Span struct{ s trace.Span }

// StartRequest starts the SERVER span of an MCP request, the child of the
// trace context the client sent.
func (t *Tracing) StartRequest(ctx context.Context, r Request) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	ctx = t.extract(ctx, r.Meta, r.Header)
	name := r.Method
	if r.Target != "" {
		name += " " + r.Target
	}
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, attribute.String("mcp.method.name", r.Method))
	if r.ProtocolVersion != "" {
		attrs = append(attrs, attribute.String("mcp.protocol.version", r.ProtocolVersion))
	}
	if r.SessionID != "" {
		attrs = append(attrs, attribute.String("mcp.session.id", r.SessionID))
	}
	if r.Method == "tools/call" {
		attrs = append(attrs, attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", r.Target))
	}
	switch r.Transport {
	case "stdio":
		attrs = append(attrs, attribute.String("network.transport", "pipe"))
	case "http":
		attrs = append(attrs, attribute.String("network.transport", "tcp"), attribute.String("network.protocol.name", "http"))
	}
	ctx, s := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	return ctx, &Span{s}
}

// extract finds the client's trace context: params._meta's traceparent
// and tracestate first, else the HTTP request's headers.
func (t *Tracing) extract(ctx context.Context, meta map[string]any, header http.Header) context.Context {
	if tp, ok := meta["traceparent"].(string); ok && tp != "" {
		carrier := propagation.MapCarrier{"traceparent": tp}
		if ts, ok := meta["tracestate"].(string); ok {
			carrier["tracestate"] = ts
		}
		if out := t.prop.Extract(ctx, carrier); trace.SpanContextFromContext(out).IsValid() {
			return out
		}
	}
	if header != nil {
		return t.prop.Extract(ctx, propagation.HeaderCarrier(header))
	}
	return ctx
}

// StartTool starts the INTERNAL execute_tool span of a tool call.
func (t *Tracing) StartTool(ctx context.Context, tool string) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	ctx, s := t.tracer.Start(ctx, "execute_tool "+tool, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", tool),
		attribute.String("gen_ai.tool.type", "function"),
	))
	return ctx, &Span{s}
}

// StartCommand starts the INTERNAL span of a command's run, and returns
// the environment that makes the command join the trace: TRACEPARENT (and
// TRACESTATE), as OpenTelemetry's environment-variable carriers name them.
func (t *Tracing) StartCommand(ctx context.Context, shell string) (context.Context, *Span, []string) {
	if t == nil {
		return ctx, nil, nil
	}
	ctx, s := t.tracer.Start(ctx, "command", trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		attribute.String("process.executable.name", shell),
	))
	carrier := propagation.MapCarrier{}
	t.prop.Inject(ctx, carrier)
	var env []string
	if v := carrier["traceparent"]; v != "" {
		env = append(env, "TRACEPARENT="+v)
	}
	if v := carrier["tracestate"]; v != "" {
		env = append(env, "TRACESTATE="+v)
	}
	return ctx, &Span{s}, env
}

// TraceID is the span's trace id in hex ("" for a nil span).
func (s *Span) TraceID() string {
	if s == nil {
		return ""
	}
	return s.s.SpanContext().TraceID().String()
}

// SetString and SetInt add attributes.
func (s *Span) SetString(key, v string) {
	if s != nil && v != "" {
		s.s.SetAttributes(attribute.String(key, v))
	}
}

// SetInt adds an integer attribute.
func (s *Span) SetInt(key string, v int64) {
	if s != nil {
		s.s.SetAttributes(attribute.Int64(key, v))
	}
}

// Fail marks the span as failed with error.type errType (e.g. a JSON-RPC
// error code, "tool_error", a boris error code) and a description.
func (s *Span) Fail(errType, desc string) {
	if s == nil {
		return
	}
	s.s.SetAttributes(attribute.String("error.type", errType))
	s.s.SetStatus(codes.Error, desc)
}

// End ends the span.
func (s *Span) End() {
	if s != nil {
		s.s.End()
	}
}
