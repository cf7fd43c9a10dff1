package otelcoltest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Span is one span as the collector exported it, flattened together with
// its resource and instrumentation scope.
type Span struct {
	// TraceID, SpanID and ParentSpanID are lowercase hex, as OTLP/JSON
	// writes them; ParentSpanID is "" for a root span.
	TraceID      string
	SpanID       string
	ParentSpanID string
	TraceState   string
	Name         string
	Kind         Kind
	Start, End   time.Time
	// Attributes holds the span's attributes as Go values: string, int64,
	// float64, bool, []byte, []any (an array value), map[string]any (a
	// key-value list value), or nil (an empty value).
	Attributes map[string]any
	Events     []Event
	Status     Status
	// Resource holds the attributes of the span's resource, typed like
	// Attributes. The spans of one resource share the map.
	Resource     map[string]any
	ScopeName    string
	ScopeVersion string
}

// Event is a span event.
type Event struct {
	Name       string
	Time       time.Time
	Attributes map[string]any
}

// Status is a span's status.
type Status struct {
	Code    StatusCode
	Message string
}

// Kind is a span's kind, numbered as in OTLP. The file exporter writes the
// number; String returns the protobuf name, such as "SPAN_KIND_SERVER".
type Kind int

// The span kinds of OTLP.
const (
	KindUnspecified Kind = iota
	KindInternal
	KindServer
	KindClient
	KindProducer
	KindConsumer
)

var kindNames = []string{"SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER", "SPAN_KIND_CLIENT", "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER"}

func (k Kind) String() string { return enumName(kindNames, int(k)) }

// UnmarshalJSON accepts the number, which the collector writes, and the
// name, which OTLP/JSON also allows.
func (k *Kind) UnmarshalJSON(b []byte) error {
	n, err := enumValue(kindNames, b)
	*k = Kind(n)
	return err
}

// StatusCode is a span's status code, numbered as in OTLP; String returns
// the protobuf name, such as "STATUS_CODE_ERROR".
type StatusCode int

// The status codes of OTLP.
const (
	StatusUnset StatusCode = iota
	StatusOK
	StatusError
)

var statusNames = []string{"STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"}

func (c StatusCode) String() string { return enumName(statusNames, int(c)) }

// UnmarshalJSON accepts the number and the name.
func (c *StatusCode) UnmarshalJSON(b []byte) error {
	n, err := enumValue(statusNames, b)
	*c = StatusCode(n)
	return err
}

func enumName(names []string, n int) string {
	if n >= 0 && n < len(names) {
		return names[n]
	}
	return strconv.Itoa(n)
}

func enumValue(names []string, b []byte) (int, error) {
	var name string
	if json.Unmarshal(b, &name) == nil {
		if i := slices.Index(names, name); i >= 0 {
			return i, nil
		}
		return 0, fmt.Errorf("unknown enum value %q", name)
	}
	var n int
	if err := json.Unmarshal(b, &n); err != nil {
		return 0, fmt.Errorf("enum value %s is neither a number nor a name", b)
	}
	return n, nil
}

// Attr returns the span attribute key, nil if the span has none.
func (s Span) Attr(key string) any { return s.Attributes[key] }

// Str returns the span attribute key if it is a string, else "".
func (s Span) Str(key string) string {
	v, _ := s.Attributes[key].(string)
	return v
}

// Int returns the span attribute key if it is an integer, else 0.
func (s Span) Int(key string) int64 {
	v, _ := s.Attributes[key].(int64)
	return v
}

// String describes the span on one line, for failure messages.
func (s Span) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q %s trace=%s span=%s", s.Name, s.Kind, s.TraceID, s.SpanID)
	if s.ParentSpanID != "" {
		fmt.Fprintf(&b, " parent=%s", s.ParentSpanID)
	}
	if s.Status.Code != StatusUnset || s.Status.Message != "" {
		fmt.Fprintf(&b, " status=%s %q", s.Status.Code, s.Status.Message)
	}
	fmt.Fprintf(&b, " attrs=%s", formatAttrs(s.Attributes))
	for _, e := range s.Events {
		fmt.Fprintf(&b, " event=%q%s", e.Name, formatAttrs(e.Attributes))
	}
	fmt.Fprintf(&b, " scope=%s@%s resource=%s", s.ScopeName, s.ScopeVersion, formatAttrs(s.Resource))
	return b.String()
}

