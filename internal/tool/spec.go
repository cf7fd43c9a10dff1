package tool

import (
	"encoding/json"
	"slices"

	"github.com/boris-mcp/boris/internal/dialect"
)

// Spec declares one tool, once: everything else that lists tools is
// derived from the declarations (see package doc).
type Spec struct {
	// Names is the tool's name in each dialect that serves it; a dialect
	// without an entry does not.
	Names map[dialect.Mode]string
	// Keys are the --disable-tools names that turn the tool off: boris's
	// own names of the operations it offers (one for most tools; Claude's
	// editor offers view, str_replace and create_file, and goes when any
	// of them is disabled). Nil means its name in boris's dialect. Its
	// names in the other dialects are accepted too, as aliases of Keys.
	Keys []string
	// Requires are the keys of the tools it goes with: disabling one of
	// them turns this one off too (the task tools go with bash).
	Requires []string
	// Needs reports whether this process can serve the tool at all (nil:
	// always): a shell for the command tools, language servers for lsp.
	Needs func(*Env) bool
	// Changes reports whether a call with these arguments can change the
	// workspace (nil: never): a checkpoint is taken before each such call.
	Changes func(args json.RawMessage) bool
	// Acts lists what a call with these arguments is about to do that the
	// command rules judge (nil: nothing): the command line it runs, the
	// paths it reads or changes, relative paths resolved against cwd (the
	// session's working directory). The kernel judges them before the
	// handler runs; a forbidden act stops the call.
	Acts func(args json.RawMessage, cwd string) []Act
	// Summary says in a few words what a call does, for the list of
	// checkpoints ("`make test`", "str_replace main.go"); nil: its path
	// argument.
	Summary func(args json.RawMessage) string
	// Moves says, per dialect, how a call moves the session's working
	// directory ("cd in bash"), for the server's instructions.
	Moves map[dialect.Mode]string
	// Hint is a sentence for the server's instructions, per dialect.
	Hint map[dialect.Mode]string
	// Build makes the tool as a dialect serves it: its name, description,
	// schemas and handler.
	Build func(m dialect.Mode) (*Def, error)
}

// keys are the spec's own --disable-tools names.
func (s *Spec) keys() []string {
	if s.Keys != nil {
		return s.Keys
	}
	if n, ok := s.Names[dialect.Boris]; ok {
		return []string{n}
	}
	return nil
}

// NamingOf derives the --disable-tools names of specs: every spec's keys in
// declaration order, and each name a dialect gives a tool that is not one
// of them as an alias of the tool's keys.
func NamingOf(specs []Spec) dialect.Naming {
	n := dialect.Naming{Aliases: map[string][]string{}}
	for i := range specs {
		for _, k := range specs[i].keys() {
			if !slices.Contains(n.Names, k) {
				n.Names = append(n.Names, k)
			}
		}
	}
	for i := range specs {
		s := &specs[i]
		for _, m := range dialect.Modes {
			name, ok := s.Names[m]
			if !ok || slices.Contains(n.Names, name) {
				continue
			}
			for _, k := range s.keys() {
				if !slices.Contains(n.Aliases[name], k) {
					n.Aliases[name] = append(n.Aliases[name], k)
				}
			}
		}
	}
	return n
}

// served reports whether a spec is served in mode m with these keys
// disabled, given what the process has.
func (s *Spec) served(m dialect.Mode, disabled map[string]bool, env *Env) bool {
	if _, ok := s.Names[m]; !ok {
		return false
	}
	for _, k := range append(slices.Clone(s.keys()), s.Requires...) {
		if disabled[k] {
			return false
		}
	}
	return s.Needs == nil || s.Needs(env)
}
