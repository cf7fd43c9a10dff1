// Package match finds the lines of a buffer or a stream that match an RE2
// pattern, the way ripgrep's grep-searcher does: the literal parts every
// match must contain are extracted from the parsed pattern and looked for
// first with vectorised byte search, and the pattern only runs on the
// lines that contain one. When the pattern is nothing but those literals,
// it does not run at all; when they are missing, or found on most lines,
// the pattern runs over the whole buffer instead.
//
// The pattern runs as a lazy DFA (package dfa), one table lookup per byte
// whatever the pattern. Go's regexp is kept for what a DFA does not
// answer (the spans of multiline matches) and as the fallback when the
// DFA's state cache thrashes.
//
// Outside multiline mode a match never spans lines: each line is matched
// on its own, without its line terminator. In multiline mode "." also
// matches a newline, "^" and "$" match at line boundaries, and every line a
// match touches is a matching line.
package match

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/boris-mcp/boris/internal/search/match/dfa"
)

// Options modify how a pattern is compiled.
type Options struct {
	CaseInsensitive bool
	Multiline       bool
}

// Matcher is a compiled pattern. It is immutable and safe for concurrent
// use; the per-goroutine state lives in a Searcher.
type Matcher struct {
	re        *regexp.Regexp
	multiline bool
	pre       *prefilter // nil when no literal is required
	// exact reports that a line matches exactly when it contains one of
	// the prefilter's literals, so the regexp need not run.
	exact bool
	// guard is a cheap necessary condition checked before the regexp on a
	// candidate line (nil when the pattern has none).
	guard *suffixGuard
	// dfa decides lines (Lines mode) or, in multiline mode, whether the
	// text matches at all (Text mode); nil if it could not be built.
	dfa *dfa.Prog
}

// ErrNewline is wrapped by Compile's error for a pattern with a literal
// line break outside multiline mode.
var ErrNewline = errors.New("pattern contains a line break (\\n) but multiline is off")

// Compile parses pattern with Go's RE2 syntax.
func Compile(pattern string, opts Options) (*Matcher, error) {
	flags := syntax.Perl
	prefix := ""
	if opts.CaseInsensitive {
		flags |= syntax.FoldCase
		prefix += "i"
	}
	if opts.Multiline {
		flags |= syntax.DotNL
		flags &^= syntax.OneLine
		prefix += "ms"
	}
	parsed, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil, err
	}
	tree := parsed.Simplify()
	if !opts.Multiline && hasNewlineLiteral(tree) {
		return nil, fmt.Errorf("%w: set multiline to match across lines", ErrNewline)
	}
	full := pattern
	if prefix != "" {
		full = "(?" + prefix + ")" + pattern
	}
	re, err := regexp.Compile(full)
	if err != nil {
		return nil, err
	}
	m := &Matcher{re: re, multiline: opts.Multiline}
	if !opts.Multiline {
		// Lines are only tested, never measured: a simpler pattern that
		// matches the same lines will do.
		if t := trimEnds(parsed); t != parsed {
			t = t.Simplify()
			if tre, err := regexp.Compile(t.String()); err == nil {
				tree, m.re = t, tre
			}
		}
	}

	mode := dfa.Text
	if !opts.Multiline {
		m.guard = newSuffixGuard(tree)
		mode = dfa.Lines
	}
	if d, err := dfa.Compile(tree, mode); err == nil {
		m.dfa = d
	}

	x := &extractor{hazards: map[string]bool{}}
	in := x.info(tree)
	req := in.req
	if in.exact != nil && !hasEmpty(in.exact) {
		// The pattern is a small set of literals: finding one is a match.
		req, m.exact = in.exact, true
	}
	if req != nil && !hasEmpty(req) {
		m.pre = &prefilter{}
		for _, l := range simplify(req) {
			m.pre.finders = append(m.pre.finders, newLitFinder(l))
		}
		for h := range x.hazards {
			m.pre.hazards = append(m.pre.hazards, []byte(h))
		}
	}
	return m, nil
}

// hasNewlineLiteral reports whether the pattern spells out a line break,
// which can never match within a single line.
func hasNewlineLiteral(re *syntax.Regexp) bool {
	if re.Op == syntax.OpLiteral && strings.ContainsRune(string(re.Rune), '\n') {
		return true
	}
	for _, s := range re.Sub {
		if hasNewlineLiteral(s) {
			return true
		}
	}
	return false
}

// String returns the pattern as compiled, with the flags Compile added.
func (m *Matcher) String() string { return m.re.String() }

// Literals describes the prefilter for tests and benchmarks: the literals
// (folded positions in lower case) and whether they decide a match alone.
func (m *Matcher) Literals() (lits []string, exact bool) {
	if m.pre == nil {
		return nil, false
	}
	for _, f := range m.pre.finders {
		s := string(f.s)
		if f.mask != nil {
			s = "(?i)" + s
		}
		lits = append(lits, s)
	}
	return lits, m.exact
}
