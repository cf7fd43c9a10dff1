// Package ignore decides which paths .gitignore files exclude, with git's
// own semantics: the patterns are matched by a port of git's wildmatch, a
// file's rules are tried last to first, and deeper .gitignore files are
// consulted before the ones above them.
//
// Only .gitignore files are read. Global excludes (core.excludesFile) and
// .git/info/exclude are deliberately not: they are one user's preferences,
// not part of the tree, and a server searching on behalf of an agent should
// give the same answer on every machine.
package ignore

import (
	"bytes"
	"strings"
)

// maxFileSize mirrors git's PATTERN_MAX_FILE_SIZE: larger ignore files are
// not used at all.
const maxFileSize = 100 << 20

type ruleKind uint8

const (
	kindLiteral  ruleKind = iota // no wildcard, matched against the base name
	kindEndsWith                 // "*literal", matched against the base name
	kindBase                     // wildcard pattern matched against the base name
	kindPath                     // pattern with a slash, matched against the relative path
)

type rule struct {
	pattern   string // without "!" and the trailing "/"
	nowild    int    // length of the leading part without glob specials
	kind      ruleKind
	negative  bool
	mustBeDir bool
}

// File holds the rules of one .gitignore file. The zero value has no rules.
type File struct {
	rules []rule
	// pathRules reports whether any rule needs the path relative to the
	// file's directory rather than just the base name.
	pathRules bool
	// Index of the rules by what they need to see, so that a path is not
	// compared with every rule of a long file: literal base names, "*.ext"
	// rules by extension, literal paths, and the rest in order.
	byName map[string][]int
	byExt  map[string][]int
	byPath map[string][]int
	others []int
}

// Parse reads the contents of a .gitignore file the way git does: a UTF-8
// BOM is skipped, lines end at "\n" (a preceding "\r" is dropped), blank
// lines and lines starting with "#" are skipped, trailing spaces are
// removed unless escaped with a backslash.
func Parse(data []byte) *File {
	f := &File{}
	if len(data) > maxFileSize {
		return f
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			// git appends a newline to a file that lacks one.
			line, data = data, nil
		}
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		// git handles lines as C strings.
		if i := bytes.IndexByte(line, 0); i >= 0 {
			line = line[:i]
		}
		f.add(trimTrailingSpaces(string(line)))
	}
	return f
}

// trimTrailingSpaces is git's trim_trailing_spaces: drop a run of trailing
// spaces unless a backslash escapes the first of them.
func trimTrailingSpaces(s string) string {
	lastSpace := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if lastSpace < 0 {
				lastSpace = i
			}
		case '\\':
			i++
			if i >= len(s) {
				return s
			}
			lastSpace = -1
		default:
			lastSpace = -1
		}
	}
	if lastSpace >= 0 {
		return s[:lastSpace]
	}
	return s
}

// add is git's parse_path_pattern followed by the choice of a matching
// strategy equivalent to match_basename and match_pathname.
func (f *File) add(p string) {
	var r rule
	if strings.HasPrefix(p, "!") {
		r.negative = true
		p = p[1:]
	}
	if strings.HasSuffix(p, "/") {
		r.mustBeDir = true
		p = p[:len(p)-1]
	}
	if p == "" {
		// Matches nothing in git either: no base name is empty.
		return
	}
	r.pattern = p
	r.nowild = simpleLength(p)
	switch {
	case strings.IndexByte(p, '/') >= 0:
		r.kind = kindPath
		f.pathRules = true
	case r.nowild == len(p):
		r.kind = kindLiteral
	case p[0] == '*' && simpleLength(p[1:]) == len(p)-1:
		r.kind = kindEndsWith
	default:
		r.kind = kindBase
	}
	i := len(f.rules)
	f.rules = append(f.rules, r)
	switch {
	case r.kind == kindLiteral:
		if f.byName == nil {
			f.byName = make(map[string][]int)
		}
		f.byName[p] = append(f.byName[p], i)
	case r.kind == kindEndsWith && strings.IndexByte(p, '.') >= 0:
		if f.byExt == nil {
			f.byExt = make(map[string][]int)
		}
		ext := p[strings.LastIndexByte(p, '.'):]
		f.byExt[ext] = append(f.byExt[ext], i)
	case r.kind == kindPath && r.nowild == len(p):
		// A literal path matches only itself.
		if f.byPath == nil {
			f.byPath = make(map[string][]int)
		}
		lp := strings.TrimPrefix(p, "/")
		f.byPath[lp] = append(f.byPath[lp], i)
	default:
		f.others = append(f.others, i)
	}
}

// simpleLength is git's simple_length: the length of the prefix without
// glob special characters.
func simpleLength(s string) int {
	for i := 0; i < len(s); i++ {
		if isGlobSpecial(s[i]) {
			return i
		}
	}
	return len(s)
}

// Len returns the number of rules.
func (f *File) Len() int { return len(f.rules) }

// NeedsPath reports whether Match needs the full relative path; when false
// the base name may be passed as path.
func (f *File) NeedsPath() bool { return f.pathRules }

// Match applies the file's rules to a path relative to the directory that
// holds the .gitignore (slash-separated, no leading or trailing slash).
// base is the last element of path. decided is false when no rule matches;
// otherwise ignored tells whether the last matching rule excludes the path.
func (f *File) Match(path, base string, isDir bool) (ignored, decided bool) {
	best := -1
	if f.byName != nil {
		best = max(best, f.lastMatch(f.byName[base], path, base, isDir))
	}
	if f.byExt != nil {
		if i := strings.LastIndexByte(base, '.'); i >= 0 {
			best = max(best, f.lastMatch(f.byExt[base[i:]], path, base, isDir))
		}
	}
	if f.byPath != nil {
		best = max(best, f.lastMatch(f.byPath[path], path, base, isDir))
	}
	for j := len(f.others) - 1; j >= 0 && f.others[j] > best; j-- {
		if f.matches(f.others[j], path, base, isDir) {
			best = f.others[j]
			break
		}
	}
	if best < 0 {
		return false, false
	}
	return !f.rules[best].negative, true
}

// lastMatch returns the greatest index in idxs (ascending) whose rule
// matches, or -1.
func (f *File) lastMatch(idxs []int, path, base string, isDir bool) int {
	for j := len(idxs) - 1; j >= 0; j-- {
		if f.matches(idxs[j], path, base, isDir) {
			return idxs[j]
		}
	}
	return -1
}

func (f *File) matches(i int, path, base string, isDir bool) bool {
	r := &f.rules[i]
	if r.mustBeDir && !isDir {
		return false
	}
	switch r.kind {
	case kindLiteral:
		return base == r.pattern
	case kindEndsWith:
		return strings.HasSuffix(base, r.pattern[1:])
	case kindBase:
		return len(base) >= r.nowild && base[:r.nowild] == r.pattern[:r.nowild] &&
			wildmatch(r.pattern, base, false)
	default:
		return matchPathname(path, r.pattern, r.nowild)
	}
}

// matchPathname is git's match_pathname for a pattern whose base is the
// directory of the .gitignore file. The literal prefix is compared first and
// only the rest is handed to wildmatch, exactly as git does: that changes
// how a "**" right after the prefix is read.
func matchPathname(name, pattern string, prefix int) bool {
	if pattern[0] == '/' {
		pattern = pattern[1:]
		prefix--
	}
	if prefix > 0 {
		if prefix > len(name) || name[:prefix] != pattern[:prefix] {
			return false
		}
		pattern, name = pattern[prefix:], name[prefix:]
		if pattern == "" && name == "" {
			return true
		}
	}
	return wildmatch(pattern, name, true)
}
