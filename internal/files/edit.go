package files

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/scope"
)

// ReplaceResult is what a str_replace did.
type ReplaceResult struct {
	Path string
	// Content is the file's new content.
	Content string
	// Line is the 1-based line where the first replacement starts.
	Line int
	// NewStr is new_str as given; Count the occurrences replaced.
	NewStr string
	Count  int
}

// FactNoMatch is the fact of a STR_REPLACE_NOT_FOUND error.
type FactNoMatch struct {
	Path, Old string
	// Near says where text differing only in whitespace or case is, or is
	// empty.
	Near string
}

// FactAmbiguous is the fact of a STR_REPLACE_AMBIGUOUS error.
type FactAmbiguous struct {
	Path, Old string
	Count     int
	// SameLine lists the 1-based lines that contain old_str whole (none
	// when old_str spans lines).
	SameLine []int
}

// StrReplace replaces old with new in a file: exactly one occurrence, or
// all of them with all set. In a CRLF file, "\n" in old and new stands for
// "\r\n", so the file keeps its line endings.
func (s *Service) StrReplace(c Ctx, path, old, new string, all bool) (*ReplaceResult, error) {
	if old == "" {
		return nil, codes.Errorf(codes.InvalidInput, "old_str must not be empty: give the exact text to replace (to write a whole file use create_file)")
	}
	if old == new {
		return nil, codes.Errorf(codes.InvalidInput, "old_str and new_str are identical; nothing would change")
	}
	t, err := s.locateExisting(c, path, "to create it use create_file")
	if err != nil {
		return nil, err
	}
	if err := s.checkViewed(c, t, "edit"); err != nil {
		return nil, err
	}
	unlock := s.locks.lock(t.Resolved)
	defer unlock()
	data, real, mode, err := s.readForEdit(c, t)
	if err != nil {
		return nil, err
	}
	content := string(data)

	o, n := old, new
	if isCRLF(data) {
		o, n = toCRLF(old), toCRLF(new)
		if !strings.Contains(content, o) && strings.Contains(content, old) {
			o, n = old, new // a mixed file where the text matches as given
		}
	}
	count := strings.Count(content, o)
	switch {
	case count == 0:
		near := nearMatch(content, old)
		return nil, codes.Errorf(codes.StrReplaceNotFound, "old_str was not found in %s.%s", t.Path, orDefault(near, " Check the exact text, including whitespace and indentation, by viewing the file.")).
			WithFact(FactNoMatch{Path: t.Path, Old: old, Near: near})
	case count > 1 && !all:
		return nil, codes.Errorf(codes.StrReplaceAmbiguous, "old_str occurs %d times in %s (lines %s); use replace_all to replace every occurrence, or add surrounding context to old_str to make it unique",
			count, t.Path, matchLines(content, o, 10)).WithFact(FactAmbiguous{Path: t.Path, Old: old, Count: count, SameLine: linesContaining(content, old)})
	}
	first := strings.Index(content, o)
	var updated string
	if all {
		updated = strings.ReplaceAll(content, o, n)
	} else {
		updated = content[:first] + n + content[first+len(o):]
	}
	if int64(len(updated)) > s.opts.MaxFileSize {
		return nil, codes.Errorf(codes.FileTooLarge, "the edited %s would be %s, over the %s limit (--max-file-size); the file is unchanged", t.Path, HumanSize(int64(len(updated))), HumanSize(s.opts.MaxFileSize))
	}
	t.Resolved = real
	if err := s.write(c, t, []byte(updated), false, priorOf(data, mode)); err != nil {
		return nil, err
	}
	return &ReplaceResult{Path: t.Path, Content: updated, Line: strings.Count(content[:first], "\n") + 1, NewStr: new, Count: count}, nil
}

// CreateResult is what a create did.
type CreateResult struct {
	Path string
	// Existed is true when an existing file was overwritten.
	Existed bool
	Size    int
}

