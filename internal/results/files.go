package results

import (
	"strings"

	"github.com/boris-mcp/boris/internal/files"
)

// View kinds.
const (
	KindFile      = "file"
	KindDirectory = "directory"
	KindImage     = "image"
	KindBinary    = "binary"
)

// View is what a view found: a text file's lines (which the text shows;
// the data says which), a directory's listing, an image (returned as image
// content) or another binary file.
type View struct {
	Path       string  `json:"path" jsonschema:"The absolute path viewed."`
	Kind       string  `json:"kind" jsonschema:"file (text: the lines are in the text content), directory (entries), image (the image is the call's image content) or binary (only described)."`
	Size       int64   `json:"size" jsonschema:"The file's size in bytes (0 for a directory)."`
	StartLine  int     `json:"start_line,omitempty" jsonschema:"file: the number of the first line shown (absent when none is)."`
	EndLine    int     `json:"end_line,omitempty" jsonschema:"file: the number of the last line shown."`
	TotalLines *int    `json:"total_lines,omitempty" jsonschema:"file: the lines the file has."`
	Truncated  bool    `json:"truncated" jsonschema:"file: lines after end_line were not shown (the view's limit, not the end of the range); directory: the listing was capped."`
	MIMEType   string  `json:"mime_type,omitempty" jsonschema:"image: its media type."`
	Entries    []Entry `json:"entries,omitempty" jsonschema:"directory: what it holds, two levels deep."`
	Common
}

// Entry is one entry of a directory listing.
type Entry struct {
	Path   string `json:"path" jsonschema:"The entry's path, relative to the directory viewed."`
	Type   string `json:"type" jsonschema:"file, directory or symlink."`
	Target string `json:"target,omitempty" jsonschema:"symlink: where it points."`
}

// Entry types.
const (
	EntryFile      = "file"
	EntryDirectory = "directory"
	EntrySymlink   = "symlink"
)

// FromView is a view's result.
func FromView(res *files.ViewResult) *View {
	v := &View{Path: res.Path, Size: res.Size}
	switch res.Kind {
	case files.ViewImage:
		v.Kind, v.MIMEType = KindImage, res.MIMEType
	case files.ViewBinary:
		v.Kind = KindBinary
	case files.ViewDir:
		v.Kind, v.Size, v.Truncated = KindDirectory, 0, res.Dir.Truncated
		v.Entries = make([]Entry, 0, len(res.Dir.Entries))
		for _, e := range res.Dir.Entries {
			en := Entry{Path: e.Rel, Type: EntryFile}
			switch {
			case e.Symlink:
				en.Type, en.Target = EntrySymlink, e.Target
			case e.Dir:
				en.Type = EntryDirectory
			}
			v.Entries = append(v.Entries, en)
		}
	default: // text, and an empty file
		v.Kind = KindFile
		l := &res.Lines
		total := l.Total
		v.TotalLines, v.Truncated = &total, l.More
		if n := l.Len(); n > 0 {
			v.StartLine, v.EndLine = l.Start, l.Start+n-1
		}
	}
	return v
}

// Edit is what a str_replace did.
type Edit struct {
	Path         string `json:"path" jsonschema:"The absolute path edited."`
	Replacements int    `json:"replacements" jsonschema:"How many occurrences of old_str were replaced."`
	StartLine    int    `json:"start_line" jsonschema:"The first line of new_str in the file after the edit (its first occurrence)."`
	EndLine      int    `json:"end_line" jsonschema:"The last line of that occurrence of new_str (start_line when new_str is one line or empty)."`
	BytesWritten int64  `json:"bytes_written" jsonschema:"The size of the file written, in bytes (as the audit record's bytes_written)."`
	Diagnosed
	Common
}

// FromReplace is a str_replace's result.
func FromReplace(r *files.ReplaceResult) *Edit {
	return &Edit{Path: r.Path, Replacements: r.Count, StartLine: r.Line, EndLine: r.Line + strings.Count(r.NewStr, "\n"), BytesWritten: int64(len(r.Content))}
}

// Create is what a create_file (or str_replace_editor create) did.
type Create struct {
	Path         string `json:"path" jsonschema:"The absolute path written."`
	Created      bool   `json:"created" jsonschema:"true: the file is new; false: an existing file was overwritten."`
	TotalLines   int    `json:"total_lines" jsonschema:"The lines the file has now."`
	BytesWritten int64  `json:"bytes_written" jsonschema:"The file's size in bytes."`
	Diagnosed
	Common
}

