package search

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/boris-mcp/boris/internal/scope"
	"github.com/boris-mcp/boris/internal/search/glob"
	"github.com/boris-mcp/boris/internal/search/match"
	"github.com/boris-mcp/boris/internal/search/printer"
	"github.com/boris-mcp/boris/internal/walk"
)

// GrepRequest is a grep call with the tool layer's defaults applied.
type GrepRequest struct {
	// Pattern is an RE2 regular expression (Go regexp syntax).
	Pattern string
	// Root is the absolute, resolved file or directory to search.
	Root string
	// DisplayRoot is the path as the caller wrote it; it names the file
	// in the output when Root is a file (default: Root).
	DisplayRoot string
	// Include is a glob the files must match (relative path or base
	// name); a leading "!" excludes the matching files instead.
	Include string
	// Type is a file type name from the type table ("go", "py", ...).
	Type string
	// OutputMode is files_with_matches (also ""), content or count.
	OutputMode      string
	CaseInsensitive bool
	// LineNumbers prints line numbers in content mode (the tool default
	// is true).
	LineNumbers bool
	// Before and After are context lines; a negative value means not
	// given, and Context applies to that side.
	Before, After, Context int
	// Multiline lets "." match newlines and patterns span lines.
	Multiline bool
	// HeadLimit keeps the first that many output lines or entries (0:
	// all) after skipping Offset of them.
	HeadLimit, Offset int
	// MaxChars caps the text of the answer (0: printer.MaxChars).
	MaxChars int
}

// maxContext bounds context lines: a page of output (30,000 characters)
// holds fewer lines than this.
const maxContext = printer.MaxChars / 2

// grepSpec is a validated request.
type grepSpec struct {
	m      *match.Matcher
	mode   printer.Mode
	popts  printer.Options
	sopts  match.SearchOptions
	filter *fileFilter
}

func parseGrep(req GrepRequest) (*grepSpec, error) {
	if req.Pattern == "" {
		return nil, errorf(KindInvalidPattern, nil, "pattern is empty: give a regular expression (RE2 syntax) to search for")
	}
	mode, ok := printer.ParseMode(req.OutputMode)
	if !ok {
		return nil, errorf(KindInvalidOutputMode, nil, "output_mode %q is not valid; use %s (the default), %s", req.OutputMode, printer.Modes[0], strings.Join(printer.Modes[1:], " or "))
	}
	switch {
	case req.HeadLimit < 0:
		return nil, errorf(KindInvalidInput, nil, "head_limit %d is negative; use 0 for all results or a positive limit", req.HeadLimit)
	case req.Offset < 0:
		return nil, errorf(KindInvalidInput, nil, "offset %d is negative; use 0 to start at the first result", req.Offset)
	case req.Context < 0:
		return nil, errorf(KindInvalidInput, nil, "context %d is negative; use 0 for no context lines", req.Context)
	}
	before, after := req.Before, req.After
	if before < 0 {
		before = req.Context
	}
	if after < 0 {
		after = req.Context
	}
	// More context than a page of output can show only costs memory.
	before, after = min(before, maxContext), min(after, maxContext)
	filter, err := newFileFilter(req.Include, req.Type)
	if err != nil {
		return nil, err
	}
	m, err := match.Compile(req.Pattern, match.Options{CaseInsensitive: req.CaseInsensitive, Multiline: req.Multiline})
	if err != nil {
		if errors.Is(err, match.ErrNewline) {
			return nil, errorf(KindInvalidPattern, err, "pattern %q: %v", req.Pattern, err)
		}
		return nil, errorf(KindInvalidPattern, err, "pattern %q is not a valid regular expression: %v. The syntax is RE2 (Go regexp); escape ( ) [ ] { } . * + ? | \\ ^ $ with a backslash to match them literally", req.Pattern, err)
	}
	spec := &grepSpec{m: m, mode: mode, filter: filter}
	spec.popts = printer.Options{Mode: mode, Offset: req.Offset, Limit: req.HeadLimit, MaxChars: req.MaxChars}
	if mode == printer.Content {
		spec.popts.LineNumbers = req.LineNumbers
		spec.popts.Separators = before > 0 || after > 0
		spec.sopts = match.SearchOptions{Before: before, After: after, LineNumbers: true}
	}
	return spec, nil
}