// FactOverwriteUnviewed is the fact of a FILE_NOT_VIEWED error for a create
// over an existing file the session has not viewed.
type FactOverwriteUnviewed struct{ Path string }

// Create writes content to path, creating parent directories; an existing
// file is overwritten (after a view, when required) and keeps its mode.
func (s *Service) Create(c Ctx, path, content string) (*CreateResult, error) {
	if int64(len(content)) > s.opts.MaxFileSize {
		return nil, codes.Errorf(codes.FileTooLarge, "content is %s, over the %s limit (--max-file-size); nothing was written", HumanSize(int64(len(content))), HumanSize(s.opts.MaxFileSize))
	}
	t, err := s.locate(c, path)
	if err != nil {
		return nil, err
	}
	if t.Exists {
		// WriteAtomic refuses a directory too; this only words it better.
		if fi, err := os.Stat(t.Resolved); err == nil && fi.IsDir() {
			return nil, codes.Errorf(codes.InvalidInput, "%s is a directory; give a file path", t.Path).WithFact(FactIsDir{Path: t.Path})
		}
		if err := s.checkViewed(c, t, "overwrite"); err != nil {
			if e, ok := codes.As(err); ok {
				e.Fact = FactOverwriteUnviewed{Path: t.Path}
			}
			return nil, err
		}
	}
	unlock := s.locks.lock(t.Resolved)
	defer unlock()
	before := absent
	if t.Exists {
		if err := s.checkFreshOnDisk(c, t); err != nil {
			return nil, err
		}
		before = s.readPrior(c, t)
	}
	if err := s.write(c, t, []byte(content), true, before); err != nil {
		return nil, err
	}
	return &CreateResult{Path: t.Path, Existed: t.Exists, Size: len(content)}, nil
}

// InsertResult is what an insert did.
type InsertResult struct {
	Path string
	// Content is the file's new content.
	Content string
	// After is the line the text went after (0: the top); Lines is how
	// many lines the text has (its newline-split count).
	After, Lines int
}

// FactInsertLine is the fact of an INVALID_INPUT error for an insert_line
// outside the file.
type FactInsertLine struct {
	Path      string
	Line, Max int
}

// Insert inserts text after line `after` (0 = at the top). Lines are the
// newline-split of the content, as a view with SplitLines numbers them:
// the text becomes lines of their own between line after and line
// after+1, so a file ending in a newline can take text after its last line
// (before the empty line that follows the final newline) or after that
// empty line. In a CRLF file the inserted lines end in CRLF.
func (s *Service) Insert(c Ctx, path string, after int, text string) (*InsertResult, error) {
	t, err := s.locateExisting(c, path, "to create it use the create command")
	if err != nil {
		return nil, err
	}
	if err := s.checkViewed(c, t, "insert"); err != nil {
		return nil, err
	}
	unlock := s.locks.lock(t.Resolved)
	defer unlock()
	data, real, mode, err := s.readForEdit(c, t)
	if err != nil {
		return nil, err
	}
	content := string(data)
	n := strings.Count(content, "\n") + 1
	if after < 0 || after > n {
		return nil, codes.Errorf(codes.InvalidInput, "insert_line %d is out of range: %s has %d lines, so use 0 (top) to %d", after, t.Path, n, n).
			WithFact(FactInsertLine{Path: t.Path, Line: after, Max: n})
	}
	eol := "\n"
	if isCRLF(data) {
		eol = "\r\n"
		text = toCRLF(text)
	}
	var b strings.Builder
	b.Grow(len(content) + len(text) + 2*len(eol))
	if after == n {
		// After the last line: it ends at the end of the content.
		b.WriteString(content)
		b.WriteString(eol)
		b.WriteString(text)
	} else {
		at := 0 // offset of line after+1
		for i := 0; i < after; i++ {
			at += strings.IndexByte(content[at:], '\n') + 1
		}
		b.WriteString(content[:at])
		b.WriteString(text)
		b.WriteString(eol)
		b.WriteString(content[at:])
	}
	updated := b.String()
	if int64(len(updated)) > s.opts.MaxFileSize {
		return nil, codes.Errorf(codes.FileTooLarge, "the edited %s would be %s, over the %s limit (--max-file-size); the file is unchanged", t.Path, HumanSize(int64(len(updated))), HumanSize(s.opts.MaxFileSize))
	}
	t.Resolved = real
	if err := s.write(c, t, []byte(updated), false, priorOf(data, mode)); err != nil {
		return nil, err
	}
	return &InsertResult{Path: t.Path, Content: updated, After: after, Lines: strings.Count(text, "\n") + 1}, nil
}

