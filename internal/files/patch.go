package files

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/patch"
	"github.com/boris-mcp/boris/internal/scope"
)

// PatchResult lists the files a patch changed, as the patch names them:
// added, modified (a moved file under its new name) and deleted.
type PatchResult struct {
	Added, Modified, Deleted []string
	// Moved lists the files renamed by Move to (also in Modified, under
	// their new names).
	Moved []Move
	// Written is how many bytes the files written hold.
	Written int64
}

// Move is a file a patch renamed, as the patch names it.
type Move struct{ From, To string }

// FactPatchContext is the fact of a PATCH_CONTEXT_NOT_FOUND error.
type FactPatchContext struct {
	// File is the section's path as the patch names it.
	File string
	Err  *patch.ContextError
}

// ApplyPatch applies a parsed patch all or nothing. Every section is
// resolved against the files as they are now (through the same scope rules
// and race-free access as the other file tools) and staged in memory;
// nothing is written unless every section applies. Then each file is
// written atomically (temp, fsync, rename) or removed; if a write fails on
// the way, the files already written are put back as they were. No prior
// view is needed: an update applies only where its context matches the
// file as it is.
func (s *Service) ApplyPatch(c Ctx, p *patch.Patch) (*PatchResult, error) {
	st := &staging{s: s, c: c, files: map[string]*staged{}}
	// Resolve every path first, so the locks can be taken in one order.
	type placed struct {
		sec      patch.Section
		from, to scope.Target
	}
	var secs []placed
	for i, sec := range p.Sections {
		pl := placed{sec: sec}
		var err error
		if pl.from, err = st.locate(sec.Path, sec.Kind == patch.Delete || sec.MoveTo != ""); err != nil {
			return nil, sectionError(i, sec, err)
		}
		if sec.MoveTo != "" {
			if pl.to, err = st.locate(sec.MoveTo, false); err != nil {
				return nil, sectionError(i, sec, err)
			}
		}
		secs = append(secs, pl)
	}
	keys := slices.Clone(st.order)
	slices.Sort(keys)
	for _, k := range keys {
		unlock := s.locks.lock(k)
		defer unlock()
	}

	res := &PatchResult{}
	for i, pl := range secs {
		sec := pl.sec
		var err error
		switch sec.Kind {
		case patch.Add:
			err = st.add(pl.from, []byte(sec.Contents))
			res.Added = append(res.Added, sec.Path)
		case patch.Delete:
			err = st.delete(pl.from)
			res.Deleted = append(res.Deleted, sec.Path)
		case patch.Update:
			err = st.update(pl.from, pl.to, sec)
			if sec.MoveTo != "" {
				res.Modified = append(res.Modified, sec.MoveTo)
				res.Moved = append(res.Moved, Move{From: sec.Path, To: sec.MoveTo})
			} else {
				res.Modified = append(res.Modified, sec.Path)
			}
		}
		if err != nil {
			return nil, sectionError(i, sec, err)
		}
	}
	if err := st.commit(); err != nil {
		return nil, err
	}
	for _, f := range st.files {
		if f.touched && f.exists {
			res.Written += int64(len(f.content))
		}
	}
	return res, nil
}

// sectionError says which section an error belongs to.
func sectionError(i int, sec patch.Section, err error) error {
	e, ok := codes.As(err)
	if !ok {
		return err
	}
	if e.Code == codes.PatchContextNotFound {
		return e // its message names the file and the hunk already
	}
	verb := map[patch.Kind]string{patch.Add: "Add File", patch.Delete: "Delete File", patch.Update: "Update File"}[sec.Kind]
	out := *e
	out.Message = fmt.Sprintf("section %d (*** %s: %s, patch line %d): %s. Nothing was written", i+1, verb, sec.Path, sec.Line, strings.TrimSuffix(e.Message, "."))
	return &out
}

// staged is one file a patch touches: as it was and as it will be.
type staged struct {
	t scope.Target
	// was: the file before the patch (loaded lazily).
	loaded    bool
	wasExists bool
	wasDir    bool
	was       []byte
	wasMode   fs.FileMode
	wasSize   int64
	wasStamp  Stamp
	wasTooBig bool
	wasBinary bool
	// will: after the patch.
	touched bool
	exists  bool
	content []byte
	mode    fs.FileMode
}

// staging is a patch's changes before they are written.
type staging struct {
	s     *Service
	c     Ctx
	files map[string]*staged // by resolved location
	order []string           // resolved locations, first touched first
}

