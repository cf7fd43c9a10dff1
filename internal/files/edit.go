package files

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/scope"
)

// snippetContext is how many unchanged lines a snippet shows around an edit.
const snippetContext = 4

// StrReplace replaces old with new in a file: exactly one occurrence, or
// all of them with all set. In a CRLF file, "\n" in old and new stands for
// "\r\n", so the file keeps its line endings.
func (s *Service) StrReplace(c Ctx, path, old, new string, all bool) (string, error) {
	if old == "" {
		return "", codes.Errorf(codes.InvalidInput, "old_str must not be empty: give the exact text to replace (to write a whole file use create_file)")
	}
	if old == new {
		return "", codes.Errorf(codes.InvalidInput, "old_str and new_str are identical; nothing would change")
	}
	t, err := s.locate(c, path)
	if err != nil {
		return "", err
	}
	if !t.Exists {
		return "", codes.Errorf(codes.PathNotFound, "%s does not exist%s; to create it use create_file", t.Path, suggest(t.Path))
	}
	if err := s.checkViewed(c, t, "edit"); err != nil {
		return "", err
	}
	unlock := s.locks.lock(t.Resolved)
	defer unlock()
	data, real, err := s.readForEdit(c, t)
	if err != nil {
		return "", err
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
		return "", codes.Errorf(codes.StrReplaceNotFound, "old_str was not found in %s.%s", t.Path, nearMatch(content, old))
	case count > 1 && !all:
		return "", codes.Errorf(codes.StrReplaceAmbiguous, "old_str occurs %d times in %s (lines %s); use replace_all to replace every occurrence, or add surrounding context to old_str to make it unique",
			count, t.Path, matchLines(content, o, 10))
	}
	first := strings.Index(content, o)
	var updated string
	if all {
		updated = strings.ReplaceAll(content, o, n)
	} else {
		updated = content[:first] + n + content[first+len(o):]
	}
	if int64(len(updated)) > s.opts.MaxFileSize {
		return "", codes.Errorf(codes.FileTooLarge, "the edited %s would be %s, over the %s limit (--max-file-size); the file is unchanged", t.Path, HumanSize(int64(len(updated))), HumanSize(s.opts.MaxFileSize))
	}
	t.Resolved = real
	if err := s.write(c, t, []byte(updated), false); err != nil {
		return "", err
	}

	firstLine := strings.Count(content[:first], "\n") + 1
	lastLine := firstLine + strings.Count(n, "\n")
	head := fmt.Sprintf("The file %s has been edited.", t.Path)
	if all {
		head = fmt.Sprintf("The file %s has been edited: replaced %d occurrence%s.", t.Path, count, plural(count))
	}
	return head + " Here is a snippet of the result (cat -n format):\n" + snippet(updated, firstLine, lastLine), nil
}

// Create writes content to path, creating parent directories; an existing
// file is overwritten (after a view, when required) and keeps its mode.
func (s *Service) Create(c Ctx, path, content string) (string, error) {
	if int64(len(content)) > s.opts.MaxFileSize {
		return "", codes.Errorf(codes.FileTooLarge, "content is %s, over the %s limit (--max-file-size); nothing was written", HumanSize(int64(len(content))), HumanSize(s.opts.MaxFileSize))
	}
	t, err := s.locate(c, path)
	if err != nil {
		return "", err
	}
	if t.Exists {
		// WriteAtomic refuses a directory too; this only words it better.
		if fi, err := os.Stat(t.Resolved); err == nil && fi.IsDir() {
			return "", codes.Errorf(codes.InvalidInput, "%s is a directory; give a file path", t.Path)
		}
		if err := s.checkViewed(c, t, "overwrite"); err != nil {
			return "", err
		}
	}
	unlock := s.locks.lock(t.Resolved)
	defer unlock()
	if t.Exists {
		if err := s.checkFreshOnDisk(c, t); err != nil {
			return "", err
		}
	}
	if err := s.write(c, t, []byte(content), true); err != nil {
		return "", err
	}
	verb := "Created"
	if t.Exists {
		verb = "Overwrote"
	}
	return fmt.Sprintf("%s %s (%d bytes).", verb, t.Path, len(content)), nil
}

