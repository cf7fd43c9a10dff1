// Package dialect names the ways boris can speak: the tool dialects of the
// model families it serves. Each model family is trained on tools of its
// own; boris offers the same file and command operations under each
// family's names and answers in each family's words. A Mode is decided
// once, from the command line, and passed as a value to whatever names
// tools or renders answers (the tool families under internal/tool), so
// that no operation grows a branch per model family.
package dialect

import "fmt"

// Mode is a tool dialect.
type Mode int

// The dialects.
const (
	// Boris is boris's own tools and texts (the default).
	Boris Mode = iota
	// Claude is the tools Claude models are trained on, answering as
	// Anthropic's reference tools do (--anthropic-compat).
	Claude
	// Codex is the tools OpenAI's coding models are trained on, answering
	// as Codex does (--openai-compat).
	Codex
)

// Modes are every dialect, in the order the documentation lists them.
var Modes = []Mode{Boris, Claude, Codex}

// String is the dialect's short name.
func (m Mode) String() string {
	switch m {
	case Boris:
		return "boris"
	case Claude:
		return "claude"
	case Codex:
		return "codex"
	}
	return fmt.Sprintf("dialect(%d)", int(m))
}

// Flag is the command-line flag that chooses the dialect ("" for the
// default).
func (m Mode) Flag() string {
	switch m {
	case Claude:
		return "--anthropic-compat"
	case Codex:
		return "--openai-compat"
	}
	return ""
}

// Title names the dialect for people: what its tools are.
func (m Mode) Title() string {
	switch m {
	case Claude:
		return "Claude's tools (`--anthropic-compat`)"
	case Codex:
		return "OpenAI's tools (`--openai-compat`)"
	}
	return "boris's tools (default)"
}

// Structured reports whether --structured-content auto turns structured
// results on in this dialect. It is off for Claude's: the hosts Claude
// models run in (Claude Code among them) show the model the
// structuredContent in place of the text when a result has both, and that
// dialect's point is the text of Anthropic's reference tools.
func (m Mode) Structured() bool { return m != Claude }
