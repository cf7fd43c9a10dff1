package results

import (
	"github.com/boris-mcp/boris/internal/workspace"
)

// Workspace is a workspace tool's answer: status, diff, commit, list,
// create, open or remove (action says which, and which fields it fills).
type Workspace struct {
	Action string `json:"action" jsonschema:"status, diff, commit, list, create, open or remove."`
	// Workspace is the one the action is about (the session's own, or the
	// one removed); absent for a session without one.
	Workspace *WorkspaceInfo `json:"workspace,omitempty" jsonschema:"The workspace the action is about: the session's own (status, diff, commit, create, open) or the one removed."`
	// list
	Workspaces []WorkspaceInfo `json:"workspaces,omitempty" jsonschema:"list: every workspace of the repository, oldest first."`
	// diff
	Files     []WorkspaceChange `json:"files,omitempty" jsonschema:"diff: the paths that differ from the base, with git's letter (A added, M modified, D deleted, T type changed)."`
	Patch     string            `json:"patch,omitempty" jsonschema:"diff: the unified diff, cut at 30000 characters (see truncated)."`
	Truncated bool              `json:"truncated,omitempty" jsonschema:"diff: the patch was cut; total is its full length."`
	Total     int               `json:"total,omitempty" jsonschema:"diff: the patch's full length in characters."`
	// commit
	Commit string `json:"commit,omitempty" jsonschema:"commit: the commit made."`
	// remove
	BranchKept bool `json:"branch_kept,omitempty" jsonschema:"remove: the branch stays in the repository (it holds commits its HEAD lacks)."`
	Common
}

// WorkspaceInfo is one workspace.
type WorkspaceInfo struct {
	Name        string            `json:"name" jsonschema:"The workspace's name."`
	Dir         string            `json:"dir,omitempty" jsonschema:"Its directory (only for the caller's own credential's workspaces)."`
	Branch      string            `json:"branch" jsonschema:"The branch in the repository that holds its commits (boris/NAME)."`
	Base        string            `json:"base" jsonschema:"The commit it started from."`
	Head        string            `json:"head,omitempty" jsonschema:"The commit checked out in it."`
	HeadBranch  string            `json:"head_branch,omitempty" jsonschema:"The branch checked out in it (absent when detached)."`
	Exported    string            `json:"exported,omitempty" jsonschema:"Where branch points in the repository."`
	ExportNote  string            `json:"export_note,omitempty" jsonschema:"Why branch is not at head, when it is not."`
	Live        bool              `json:"live,omitempty" jsonschema:"A session works in it now."`
	This        bool              `json:"this,omitempty" jsonschema:"It is the calling session's."`
	Yours       bool              `json:"yours,omitempty" jsonschema:"It was made under the caller's credential (so it may open and remove it)."`
	Created     string            `json:"created" jsonschema:"When it was made (RFC 3339)."`
	Changes     []WorkspaceChange `json:"changes,omitempty" jsonschema:"Its uncommitted changes, with git status's two-letter code (at most 200)."`
	ChangeCount int               `json:"change_count" jsonschema:"How many uncommitted changes it has."`
	Commits     []WorkspaceCommit `json:"commits,omitempty" jsonschema:"Its commits since base, newest first (at most 20)."`
	CommitCount int               `json:"commit_count" jsonschema:"How many commits it has since base."`
	Stashes     int               `json:"stashes,omitempty" jsonschema:"Entries in its git stash."`
	Unmerged    bool              `json:"unmerged,omitempty" jsonschema:"It has commits the repository's HEAD lacks."`
	MainChanges int               `json:"main_changes,omitempty" jsonschema:"Uncommitted changes the main checkout had when it was made, which it does not have."`
	Size        int64             `json:"size,omitempty" jsonschema:"The disk it takes, in bytes (absent until measured)."`
	Error       string            `json:"error,omitempty" jsonschema:"Why it could not be inspected."`
}

// WorkspaceChange is a changed path of a workspace, relative to its top.
type WorkspaceChange struct {
	Code string `json:"code" jsonschema:"git's status code."`
	Path string `json:"path" jsonschema:"The path, relative to the workspace's top."`
}

// WorkspaceCommit is a commit of a workspace.
type WorkspaceCommit struct {
	ID      string `json:"id" jsonschema:"The commit."`
	Subject string `json:"subject" jsonschema:"Its subject line."`
}

// FromWorkspaceInfo is one workspace as inspected; this says it is the
// caller's session's, yours that it is the caller's credential's (only
// then is its directory shown).
func FromWorkspaceInfo(i *workspace.Info, this, yours bool) *WorkspaceInfo {
	out := &WorkspaceInfo{Name: i.Name, Branch: i.Branch, Base: i.Base, Head: i.Head, HeadBranch: i.HeadBranch,
		Exported: i.Exported, ExportNote: i.ExportNote, Live: i.Live, This: this, Yours: yours,
		Created: i.Created.UTC().Format("2006-01-02T15:04:05Z07:00"), ChangeCount: i.ChangeCount, CommitCount: i.CommitCount,
		Stashes: i.Stashes, Unmerged: i.Unmerged, Error: i.Err}
	if yours {
		out.Dir = i.Dir
	}
	if i.MainChanges > 0 {
		out.MainChanges = i.MainChanges
	}
	if i.Size > 0 {
		out.Size = i.Size
	}
	for _, c := range i.Changes {
		out.Changes = append(out.Changes, WorkspaceChange{Code: c.Code, Path: c.Path})
	}
	for _, c := range i.Commits {
		out.Commits = append(out.Commits, WorkspaceCommit{ID: c.ID, Subject: c.Subject})
	}
	return out
}

// FromWorkspaceDiff is diff's answer.
func FromWorkspaceDiff(i *workspace.Info, d *workspace.DiffResult) *Workspace {
	out := &Workspace{Action: "diff", Workspace: FromWorkspaceInfo(i, true, true), Patch: d.Patch, Truncated: d.Truncated}
	if d.Truncated {
		out.Total = d.Total
	}
	for _, f := range d.Files {
		out.Files = append(out.Files, WorkspaceChange{Code: f.Code, Path: f.Path})
	}
	return out
}