// FromCreate is a create's result for content.
func FromCreate(r *files.CreateResult, content string) *Create {
	return &Create{Path: r.Path, Created: !r.Existed, TotalLines: lineCount(content), BytesWritten: int64(r.Size)}
}

// Insert is what a str_replace_editor insert did.
type Insert struct {
	Path          string `json:"path" jsonschema:"The absolute path edited."`
	InsertedAfter int    `json:"inserted_after" jsonschema:"The line the text was inserted after (0: at the top)."`
	StartLine     int    `json:"start_line" jsonschema:"The first inserted line."`
	EndLine       int    `json:"end_line" jsonschema:"The last inserted line."`
	BytesWritten  int64  `json:"bytes_written" jsonschema:"The file's size in bytes."`
	Diagnosed
	Common
}

// FromInsert is an insert's result.
func FromInsert(r *files.InsertResult) *Insert {
	return &Insert{Path: r.Path, InsertedAfter: r.After, StartLine: r.After + 1, EndLine: r.After + r.Lines, BytesWritten: int64(len(r.Content))}
}

// Undo is what a str_replace_editor undo_edit did.
type Undo struct {
	Path         string `json:"path" jsonschema:"The absolute path restored."`
	Removed      bool   `json:"removed" jsonschema:"The undone edit had created the file, so it was removed."`
	BytesWritten int64  `json:"bytes_written" jsonschema:"The restored file's size in bytes (0 when removed)."`
	Diagnosed
	Common
}

// FromUndo is an undo's result.
func FromUndo(r *files.UndoResult) *Undo {
	return &Undo{Path: r.Path, Removed: r.Removed, BytesWritten: int64(len(r.Content))}
}

// Patch is what an apply_patch did: the files as the patch names them.
type Patch struct {
	Added        []string `json:"added" jsonschema:"Files created."`
	Modified     []string `json:"modified" jsonschema:"Files changed (a moved file under its new name)."`
	Deleted      []string `json:"deleted" jsonschema:"Files removed."`
	Moved        []Move   `json:"moved" jsonschema:"Files renamed (Move to), also listed in modified."`
	BytesWritten int64    `json:"bytes_written" jsonschema:"Bytes in the files written (as the audit record's bytes_written)."`
	Omitted      int      `json:"omitted,omitempty" jsonschema:"Files left out of the lists, which hold the first ones: an answer holds at most --max-answer characters."`
	Diagnosed
	Common
}

// Move is a file a patch renamed.
type Move struct {
	From string `json:"from" jsonschema:"Its old path."`
	To   string `json:"to" jsonschema:"Its new path."`
}

// FromPatch is a patch's result.
func FromPatch(r *files.PatchResult) *Patch {
	p := &Patch{Added: list(r.Added), Modified: list(r.Modified), Deleted: list(r.Deleted), Moved: make([]Move, 0, len(r.Moved)), BytesWritten: r.Written}
	for _, m := range r.Moved {
		p.Moved = append(p.Moved, Move{From: m.From, To: m.To})
	}
	return p
}

// list is s, never nil: an empty list is [] in the JSON, not null.
func list[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// lineCount counts lines as a view does: a last line without a newline
// counts, an empty text has none.
func lineCount(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// Fit keeps of a directory view's entries what fits in maxChars
// characters of JSON (0: no bound), marking the view truncated when it
// drops any; it returns v.
func (v *View) Fit(maxChars int) *View {
	if maxChars <= 0 {
		return v
	}
	n := 200
	for i, e := range v.Entries {
		n += len(e.Path) + len(e.Target) + 40
		if n > maxChars {
			v.Entries, v.Truncated = v.Entries[:i], true
			break
		}
	}
	return v
}

// Fit keeps of a patch's lists what fits in maxChars characters of JSON
// (0: no bound), counting the files it leaves out; it returns p.
func (p *Patch) Fit(maxChars int) *Patch {
	if maxChars <= 0 {
		return p
	}
	n := 300
	fit := func(paths []string) []string {
		for i, path := range paths {
			n += len(path) + 4
			if n > maxChars {
				p.Omitted += len(paths) - i
				return paths[:i]
			}
		}
		return paths
	}
	p.Added, p.Modified, p.Deleted = fit(p.Added), fit(p.Modified), fit(p.Deleted)
	for i, m := range p.Moved {
		n += len(m.From) + len(m.To) + 20
		if n > maxChars {
			p.Omitted += len(p.Moved) - i
			p.Moved = p.Moved[:i]
			break
		}
	}
	return p
}
