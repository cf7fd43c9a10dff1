// Package scope decides which paths the file tools may touch and touches them
// without a race between the decision and the use.
//
// A Policy holds allowed directories (none means everything is allowed) and
// deny rules (directories or doublestar globs; deny beats allow). A path is
// judged by where it really is: "..", and every symlink, are resolved first,
// and the path as written is checked against the deny rules too, so neither
// a symlink into a denied place nor a denied name that is a symlink gets
// through. Files are opened through an os.Root on the allowed directory and
// the opened descriptor's own location is checked again, so swapping a
// directory for a symlink between the check and the open cannot escape.
package scope

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// DeniedError explains why a path may not be accessed.
type DeniedError struct {
	Path   string
	Reason string
}

func (e *DeniedError) Error() string { return e.Path + ": " + e.Reason }

// IsDenied reports whether err is (or wraps) a *DeniedError.
func IsDenied(err error) bool {
	var d *DeniedError
	return errors.As(err, &d)
}

// Deny rules match case-insensitively: on a case-insensitive file system
// (macOS by default) ".ENV" opens ".env", and denying too much is the safe
// side of the trade.
type denyRule struct {
	raw string
	// dir is set for plain directory rules: the path and everything under
	// it (lower-cased).
	dir string
	// glob is set for pattern rules, lower-cased, without a leading slash.
	glob string
	// path is the plain directory rule's path as written (cleaned,
	// absolute), for the sandbox, which works on real names.
	path string
}

// Policy is an immutable allow/deny decision procedure, safe for concurrent
// use.
type Policy struct {
	allow []string
	deny  []denyRule
}

// New builds a Policy. allowDirs must be absolute and symlink-free (config
// resolves them). Relative deny entries are anchored at base: a plain name
// or a glob containing a slash names a path under base, while a glob without
// a slash (such as "*.pem") matches that name at any depth.
func New(allowDirs, denyPatterns []string, base string) (*Policy, error) {
	p := &Policy{}
	for _, d := range allowDirs {
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("allowed directory %q is not absolute", d)
		}
		p.allow = append(p.allow, filepath.Clean(d))
	}
	for _, raw := range denyPatterns {
		r, err := compileDeny(raw, base)
		if err != nil {
			return nil, err
		}
		p.deny = append(p.deny, r...)
	}
	return p, nil
}

func compileDeny(raw, base string) ([]denyRule, error) {
	pat := filepath.ToSlash(strings.TrimSpace(raw))
	if pat != "/" {
		pat = strings.TrimRight(pat, "/")
	}
	if pat == "" {
		return nil, fmt.Errorf("empty deny pattern")
	}
	if !strings.ContainsAny(pat, "*?[{") {
		d := pat
		if !filepath.IsAbs(d) {
			d = filepath.Join(base, d)
		}
		d = filepath.Clean(d)
		rules := []denyRule{{raw: raw, dir: strings.ToLower(d), path: d}}
		// Deny the canonical location too, so a deny on a path that goes
		// through a symlink still matches resolved paths.
		if real, err := filepath.EvalSymlinks(d); err == nil && real != d {
			rules = append(rules, denyRule{raw: raw, dir: strings.ToLower(real), path: real})
		}
		return rules, nil
	}
	if !doublestar.ValidatePattern(pat) {
		return nil, fmt.Errorf("invalid deny pattern %q", raw)
	}
	switch {
	case strings.HasPrefix(pat, "/"):
	case strings.HasPrefix(pat, "**/") || pat == "**":
	case !strings.Contains(pat, "/"):
		pat = "**/" + pat
	default:
		pat = filepath.ToSlash(filepath.Join(base, pat))
	}
	return []denyRule{{raw: raw, glob: strings.ToLower(strings.TrimPrefix(pat, "/"))}}, nil
}

// Unrestricted reports whether the policy allows every path (no allowed
// directories and no deny rules).
func (p *Policy) Unrestricted() bool { return len(p.allow) == 0 && len(p.deny) == 0 }

// AllowDirs returns the allowed directories (empty: everything is allowed).
func (p *Policy) AllowDirs() []string { return append([]string(nil), p.allow...) }

