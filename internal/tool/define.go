package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/results"
)

// Def is a tool as a dialect serves it: its MCP description and a handler
// for raw arguments, made by Define from a typed handler.
type Def struct {
	tool     *mcp.Tool
	required []string
	handle   func(ctx context.Context, c *Call, args json.RawMessage) (*mcp.CallToolResult, error)
	// errText words an operational error in the tool's dialect (nil:
	// boris's "[CODE] message").
	errText func(error) string
	// errData is the structured content of a failed call, given the error
	// and its text (results.Error, or Codex's shape for its tools).
	errData func(err error, text string) any
	// spec is the declaration the tool was built from.
	spec *Spec
}

// WithErrors makes the tool word its operational errors with text
// instead of boris's "[CODE] message", and returns d.
func (d *Def) WithErrors(text func(error) string) *Def {
	d.errText = text
	return d
}

// Name is the tool's name.
func (d *Def) Name() string { return d.tool.Name }

// Meta is what a tool says of itself: its name, title and description,
// whether it only reads, the shapes of its results (see Returns), and a
// function adjusting its inferred input schema (enums, defaults).
type Meta struct {
	Name, Title, Description string
	ReadOnly                 bool
	Returns                  []any
	Tune                     func(*jsonschema.Schema)
}

// Handler answers a call with decoded arguments.
type Handler[In any] func(ctx context.Context, c *Call, in *In) (*mcp.CallToolResult, error)

// Returns lists the shapes of a tool's successful results (zero values
// of package results' types); a failed call's is results.Error. It is the
// one place a tool declares its structured results: Define builds the
// outputSchema from it, and the handler answers with Answer(text, data)
// where data is one of the shapes.
func Returns(shapes ...any) []any { return shapes }

// Define makes a Def for a typed handler. The input schema is inferred
// from In (lenient Int and Bool types become integer and boolean), then
// adjusted by m.Tune; the output schema is that of m.Returns.
func Define[In any](m Meta, h Handler[In]) (*Def, error) {
	return DefineAs[In](m, h)
}

// DefineAs is Define with the schema inferred from S while arguments are
// decoded into In: one handler that accepts several parameter spellings
// can show each dialect only its own.
func DefineAs[S, In any](m Meta, h Handler[In]) (*Def, error) {
	schema, err := jsonschema.For[S](&jsonschema.ForOptions{TypeSchemas: leniencySchemas})
	if err != nil {
		return nil, fmt.Errorf("schema for %s: %w", m.Name, err)
	}
	schema.AdditionalProperties = nil // unknown parameters are ignored, not refused
	for _, prop := range schema.Properties {
		// Optional pointer and slice fields infer as ["null", T]; models are
		// trained on plain types, and omitting the field is how to say null.
		if len(prop.Types) == 2 && prop.Types[0] == "null" {
			prop.Type, prop.Types = prop.Types[1], nil
		}
	}
	if p := schema.Properties["view_range"]; p != nil {
		p.MinItems, p.MaxItems = new(2), new(2)
	}
	if schema.Properties == nil {
		schema.Properties = map[string]*jsonschema.Schema{}
	}
	schema.Properties["session"] = &jsonschema.Schema{Type: "string", Description: sessionArgDesc}
	desc := m.Description + "\n\nsession: optional; omit it to keep working in your default session, or pass \"new\" for a separate one and then the handle the result gives."
	if m.Tune != nil {
		m.Tune(schema)
	}
	// The schema goes to the SDK as JSON: it marshals a tool's schema on
	// every stateless tools/call (to look for header annotations) and on
	// every tools/list, and raw JSON costs a copy where a *Schema costs a
	// reflective walk.
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("schema for %s: %w", m.Name, err)
	}
	tool := &mcp.Tool{
		Name:        m.Name,
		Title:       m.Title,
		Description: desc,
		InputSchema: json.RawMessage(raw),
		Annotations: &mcp.ToolAnnotations{Title: m.Title, ReadOnlyHint: m.ReadOnly, OpenWorldHint: new(false)},
	}
	if m.ReadOnly {
		tool.Annotations.IdempotentHint = true
	}
	d := &Def{
		tool:     tool,
		required: slices.Clone(schema.Required),
		handle: func(ctx context.Context, c *Call, args json.RawMessage) (*mcp.CallToolResult, error) {
			in := new(In)
			if err := decode(args, in); err != nil {
				return nil, err
			}
			return h(ctx, c, in)
		},
	}
	if err := d.declare(m.Returns); err != nil {
		return nil, fmt.Errorf("output schema for %s: %w", m.Name, err)
	}
	return d, nil
}

