package ignore

import "strings"

// Stack is an immutable chain of .gitignore files that apply to one
// directory, innermost first. A nil *Stack ignores nothing. Stacks are
// shared between goroutines: a walker pushes a level for each directory
// with a .gitignore and hands the result to the directory's children.
type Stack struct {
	parent *Stack
	file   *File
	// dir is the walk-relative path of the directory holding the file
	// ("" for the walk root). Paths under it are matched with dir and the
	// following slash cut off.
	dir string
	// up, set for a .gitignore above the walk root, is the walk root's path
	// relative to the file's directory plus a slash; it is put in front of
	// walk-relative paths.
	up string
	// needsPath reports whether any level has rules that need the path.
	needsPath bool
}

// Push returns a stack with f applying to the directory dir (walk-relative,
// "" for the root) in front of s. A file without rules adds nothing.
func (s *Stack) Push(f *File, dir string) *Stack {
	if f == nil || f.Len() == 0 {
		return s
	}
	return &Stack{parent: s, file: f, dir: dir, needsPath: f.pathRules || s.NeedsPath()}
}

// PushAbove returns a stack with f, found in a directory above the walk
// root, in front of s. rootRel is the walk root's path relative to that
// directory (slash-separated, non-empty).
func (s *Stack) PushAbove(f *File, rootRel string) *Stack {
	if f == nil || f.Len() == 0 {
		return s
	}
	return &Stack{parent: s, file: f, up: rootRel + "/", needsPath: f.pathRules || s.NeedsPath()}
}

// NeedsPath reports whether Ignored looks at more than the base name, so
// that callers can avoid building paths.
func (s *Stack) NeedsPath() bool { return s != nil && s.needsPath }

// Ignored reports whether the walk-relative path rel (whose last element
// is base) is excluded. Only the path itself is judged: callers do not
// descend into excluded directories, which is how git makes everything
// below an excluded directory excluded too.
func (s *Stack) Ignored(rel, base string, isDir bool) bool {
	for l := s; l != nil; l = l.parent {
		p := base
		if l.file.pathRules {
			p = l.relPath(rel)
		}
		if ign, ok := l.file.Match(p, base, isDir); ok {
			return ign
		}
	}
	return false
}

func (l *Stack) relPath(rel string) string {
	switch {
	case l.up != "":
		return l.up + rel
	case l.dir == "":
		return rel
	default:
		// rel is under dir by construction.
		return strings.TrimPrefix(rel[len(l.dir):], "/")
	}
}