// locate resolves a path of the patch. A path the patch removes (a
// deleted or moved file) must not be a symlink: the reference removes the
// link itself, which boris cannot restore if a later write fails, and
// removing what it points to would surprise; the shell can do either.
func (st *staging) locate(path string, removal bool) (scope.Target, error) {
	t, err := st.s.locate(st.c, path)
	if err != nil {
		return t, err
	}
	if !t.Exists {
		if dir := existingAncestor(t.Resolved); dir != "" {
			return t, codes.Errorf(codes.InvalidInput, "cannot create %s: %s is a file, not a directory", t.Path, dir)
		}
	}
	if removal {
		if fi, err := os.Lstat(t.Path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return t, codes.Errorf(codes.InvalidInput, "%s is a symbolic link; a patch does not delete or move links (use the shell: rm or mv)", t.Path)
		}
	}
	if _, ok := st.files[t.Resolved]; !ok {
		st.files[t.Resolved] = &staged{t: t}
		st.order = append(st.order, t.Resolved)
	}
	return t, nil
}

// existingAncestor returns the nearest existing ancestor of path when it is
// not a directory (so path cannot be created), else "".
func existingAncestor(path string) string {
	for d := filepath.Dir(path); d != "/" && d != "."; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err == nil {
			if fi.IsDir() {
				return ""
			}
			return d
		}
	}
	return ""
}

// get returns the staged file for a located target, loading what it was.
func (st *staging) get(t scope.Target) (*staged, error) {
	f := st.files[t.Resolved]
	if !f.loaded {
		if err := st.load(f, t); err != nil {
			return nil, err
		}
		f.loaded = true
		f.exists, f.content, f.mode = f.wasExists && !f.wasDir, f.was, f.wasMode
	}
	return f, nil
}

// load reads what a file is before the patch: absent, a directory, too
// big to keep, or its content, mode and stamp.
func (st *staging) load(f *staged, t scope.Target) error {
	if !t.Exists {
		return nil
	}
	h, _, fi, err := st.s.openFile(t)
	if e, ok := codes.As(err); ok && e.Code == codes.PathNotFound {
		return nil // gone since it was located: absent
	}
	if err != nil {
		return err
	}
	defer h.Close()
	f.wasExists, f.wasStamp, f.wasMode, f.wasSize = true, StampOf(fi), fi.Mode().Perm(), fi.Size()
	switch {
	case fi.IsDir():
		f.wasDir = true
		return nil
	case !fi.Mode().IsRegular():
		return codes.Errorf(codes.InvalidInput, "%s is not a regular file", t.Path)
	case fi.Size() > st.s.opts.MaxFileSize:
		f.wasTooBig = true
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(h, st.s.opts.MaxFileSize+1))
	if err != nil {
		return codes.Errorf(codes.IOError, "read %s: %v", t.Path, unwrapPathError(err))
	}
	if int64(len(data)) > st.s.opts.MaxFileSize {
		f.wasTooBig, f.wasSize = true, int64(len(data))
		return nil
	}
	f.was = data
	f.wasBinary = bytes.IndexByte(data[:min(len(data), sniffLen)], 0) >= 0
	return nil
}

func (st *staging) add(t scope.Target, content []byte) error {
	f, err := st.get(t)
	if err != nil {
		return err
	}
	if f.wasDir && !f.touched {
		return codes.Errorf(codes.InvalidInput, "%s is a directory; Add File needs a file path", t.Path).WithFact(FactIsDir{Path: t.Path})
	}
	if int64(len(content)) > st.s.opts.MaxFileSize {
		return codes.Errorf(codes.FileTooLarge, "the new %s would be %s, over the %s limit (--max-file-size)", t.Path, HumanSize(int64(len(content))), HumanSize(st.s.opts.MaxFileSize))
	}
	if !f.exists {
		f.mode = 0o644
	}
	f.touched, f.exists, f.content = true, true, content
	return nil
}

func (st *staging) delete(t scope.Target) error {
	f, err := st.get(t)
	if err != nil {
		return err
	}
	switch {
	case f.wasDir && !f.touched:
		return codes.Errorf(codes.InvalidInput, "%s is a directory; Delete File deletes files only", t.Path).WithFact(FactIsDir{Path: t.Path})
	case !f.exists:
		hint := suggest(t.Path)
		return codes.Errorf(codes.PathNotFound, "%s does not exist%s", t.Path, hint).WithFact(FactMissing{Path: t.Path, Suggest: hint})
	case f.wasTooBig && !f.touched:
		return codes.Errorf(codes.FileTooLarge, "%s is over the %s limit (--max-file-size): a patch keeps every file it removes so it can restore them if a later write fails; delete it with the shell instead", t.Path, HumanSize(st.s.opts.MaxFileSize))
	}
	f.touched, f.exists, f.content = true, false, nil
	return nil
}