// declare sets a def's output schema from the shapes of its results. A
// tool answering in Codex's exec shape declares Codex's schema as it is,
// and its failed calls fit it too: output holds the error text.
func (d *Def) declare(shapes []any) error {
	if len(shapes) == 0 {
		return nil
	}
	if len(shapes) == 1 {
		if _, ok := shapes[0].(results.Exec); ok {
			d.tool.OutputSchema = results.ExecSchema
			d.errData = func(_ error, text string) any { return &results.Exec{Output: text} }
			return nil
		}
	}
	raw, err := results.Schema(shapes...)
	if err != nil {
		return err
	}
	d.tool.OutputSchema = raw
	return nil
}

// Int is an integer argument that also accepts integral floats (5000.0)
// and numeric strings ("5000"), as models sometimes send them.
type Int int

// UnmarshalJSON implements json.Unmarshaler.
func (n *Int) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		return nil
	}
	if unq, err := strconv.Unquote(s); err == nil {
		s = strings.TrimSpace(unq)
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		*n = Int(i)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return &conversionError{msg: fmt.Sprintf("expected an integer, got %s", string(b))}
	case f > 9.2e18 || f < -9.2e18:
		return &conversionError{msg: fmt.Sprintf("%s is out of range", string(b))}
	case f != float64(int64(f)):
		return &conversionError{msg: fmt.Sprintf("expected an integer, got %s", string(b))}
	}
	*n = Int(f)
	return nil
}

// Bool is a boolean argument that also accepts "true" and "false" strings.
type Bool bool

// UnmarshalJSON implements json.Unmarshaler.
func (v *Bool) UnmarshalJSON(b []byte) error {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(string(b)), `"`)) {
	case "true":
		*v = true
	case "false", "null", "":
		*v = false
	default:
		return &conversionError{msg: fmt.Sprintf("expected true or false, got %s", string(b))}
	}
	return nil
}

type conversionError struct{ msg string }

func (e *conversionError) Error() string { return e.msg }

var leniencySchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[Int]():  {Type: "integer"},
	reflect.TypeFor[Bool](): {Type: "boolean"},
}

// SetEnum lists the valid values of a parameter in the schema, for the
// model's benefit; the handler checks them itself.
func SetEnum(s *jsonschema.Schema, prop string, values ...string) {
	if p := s.Properties[prop]; p != nil {
		for _, v := range values {
			p.Enum = append(p.Enum, v)
		}
	}
}

// SetDefault documents a parameter's default in the schema.
func SetDefault(s *jsonschema.Schema, prop string, v any) {
	if p := s.Properties[prop]; p != nil {
		if b, err := json.Marshal(v); err == nil {
			p.Default = b
		}
	}
}

// checkRequired reports a missing required parameter, or arguments that
// are not a JSON object.
func checkRequired(args json.RawMessage, required []string) error {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		if len(required) > 0 {
			return codes.Errorf(codes.InvalidInput, "missing required parameter %q", required[0])
		}
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &m); err != nil {
		return codes.Errorf(codes.InvalidInput, "arguments must be a JSON object")
	}
	for _, r := range required {
		if v, ok := m[r]; !ok || string(v) == "null" {
			return codes.Errorf(codes.InvalidInput, "missing required parameter %q", r)
		}
	}
	return nil
}

// decode unmarshals arguments into in, wording type mistakes for a model.
func decode(args json.RawMessage, in any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		return nil
	}
	err := json.Unmarshal(args, in)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return codes.Errorf(codes.InvalidInput, "arguments must be a JSON object")
		}
		return codes.Errorf(codes.InvalidInput, "parameter %q must be %s, not %s", te.Field, jsonKind(te.Type), te.Value)
	}
	var ce *conversionError
	if errors.As(err, &ce) {
		if name := failingField(args, in); name != "" {
			return codes.Errorf(codes.InvalidInput, "parameter %q: %s", name, ce.msg)
		}
		return codes.Errorf(codes.InvalidInput, "%s", ce.msg)
	}
	return codes.Errorf(codes.InvalidInput, "invalid arguments: %v", err)
}

// failingField finds the parameter whose value does not decode, by trying
// each one alone (only on the error path).
func failingField(args json.RawMessage, in any) string {
	var raw map[string]json.RawMessage
	if json.Unmarshal(args, &raw) != nil {
		return ""
	}
	return failingFieldOf(raw, reflect.TypeOf(in).Elem())
}

func failingFieldOf(raw map[string]json.RawMessage, t reflect.Type) string {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if name := failingFieldOf(raw, f.Type); name != "" {
				return name
			}
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if v, ok := raw[name]; ok && json.Unmarshal(v, reflect.New(f.Type).Interface()) != nil {
			return name
		}
	}
	return ""
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "an array"
	}
	return "a " + t.String()
}

// BadValue is the error an argument type's UnmarshalJSON returns for a
// value it cannot take; the call's error then names the parameter.
func BadValue(msg string) error { return &conversionError{msg: msg} }
