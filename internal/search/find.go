package search

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/boris-mcp/boris/internal/scope"
	"github.com/boris-mcp/boris/internal/search/glob"
	"github.com/boris-mcp/boris/internal/search/printer"
	"github.com/boris-mcp/boris/internal/walk"
)

// FindRequest is a find (Glob) call.
type FindRequest struct {
	// Pattern is a doublestar glob matched against each path relative to
	// Root and against its base name.
	Pattern string
	// Root is the absolute, resolved directory to search.
	Root string
	// DisplayRoot is the path as the caller wrote it; it is printed when
	// Root is a file that matches (default: Root).
	DisplayRoot string
	// Type is "file" (also "" and "f") or "directory" (also "dir", "d").
	// Files include symlinks to files; directories include symlinks to
	// directories, which are listed but not descended.
	Type string
	// MaxChars caps the text of the answer (0: printer.MaxChars).
	MaxChars int
}

// Find lists the files (or directories) under req.Root whose relative path
// or base name matches req.Pattern, newest modification first. It skips
// what grep skips. No match, and a Root that does not exist, give the
// text "No files found". Errors are *Error values.
func Find(ctx context.Context, policy *scope.Policy, req FindRequest) (string, error) {
	res, err := FindResult(ctx, policy, req)
	if err != nil {
		return "", err
	}
	return res.Text, nil
}

// FindResult is Find returning the result as data besides its text.
func FindResult(ctx context.Context, policy *scope.Policy, req FindRequest) (*Result, error) {
	var want walk.Kind
	switch strings.ToLower(req.Type) {
	case "", "file", "f":
		want = walk.KindFile
	case "directory", "dir", "d":
		want = walk.KindDir
	default:
		return nil, errorf(KindInvalidFindType, nil, "type %q is not valid; use file (the default) or directory", req.Type)
	}
	pattern, err := findPattern(req.Pattern, req.Root)
	if err != nil {
		return nil, err
	}
	m, err := glob.Compile(pattern)
	if err != nil {
		if errors.Is(err, glob.ErrEmpty) {
			return nil, errorf(KindInvalidFindPattern, err, "pattern is empty: give a glob such as *.go, **/*.ts or src/**/test_*.py")
		}
		return nil, errorf(KindInvalidFindPattern, err, "%v. Examples: *.go, **/*.{ts,tsx}, src/**/test_*.py", err)
	}
	coll := printer.NewCollector(printer.Options{Mode: printer.FilesWithMatches, MaxChars: req.MaxChars})
	info, err := checkRoot(policy, req.Root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return &Result{Page: coll.Page()}, nil
		}
		return nil, err
	}
	if !info.IsDir() {
		name := req.DisplayRoot
		if name == "" {
			name = req.Root
		}
		base := filepath.Base(req.Root)
		if want == walk.KindFile && info.Mode().IsRegular() && m.Match(base, base) {
			coll.AddFile(name, info.ModTime().UnixNano())
		}
		return &Result{Page: coll.Page()}, nil
	}
	opts := walk.Options{Root: req.Root, Policy: policy, Dirs: want == walk.KindDir, InlineFiles: true}
	err = walk.Walk(ctx, opts, func() func(*walk.Entry) {
		return func(e *walk.Entry) {
			if e.Kind != want {
				return
			}
			rel := e.Name
			if m.NeedsPath() {
				rel = e.Rel()
			}
			if !m.Match(rel, e.Name) {
				return
			}
			mtime, err := e.ModTime()
			if err != nil {
				return
			}
			coll.AddFile(e.Rel(), mtime)
		}
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, fs.ErrNotExist) {
			return &Result{Page: coll.Page()}, nil
		}
		return nil, errorf(KindIO, err, "cannot read %s: %v", req.Root, err)
	}
	return &Result{Page: coll.Page()}, nil
}

// findPattern makes a pattern relative to the search root: "./" is
// dropped, and an absolute pattern under the root loses the root's prefix.
func findPattern(pattern, root string) (string, error) {
	p := strings.TrimPrefix(pattern, "./")
	if strings.HasPrefix(p, "/") {
		prefix := strings.TrimSuffix(root, "/") + "/"
		if !strings.HasPrefix(p, prefix) {
			return "", errorf(KindInvalidFindPattern, nil, "pattern %q is an absolute path outside the search path %s; pass the directory as path and a relative pattern such as **/*.go", pattern, root)
		}
		p = p[len(prefix):]
	}
	return p, nil
}
