// Package glob matches file paths against the globs of grep's include
// filter, find's pattern and the file type table.
//
// A pattern uses doublestar syntax: "*", "?", "**", "[abc]", "[a-z]",
// "[!abc]" and "{a,b}". It is tried against the path relative to the search
// root and then against the base name, so "*.go" finds Go files at any
// depth while "src/**/*.go" only finds those under src. Common shapes
// ("*.go", "*.{ts,tsx}", "Makefile") are recognised when compiled and
// matched without running the general matcher.
package glob

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ErrEmpty is returned by Compile for an empty pattern.
var ErrEmpty = errors.New("empty glob pattern")

// maxAlternatives bounds brace expansion; a pattern with more alternatives
// is matched as a whole by the general matcher.
const maxAlternatives = 64

// Matcher reports whether a path matches a glob or any of a set of globs.
// It is immutable and safe for concurrent use.
type Matcher struct {
	// exts holds suffixes of the form ".ext" (no other dot), looked up by
	// the base name's final extension.
	exts map[string]struct{}
	// suffixes holds other "*literal" suffixes.
	suffixes []string
	// names holds literal base names.
	names map[string]struct{}
	// baseGlobs are patterns that can only match a base name (no slash,
	// no "**", no class that might match a slash).
	baseGlobs []string
	// pathGlobs are tried against the relative path, then the base name.
	pathGlobs []string
}

// Compile compiles one doublestar pattern. A malformed pattern returns an
// error that names it.
func Compile(pattern string) (*Matcher, error) {
	if pattern == "" {
		return nil, ErrEmpty
	}
	if !doublestar.ValidatePattern(pattern) {
		return nil, fmt.Errorf("invalid glob pattern %q: check for an unclosed '[' or '{' or a trailing backslash", pattern)
	}
	m := &Matcher{}
	m.add(pattern)
	return m, nil
}

// compileBase compiles globs that are matched against base names only (the
// type table).
func compileBase(patterns []string) *Matcher {
	m := &Matcher{}
	for _, p := range patterns {
		if !doublestar.ValidatePattern(p) || strings.Contains(p, "/") {
			panic("glob: bad built-in pattern " + p)
		}
		m.add(p)
	}
	return m
}

func (m *Matcher) add(pattern string) {
	alts, ok := expandBraces(pattern)
	if !ok {
		if mayCrossSlash(pattern) {
			m.pathGlobs = append(m.pathGlobs, pattern)
		} else {
			m.baseGlobs = append(m.baseGlobs, pattern)
		}
		return
	}
	for _, a := range alts {
		switch {
		case !hasMeta(a) && !strings.Contains(a, "/"):
			if m.names == nil {
				m.names = make(map[string]struct{})
			}
			m.names[a] = struct{}{}
		case strings.HasPrefix(a, "*") && !hasMeta(a[1:]) && !strings.Contains(a, "/"):
			suf := a[1:]
			if strings.HasPrefix(suf, ".") && !strings.Contains(suf[1:], ".") {
				if m.exts == nil {
					m.exts = make(map[string]struct{})
				}
				m.exts[suf] = struct{}{}
			} else {
				m.suffixes = append(m.suffixes, suf)
			}
		case mayCrossSlash(a):
			m.pathGlobs = append(m.pathGlobs, a)
		default:
			m.baseGlobs = append(m.baseGlobs, a)
		}
	}
}

// NeedsPath reports whether Match may look at rel; when false, callers may
// pass the base name for rel and avoid building the path.
func (m *Matcher) NeedsPath() bool { return len(m.pathGlobs) > 0 }

// Match reports whether the root-relative path rel, or its base name base,
// matches.
func (m *Matcher) Match(rel, base string) bool {
	if m.exts != nil {
		if i := strings.LastIndexByte(base, '.'); i >= 0 {
			if _, ok := m.exts[base[i:]]; ok {
				return true
			}
		}
	}
	for _, s := range m.suffixes {
		if strings.HasSuffix(base, s) {
			return true
		}
	}
	if m.names != nil {
		if _, ok := m.names[base]; ok {
			return true
		}
	}
	for _, g := range m.baseGlobs {
		if doublestar.MatchUnvalidated(g, base) {
			return true
		}
	}
	for _, g := range m.pathGlobs {
		if doublestar.MatchUnvalidated(g, rel) || (rel != base && doublestar.MatchUnvalidated(g, base)) {
			return true
		}
	}
	return false
}

// hasMeta reports whether s contains glob syntax.
func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[{\`) }

// mayCrossSlash reports whether a pattern might match a string containing
// a slash, so that it must be tried against the relative path.
func mayCrossSlash(s string) bool { return strings.ContainsAny(s, "/[") || strings.Contains(s, "**") }

// expandBraces expands {a,b} alternatives (nested too). ok is false when
// the pattern has escapes, unbalanced braces or too many alternatives, in
// which case the caller keeps the pattern whole.
func expandBraces(p string) (alts []string, ok bool) {
	if strings.IndexByte(p, '\\') >= 0 || (strings.IndexByte(p, '[') >= 0 && strings.IndexByte(p, '{') >= 0) {
		// Escapes and classes inside braces are left to doublestar.
		return nil, false
	}
	open := strings.IndexByte(p, '{')
	if open < 0 {
		return []string{p}, true
	}
	// Find the matching close brace and the top-level commas.
	depth := 0
	var commas []int
	closeAt := -1
	for i := open; i < len(p) && closeAt < 0; i++ {
		switch p[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				closeAt = i
			}
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		}
	}
	if closeAt < 0 {
		return nil, false
	}
	prefix, suffix := p[:open], p[closeAt+1:]
	start := open + 1
	bounds := append(commas, closeAt)
	for _, end := range bounds {
		inner, ok := expandBraces(prefix + p[start:end] + suffix)
		if !ok {
			return nil, false
		}
		alts = append(alts, inner...)
		if len(alts) > maxAlternatives {
			return nil, false
		}
		start = end + 1
	}
	return alts, true
}
