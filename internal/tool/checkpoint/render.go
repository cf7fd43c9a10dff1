package checkpoint

import (
	"fmt"
	"strings"
	"time"

	"github.com/boris-mcp/boris/internal/checkpoint"
	"github.com/boris-mcp/boris/internal/files"
)

// The checkpoint tool's answers. No model family was trained on a tool of
// this kind, so every dialect answers the same way.

// checkpointPath names a changed path: relative to the workspace when it
// has one directory, absolute when several.
func checkpointPath(ch *checkpoint.Change, roots []string) string {
	if len(roots) > 1 {
		return ch.Abs()
	}
	return ch.Rel
}

// checkpointChange is one line of a change summary.
func checkpointChange(ch *checkpoint.Change, roots []string) string {
	p := checkpointPath(ch, roots)
	switch ch.Op {
	case checkpoint.Added:
		return "A  " + p + describeEntry(ch.New)
	case checkpoint.Deleted:
		return "D  " + p + describeEntry(ch.Old)
	}
	o, n := ch.Old, ch.New
	var parts []string
	switch {
	case o.Kind != n.Kind && !(isFileKind(o.Kind) && isFileKind(n.Kind)):
		parts = append(parts, kindName(o)+" → "+kindName(n)+strings.TrimPrefix(strings.TrimSuffix(describeEntry(n), ")"), " ("))
	case n.Kind == checkpoint.KindLink:
		parts = append(parts, fmt.Sprintf("symlink → %s, was → %s", n.Target, o.Target))
	case !o.SameContent(n):
		parts = append(parts, fmt.Sprintf("%s → %s", sizeText(o.Size), sizeText(n.Size)))
	}
	if o.Mode != n.Mode {
		parts = append(parts, fmt.Sprintf("mode %o → %o", o.Mode, n.Mode))
	}
	if n.Kind == checkpoint.KindLarge {
		parts = append(parts, "over the size cap: not restorable")
	}
	if len(parts) == 0 {
		return "M  " + p
	}
	return "M  " + p + "  (" + strings.Join(parts, ", ") + ")"
}

func isFileKind(k checkpoint.Kind) bool {
	return k == checkpoint.KindFile || k == checkpoint.KindLarge
}

func kindName(e *checkpoint.Entry) string {
	if e.Kind == checkpoint.KindDir {
		return "directory"
	}
	return e.Kind.String()
}

func sizeText(n int64) string {
	if n == 1 {
		return "1 byte"
	}
	if n < 10000 {
		return fmt.Sprintf("%d bytes", n)
	}
	return files.HumanSize(n)
}

// describeEntry says what an added or deleted entry is, in parentheses.
func describeEntry(e *checkpoint.Entry) string {
	if e == nil {
		return ""
	}
	switch e.Kind {
	case checkpoint.KindDir:
		return "  (empty directory)"
	case checkpoint.KindLink:
		return "  (symlink → " + e.Target + ")"
	case checkpoint.KindLarge:
		return "  (" + sizeText(e.Size) + ", over the size cap: recorded, not restorable)"
	}
	if e.Mode&0o111 != 0 {
		return "  (" + sizeText(e.Size) + ", executable)"
	}
	return "  (" + sizeText(e.Size) + ")"
}

