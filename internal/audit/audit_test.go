package audit

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"
)

func record(t *testing.T, mode string, r *Record) map[string]any {
	t.Helper()
	var b strings.Builder
	New(slog.New(slog.NewJSONHandler(&b, nil)), mode).Log(context.Background(), r)
	var out map[string]any
	if err := json.Unmarshal([]byte(b.String()), &out); err != nil {
		t.Fatalf("%v: %q", err, b.String())
	}
	return out
}

// Long text is cut at MaxText without splitting a character, with its
// length; paths mode keeps paths and outcomes but no text; off writes
// nothing.
func TestRecordModes(t *testing.T) {
	long := strings.Repeat("é", MaxText) // two bytes each
	r := &Record{Tool: "bash", Command: long, Input: "typed", Pattern: "p.*", Paths: []string{"a"}, Outcome: "ok"}
	r.SetExit(7)
	full := record(t, Full, r)
	cmd, _ := full["command"].(string)
	if len(cmd) > MaxText || !utf8.ValidString(cmd) || full["command_len"] != float64(len(long)) {
		t.Fatalf("cut command: %d bytes valid=%v len field %v", len(cmd), utf8.ValidString(cmd), full["command_len"])
	}
	if full["credential"] != "none" || full["exit_code"] != float64(7) || full["input"] != "typed" || full["pattern"] != "p.*" {
		t.Fatalf("full: %v", full)
	}
	paths := record(t, Paths, r)
	for _, k := range []string{"command", "command_len", "input", "pattern"} {
		if _, ok := paths[k]; ok {
			t.Fatalf("paths mode has %s: %v", k, paths)
		}
	}
	if paths["exit_code"] != float64(7) || paths["paths"] == nil {
		t.Fatalf("paths mode: %v", paths)
	}
	if New(slog.Default(), Off) != nil {
		t.Fatal("off has a logger")
	}
	var nilLogger *Logger
	nilLogger.Log(context.Background(), r) // no panic, nothing written
}
