package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/boris-mcp/boris/internal/checkpoint"
	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/session"
)

// autoCheckpoint checkpoints the workspace before a call that can change
// it. A failure does not stop the call (the model asked for the call, not
// the checkpoint); it is told once per session and kind of failure, in a
// note after the call's answer. While the start-up checkpoint is still
// being taken, the call waits for what is left of it, and a client that
// gave a progress token is told so.
// A call ended (ctx done) while it waits must not run: the error says so.
func (s *Set) autoCheckpoint(ctx context.Context, prog *Progress, env *Env, sess *session.Session, d *Def, args json.RawMessage) (string, error) {
	name := d.tool.Name
	stop := baselineProgress(ctx, prog, env.Checkpoints)
	err := env.Checkpoints.WaitBaseline(ctx)
	stop()
	if err != nil {
		why := err.Error()
		if e, ok := codes.As(err); ok {
			why = e.Message // the server's reason (stdin's end, shutdown)
		}
		return "", codes.Errorf(codes.SessionClosed, "%s; it was waiting for the start-up checkpoint of the workspace and did not run", why)
	}
	err = env.Checkpoints.Auto(sess, func() string { return callReason(d, args) })
	if err == nil {
		sess.NoteCheckpointFailure("")
		return "", nil
	}
	// Told once per kind of failure (its code), not at every call.
	kind := "failed"
	if e, ok := codes.As(err); ok {
		kind = string(e.Code)
	}
	if !sess.NoteCheckpointFailure(kind) {
		return "", nil
	}
	msg := err.Error()
	s.env.Logger.Warn("checkpoint: the automatic checkpoint failed", "session", sess.ID(), "tool", name, "err", err)
	return "note: no checkpoint was taken before this call (checkpoints cannot undo it): " + msg + "\n", nil
}

// callReason says in a few words what call follows a checkpoint, for the
// checkpoint list: "before bash: `make test`".
func callReason(d *Def, args json.RawMessage) string {
	what := ""
	if d.spec.Summary != nil {
		what = d.spec.Summary(args)
	} else {
		var in struct {
			Path string `json:"path"`
		}
		_ = json.Unmarshal(args, &in)
		what = in.Path
	}
	return strings.TrimSpace("before " + d.tool.Name + ": " + what)
}

// Head is the start of a command, for summaries: its first line, at most
// 60 characters.
func Head(s string) string {
	s = strings.TrimSpace(s)
	cut := false
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, cut = s[:i], true
	}
	if r := []rune(s); len(r) > 60 {
		s, cut = string(r[:60]), true
	}
	if cut {
		s += "…"
	}
	return s
}

// baselineProgress sends progress notifications while a call waits for
// the start-up checkpoint (once at once, then every second), when the
// client gave a progress token; the function it returns stops them. The
// progress is the fraction read (prog keeps the values increasing).
func baselineProgress(ctx context.Context, prog *Progress, sv *checkpoint.Service) func() {
	if prog == nil {
		return func() {}
	}
	if done, _, _ := sv.Baseline(); done {
		return func() {}
	}
	stop := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			done, read, total := sv.Baseline()
			if done {
				return
			}
			msg := "waiting for the start-up checkpoint of the workspace (listing it) before this call: calls that can change the workspace wait until it is recorded"
			p := 0.0
			if total > 0 {
				msg = fmt.Sprintf("waiting for the start-up checkpoint of the workspace before this call: %d of %d files read", read, total)
				p = 0.99 * float64(read) / float64(total)
			}
			prog.Notify(msg, p)
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(stop)
		<-finished
	}
}