func formatAttrs(m map[string]any) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%#v", k, m[k]))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// The OTLP/JSON encoding of traces, as far as Span needs it. encoding/json
// matches field names regardless of case, so these also read the
// snake_case names protobuf's JSON mapping permits.
type (
	tracesJSON struct {
		ResourceSpans []struct {
			Resource struct {
				Attributes []keyValueJSON `json:"attributes"`
			} `json:"resource"`
			ScopeSpans []struct {
				Scope struct {
					Name    string `json:"name"`
					Version string `json:"version"`
				} `json:"scope"`
				Spans []spanJSON `json:"spans"`
			} `json:"scopeSpans"`
		} `json:"resourceSpans"`
	}
	spanJSON struct {
		TraceID      string         `json:"traceId"`
		SpanID       string         `json:"spanId"`
		ParentSpanID string         `json:"parentSpanId"`
		TraceState   string         `json:"traceState"`
		Name         string         `json:"name"`
		Kind         Kind           `json:"kind"`
		Start        unixNano       `json:"startTimeUnixNano"`
		End          unixNano       `json:"endTimeUnixNano"`
		Attributes   []keyValueJSON `json:"attributes"`
		Events       []struct {
			Time       unixNano       `json:"timeUnixNano"`
			Name       string         `json:"name"`
			Attributes []keyValueJSON `json:"attributes"`
		} `json:"events"`
		Status Status `json:"status"`
	}
	keyValueJSON struct {
		Key   string       `json:"key"`
		Value anyValueJSON `json:"value"`
	}
	anyValueJSON struct {
		StringValue *string         `json:"stringValue"`
		BoolValue   *bool           `json:"boolValue"`
		IntValue    json.RawMessage `json:"intValue"`
		DoubleValue json.RawMessage `json:"doubleValue"`
		BytesValue  *string         `json:"bytesValue"`
		ArrayValue  *struct {
			Values []anyValueJSON `json:"values"`
		} `json:"arrayValue"`
		KvlistValue *struct {
			Values []keyValueJSON `json:"values"`
		} `json:"kvlistValue"`
	}
)

// unixNano is a time in nanoseconds since the epoch, which OTLP/JSON writes
// as a decimal string (a JSON number would lose precision).
type unixNano time.Time

func (t *unixNano) UnmarshalJSON(b []byte) error {
	n, err := strconv.ParseInt(string(bytes.Trim(b, `"`)), 10, 64)
	if err != nil {
		return fmt.Errorf("time in nanoseconds %s: %w", b, err)
	}
	*t = unixNano(time.Unix(0, n).UTC())
	return nil
}

// parseSpans reads the file exporter's output: one OTLP/JSON
// TracesData per line. A last line without its newline is still being
// written and is left for the next read.
func parseSpans(data []byte) ([]Span, error) {
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		data = data[:i+1]
	} else {
		data = nil
	}
	var spans []Span
	for n, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var td tracesJSON
		if err := json.Unmarshal(line, &td); err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		for _, rs := range td.ResourceSpans {
			resource, err := attributes(rs.Resource.Attributes)
			if err != nil {
				return nil, fmt.Errorf("line %d: resource: %w", n+1, err)
			}
			for _, ss := range rs.ScopeSpans {
				for _, sj := range ss.Spans {
					s, err := sj.span()
					if err != nil {
						return nil, fmt.Errorf("line %d: span %q: %w", n+1, sj.Name, err)
					}
					s.Resource, s.ScopeName, s.ScopeVersion = resource, ss.Scope.Name, ss.Scope.Version
					spans = append(spans, s)
				}
			}
		}
	}
	return spans, nil
}

func (sj spanJSON) span() (Span, error) {
	attrs, err := attributes(sj.Attributes)
	if err != nil {
		return Span{}, err
	}
	s := Span{
		TraceID:      strings.ToLower(sj.TraceID),
		SpanID:       strings.ToLower(sj.SpanID),
		ParentSpanID: strings.ToLower(sj.ParentSpanID),
		TraceState:   sj.TraceState,
		Name:         sj.Name,
		Kind:         sj.Kind,
		Start:        time.Time(sj.Start),
		End:          time.Time(sj.End),
		Attributes:   attrs,
		Status:       sj.Status,
	}
	for _, ej := range sj.Events {
		attrs, err := attributes(ej.Attributes)
		if err != nil {
			return Span{}, fmt.Errorf("event %q: %w", ej.Name, err)
		}
		s.Events = append(s.Events, Event{Name: ej.Name, Time: time.Time(ej.Time), Attributes: attrs})
	}
	return s, nil
}

func attributes(kvs []keyValueJSON) (map[string]any, error) {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		v, err := kv.Value.value()
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", kv.Key, err)
		}
		m[kv.Key] = v
	}
	return m, nil
}

func (v anyValueJSON) value() (any, error) {
	switch {
	case v.StringValue != nil:
		return *v.StringValue, nil
	case v.BoolValue != nil:
		return *v.BoolValue, nil
	case v.IntValue != nil:
		// A string in OTLP/JSON, since JSON numbers are doubles; a bare
		// number is accepted too.
		n, err := strconv.ParseInt(string(bytes.Trim(v.IntValue, `"`)), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("intValue %s: %w", v.IntValue, err)
		}
		return n, nil
	case v.DoubleValue != nil:
		return parseDouble(v.DoubleValue)
	case v.BytesValue != nil:
		b, err := base64.StdEncoding.DecodeString(*v.BytesValue)
		if err != nil {
			return nil, fmt.Errorf("bytesValue: %w", err)
		}
		return b, nil
	case v.ArrayValue != nil:
		a := make([]any, 0, len(v.ArrayValue.Values))
		for _, e := range v.ArrayValue.Values {
			x, err := e.value()
			if err != nil {
				return nil, err
			}
			a = append(a, x)
		}
		return a, nil
	case v.KvlistValue != nil:
		return attributes(v.KvlistValue.Values)
	}
	return nil, nil
}

// parseDouble reads a doubleValue: a JSON number, or a string for the
// values JSON numbers cannot write ("NaN", "Infinity", "-Infinity").
func parseDouble(raw json.RawMessage) (float64, error) {
	s := string(bytes.Trim(raw, `"`))
	switch s {
	case "NaN":
		return math.NaN(), nil
	case "Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("doubleValue %s: %w", raw, err)
	}
	return f, nil
}
