package scope

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// DefaultDenyWalkLimit bounds the directory entries DenyPaths reads for
// one glob rule.
const DefaultDenyWalkLimit = 200_000

// DenyPaths lists the real paths the deny rules cover, for a confinement
// that works on paths rather than on a decision per access (the Landlock
// sandbox of the bash tool). Plain directory rules are returned as written
// and, when it differs, as resolved, whether or not they exist. Glob rules
// are expanded by walking the file system now: only the paths that exist
// at this moment are returned, and a path created later that matches the
// glob is not covered. The walk descends only where the glob can still
// match, skips /proc and /sys, follows no symlinks (a matching symlink
// yields its target too) and reads at most limit entries per rule: beyond
// that it fails, asking for a narrower pattern.
func (p *Policy) DenyPaths(limit int) ([]string, error) {
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, r := range p.deny {
		if r.path != "" {
			add(r.path)
			continue
		}
		if r.glob == "" {
			continue
		}
		w := &globWalk{rule: r, segs: strings.Split(r.glob, "/"), limit: limit, add: add}
		if err := w.walk("/", "", 0, false); err != nil {
			return nil, err
		}
	}
	return out, nil
}

type globWalk struct {
	rule  denyRule
	segs  []string
	limit int
	seen  int
	add   func(string)
}

// walk reads dir, whose path relative to / (lower-cased) is rel and which
// matched the first depth segments of the glob; free means a ** or a
// segment too complex to prune on was passed, so anything below may match.
func (w *globWalk) walk(dir, rel string, depth int, free bool) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // unreadable for boris: nothing to find there
	}
	w.seen += len(entries)
	if w.seen > w.limit {
		return fmt.Errorf("--deny-dir %q: finding the paths it covers for --sandbox on means reading more than %d directory entries at start-up; anchor the pattern under a directory (for example /home/me/project/**/.env) or use plain directories", w.rule.raw, w.limit)
	}
	for _, e := range entries {
		name := strings.ToLower(e.Name())
		r := name
		if rel != "" {
			r = rel + "/" + name
		}
		p := filepath.Join(dir, e.Name())
		if ok, _ := doublestar.Match(w.rule.glob, r); ok {
			w.add(p)
			if e.Type()&fs.ModeSymlink != 0 {
				if real, err := filepath.EvalSymlinks(p); err == nil {
					w.add(real)
				}
			}
			continue
		}
		if !e.IsDir() {
			continue
		}
		f := free
		if !f {
			if depth >= len(w.segs)-1 {
				continue // deeper paths have more segments than the glob
			}
			seg := w.segs[depth]
			if strings.Contains(seg, "**") || strings.ContainsAny(seg, "{}") {
				f = true
			} else if ok, err := path.Match(seg, name); err != nil {
				f = true // a class path.Match does not know: do not prune
			} else if !ok {
				continue
			}
		}
		if f && (p == "/proc" || p == "/sys") {
			continue // kernel views, not files anyone means by a pattern
		}
		if err := w.walk(p, r, depth+1, f); err != nil {
			return err
		}
	}
	return nil
}
