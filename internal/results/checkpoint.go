package results

import (
	"fmt"

	"github.com/boris-mcp/boris/internal/checkpoint"
)

// Checkpoint is a checkpoint tool's answer: create, list, diff or restore
// (action says which, and which fields it fills).
type Checkpoint struct {
	Action string `json:"action" jsonschema:"create, list, diff or restore."`
	// create
	ID       string `json:"id,omitempty" jsonschema:"create: the checkpoint taken (or the one already recording this state, with existing); restore: the checkpoint gone back to."`
	Existing bool   `json:"existing,omitempty" jsonschema:"create: nothing had changed since checkpoint id, which already records this state."`
	Previous string `json:"previous,omitempty" jsonschema:"create: the checkpoint compared with for changes."`
	// list
	Checkpoints []CheckpointRecord `json:"checkpoints,omitempty" jsonschema:"list: every checkpoint of the workspace, newest first."`
	StoreBytes  int64              `json:"store_bytes,omitempty" jsonschema:"list: what the store takes, in bytes."`
	MaxBytes    int64              `json:"max_bytes,omitempty" jsonschema:"list: the store's bound (--checkpoint-max-bytes)."`
	// diff
	From string `json:"from,omitempty" jsonschema:"diff: the checkpoint compared from."`
	To   string `json:"to,omitempty" jsonschema:"diff: the checkpoint compared to, or now."`
	// create, diff and restore
	Changes  []CheckpointChange `json:"changes,omitempty" jsonschema:"create: what changed since previous; diff: what differs (restore gives counts only)."`
	Added    int                `json:"added" jsonschema:"Paths added (create, diff) or written (restore)."`
	Modified int                `json:"modified" jsonschema:"Paths modified (create, diff), or whose mode the restore changed."`
	Deleted  int                `json:"deleted" jsonschema:"Paths deleted (create, diff) or removed (restore)."`
	// restore
	Before  string           `json:"before,omitempty" jsonschema:"restore: the checkpoint of the state before the restore (restore it to undo the restore)."`
	Skipped []CheckpointSkip `json:"skipped,omitempty" jsonschema:"restore: paths left as they are, and why (a file over the size cap, …)."`
	Notes   []string         `json:"notes,omitempty" jsonschema:"What the caller should know (an interrupted restore, suspended automatic checkpoints)."`
	Common
}

// CheckpointRecord is one checkpoint of a list.
type CheckpointRecord struct {
	ID       string `json:"id" jsonschema:"The checkpoint (c1, c2, …)."`
	Time     string `json:"time" jsonschema:"When it was taken (RFC 3339)."`
	Session  string `json:"session" jsonschema:"The session that made it."`
	Yours    bool   `json:"yours,omitempty" jsonschema:"It was made by the calling session."`
	Label    string `json:"label,omitempty" jsonschema:"Its label (create with label)."`
	Reason   string `json:"reason" jsonschema:"What made it: on request, or the call that came next (before bash: …)."`
	Added    int    `json:"added" jsonschema:"Paths added since the checkpoint before it."`
	Modified int    `json:"modified" jsonschema:"Paths modified since the checkpoint before it."`
	Deleted  int    `json:"deleted" jsonschema:"Paths deleted since the checkpoint before it."`
}

// CheckpointChange is one changed path.
type CheckpointChange struct {
	Path    string `json:"path" jsonschema:"The path (absolute)."`
	Op      string `json:"op" jsonschema:"added, modified or deleted."`
	Kind    string `json:"kind" jsonschema:"file, directory or symlink (after the change; before, for a deletion)."`
	Size    int64  `json:"size,omitempty" jsonschema:"A file's size after the change (before, for a deletion)."`
	OldSize int64  `json:"old_size,omitempty" jsonschema:"modified: the file's size before."`
	Mode    string `json:"mode,omitempty" jsonschema:"The permission bits after the change (octal), when they changed."`
	Target  string `json:"target,omitempty" jsonschema:"A symlink's target."`
	Binary  bool   `json:"binary,omitempty" jsonschema:"diff: a side is not text, so no patch is shown."`
	Patch   string `json:"patch,omitempty" jsonschema:"diff: the unified diff of a text file (absent when omitted to keep the answer bounded)."`
}

