// Package search implements boris's grep and find: plain Go values in, the
// result text out, no protocol in the way.
//
// The work is split the way ripgrep splits it, one package per job:
//
//   - walk: a parallel directory walk that applies .gitignore files (package
//     ignore), the ".git"/"node_modules" skips and the scope policy while it
//     lists, and opens everything relative to the parent directory;
//   - match: the pattern compiled to a regexp plus a literal prefilter, and
//     a streaming line searcher with context and multiline support;
//   - printer: the output modes, ordering, paging and the size cap;
//   - glob: include globs, find patterns and the file type table.
//
// Ordering and early exit. Results are sorted before paging: file lists
// (grep's files_with_matches and find) newest modification first, content
// and count by path. Since the walk is parallel and any unvisited directory
// may hold the entry that sorts first, no mode can stop the walk early when
// head_limit is reached; memory stays bounded instead, because only what
// can still land on the requested page is kept (see package printer).
// Within a file the search stops as early as the mode allows: at the first
// match for files_with_matches, once a file has produced a page of lines in
// content mode. Modification times are only read for matching files.
//
// Output details: paths are relative to the search root (a file searched
// on its own is printed as the caller wrote it); "--" separators appear
// only when context lines were asked for, as with grep and rg; a trailing
// carriage return is not printed; a line longer than 2,000 characters is
// cut with a note; the text is capped at 30,000 characters with a note
// giving the offset to continue from.
//
// Differences from ripgrep (run as rg --hidden --no-require-git
// --no-ignore-dot -L -g '!.git' -g '!node_modules'), otherwise the same
// files and counts (see TestEquivalentToRipgrep):
//
//   - A file is binary when its first 8 KiB hold a NUL byte; rg gives up at
//     the first NUL anywhere. Files are read as bytes: no UTF-16
//     transcoding.
//   - The syntax is Go's RE2: \w, \d, \s and \b are ASCII-only, where rg's
//     are Unicode-aware.
//   - Only .gitignore files are read (not .ignore, .rgignore, global
//     excludes or .git/info/exclude), also outside a git repository; those
//     above the root count up to the repository root.
//   - An include glob filters within what .gitignore leaves; rg's -g
//     overrides .gitignore. A leading "!" excludes instead.
//   - A pattern without any required literal runs the regexp on every
//     line, which is slower than rg's DFA over the whole buffer.
//   - In multiline mode a file is read whole, up to 256 MiB; outside it a
//     line may be up to 256 MiB long. Larger ones are skipped.
package search

import (
	"fmt"

	"github.com/boris-mcp/boris/internal/codes"
)

// Kind classifies an Error so the tool layer can map it to an error code.
type Kind int

const (
	// KindInvalidInput is a bad parameter value (negative head_limit,
	// offset or context, malformed include glob, relative root).
	KindInvalidInput Kind = iota + 1
	// KindInvalidPattern is an empty or malformed grep pattern.
	KindInvalidPattern
	// KindInvalidOutputMode is an unknown output_mode.
	KindInvalidOutputMode
	// KindInvalidType is an unknown grep file type.
	KindInvalidType
	// KindInvalidFindPattern is an empty or malformed find pattern.
	KindInvalidFindPattern
	// KindInvalidFindType is a find type other than file or directory.
	KindInvalidFindType
	// KindPathNotFound is a grep path that does not exist.
	KindPathNotFound
	// KindAccessDenied is a search root the policy denies.
	KindAccessDenied
	// KindIO is a failure to read the search root.
	KindIO
)

var kindCodes = map[Kind]codes.Code{
	KindInvalidInput:       codes.InvalidInput,
	KindInvalidPattern:     codes.GrepInvalidPattern,
	KindInvalidOutputMode:  codes.GrepInvalidOutputMode,
	KindInvalidType:        codes.GrepInvalidType,
	KindInvalidFindPattern: codes.FindInvalidPattern,
	KindInvalidFindType:    codes.FindInvalidType,
	KindPathNotFound:       codes.PathNotFound,
	KindAccessDenied:       codes.AccessDenied,
	KindIO:                 codes.IOError,
}

// Code returns the error code of the spec for the kind.
func (k Kind) Code() codes.Code { return kindCodes[k] }

// String returns the error code, such as "GREP_INVALID_TYPE".
func (k Kind) String() string {
	if c, ok := kindCodes[k]; ok {
		return string(c)
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Error is an operational failure. Msg is written for the model: what
// happened, the offending value, and how to fix the call.
type Error struct {
	Kind Kind
	Msg  string
	// Err is the underlying error, if any.
	Err error
}

func (e *Error) Error() string { return e.Msg }

func (e *Error) Unwrap() error { return e.Err }

func errorf(k Kind, err error, format string, args ...any) *Error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...), Err: err}
}
