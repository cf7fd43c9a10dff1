// Package corpus turns the history of a git repository into V4A patches,
// each commit as the patch that makes it from its parent, so that
// apply_patch can be tried on real changes: by the corpus test at the
// repository's root and by bench/patch. It runs git itself and is never
// part of the server.
package corpus

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/boris-mcp/boris/internal/textdiff"
)

// Repo reads a git repository's history.
type Repo struct {
	dir string
	cat *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// Open opens the repository that holds dir. Close ends the git process it
// starts.
func Open(dir string) (*Repo, error) {
	r := &Repo{dir: dir}
	r.cat = exec.Command("git", "-C", dir, "cat-file", "--batch")
	var err error
	if r.in, err = r.cat.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := r.cat.StdoutPipe()
	if err != nil {
		return nil, err
	}
	r.out = bufio.NewReaderSize(out, 1<<16)
	if err := r.cat.Start(); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	return r, nil
}

// Close ends the repository's git process.
func (r *Repo) Close() error {
	r.in.Close()
	return r.cat.Wait()
}

func (r *Repo) git(args ...string) ([]byte, error) {
	cmd := exec.CommandContext(context.Background(), "git", append([]string{"-C", r.dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Shallow reports whether the repository is a shallow clone, whose
// history is cut short.
func (r *Repo) Shallow() (bool, error) {
	out, err := r.git("rev-parse", "--is-shallow-repository")
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(string(out)) == "true", nil
}

// Rev is a commit and its first parent ("" for a root commit).
type Rev struct {
	ID, Parent string
}

// History lists the commits reachable from HEAD, oldest first.
func (r *Repo) History() ([]Rev, error) {
	out, err := r.git("rev-list", "--parents", "--topo-order", "--reverse", "HEAD")
	if err != nil {
		return nil, err
	}
	var revs []Rev
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		rev := Rev{ID: f[0]}
		if len(f) > 1 {
			rev.Parent = f[1]
		}
		revs = append(revs, rev)
	}
	return revs, nil
}

// blob returns the content of an object.
func (r *Repo) blob(id string) ([]byte, error) {
	if _, err := io.WriteString(r.in, id+"\n"); err != nil {
		return nil, err
	}
	head, err := r.out.ReadString('\n')
	if err != nil {
		return nil, err
	}
	f := strings.Fields(head)
	if len(f) != 3 || f[1] != "blob" {
		return nil, fmt.Errorf("git cat-file %s: %q", id, strings.TrimSpace(head))
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return nil, err
	}
	data := make([]byte, n+1) // and the newline after it
	if _, err := io.ReadFull(r.out, data); err != nil {
		return nil, err
	}
	return data[:n], nil
}

// Reason says why a change is left out of a commit's patch: V4A cannot
// express it.
type Reason string

// The reasons.
const (
	Symlink   Reason = "symbolic link"
	Submodule Reason = "submodule"
	Binary    Reason = "binary or not UTF-8"
	ModeOnly  Reason = "mode change only"
	// NoFinalNewline: the new file, or the end of a changed one, has no
	// final newline; an added file's lines, and lines a hunk adds, all
	// end with one.
	NoFinalNewline Reason = "new last line without a final newline"
	// LineEnding: lines added with another ending than the file's (a
	// CRLF file's added lines are CRLF; an added file's are LF).
	LineEnding Reason = "line ending unlike the file's"
	// StrayCR: a line ends in a carriage return that is not part of its
	// line ending, which a patch line cannot carry.
	StrayCR Reason = "carriage return at the end of a line's text"
)

// File is a change of one file: From is its path in the parent ("" when
// the commit adds it), To its path in the commit ("" when the commit
// deletes it); a rename has both, different.
type File struct {
	From, To      string
	Before, After []byte // nil when absent
}

// Skip is a change left out, with why.
type Skip struct {
	Path   string
	Reason Reason
}

// Commit is a commit's changes, those a patch can make and those it
// cannot.
type Commit struct {
	Rev
	Files   []File
	Skipped []Skip
	// ModeChanges counts files whose mode changed along with their
	// content: the content is in Files, the mode is not (a patch keeps
	// modes).
	ModeChanges int
}

// Load reads the changes of a commit from its first parent (for a root
// commit, from nothing), renames detected as git does by default.
func (r *Repo) Load(rev Rev) (*Commit, error) {
	args := []string{"diff-tree", "-r", "-z", "-M", "--raw", "--no-commit-id"}
	if rev.Parent == "" {
		args = append(args, "--root", rev.ID)
	} else {
		args = append(args, rev.Parent, rev.ID)
	}
	out, err := r.git(args...)
	if err != nil {
		return nil, err
	}
	c := &Commit{Rev: rev}
	fields := strings.Split(string(out), "\x00")
	for i := 0; i < len(fields); {
		meta := fields[i]
		if meta == "" {
			i++
			continue
		}
		m := strings.Fields(strings.TrimPrefix(meta, ":"))
		if len(m) != 5 {
			return nil, fmt.Errorf("diff-tree %s: unexpected %q", rev.ID, meta)
		}
		oldMode, newMode, oldID, newID, status := m[0], m[1], m[2], m[3], m[4]
		from, to := fields[i+1], fields[i+1]
		i += 2
		if status[0] == 'R' || status[0] == 'C' {
			to = fields[i]
			i++
		}
		switch status[0] {
		case 'A':
			from = ""
		case 'D':
			to = ""
		}
		if err := c.add(r, oldMode, newMode, oldID, newID, from, to); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// add records one change of diff-tree's output.
func (c *Commit) add(r *Repo, oldMode, newMode, oldID, newID, from, to string) error {
	path := to
	if path == "" {
		path = from
	}
	kind := func(mode string) string {
		switch mode {
		case "120000":
			return "link"
		case "160000":
			return "module"
		}
		return "file"
	}
	for _, k := range []string{kind(oldMode), kind(newMode)} {
		switch {
		case k == "link":
			c.Skipped = append(c.Skipped, Skip{path, Symlink})
			return nil
		case k == "module":
			c.Skipped = append(c.Skipped, Skip{path, Submodule})
			return nil
		}
	}
	f := File{From: from, To: to}
	var err error
	if from != "" {
		if f.Before, err = r.blob(oldID); err != nil {
			return err
		}
	}
	if to != "" {
		if f.After, err = r.blob(newID); err != nil {
			return err
		}
	}
	if from != "" && to != "" && oldID == newID && from == to {
		c.Skipped = append(c.Skipped, Skip{path, ModeOnly})
		return nil
	}
	if reason, ok := expressible(f); !ok {
		c.Skipped = append(c.Skipped, Skip{path, reason})
		return nil
	}
	if from != "" && to != "" && oldMode != newMode {
		c.ModeChanges++
	}
	c.Files = append(c.Files, f)
	return nil
}

// binary reports whether data is not text a patch can carry: it has a NUL
// byte where git looks for one, or is not UTF-8 (a patch travels as a JSON
// string).
func binary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 || !utf8.Valid(data)
}

// expressible reports whether a V4A patch can make the change exactly,
// and if not, why.
func expressible(f File) (Reason, bool) {
	if f.To == "" {
		return "", true // a deletion needs nothing of the content
	}
	if binary(f.After) || f.Before != nil && binary(f.Before) {
		return Binary, false
	}
	after := splitLines(f.After)
	for _, l := range after {
		if strings.HasSuffix(lineText(l), "\r") {
			return StrayCR, false
		}
	}
	if f.From == "" {
		// An added file is its lines, each ending in "\n".
		for _, l := range after {
			switch {
			case !strings.HasSuffix(l, "\n"):
				return NoFinalNewline, false
			case strings.HasSuffix(l, "\r\n"):
				return LineEnding, false
			}
		}
		return "", true
	}
	before := splitLines(f.Before)
	for _, l := range before {
		if strings.HasSuffix(lineText(l), "\r") {
			return StrayCR, false
		}
	}
	pref := preferred(before)
	for _, op := range textdiff.Lines(before, after, maxEdit) {
		if op.Kind != '+' {
			continue
		}
		l := after[op.B]
		switch {
		case !strings.HasSuffix(l, "\n"):
			return NoFinalNewline, false
		case !strings.HasSuffix(l, pref) || pref == "\n" && strings.HasSuffix(l, "\r\n"):
			return LineEnding, false
		}
	}
	return "", true
}

// preferred is the ending apply_patch gives added lines: the first line
// ending of the file, "\n" when it has none.
func preferred(lines []string) string {
	for _, l := range lines {
		if strings.HasSuffix(l, "\r\n") {
			return "\r\n"
		}
		if strings.HasSuffix(l, "\n") {
			return "\n"
		}
	}
	return "\n"
}

// splitLines splits data into lines, each with its ending.
func splitLines(data []byte) []string {
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// lineText is a line without its ending ("\n" or "\r\n", none for an
// unterminated last line), as apply_patch reads it.
func lineText(l string) string {
	if t, ok := strings.CutSuffix(l, "\r\n"); ok {
		return t
	}
	return strings.TrimSuffix(l, "\n")
}
