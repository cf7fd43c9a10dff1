// Package audit writes the audit trail of a boris server: one structured
// log record per tool call saying who called which tool, in which session,
// with what essentials (the command, the paths, a patch's files, a search
// pattern) and what came of it. The record's fields are a stable format,
// listed in docs/operations.md; a field without a value is left out.
package audit

import (
	"context"
	"log/slog"
	"time"
)

// Modes of the audit trail (--audit).
const (
	Full  = "full"  // every field
	Paths = "paths" // no command text, task input or search pattern
	Off   = "off"   // no record
)

// MaxText bounds the command text and task input a record carries; longer
// text is cut there, and the record gives its whole length.
const MaxText = 2048

// Record is one tool call.
type Record struct {
	// Who and where.
	Tool       string
	Credential string // which bearer token: "token-1", "token-2", … ("none" without auth)
	Session    string // boris's session id
	Era        string // protocol era: "stateless" (2026-07-28 and later) or "handshake"
	Transport  string // "http" or "stdio"
	Client     string // the client's name and version, when it said
	TraceID    string // the call's trace, when tracing is on

	// The call's essentials.
	Operation string   // str_replace_editor's command (view, create, …)
	Command   string   // the command line (bash, shell, exec_command)
	Input     string   // text written to a running task
	Paths     []string // the paths named
	Pattern   string   // grep's regular expression, find's glob
	TaskID    string
	Files     []string // a patch's files: "A path", "M path", "D path"

	// What the command rules (--rules) said: the strictest decision taken
	// (allow, ask, forbid), the deciding rule (file:line), the part of the
	// command or the path it was about, and for an ask the human's answer
	// (approved, declined, unanswered, unavailable).
	RuleDecision string
	Rule         string
	RulePart     string
	RuleAnswer   string

	// What came of it.
	Outcome      string // ok, tool_error, protocol_error (as boris_tool_calls_total)
	ErrorCode    string // the [CODE] of a tool error
	ExitCode     *int
	TimedOut     bool
	Canceled     bool // the client went away or cancelled the call
	Panicked     bool
	BytesWritten int64
	Duration     time.Duration
}

// SetExit records a command's exit code.
func (r *Record) SetExit(code int) { r.ExitCode = &code }

// Logger writes records. A nil Logger writes nothing.
type Logger struct {
	log  *slog.Logger
	mode string
}

// New returns a Logger writing to log in the given mode; nil for Off.
func New(log *slog.Logger, mode string) *Logger {
	if mode == Off {
		return nil
	}
	return &Logger{log: log, mode: mode}
}

// Log writes one record at info.
func (l *Logger) Log(ctx context.Context, r *Record) {
	if l == nil {
		return
	}
	cred := r.Credential
	if cred == "" {
		cred = "none"
	}
	attrs := make([]slog.Attr, 0, 20)
	attrs = append(attrs,
		slog.String("audit", "tool_call"),
		slog.String("tool", r.Tool),
		slog.String("outcome", r.Outcome),
		slog.Float64("duration_ms", float64(r.Duration.Microseconds())/1000),
		slog.String("credential", cred),
		slog.String("session", r.Session),
		slog.String("era", r.Era),
		slog.String("transport", r.Transport),
	)
	add := func(key, v string) {
		if v != "" {
			attrs = append(attrs, slog.String(key, v))
		}
	}
	text := func(key, v string) {
		if v == "" || l.mode != Full {
			return
		}
		if len(v) > MaxText {
			attrs = append(attrs, slog.String(key, cut(v, MaxText)), slog.Int(key+"_len", len(v)))
			return
		}
		attrs = append(attrs, slog.String(key, v))
	}
	add("client", r.Client)
	add("trace_id", r.TraceID)
	add("operation", r.Operation)
	text("command", r.Command)
	text("input", r.Input)
	if len(r.Paths) > 0 {
		attrs = append(attrs, slog.Any("paths", r.Paths))
	}
	if l.mode == Full {
		add("pattern", r.Pattern)
	}
	add("task_id", r.TaskID)
	if len(r.Files) > 0 {
		attrs = append(attrs, slog.Any("files", r.Files))
	}
	add("rule_decision", r.RuleDecision)
	add("rule", r.Rule)
	text("rule_part", r.RulePart)
	add("rule_answer", r.RuleAnswer)
	add("error_code", r.ErrorCode)
	if r.ExitCode != nil {
		attrs = append(attrs, slog.Int("exit_code", *r.ExitCode))
	}
	if r.TimedOut {
		attrs = append(attrs, slog.Bool("timed_out", true))
	}
	if r.Canceled {
		attrs = append(attrs, slog.Bool("canceled", true))
	}
	if r.Panicked {
		attrs = append(attrs, slog.Bool("panicked", true))
	}
	if r.BytesWritten > 0 {
		attrs = append(attrs, slog.Int64("bytes_written", r.BytesWritten))
	}
	l.log.LogAttrs(ctx, slog.LevelInfo, "tool call", attrs...)
}

// cut shortens s to at most n bytes without splitting a UTF-8 sequence.
func cut(s string, n int) string {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
