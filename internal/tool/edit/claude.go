package edit

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/files"
	"github.com/boris-mcp/boris/internal/tool"
)

// The Claude dialect answers str_replace_editor exactly as Anthropic's
// reference text-editor tool does (anthropic-quickstarts,
// computer-use-demo/computer_use_demo/tools/edit.py, the texts Claude saw in
// training), over boris's own operations. Deliberate differences, listed in
// the README: tabs are shown and kept as they are (the reference expands
// them, in the answer and in the file it writes), line endings are kept,
// parents are created, relative paths resolve in the session's directory,
// a view_range end past the file is clamped, and create may replace a file
// the session has viewed.

// maxResponseChars is where the reference clips a file's or a listing's
// text, and clipNote what it appends there.
const (
	maxResponseChars = 16000
	clipNote         = "<response clipped><NOTE>To save on context only part of this file has been shown to you. You should retry this tool after you have searched inside the file with `grep -n` in order to find the line numbers of what you are looking for.</NOTE>"
	snippetLines     = 4
)

// claudeViewLimits are the limits of a view in the Claude dialect: lines
// numbered as the newline-split of the file, the text clipped at
// maxResponseChars, hidden entries not listed.
func claudeViewLimits() files.ViewLimits {
	return files.ViewLimits{SplitLines: true, MaxChars: maxResponseChars, MaxEntries: maxResponseChars}
}

// claudeView renders a file's lines or a directory listing. A binary file
// (which the reference cannot read) gets boris's description.
func claudeView(res *files.ViewResult) string {
	switch res.Kind {
	case files.ViewBinary:
		return borisView(res, nil, false, 0)
	case files.ViewDir:
		return claudeListing(res)
	}
	l := &res.Lines
	var b strings.Builder
	full := 0
	for i := 0; i < l.Len(); i++ {
		text, chars := l.Line(i)
		if i > 0 {
			b.WriteByte('\n')
			full++
		}
		b.Write(text)
		full += chars
	}
	content := b.String()
	if l.More || full > maxResponseChars {
		content = clip(content)
	}
	return catN(content, res.Path, l.Start)
}

// catN is the reference's rendering of content: a header naming what is
// shown, then every newline-split line numbered from first.
func catN(content, what string, first int) string {
	out := make([]byte, 0, len(content)+len(what)+64+8*strings.Count(content, "\n"))
	out = append(out, "Here's the result of running `cat -n` on "...)
	out = append(out, what...)
	out = append(out, ":\n"...)
	n := first
	for {
		i := strings.IndexByte(content, '\n')
		line := content
		if i >= 0 {
			line = content[:i]
		}
		out = tool.AppendLineNo(out, n)
		out = append(out, strings.TrimSuffix(line, "\r")...)
		out = append(out, '\n')
		if i < 0 {
			break
		}
		content = content[i+1:]
		n++
	}
	return string(out)
}

// clip cuts s after maxResponseChars characters and appends clipNote, as
// the reference's maybe_truncate does.
func clip(s string) string {
	n := 0
	for i := range s {
		if n == maxResponseChars {
			return s[:i] + clipNote
		}
		n++
	}
	return s + clipNote
}

// clipIfLong is clip for text that may be short enough to keep.
func clipIfLong(s string) string {
	if utf8.RuneCountInString(s) <= maxResponseChars {
		return s
	}
	return clip(s)
}

// claudeListing renders a directory as the reference's
// `find <path> -maxdepth 2 -not -path '*/\.*'` does: the path itself, then
// every entry as a full path, one per line.
func claudeListing(res *files.ViewResult) string {
	var b strings.Builder
	b.WriteString(res.Path)
	b.WriteByte('\n')
	prefix := strings.TrimSuffix(res.Path, "/") + "/"
	for _, e := range res.Dir.Entries {
		b.WriteString(prefix)
		b.WriteString(e.Rel)
		b.WriteByte('\n')
	}
	return "Here's the files and directories up to 2 levels deep in " + res.Path + ", excluding hidden items:\n" + clipIfLong(b.String()) + "\n"
}

// claudeReplace renders a str_replace: the reference's snippet of four
// lines around the edit, and its closing reminder.
func claudeReplace(r *files.ReplaceResult, all bool) string {
	line := r.Line - 1
	start := max(0, line-snippetLines)
	end := line + snippetLines + strings.Count(r.NewStr, "\n")
	head := "The file " + r.Path + " has been edited. "
	if all && r.Count > 1 {
		head = fmt.Sprintf("The file %s has been edited (all %d occurrences of old_str were replaced; the snippet shows the first). ", r.Path, r.Count)
	}
	return head + catN(clipIfLong(splitRange(r.Content, start, end+1)), "a snippet of "+r.Path, start+1) +
		"Review the changes and make sure they are as expected. Edit the file again if necessary."
}

