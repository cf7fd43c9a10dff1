package rules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// claudeFile is the permissions of one Claude Code settings file.
type claudeFile struct {
	bash  []*bashRule
	paths []*pathRule
}

// bashRule is a Bash(...) rule (a bare Bash matches every command).
type bashRule struct {
	pattern  string // "" for a bare Bash
	prefix   bool   // the legacy "prefix:*" form
	decision Decision
	where    string
	written  string
}

// pathRule is a Read(...) or Edit(...) rule, its pattern made absolute.
type pathRule struct {
	tool     string // Read or Edit
	glob     string // absolute, doublestar syntax; "" for a bare Read or Edit
	decision Decision
	where    string
	written  string
}

func (f *claudeFile) restrictive() bool {
	for _, r := range f.bash {
		if r.decision > Allow {
			return true
		}
	}
	for _, r := range f.paths {
		if r.decision > Allow {
			return true
		}
	}
	return false
}

// parseClaude reads a settings file's permissions. Rules for other tools
// (WebFetch, mcp__…) are not boris's to judge and are skipped; a rule that
// is not Tool or Tool(specifier) is an error.
func parseClaude(file string, data []byte, dir string) (*claudeFile, error) {
	var s struct {
		Permissions struct {
			Allow []string `json:"allow"`
			Ask   []string `json:"ask"`
			Deny  []string `json:"deny"`
		} `json:"permissions"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		line := 1
		if se, ok := err.(*json.SyntaxError); ok {
			line = 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
		}
		return nil, fmt.Errorf("%s:%d: not a Claude Code settings file: %v", file, line, err)
	}
	root := filepath.Dir(file)
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	if filepath.Base(root) == ".claude" {
		root = filepath.Dir(root)
	}
	home, _ := os.UserHomeDir()
	f := &claudeFile{}
	lists := []struct {
		rules []string
		d     Decision
	}{{s.Permissions.Deny, Forbid}, {s.Permissions.Ask, Ask}, {s.Permissions.Allow, Allow}}
	for _, l := range lists {
		for _, raw := range l.rules {
			where := fmt.Sprintf("%s:%d", file, lineOf(data, raw))
			tool, spec, hasSpec, err := splitRule(raw)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			switch tool {
			case "Bash":
				r := &bashRule{decision: l.d, where: where, written: raw}
				if hasSpec {
					r.pattern = spec
					if p, ok := strings.CutSuffix(spec, ":*"); ok {
						r.pattern, r.prefix = p, true
					}
					if strings.TrimSpace(r.pattern) == "" {
						return nil, fmt.Errorf("%s: %s: the command pattern is empty", where, raw)
					}
				}
				f.bash = append(f.bash, r)
			case "Read", "Edit", "Write":
				t := tool
				if t == "Write" {
					t = "Edit"
				}
				r := &pathRule{tool: t, decision: l.d, where: where, written: raw}
				if hasSpec {
					if strings.TrimSpace(spec) == "" {
						return nil, fmt.Errorf("%s: %s: the path pattern is empty", where, raw)
					}
					r.glob = absGlob(spec, root, dir, home)
					if !doublestar.ValidatePattern(r.glob) {
						return nil, fmt.Errorf("%s: %s: not a valid path pattern", where, raw)
					}
				}
				f.paths = append(f.paths, r)
			}
		}
	}
	return f, nil
}

// splitRule splits "Tool(specifier)" or "Tool".
func splitRule(raw string) (tool, spec string, hasSpec bool, err error) {
	raw = strings.TrimSpace(raw)
	i := strings.IndexByte(raw, '(')
	if i < 0 {
		if raw == "" {
			return "", "", false, fmt.Errorf("an empty rule")
		}
		return raw, "", false, nil
	}
	if !strings.HasSuffix(raw, ")") || i == 0 {
		return "", "", false, fmt.Errorf("%q is not a rule: write Tool or Tool(specifier), e.g. Bash(git push:*)", raw)
	}
	return raw[:i], raw[i+1 : len(raw)-1], true, nil
}

// lineOf is the line of a rule's string in a settings file (1 when it
// cannot be found as written).
func lineOf(data []byte, rule string) int {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(rule)
	i := bytes.Index(data, bytes.TrimSpace(b.Bytes()))
	if i < 0 {
		return 1
	}
	return 1 + bytes.Count(data[:i], []byte("\n"))
}

// absGlob makes a Claude path pattern absolute: "//p" is the filesystem's
// /p, "~/p" the home directory's, "/p" the project's (the directory the
// settings file belongs to), and "p" or "./p" the working directory's. A
// pattern without a slash matches a name at any depth, as in .gitignore.
func absGlob(spec, root, wd, home string) string {
	switch {
	case strings.HasPrefix(spec, "//"):
		return path1(spec[1:])
	case strings.HasPrefix(spec, "~/"):
		return path1(filepath.Join(home, spec[2:]))
	case strings.HasPrefix(spec, "/"):
		return path1(filepath.Join(root, spec[1:]))
	}
	rel := strings.TrimPrefix(spec, "./")
	if !strings.Contains(strings.TrimSuffix(rel, "/"), "/") && !strings.HasPrefix(spec, "./") {
		rel = "**/" + rel
	}
	return path1(filepath.Join(wd, rel))
}

// path1 keeps a glob clean without collapsing what Join would mangle.
func path1(p string) string { return filepath.ToSlash(p) }

// judgeBash is the strictest of the file's Bash rules on a candidate.
func (f *claudeFile) judgeBash(c cand) Verdict {
	var best Verdict
	if len(c.argv) == 0 || !c.argv[0].known {
		return best
	}
	for _, r := range f.bash {
		m := r.match(c)
		if m == noMatch && r.decision > Allow && strings.Contains(c.argv[0].s, "/") {
			// A program given by a path must not step around a rule that
			// restricts its name.
			alt := cand{argv: append([]word{{s: filepath.Base(c.argv[0].s), known: true}}, c.argv[1:]...), open: c.open}
			m = r.match(alt)
		}
		if v := verdictOf(m, r.decision, r.where, "", r.written); v.stricter(best) {
			best = v
		}
	}
	return best
}

// match matches a Bash rule against a candidate's words joined by spaces,
// as Claude Code matches a command: exactly; "prefix:*" as the prefix
// alone or followed by a space; "*" as any run of characters, a trailing
// " *" also matching nothing. Words that cannot be known cut the text
// short: a rule that could match some completion of the known start
// matches maybe.
func (r *bashRule) match(c cand) match {
	if r.pattern == "" {
		return sureMatch
	}
	var b strings.Builder
	complete := !c.open
	for i, w := range c.argv {
		if !w.known {
			complete = false
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.s)
	}
	text := b.String()
	if !complete && len(c.argv) > 0 {
		text += " " // an unknown word follows the known ones
	}
	pat := r.pattern
	if r.prefix {
		if complete {
			if text == pat || strings.HasPrefix(text, pat+" ") {
				return sureMatch
			}
			return noMatch
		}
		if strings.HasPrefix(text, pat+" ") || strings.HasPrefix(pat+" ", text) {
			return maybeMatch
		}
		return noMatch
	}
	if complete {
		if globText(pat, text) {
			return sureMatch
		}
		if strings.HasSuffix(pat, " *") && strings.Count(pat, "*") == 1 && text == strings.TrimSuffix(pat, " *") {
			return sureMatch
		}
		return noMatch
	}
	if globPrefix(pat, text) {
		return maybeMatch
	}
	return noMatch
}

// globText matches text against a pattern whose only special character
// is "*" (any run of characters, spaces included).
func globText(pat, text string) bool {
	for len(pat) > 0 {
		if pat[0] == '*' {
			for len(pat) > 0 && pat[0] == '*' {
				pat = pat[1:]
			}
			if pat == "" {
				return true
			}
			for i := 0; i <= len(text); i++ {
				if globText(pat, text[i:]) {
					return true
				}
			}
			return false
		}
		if text == "" || text[0] != pat[0] {
			return false
		}
		pat, text = pat[1:], text[1:]
	}
	return text == ""
}

// globPrefix reports whether some text starting with prefix matches pat.
func globPrefix(pat, prefix string) bool {
	for {
		if prefix == "" {
			return true
		}
		if pat == "" {
			return false
		}
		if pat[0] == '*' {
			return true // a star can take in the rest of the prefix
		}
		if pat[0] != prefix[0] {
			return false
		}
		pat, prefix = pat[1:], prefix[1:]
	}
}

// judgePath is the strictest of the file's rules for tool on path: the
// path itself or a directory above it matching the rule's pattern.
func (f *claudeFile) judgePath(tool, p string) Verdict {
	var best Verdict
	p = filepath.ToSlash(filepath.Clean(p))
	for _, r := range f.paths {
		if r.tool != tool {
			continue
		}
		if r.glob != "" && !matchesOrUnder(r.glob, p) {
			continue
		}
		if r.decision > best.Decision {
			best = Verdict{Decision: r.decision, Rule: r.where, Pattern: r.written}
		}
	}
	best.Part = p
	return best
}

func matchesOrUnder(glob, p string) bool {
	for q := p; ; {
		if ok, _ := doublestar.Match(glob, q); ok {
			return true
		}
		parent := filepath.ToSlash(filepath.Dir(q))
		if parent == q {
			return false
		}
		q = parent
	}
}
