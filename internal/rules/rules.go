// Package rules judges what a command may run, in the formats the users of
// Codex and Claude Code already write: Codex's execpolicy `.rules` files
// (Starlark prefix_rule and host_executable) and Claude Code's settings
// `permissions` (allow, ask and deny lists of Bash(...), Read(...) and
// Edit(...) rules).
//
// A Rules value answers three questions: what one program's real argv may
// do (Exec, for the per-exec kernel check), what a whole shell command line
// may do before it runs (Command: parsed as a shell parses it, every simple
// command judged, wrappers seen through), and what a file tool may do with a
// path (Path). Each answer is a Verdict; the strictest matching decision
// wins, across formats too. It knows no protocol: the tool layer turns a
// verdict into a refusal or a question to the human.
package rules

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Decision is what the rules say of a command or path, in strictness
// order: a stricter decision wins over a laxer one.
type Decision int

// The decisions, laxest first.
const (
	// NoMatch: no rule speaks of it; it behaves as without rules.
	NoMatch Decision = iota
	// Allow: a rule allows it (Codex "allow", Claude "allow").
	Allow
	// Ask: a human must approve it first (Codex "prompt", Claude "ask"),
	// or what runs cannot be known before it runs while rules restrict.
	Ask
	// Forbid: it must not run (Codex "forbidden", Claude "deny").
	Forbid
)

func (d Decision) String() string {
	switch d {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Forbid:
		return "forbid"
	}
	return "none"
}

// Verdict is the judgement of a command, an argv or a path.
type Verdict struct {
	Decision Decision
	// Rule is where the deciding rule is written, "file:line" ("" when no
	// rule decided: no match, or a command that cannot be known).
	Rule string
	// Justification is the rule's justification (Codex), or "" .
	Justification string
	// Part is what was judged: the argv of the part of a command line
	// that decided, shell-quoted, or the path.
	Part string
	// Pattern is the deciding rule as written: `prefix_rule(["git",
	// "push"])` or `Bash(git push:*)`.
	Pattern string
	// Reason says why a part was judged Ask without a rule: what about it
	// cannot be known before it runs.
	Reason string
}

// stricter reports whether v decides more strictly than w.
func (v Verdict) stricter(w Verdict) bool { return v.Decision > w.Decision }

// Rules are the loaded rules of every file, immutable once loaded.
type Rules struct {
	codex  *codexPolicy
	claude []*claudeFile
	files  []string
}

// Load reads the rules files at paths: Codex `.rules` files (Starlark) and
// Claude Code settings files (JSON, told apart by their `.json` name or a
// leading `{`). Relative Read and Edit paths in Claude's rules resolve
// against the process's working directory. A file that does not parse, an
// unknown function, an empty justification or a match example that does
// not match is an error naming the file and line.
func Load(paths []string) (*Rules, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	return LoadIn(paths, wd)
}

// LoadIn is Load with relative Read and Edit paths resolving against dir.
func LoadIn(paths []string, dir string) (*Rules, error) {
	r := &Rules{codex: newCodexPolicy()}
	var errs []error
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("rules: %w", err))
			continue
		}
		r.files = append(r.files, p)
		if isClaude(p, data) {
			f, err := parseClaude(p, data, dir)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			r.claude = append(r.claude, f)
			continue
		}
		if err := r.codex.parse(p, data); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return r, nil
}

func isClaude(path string, data []byte) bool {
	if strings.EqualFold(filepath.Ext(path), ".json") {
		return true
	}
	s := strings.TrimSpace(string(data))
	return strings.HasPrefix(s, "{")
}

// Files are the files the rules were loaded from.
func (r *Rules) Files() []string {
	if r == nil {
		return nil
	}
	return r.files
}

// Restrictive reports whether any rule asks or forbids: only then does a
// command whose program cannot be known before it runs need approval.
func (r *Rules) Restrictive() bool {
	if r == nil {
		return false
	}
	if r.codex.restrictive() {
		return true
	}
	for _, f := range r.claude {
		if f.restrictive() {
			return true
		}
	}
	return false
}

// Empty reports whether there are no rules at all.
func (r *Rules) Empty() bool {
	if r == nil {
		return true
	}
	if len(r.codex.rules) > 0 {
		return false
	}
	for _, f := range r.claude {
		if len(f.bash)+len(f.paths) > 0 {
			return false
		}
	}
	return true
}

// Exec judges one program's real argv, as the kernel sees it at execve:
// every rule of either format, an absolute program path also matched by its
// name for the rules that ask or forbid.
func (r *Rules) Exec(argv []string) Verdict {
	if r == nil || len(argv) == 0 {
		return Verdict{}
	}
	ws := make([]word, len(argv))
	for i, a := range argv {
		ws[i] = word{s: a, known: true}
	}
	return r.judge(cand{argv: ws})
}

// judge is the strictest verdict of every rule on one candidate argv.
func (r *Rules) judge(c cand) Verdict {
	best := Verdict{Part: c.quoted()}
	consider := func(v Verdict) {
		if v.stricter(best) {
			v.Part = best.Part
			best = v
		}
	}
	for _, v := range r.codex.judge(c) {
		consider(v)
	}
	for _, f := range r.claude {
		consider(f.judgeBash(c))
	}
	return best
}

// Path judges a file tool's access to an absolute path: tool is "Read"
// (view, grep, find) or "Edit" (edits, new files, patches). Only Claude's
// Read and Edit rules speak of paths.
func (r *Rules) Path(tool, path string) Verdict {
	best := Verdict{Part: path}
	if r == nil {
		return best
	}
	for _, f := range r.claude {
		if v := f.judgePath(tool, path); v.stricter(best) {
			best = v
		}
	}
	return best
}

// word is one word of a command as the shell would pass it, or, when it
// cannot be known before the command runs (a variable, a substitution, a
// glob), the word's source text.
type word struct {
	s     string
	known bool
	// glob is set on an unknown word that is a pattern of file names (s):
	// it can only become words the pattern matches.
	glob bool
}

// could reports whether an unknown word could become s.
func (w word) could(s string) bool {
	if !w.glob {
		return true
	}
	ok, err := path.Match(w.s, s)
	return ok || err != nil
}

// cand is one argv to judge: a simple command after quote removal, or the
// command a wrapper runs. open means more arguments may follow that cannot
// be known (xargs appends what it reads).
type cand struct {
	argv []word
	open bool
}

func (c cand) quoted() string {
	var b strings.Builder
	for i, w := range c.argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		if w.known {
			b.WriteString(shellQuote(w.s))
		} else {
			b.WriteString(w.s)
		}
	}
	if c.open {
		b.WriteString(" …")
	}
	return b.String()
}

// shellQuote quotes s as a shell word when it needs quoting.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./=:,+@%^", c)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// match is how far a rule matches a candidate: not, only if words that
// cannot be known turn out a certain way, or for sure.
type match int

const (
	noMatch match = iota
	maybeMatch
	sureMatch
)

// verdictOf turns a rule's match into a verdict: a sure match decides as
// the rule says; a maybe match of a rule that asks or forbids asks, since
// what runs cannot be known; a maybe match of an allow rule allows nothing.
func verdictOf(m match, d Decision, where, just, pattern string) Verdict {
	switch {
	case m == sureMatch:
		return Verdict{Decision: d, Rule: where, Justification: just, Pattern: pattern}
	case m == maybeMatch && d > Allow:
		return Verdict{Decision: Ask, Rule: where, Justification: just, Pattern: pattern,
			Reason: fmt.Sprintf("it may match a rule that says %s once its variables, substitutions or globs are expanded, which cannot be known before it runs", d)}
	}
	return Verdict{}
}