// checkFreshOnDisk is checkFresh for an overwrite, which does not read the
// file: it looks at the file as it is now.
func (s *Service) checkFreshOnDisk(c Ctx, t scope.Target) error {
	if !s.opts.RequireViewBeforeEdit || c.Viewed == nil {
		return nil
	}
	f, _, fi, err := s.openFile(t)
	if err != nil {
		return nil // gone or unreadable: the write decides
	}
	defer f.Close()
	if !fi.Mode().IsRegular() {
		return nil
	}
	return s.checkFresh(c, t, fi)
}

// isCRLF reports whether the file's first line ends with CRLF.
func isCRLF(data []byte) bool {
	i := bytes.IndexByte(data, '\n')
	return i > 0 && data[i-1] == '\r'
}

// toCRLF makes every line ending of s a CRLF.
func toCRLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

// matchLines lists the line numbers of the first n occurrences of sub.
func matchLines(content, sub string, n int) string {
	var nums []string
	off, line := 0, 1
	for len(nums) < n {
		i := strings.Index(content[off:], sub)
		if i < 0 {
			break
		}
		line += strings.Count(content[off:off+i], "\n")
		nums = append(nums, fmt.Sprint(line))
		line += strings.Count(sub, "\n")
		off += i + len(sub)
	}
	if total := strings.Count(content, sub); total > len(nums) {
		nums = append(nums, "…")
	}
	return strings.Join(nums, ", ")
}

// nearMatch looks for old in content ignoring differences in whitespace
// (or in letter case) and says where it is, so the model can copy the exact
// text; "" when there is no such text.
func nearMatch(content, old string) string {
	fields := strings.Fields(old)
	if len(fields) == 0 || len(old) > 20000 || len(fields) > 2000 {
		return ""
	}
	quoted := make([]string, len(fields))
	for i, f := range fields {
		quoted[i] = regexp.QuoteMeta(f)
	}
	re, err := regexp.Compile(strings.Join(quoted, `\s+`))
	if err != nil {
		return ""
	}
	loc := re.FindStringIndex(content)
	if loc == nil {
		if strings.Contains(strings.ToLower(content), strings.ToLower(old)) {
			return " A match that differs only in letter case exists; check the capitalisation."
		}
		return ""
	}
	start := strings.LastIndexByte(content[:loc[0]], '\n') + 1
	end := loc[1]
	if i := strings.IndexByte(content[end:], '\n'); i >= 0 {
		end += i
	} else {
		end = len(content)
	}
	line := strings.Count(content[:start], "\n") + 1
	text := content[start:end]
	if len(text) > 2000 {
		text = text[:2000] + "…"
	}
	return fmt.Sprintf(" Text that differs only in whitespace exists at line %d:\n%s\nUse that exact text (with its whitespace) as old_str.", line, text)
}

// linesContaining lists the 1-based lines of content (newline-split, a CR
// before the newline ignored) that contain sub whole.
func linesContaining(content, sub string) []int {
	var out []int
	for i, line := range strings.Split(content, "\n") {
		if strings.Contains(strings.TrimSuffix(line, "\r"), sub) {
			out = append(out, i+1)
		}
	}
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