// claudeInsert renders an insert: the inserted lines with four lines
// before and after, and the reference's closing reminder.
func claudeInsert(r *files.InsertResult) string {
	start := max(0, r.After-snippetLines)
	end := r.After + r.Lines + snippetLines
	return "The file " + r.Path + " has been edited. " + catN(clipIfLong(splitRange(r.Content, start, end)), "a snippet of the edited file", start+1) +
		"Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary."
}

// claudeCreate renders a create (a new file, or a viewed one replaced).
func claudeCreate(r *files.CreateResult) string {
	return "File created successfully at: " + r.Path
}

// claudeUndo renders an undo_edit: the file as restored.
func claudeUndo(r *files.UndoResult) string {
	if r.Removed {
		return "Last edit to " + r.Path + " undone successfully. That edit had created the file, so it has been removed."
	}
	return "Last edit to " + r.Path + " undone successfully. " + catN(clipIfLong(r.Content), r.Path, 1)
}

// splitRange returns lines [from, to) of the newline-split of content,
// joined by newlines (Python's "\n".join(content.split("\n")[from:to])).
func splitRange(content string, from, to int) string {
	off := 0
	for i := 0; i < from; i++ {
		j := strings.IndexByte(content[off:], '\n')
		if j < 0 {
			return ""
		}
		off += j + 1
	}
	end := off
	for i := from; i < to; i++ {
		j := strings.IndexByte(content[end:], '\n')
		if j < 0 {
			return content[off:]
		}
		if i == to-1 {
			return content[off : end+j]
		}
		end += j + 1
	}
	return content[off:end]
}

// claudeError words an error the way the reference does for the same
// situation, keeping boris's code and adding boris's hint where it has
// one; an error the reference has no sentence for keeps boris's words.
func claudeError(err error) string {
	e, ok := codes.As(err)
	if !ok {
		return "[" + string(codes.IOError) + "] " + err.Error()
	}
	sentence := ""
	switch f := e.Fact.(type) {
	case files.FactMissing:
		sentence = "The path " + f.Path + " does not exist. Please provide a valid path." + suggestion(f.Suggest)
	case files.FactIsDir:
		sentence = "The path " + f.Path + " is a directory and only the `view` command can be used on directories"
	case files.FactRangeOnDir:
		sentence = "The `view_range` parameter is not allowed when `path` points to a directory."
	case files.FactRange:
		a, z := f.Range.Start, f.Range.End
		if a < 1 || a > f.Lines {
			sentence = fmt.Sprintf("Invalid `view_range`: [%d, %d]. Its first element `%d` should be within the range of lines of the file: [1, %d]", a, z, a, f.Lines)
		} else {
			sentence = fmt.Sprintf("Invalid `view_range`: [%d, %d]. Its second element `%d` should be larger or equal than its first `%d`", a, z, z, a)
		}
	case files.FactNoMatch:
		sentence = "No replacement was performed, old_str `" + f.Old + "` did not appear verbatim in " + f.Path + "." + f.Near
	case files.FactAmbiguous:
		sentence = fmt.Sprintf("No replacement was performed. Multiple occurrences of old_str `%s` in lines %s. Please ensure it is unique (add surrounding lines to old_str, or set replace_all to replace all %d)", f.Old, pyList(f.SameLine), f.Count)
	case files.FactInsertLine:
		sentence = fmt.Sprintf("Invalid `insert_line` parameter: %d. It should be within the range of lines of the file: [0, %d]", f.Line, f.Max)
	case files.FactNoHistory:
		sentence = "No edit history found for " + f.Path + "."
	case files.FactOverwriteUnviewed:
		sentence = "File already exists at: " + f.Path + ". Cannot overwrite files using command `create`. View it first to replace it, or edit it with str_replace."
	case claudeSentence:
		sentence = string(f)
	default:
		return e.Error()
	}
	return "[" + string(e.Code) + "] " + sentence
}

// claudeSentence is a fact that already is the reference's sentence (for
// situations the tool layer finds: a missing parameter, an unknown
// command).
type claudeSentence string

// suggestion words boris's "did you mean" hint after a reference sentence.
func suggestion(s string) string {
	s = strings.TrimSpace(strings.TrimPrefix(s, ";"))
	if s == "" {
		return ""
	}
	if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
		s = s[1:len(s)-1] + "."
	}
	r, n := utf8.DecodeRuneInString(s)
	return " " + string(unicode.ToUpper(r)) + s[n:]
}

// pyList formats ints as Python prints a list: [1, 5].
func pyList(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprint(n)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