func (st *staging) update(from, to scope.Target, sec patch.Section) error {
	f, err := st.get(from)
	if err != nil {
		return err
	}
	switch {
	case f.wasDir && !f.touched:
		return codes.Errorf(codes.InvalidInput, "%s is a directory, not a file", from.Path).WithFact(FactIsDir{Path: from.Path})
	case !f.exists:
		hint := suggest(from.Path)
		return codes.Errorf(codes.PathNotFound, "%s does not exist%s; to create it use *** Add File", from.Path, hint).WithFact(FactMissing{Path: from.Path, Suggest: hint})
	case f.wasTooBig && !f.touched:
		return st.s.tooLarge(from.Path, f.wasSize)
	case f.wasBinary && !f.touched:
		return codes.Errorf(codes.InvalidInput, "%s is a binary file; patches change text files only", from.Path)
	}
	updated, err := patch.Apply(string(f.content), sec.Hunks)
	if err != nil {
		var ce *patch.ContextError
		if errors.As(err, &ce) {
			return codes.Errorf(codes.PatchContextNotFound, "%s", contextMessage(sec.Path, ce)).WithFact(FactPatchContext{File: sec.Path, Err: ce})
		}
		return codes.Errorf(codes.PatchInvalid, "%v", err)
	}
	if int64(len(updated)) > st.s.opts.MaxFileSize {
		return codes.Errorf(codes.FileTooLarge, "the updated %s would be %s, over the %s limit (--max-file-size)", from.Path, HumanSize(int64(len(updated))), HumanSize(st.s.opts.MaxFileSize))
	}
	if sec.MoveTo == "" || to.Resolved == from.Resolved {
		f.touched, f.content = true, []byte(updated)
		return nil
	}
	dst, err := st.get(to)
	if err != nil {
		return err
	}
	if dst.wasDir && !dst.touched {
		return codes.Errorf(codes.InvalidInput, "%s is a directory; Move to needs a file path", to.Path).WithFact(FactIsDir{Path: to.Path})
	}
	// The renamed file keeps the original's permissions (a script stays
	// executable), replacing whatever was at the destination.
	dst.touched, dst.exists, dst.content, dst.mode = true, true, []byte(updated), f.mode
	f.touched, f.exists, f.content = true, false, nil
	return nil
}