// CheckpointSkip is a path a restore left alone.
type CheckpointSkip struct {
	Path   string `json:"path" jsonschema:"The path (absolute)."`
	Reason string `json:"reason" jsonschema:"Why."`
}

// FromCheckpointCreated is create's answer.
func FromCheckpointCreated(c *checkpoint.Created) *Checkpoint {
	out := &Checkpoint{Action: "create", ID: c.Record.ID, Existing: c.Existing, Previous: c.Previous}
	for i := range c.Changes {
		out.add(checkpointChange(&c.Changes[i]))
	}
	return out
}

// FromCheckpointList is list's answer.
func FromCheckpointList(l *checkpoint.Listing) *Checkpoint {
	out := &Checkpoint{Action: "list", StoreBytes: l.Bytes, MaxBytes: l.MaxBytes, Notes: l.Notes, Checkpoints: []CheckpointRecord{}}
	for _, r := range l.Checkpoints {
		out.Checkpoints = append(out.Checkpoints, CheckpointRecord{ID: r.ID, Time: r.Time.UTC().Format("2006-01-02T15:04:05.000Z07:00"), Session: r.Session,
			Yours: l.Caller != "" && r.SessionKey == l.Caller, Label: r.Label, Reason: r.Reason,
			Added: r.Changes.Added, Modified: r.Changes.Modified, Deleted: r.Changes.Deleted})
	}
	return out
}

// FromCheckpointDiff is diff's answer.
func FromCheckpointDiff(d *checkpoint.DiffResult) *Checkpoint {
	out := &Checkpoint{Action: "diff", From: d.From, To: d.To}
	for i := range d.Files {
		f := &d.Files[i]
		ch := checkpointChange(&f.Change)
		ch.Binary, ch.Patch = f.Binary, f.Patch
		out.add(ch)
	}
	out.Added, out.Modified, out.Deleted = d.Counts.Added, d.Counts.Modified, d.Counts.Deleted
	return out
}

// FromCheckpointRestored is restore's answer.
func FromCheckpointRestored(r *checkpoint.Restored) *Checkpoint {
	out := &Checkpoint{Action: "restore", ID: r.Target.ID, Added: r.Written, Modified: r.ModesChanged, Deleted: r.Removed}
	if r.Before != nil {
		out.Before = r.Before.ID
	}
	for _, n := range r.Skipped {
		out.Skipped = append(out.Skipped, CheckpointSkip{Path: n.Path, Reason: n.Reason})
	}
	return out
}

// add appends a change and counts it.
func (c *Checkpoint) add(ch CheckpointChange) {
	c.Changes = append(c.Changes, ch)
	switch ch.Op {
	case "added":
		c.Added++
	case "modified":
		c.Modified++
	case "deleted":
		c.Deleted++
	}
}

func checkpointChange(c *checkpoint.Change) CheckpointChange {
	out := CheckpointChange{Path: c.Abs()}
	e := c.New
	switch c.Op {
	case checkpoint.Added:
		out.Op = "added"
	case checkpoint.Modified:
		out.Op = "modified"
	case checkpoint.Deleted:
		out.Op, e = "deleted", c.Old
	}
	if e != nil {
		out.Kind, out.Target = e.Kind.String(), e.Target
		if e.Kind != checkpoint.KindDir && e.Kind != checkpoint.KindLink {
			out.Size = e.Size
		}
	}
	if c.Op == checkpoint.Modified && c.Old != nil && c.New != nil {
		if c.Old.Kind != checkpoint.KindDir && c.Old.Kind != checkpoint.KindLink {
			out.OldSize = c.Old.Size
		}
		if c.Old.Mode != c.New.Mode {
			out.Mode = fmt.Sprintf("%o", c.New.Mode)
		}
	}
	return out
}
