package results

import (
	"github.com/boris-mcp/boris/internal/search"
	"github.com/boris-mcp/boris/internal/search/printer"
)

// Grep output modes.
const (
	ModeFiles   = "files_with_matches"
	ModeContent = "content"
	ModeCount   = "count"
)

// GrepPage is what every grep result says about its page.
type GrepPage struct {
	Mode       string `json:"mode" jsonschema:"The output mode: files_with_matches, content or count."`
	Total      int    `json:"total" jsonschema:"Results in all: files (files_with_matches, count) or output lines (content, \"--\" separators included, as offset and head_limit count them)."`
	TotalExact bool   `json:"total_exact" jsonschema:"false when total is a lower bound (content mode stopped reading a file once it had a page of lines)."`
	Offset     int    `json:"offset" jsonschema:"Results skipped before this page (the offset parameter)."`
	Truncated  bool   `json:"truncated" jsonschema:"More results follow this page (head_limit or the 30,000-character cap); next_offset continues."`
	NextOffset int    `json:"next_offset,omitempty" jsonschema:"The offset of the next page, when truncated."`
	Skipped    string `json:"skipped,omitempty" jsonschema:"Why a file given as path was not searched: binary, or line_too_long."`
	Common
}

// GrepFiles is a files_with_matches result.
type GrepFiles struct {
	Files []string `json:"files" jsonschema:"Matching files, newest first, relative to the searched directory (a file searched alone as given)."`
	GrepPage
}

// GrepCounts is a count result.
type GrepCounts struct {
	Counts []FileCount `json:"counts" jsonschema:"Matching files by path, with their numbers of matching lines."`
	GrepPage
}

// FileCount is a file and its number of matching lines.
type FileCount struct {
	Path  string `json:"path" jsonschema:"The file, relative to the searched directory."`
	Count int    `json:"count" jsonschema:"Its matching lines."`
}

// GrepContent is a content result.
type GrepContent struct {
	Matches []Match `json:"matches" jsonschema:"Matching lines and their context lines, by path and line."`
	GrepPage
}

// Match is a matching line, or a context line around one.
type Match struct {
	Path    string `json:"path" jsonschema:"The file, relative to the searched directory."`
	Line    int    `json:"line" jsonschema:"The line's number, 1-based."`
	Text    string `json:"text" jsonschema:"The line, without its line ending; over 2,000 characters it is cut, with a note."`
	Context bool   `json:"context,omitempty" jsonschema:"A context line (context, context_before, context_after), not a match."`
}

// FromGrep is a grep's result in the shape of its mode.
func FromGrep(res *search.Result) any {
	pg := GrepPage{
		Total: res.Total, TotalExact: res.Exact, Offset: res.Offset,
		Truncated: res.Truncated, NextOffset: res.NextOffset, Skipped: res.Skipped,
	}
	switch res.Mode {
	case printer.Count:
		pg.Mode = ModeCount
		out := &GrepCounts{Counts: make([]FileCount, 0, len(res.Entries)), GrepPage: pg}
		for _, e := range res.Entries {
			out.Counts = append(out.Counts, FileCount{Path: e.Path, Count: e.Count})
		}
		return out
	case printer.Content:
		pg.Mode = ModeContent
		out := &GrepContent{Matches: make([]Match, 0, len(res.Lines)), GrepPage: pg}
		for _, l := range res.Lines {
			out.Matches = append(out.Matches, Match{Path: l.Path, Line: l.N, Text: l.Text, Context: l.Context})
		}
		return out
	}
	pg.Mode = ModeFiles
	out := &GrepFiles{Files: make([]string, 0, len(res.Entries)), GrepPage: pg}
	for _, e := range res.Entries {
		out.Files = append(out.Files, e.Path)
	}
	return out
}

// Find is a find (Glob) result.
type Find struct {
	Paths     []string `json:"paths" jsonschema:"Matching paths, newest first, relative to the searched directory."`
	Total     int      `json:"total" jsonschema:"Matching paths in all."`
	Truncated bool     `json:"truncated" jsonschema:"paths holds only the first ones (the 30,000-character cap)."`
	Common
}

// FromFind is a find's result.
func FromFind(res *search.Result) *Find {
	out := &Find{Paths: make([]string, 0, len(res.Entries)), Total: res.Total, Truncated: res.Truncated}
	for _, e := range res.Entries {
		out.Paths = append(out.Paths, e.Path)
	}
	return out
}