func countsText(c checkpoint.Counts) string {
	if c.Total() == 0 {
		return "no changes"
	}
	return fmt.Sprintf("%d %s: %d added, %d modified, %d deleted", c.Total(), pluralWord(c.Total(), "change", "changes"), c.Added, c.Modified, c.Deleted)
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// boundedLines appends lines to b while the text stays within limit,
// then a note of how many were left out; it returns whether all fit.
func boundedLines(b *strings.Builder, lines []string, limit int, what string) bool {
	for i, l := range lines {
		if b.Len()+len(l)+1 > limit {
			fmt.Fprintf(b, "[%d more %s not shown: the answer is cut at %d characters; pass paths to narrow it]\n", len(lines)-i, what, checkpoint.MaxDiffChars)
			return false
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return true
}

// renderCreated answers create.
func renderCreated(res *checkpoint.Created, roots []string) string {
	var b strings.Builder
	r := res.Record
	if res.Existing {
		return fmt.Sprintf("checkpoint %s: nothing changed since it was taken (%s), so it records this state; no new checkpoint was made (give a label to make one anyway)\n", r.ID, r.Time.UTC().Format(time.TimeOnly)+" UTC")
	}
	fmt.Fprintf(&b, "checkpoint %s created", r.ID)
	if r.Label != "" {
		fmt.Fprintf(&b, " (label %q)", r.Label)
	}
	b.WriteString("\n")
	if res.Previous == "" {
		b.WriteString("the first checkpoint of this workspace\n")
		return b.String()
	}
	fmt.Fprintf(&b, "since %s: %s\n", res.Previous, countsText(checkpoint.CountOf(res.Changes)))
	lines := make([]string, len(res.Changes))
	for i := range res.Changes {
		lines[i] = checkpointChange(&res.Changes[i], roots)
	}
	boundedLines(&b, lines, checkpoint.MaxDiffChars, "changes")
	return b.String()
}

// renderList answers list.
func renderList(l *checkpoint.Listing, now time.Time) string {
	var b strings.Builder
	n := len(l.Checkpoints)
	fmt.Fprintf(&b, "%d %s of %s (newest first); the store holds %s of %s", n, pluralWord(n, "checkpoint", "checkpoints"), strings.Join(l.Roots, ", "), files.HumanSize(l.Bytes), files.HumanSize(l.MaxBytes))
	if l.Tracking != "" {
		b.WriteString("; " + l.Tracking)
	}
	b.WriteString("\n")
	for _, note := range l.Notes {
		b.WriteString("note: " + note + "\n")
	}
	lines := make([]string, 0, n)
	for _, r := range l.Checkpoints {
		who := "session " + r.Session
		switch {
		case r.SessionKey != "" && r.SessionKey == l.Caller:
			who = "this session"
		case r.SessionKey == "":
			who = r.Session
		}
		what := r.Reason
		if r.Label != "" {
			what = fmt.Sprintf("label %q", r.Label)
		}
		changed := ""
		if r.Parent != "" {
			changed = fmt.Sprintf("  %d %s changed", r.Changes.Total(), pluralWord(r.Changes.Total(), "file", "files"))
		}
		lines = append(lines, fmt.Sprintf("%-5s %s  %-16s %s%s", r.ID, when(r.Time, now), who, what, changed))
	}
	boundedLines(&b, lines, checkpoint.MaxDiffChars, "checkpoints")
	return b.String()
}

// when is a checkpoint's time: the clock time today, with the date
// otherwise (UTC).
func when(t, now time.Time) string {
	t, now = t.UTC(), now.UTC()
	if t.Format(time.DateOnly) == now.Format(time.DateOnly) {
		return t.Format(time.TimeOnly) + " UTC"
	}
	return t.Format(time.DateTime) + " UTC"
}

// renderDiff answers diff: a summary of every change, then the
// patches of text files, cut at MaxDiffChars.
func renderDiff(d *checkpoint.DiffResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "diff %s → %s", d.From, d.To)
	if d.FromNote != "" {
		fmt.Fprintf(&b, " (%s)", d.FromNote)
	}
	b.WriteString("\n" + countsText(d.Counts) + "\n")
	lines := make([]string, len(d.Files))
	for i := range d.Files {
		lines[i] = checkpointChange(&d.Files[i].Change, d.Roots)
	}
	if !boundedLines(&b, lines, checkpoint.MaxDiffChars, "changes") {
		return b.String()
	}
	omitted := 0
	for i := range d.Files {
		f := &d.Files[i]
		var text string
		switch {
		case f.Omitted:
			omitted++
			continue
		case f.Binary:
			text = fmt.Sprintf("Binary file %s differs (%s)\n", checkpointPath(&f.Change, d.Roots), binarySizes(&f.Change))
		case f.Patch != "":
			text = f.Patch
		default:
			continue
		}
		if b.Len()+1+len(text) > checkpoint.MaxDiffChars {
			omitted++
			continue
		}
		b.WriteString("\n" + text)
	}
	if omitted > 0 {
		fmt.Fprintf(&b, "\n[the patches of %d more %s are not shown: the answer is cut at %d characters; pass paths to see them]\n", omitted, pluralWord(omitted, "file", "files"), checkpoint.MaxDiffChars)
	}
	return b.String()
}

func binarySizes(ch *checkpoint.Change) string {
	switch {
	case ch.Old == nil:
		return "added, " + sizeText(ch.New.Size)
	case ch.New == nil:
		return "deleted, " + sizeText(ch.Old.Size)
	}
	return sizeText(ch.Old.Size) + " → " + sizeText(ch.New.Size)
}

// renderRestored answers restore.
func renderRestored(r *checkpoint.Restored, roots []string) string {
	var b strings.Builder
	scope := "the whole workspace"
	if len(r.Paths) > 0 {
		scope = strings.Join(r.Paths, ", ")
	}
	fmt.Fprintf(&b, "restored %s as at %s", scope, r.Target.ID)
	if r.Target.Label != "" {
		fmt.Fprintf(&b, " (label %q)", r.Target.Label)
	}
	b.WriteString(": ")
	var parts []string
	add := func(n int, one, many string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, pluralWord(n, one, many)))
		}
	}
	add(r.Written, "file written", "files written")
	add(r.Removed, "file removed", "files removed")
	add(r.DirsCreated, "directory created", "directories created")
	add(r.DirsRemoved, "directory removed", "directories removed")
	add(r.ModesChanged, "mode changed", "modes changed")
	if len(parts) == 0 {
		parts = append(parts, "nothing to change, it already was")
	}
	b.WriteString(strings.Join(parts, ", ") + "\n")
	fmt.Fprintf(&b, "the state before this restore is checkpoint %s: restore it to undo this restore\n", r.Before.ID)
	for _, n := range r.Skipped {
		fmt.Fprintf(&b, "%s: %s\n", n.Path, n.Reason)
	}
	if r.Written > 0 {
		b.WriteString("files the restore changed count as changed since viewed: view them again before editing them\n")
	}
	_ = roots
	return b.String()
}