// HasDenyRules reports whether any deny rule exists.
func (p *Policy) HasDenyRules() bool { return len(p.deny) > 0 }

// root returns the allowed directory containing path, "/" when there are no
// allowed directories, or "" when path is outside all of them.
func (p *Policy) root(path string) string {
	if len(p.allow) == 0 {
		return "/"
	}
	best := ""
	for _, d := range p.allow {
		if Within(path, d) && len(d) > len(best) {
			best = d
		}
	}
	return best
}

// Allowed reports whether the clean absolute path lies inside an allowed
// directory (ignoring deny rules).
func (p *Policy) Allowed(path string) bool { return p.root(path) != "" }

// DeniedBy returns the raw deny pattern that denies path or one of its
// parents, or "" when none does.
func (p *Policy) DeniedBy(path string) string {
	if len(p.deny) == 0 {
		return ""
	}
	path = strings.ToLower(path)
	for _, r := range p.deny {
		if r.dir != "" {
			if Within(path, r.dir) {
				return r.raw
			}
			continue
		}
		rel := strings.TrimPrefix(path, "/")
		for {
			if ok, _ := doublestar.Match(r.glob, rel); ok {
				return r.raw
			}
			i := strings.LastIndexByte(rel, '/')
			if i < 0 {
				break
			}
			rel = rel[:i]
		}
	}
	return ""
}

// DeniedLeaf is DeniedBy for walkers that have already checked every parent
// of path: only path itself is matched.
func (p *Policy) DeniedLeaf(path string) bool {
	if len(p.deny) == 0 {
		return false
	}
	path = strings.ToLower(path)
	for _, r := range p.deny {
		if r.dir != "" {
			if path == r.dir {
				return true
			}
			continue
		}
		if ok, _ := doublestar.Match(r.glob, strings.TrimPrefix(path, "/")); ok {
			return true
		}
	}
	return false
}

// Check decides on a resolved path: nil when it may be accessed, otherwise a
// *DeniedError saying why.
func (p *Policy) Check(resolved string) error {
	if p.root(resolved) == "" {
		return &DeniedError{Path: resolved, Reason: "outside the allowed directories (" + strings.Join(p.allow, ", ") + ")"}
	}
	if pat := p.DeniedBy(resolved); pat != "" {
		return &DeniedError{Path: resolved, Reason: fmt.Sprintf("denied by --deny-dir %q", pat)}
	}
	return nil
}

// clean makes path absolute and clean and checks it, as written, against
// the deny rules.
func (p *Policy) clean(cwd, path string) (Target, error) {
	if path == "" {
		return Target{}, errors.New("empty path")
	}
	if strings.IndexByte(path, 0) >= 0 {
		return Target{}, errors.New("path contains a NUL byte")
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	path = filepath.Clean(path)
	t := Target{Path: path}
	if pat := p.DeniedBy(path); pat != "" {
		return t, &DeniedError{Path: path, Reason: fmt.Sprintf("denied by --deny-dir %q", pat)}
	}
	return t, nil
}

// Target is a path as the caller wrote it and as it resolves.
type Target struct {
	// Path is the absolute, cleaned path as given.
	Path string
	// Resolved is where Path leads after symlinks and "..".
	Resolved string
	// Exists reports whether Resolved exists.
	Exists bool
}

// Locate resolves path (absolute, or relative to cwd) and decides on it.
// The path is first cleaned lexically, as the shell's logical cd does
// ("link/.." is the directory holding link); the decision and every later
// use then work on the same resolved path.
// The path as written and the resolved path are both checked against the
// deny rules; the resolved path must be inside an allowed directory. A
// denied path returns a *DeniedError and no Target details beyond Path.
func (p *Policy) Locate(cwd, path string) (Target, error) {
	t, err := p.clean(cwd, path)
	if err != nil {
		return t, err
	}
	path = t.Path
	resolved, exists, err := Resolve(path)
	if err != nil {
		return t, err
	}
	t.Resolved, t.Exists = resolved, exists
	if err := p.Check(resolved); err != nil {
		d := err.(*DeniedError)
		if resolved != path {
			d.Reason = fmt.Sprintf("resolves to %s, which is %s", resolved, d.Reason)
			d.Path = path
		}
		return t, d
	}
	return t, nil
}