// Insert inserts text after line `after` (0 = at the top).
func (s *Service) Insert(c Ctx, path string, after int, text string) (string, error) {
	if text == "" {
		return "", codes.Errorf(codes.InvalidInput, "new_str is empty; give the text to insert")
	}
	t, err := s.locate(c, path)
	if err != nil {
		return "", err
	}
	if !t.Exists {
		return "", codes.Errorf(codes.PathNotFound, "%s does not exist%s; to create it use the create command", t.Path, suggest(t.Path))
	}
	if err := s.checkViewed(c, t, "insert"); err != nil {
		return "", err
	}
	unlock := s.locks.lock(t.Resolved)
	defer unlock()
	data, real, err := s.readForEdit(c, t)
	if err != nil {
		return "", err
	}
	lines := splitLines(data)
	if after < 0 || after > len(lines) {
		return "", codes.Errorf(codes.InvalidInput, "insert_line %d is out of range: %s has %d lines, so use 0 (top) to %d", after, t.Path, len(lines), len(lines))
	}
	eol := "\n"
	if isCRLF(data) {
		eol = "\r\n"
		text = toCRLF(text)
	}
	if !strings.HasSuffix(text, "\n") {
		text += eol
	}
	var b bytes.Buffer
	for _, l := range lines[:after] {
		b.Write(l)
	}
	if after > 0 && !bytes.HasSuffix(lines[after-1], []byte("\n")) {
		b.WriteString(eol) // the last line had no newline; give it one
	}
	b.WriteString(text)
	for _, l := range lines[after:] {
		b.Write(l)
	}
	if int64(b.Len()) > s.opts.MaxFileSize {
		return "", codes.Errorf(codes.FileTooLarge, "the edited %s would be %s, over the %s limit (--max-file-size); the file is unchanged", t.Path, HumanSize(int64(b.Len())), HumanSize(s.opts.MaxFileSize))
	}
	t.Resolved = real
	if err := s.write(c, t, b.Bytes(), false); err != nil {
		return "", err
	}
	inserted := strings.Count(text, "\n")
	return fmt.Sprintf("Inserted %d line%s after line %d of %s. Here is a snippet of the result (cat -n format):\n%s",
		inserted, plural(inserted), after, t.Path, snippet(b.String(), after+1, after+inserted)), nil
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

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
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

// splitLines splits data into lines that keep their endings.
func splitLines(data []byte) [][]byte {
	var lines [][]byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			lines = append(lines, data)
			break
		}
		lines = append(lines, data[:i+1])
		data = data[i+1:]
	}
	return lines
}

// snippet shows lines from-snippetContext .. to+snippetContext of content.
func snippet(content string, from, to int) string {
	lines := strings.Split(content, "\n")
	if strings.HasSuffix(content, "\n") {
		lines = lines[:len(lines)-1]
	}
	lo := max(1, from-snippetContext)
	hi := min(len(lines), max(to, from)+snippetContext)
	var b []byte
	for i := lo; i <= hi; i++ {
		line := strings.TrimSuffix(lines[i-1], "\r")
		b = appendLineNo(b, i)
		if n := utf8.RuneCountInString(line); n > MaxLineChars {
			b = appendChars(b, []byte(line), MaxLineChars)
			b = fmt.Appendf(b, "… [line truncated: %d characters]", n)
		} else {
			b = append(b, line...)
		}
		b = append(b, '\n')
	}
	return string(b)
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

// nearMatch looks for old in content ignoring differences in whitespace and
// says where it is, so the model can copy the exact text.
func nearMatch(content, old string) string {
	fields := strings.Fields(old)
	if len(fields) == 0 || len(old) > 20000 || len(fields) > 2000 {
		return " Check the exact text, including whitespace and indentation, by viewing the file."
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
		return " Check the exact text, including whitespace and indentation, by viewing the file."
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
