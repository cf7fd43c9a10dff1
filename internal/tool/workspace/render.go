package workspace

import (
	"fmt"
	"strings"

	"github.com/boris-mcp/boris/internal/workspace"
)

// renderNone answers status, diff and commit for a session without a
// workspace (--isolation off, nothing created).
func renderNone(m *workspace.Manager, workdir string) string {
	return fmt.Sprintf("This session has no workspace: it works in %s, the main checkout of %s, beside any other session there. To work in a git workspace of your own, call workspace with action \"create\" before running commands, or with session: \"new\" as well for a new session in a new workspace.\n", workdir, m.Repo().Toplevel)
}

// renderStatus is status's answer.
func renderStatus(i *workspace.Info, m *workspace.Manager) string {
	var b strings.Builder
	fmt.Fprintf(&b, "workspace %s: %s\n", i.Name, i.Root)
	writeState(&b, i, m)
	return b.String()
}

// writeState writes what a workspace holds: its branch, base, commits and
// uncommitted changes.
func writeState(b *strings.Builder, i *workspace.Info, m *workspace.Manager) {
	on := i.HeadBranch
	if on == "" {
		on = "detached HEAD"
	}
	fmt.Fprintf(b, "checked out: %s at %s\n", on, short(i.Head))
	fmt.Fprintf(b, "started from: %s (the HEAD of %s then)\n", short(i.Base), m.Repo().Toplevel)
	switch {
	case i.ExportNote != "":
		fmt.Fprintf(b, "branch %s in %s: at %s — not moved: %s\n", i.Branch, m.Repo().Toplevel, short(i.Exported), i.ExportNote)
	case i.Exported != "":
		fmt.Fprintf(b, "branch %s in %s: at %s\n", i.Branch, m.Repo().Toplevel, short(i.Exported))
	}
	fmt.Fprintf(b, "commits since the start: %d\n", i.CommitCount)
	for _, c := range i.Commits {
		fmt.Fprintf(b, "  %s %s\n", short(c.ID), c.Subject)
	}
	if i.CommitCount > len(i.Commits) {
		fmt.Fprintf(b, "  … %d older\n", i.CommitCount-len(i.Commits))
	}
	fmt.Fprintf(b, "uncommitted changes: %d\n", i.ChangeCount)
	for _, c := range i.Changes {
		fmt.Fprintf(b, "  %s %s\n", c.Code, c.Path)
	}
	if i.ChangeCount > len(i.Changes) {
		fmt.Fprintf(b, "  … %d more\n", i.ChangeCount-len(i.Changes))
	}
	if i.Stashes > 0 {
		fmt.Fprintf(b, "stash entries: %d\n", i.Stashes)
	}
	if i.Err != "" {
		fmt.Fprintf(b, "could not be inspected: %s\n", i.Err)
	}
}

// renderDiff is diff's answer.
func renderDiff(i *workspace.Info, d *workspace.DiffResult) string {
	var b strings.Builder
	if len(d.Files) == 0 {
		fmt.Fprintf(&b, "No changes in workspace %s since %s, the commit it started from.\n", i.Name, short(d.Base))
		return b.String()
	}
	fmt.Fprintf(&b, "%d path(s) of workspace %s differ from %s, the commit it started from (commits, staged and unstaged changes, new files):\n", len(d.Files), i.Name, short(d.Base))
	for _, f := range d.Files {
		fmt.Fprintf(&b, "%s %s\n", f.Code, f.Path)
	}
	b.WriteString("\n")
	b.WriteString(d.Patch)
	if d.Truncated {
		fmt.Fprintf(&b, "\n[the diff is cut at %d of its %d characters: narrow it with paths]\n", maxDiffChars, d.Total)
	}
	return b.String()
}

// renderCommit is commit's answer.
func renderCommit(cr *workspace.CommitResult, m *workspace.Manager) string {
	i := &cr.Info
	on := i.HeadBranch
	if on == "" {
		on = "detached HEAD"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Committed %s on %s (%d file(s)).\n", short(cr.ID), on, cr.Files)
	if i.ExportNote != "" {
		fmt.Fprintf(&b, "The branch %s in %s was not moved: %s\n", i.Branch, m.Repo().Toplevel, i.ExportNote)
	} else {
		fmt.Fprintf(&b, "The branch %s in %s is at %s: merge it from there (git merge %s); boris merges nothing itself.\n", i.Branch, m.Repo().Toplevel, short(i.Exported), i.Branch)
	}
	return b.String()
}

// renderList is list's answer.
func renderList(all []workspace.Info, mine, credential string, m *workspace.Manager) string {
	var b strings.Builder
	if len(all) == 0 {
		fmt.Fprintf(&b, "No workspaces in %s.\n", m.Repo().Toplevel)
		return b.String()
	}
	fmt.Fprintf(&b, "%d workspace(s) of %s (at most %d):\n", len(all), m.Repo().Toplevel, m.MaxCount())
	for i := range all {
		w := &all[i]
		state := "kept"
		switch {
		case w.Name == mine:
			state = "this session's"
		case w.Live:
			state = "in use"
		}
		fmt.Fprintf(&b, "- %s (%s): branch %s, %d commit(s), %d uncommitted change(s)", w.Name, state, w.Branch, w.CommitCount, w.ChangeCount)
		if w.Stashes > 0 {
			fmt.Fprintf(&b, ", %d stash entr(ies)", w.Stashes)
		}
		fmt.Fprintf(&b, ", made %s", w.Created.UTC().Format("2006-01-02 15:04 UTC"))
		if w.Owner.Credential == credential {
			fmt.Fprintf(&b, ", %s", w.Dir)
		} else {
			b.WriteString(", another credential's")
		}
		if w.Err != "" {
			fmt.Fprintf(&b, " (could not be inspected: %s)", w.Err)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// renderEntered is create's and open's answer.
func renderEntered(action string, i *workspace.Info, note string) string {
	var b strings.Builder
	verb := "Made"
	if action == "open" {
		verb = "Opened"
	}
	fmt.Fprintf(&b, "%s workspace %s: this session now works in %s.\n", verb, i.Name, i.Root)
	if note != "" {
		b.WriteString(note)
	}
	if action == "open" {
		fmt.Fprintf(&b, "It holds %d commit(s) since %s and %d uncommitted change(s).\n", i.CommitCount, short(i.Base), i.ChangeCount)
	}
	return b.String()
}

// renderRemoved is remove's answer.
func renderRemoved(r *workspace.Removed, m *workspace.Manager) string {
	i := &r.Info
	var b strings.Builder
	fmt.Fprintf(&b, "Removed workspace %s (%s).\n", i.Name, i.Dir)
	if r.BranchKept {
		fmt.Fprintf(&b, "Its branch %s stays in %s: it holds commits the repository's HEAD lacks (git branch -D %s deletes it).\n", i.Branch, m.Repo().Toplevel, i.Branch)
	} else {
		fmt.Fprintf(&b, "Its branch %s was deleted: it held nothing the repository's HEAD lacks.\n", i.Branch)
	}
	return b.String()
}