// Result is a grep or find answer: the page of results as text and as
// data (see printer.Page).
type Result struct {
	printer.Page
	// Skipped says why a file grep was given alone was not searched:
	// SkippedBinary or SkippedLongLine ("" when it was).
	Skipped string
}

// Reasons a file was not searched (Result.Skipped).
const (
	SkippedBinary   = "binary"
	SkippedLongLine = "line_too_long"
)

// Grep searches the contents of req.Root (a file, or a directory tree)
// for req.Pattern and returns the result text in the requested mode. Files
// the policy denies are silently absent. Errors are *Error values.
func Grep(ctx context.Context, policy *scope.Policy, req GrepRequest) (string, error) {
	res, err := GrepResult(ctx, policy, req)
	if err != nil {
		return "", err
	}
	return res.Text, nil
}

// GrepResult is Grep returning the result as data besides its text.
func GrepResult(ctx context.Context, policy *scope.Policy, req GrepRequest) (*Result, error) {
	spec, err := parseGrep(req)
	if err != nil {
		return nil, err
	}
	info, err := checkRoot(policy, req.Root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errorf(KindPathNotFound, err, "path %s does not exist; check the spelling, or search its parent directory", displayOf(req))
		}
		return nil, err
	}
	coll := printer.NewCollector(spec.popts)
	if !info.IsDir() {
		return grepFile(ctx, policy, spec, coll, req)
	}
	err = walk.Walk(ctx, walk.Options{Root: req.Root, Policy: policy, FollowSymlinks: true}, func() func(*walk.Entry) {
		return newGrepVisitor(spec, coll)
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errorf(KindIO, err, "cannot read %s: %v", displayOf(req), err)
	}
	return &Result{Page: coll.Page()}, nil
}

func displayOf(req GrepRequest) string {
	if req.DisplayRoot != "" {
		return req.DisplayRoot
	}
	return req.Root
}

// checkRoot validates the search root against the policy and stats it.
func checkRoot(policy *scope.Policy, root string) (fs.FileInfo, error) {
	if !filepath.IsAbs(root) {
		return nil, errorf(KindInvalidInput, nil, "search root %q is not an absolute path", root)
	}
	if policy != nil && !policy.Unrestricted() {
		if err := policy.Check(root); err != nil {
			return nil, errorf(KindAccessDenied, err, "%v", err)
		}
	}
	return os.Stat(root)
}

// entryPath names a walk entry for the printer without building the
// path unless a line is printed.
type entryPath struct{ e *walk.Entry }

func (p entryPath) Path() string { return p.e.Rel() }

// newGrepVisitor returns one goroutine's visitor, with its own searcher
// and buffers.
func newGrepVisitor(spec *grepSpec, coll *printer.Collector) func(*walk.Entry) {
	s := spec.m.NewSearcher(spec.sopts)
	var fw *printer.FileWriter
	if spec.mode == printer.Content {
		fw = printer.NewFileWriter(spec.popts, coll.MaxFileLines())
	}
	var first firstSink
	var count countSink
	var f walk.File // reused, so that passing &f as a reader does not allocate
	return func(e *walk.Entry) {
		if spec.filter != nil && !spec.filter.matchEntry(e) {
			return
		}
		var err error
		if f, err = e.Open(); err != nil {
			return
		}
		defer f.Close()
		switch spec.mode {
		case printer.FilesWithMatches:
			first = firstSink{}
			if s.Search(&f, &first) == nil && first.found {
				if mtime, err := f.ModTime(); err == nil {
					coll.AddFile(e.Rel(), mtime)
				}
			}
		case printer.Count:
			count = countSink{}
			if s.Search(&f, &count) == nil && count.n > 0 {
				coll.AddCount(e.Rel(), count.n)
			}
		case printer.Content:
			fw.Reset(entryPath{e})
			if s.Search(&f, fw) == nil {
				coll.AddBlock(fw.Block())
			}
		}
	}
}