// contextMessage words a hunk that was not found: the file, the hunk, the
// lines sought and the closest region of the file, so the model can fix
// the patch in one step.
func contextMessage(file string, ce *patch.ContextError) string {
	var b strings.Builder
	switch {
	case ce.Ambiguous && ce.Header:
		fmt.Fprintf(&b, "%s: hunk %d (patch line %d): ambiguous: its @@ context line is line %d, before where the previous hunk ended, and the hunk has only added lines, so nothing says whether they go right after that line or after the previous hunk:\n", file, ce.Hunk, ce.Line, ce.HeaderAt)
	case ce.Ambiguous:
		fmt.Fprintf(&b, "%s: hunk %d (patch line %d): ambiguous: its last @@ context line is line %d, before where the previous hunk ended, and its lines occur both between that line and the previous hunk and after the previous hunk (line %d):\n", file, ce.Hunk, ce.Line, ce.HeaderAt, ce.Later)
	case ce.Header:
		fmt.Fprintf(&b, "%s: hunk %d (patch line %d): could not find the @@ context line:\n", file, ce.Hunk, ce.Line)
	default:
		fmt.Fprintf(&b, "%s: hunk %d (patch line %d): could not find the lines:\n", file, ce.Hunk, ce.Line)
	}
	for _, l := range ce.Sought {
		b.WriteString("  ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if len(ce.Closest.Lines) > 0 {
		switch {
		case ce.Ambiguous && ce.Header:
			b.WriteString("The file around that line is:\n")
		case ce.Ambiguous:
			b.WriteString("This is where they occur between that line and the previous hunk:\n")
		default:
			b.WriteString("The closest region of the file is:\n")
		}
		for i, l := range ce.Closest.Lines {
			fmt.Fprintf(&b, "%6d\t%s\n", ce.Closest.Start+i, l)
		}
	}
	if ce.Ambiguous {
		b.WriteString("Nothing was written. Write the hunks in file order, and give this hunk a context line that occurs only where it belongs (a ' ' line before its changes) or an @@ line closer to it, and send the whole patch again.")
	} else {
		b.WriteString("Nothing was written. Make the hunk's context and removed lines match the file exactly (view it again if unsure) and send the whole patch again.")
	}
	return b.String()
}

// commit writes the staged files. Before anything is written, each file is
// checked to be as it was read; if a write then fails, the files already
// written are put back.
func (st *staging) commit() error {
	var todo []*staged
	for _, k := range st.order {
		f := st.files[k]
		unchanged := (f.exists && f.wasExists && bytes.Equal(f.content, f.was)) || (!f.exists && !f.wasExists)
		if !f.touched || unchanged {
			continue
		}
		todo = append(todo, f)
	}
	for _, f := range todo {
		if err := st.checkUnchanged(f); err != nil {
			return err
		}
	}
	for i, f := range todo {
		err := testHookCommit(i)
		if err == nil {
			err = st.apply(f)
		}
		if err != nil {
			restored := st.rollback(todo[:i])
			return codes.Errorf(codes.IOError, "%s; the patch was not applied%s", strings.TrimSuffix(errText(err), "."), restored)
		}
	}
	for _, f := range todo {
		st.recordDone(f)
	}
	return nil
}

// testHookCommit, replaced by a test, can fail the commit of the i-th file
// (a full disk cannot be made everywhere).
var testHookCommit = func(int) error { return nil }

// checkUnchanged refuses to commit over a file that changed since it was
// read (a command wrote it meanwhile).
func (st *staging) checkUnchanged(f *staged) error {
	var now Stamp
	exists := false
	if fi, err := os.Stat(f.t.Resolved); err == nil {
		exists, now = true, StampOf(fi)
	}
	if exists != f.wasExists || (exists && now != f.wasStamp) {
		return codes.Errorf(codes.IOError, "%s changed on disk while the patch was being applied; nothing was written, send the patch again", f.t.Path)
	}
	return nil
}

// apply makes one staged file real.
func (st *staging) apply(f *staged) error {
	if !f.exists {
		if err := st.s.opts.Policy.Remove(f.t); err != nil {
			return st.s.writeError(f.t, err)
		}
		return nil
	}
	var written fs.FileInfo
	mode := f.mode
	if mode == 0 {
		mode = 0o644
	}
	if err := st.s.opts.Policy.WriteAtomic(f.t, f.content, scope.WriteOptions{NewFileMode: mode, MkdirParents: true, Written: &written}); err != nil {
		return st.s.writeError(f.t, err)
	}
	if written != nil {
		f.wasStamp = StampOf(written) // now the stamp of what this patch wrote
	}
	return nil
}

// rollback puts files already written back as they were, newest first,
// and says how that went.
func (st *staging) rollback(done []*staged) string {
	if len(done) == 0 {
		return " (nothing had been written)"
	}
	var failed []string
	for i := len(done) - 1; i >= 0; i-- {
		f := done[i]
		var err error
		if f.wasExists {
			err = st.s.opts.Policy.WriteAtomic(f.t, f.was, scope.WriteOptions{NewFileMode: f.wasMode, MkdirParents: true})
		} else {
			err = st.s.opts.Policy.Remove(f.t)
		}
		if err != nil {
			failed = append(failed, f.t.Path)
		}
	}
	if len(failed) > 0 {
		return fmt.Sprintf(", and %d of the %d files already written could not be restored: %s", len(failed), len(done), strings.Join(failed, ", "))
	}
	return fmt.Sprintf(": the %d files already written were restored", len(done))
}

// recordDone marks a committed file as seen by the session and records the
// change for undo.
func (st *staging) recordDone(f *staged) {
	before := prior{known: !f.wasTooBig, existed: f.wasExists, data: f.was, mode: f.wasMode}
	if f.exists {
		if st.c.Viewed != nil {
			st.c.Viewed.MarkViewed(f.t.Resolved, f.wasStamp)
		}
		st.s.record(st.c, f.t.Resolved, before, f.wasStamp, true)
		return
	}
	st.s.record(st.c, f.t.Resolved, before, Stamp{}, false)
}

func errText(err error) string {
	if e, ok := codes.As(err); ok {
		return e.Message
	}
	return err.Error()
}