// grepFile searches a single file; its path is printed as the caller
// wrote it. Include and type filters do not apply to a file named
// explicitly (as with rg).
func grepFile(ctx context.Context, policy *scope.Policy, spec *grepSpec, coll *printer.Collector, req GrepRequest) (*Result, error) {
	name := displayOf(req)
	f, err := os.OpenFile(req.Root, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, errorf(KindIO, err, "cannot open %s: %v", name, err)
	}
	defer f.Close()
	if policy != nil && !policy.Unrestricted() {
		if _, err := policy.VerifyFile(f); err != nil {
			return nil, errorf(KindAccessDenied, err, "%v", err)
		}
	}
	st, err := f.Stat()
	if err != nil {
		return nil, errorf(KindIO, err, "cannot read %s: %v", name, err)
	}
	if !st.Mode().IsRegular() {
		return nil, errorf(KindInvalidInput, nil, "%s is not a regular file or directory; grep searches files and directory trees", name)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := spec.m.NewSearcher(spec.sopts)
	switch spec.mode {
	case printer.FilesWithMatches:
		var first firstSink
		err = s.Search(f, &first)
		if err == nil && first.found {
			coll.AddFile(name, st.ModTime().UnixNano())
		}
	case printer.Count:
		var count countSink
		err = s.Search(f, &count)
		if err == nil && count.n > 0 {
			coll.AddCount(name, count.n)
		}
	case printer.Content:
		fw := printer.NewFileWriter(spec.popts, coll.MaxFileLines())
		fw.Reset(printer.StaticPath(name))
		err = s.Search(f, fw)
		if err == nil {
			coll.AddBlock(fw.Block())
		}
	}
	res := &Result{Page: coll.Page()}
	switch {
	case errors.Is(err, match.ErrBinary):
		res.Skipped = SkippedBinary
		res.Text += ": " + name + " is a binary file (NUL byte in its first 8 KiB) and was not searched"
	case errors.Is(err, match.ErrTooLarge):
		res.Skipped = SkippedLongLine
		res.Text += ": " + name + " has a line too long to search"
	case err != nil:
		return nil, errorf(KindIO, err, "cannot read %s: %v", name, err)
	}
	return res, nil
}

// firstSink stops at the first match.
type firstSink struct{ found bool }

func (s *firstSink) Match(int, []byte) bool   { s.found = true; return false }
func (s *firstSink) Context(int, []byte) bool { return true }

// countSink counts matching lines.
type countSink struct{ n int }

func (s *countSink) Match(int, []byte) bool   { s.n++; return true }
func (s *countSink) Context(int, []byte) bool { return true }

// fileFilter is grep's include glob and type, both of which must match.
type fileFilter struct {
	include *glob.Matcher
	exclude bool // include started with "!"
	typ     *glob.Matcher
}

func newFileFilter(include, typ string) (*fileFilter, error) {
	var f fileFilter
	if include != "" {
		pat := strings.TrimPrefix(include, "!")
		f.exclude = pat != include
		pat = strings.TrimPrefix(pat, "./")
		m, err := glob.Compile(pat)
		if err != nil {
			return nil, errorf(KindInvalidInput, err, "include %q is not a valid glob: %v. Examples: *.go, *.{ts,tsx}, src/**/*.py", include, err)
		}
		f.include = m
	}
	if typ != "" {
		m, err := glob.Type(typ)
		if err != nil {
			return nil, errorf(KindInvalidType, err, "%v", err)
		}
		f.typ = m
	}
	if f.include == nil && f.typ == nil {
		return nil, nil
	}
	return &f, nil
}

func (f *fileFilter) matchEntry(e *walk.Entry) bool {
	if f.typ != nil && !f.typ.Match(e.Name, e.Name) {
		return false
	}
	if f.include != nil {
		rel := e.Name
		if f.include.NeedsPath() {
			rel = e.Rel()
		}
		if f.include.Match(rel, e.Name) == f.exclude {
			return false
		}
	}
	return true
}
