package tool

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/audit"
	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/rules"
)

// Act is something a call is about to do that the command rules judge: a
// shell command line, a program's argv, or a file path a file tool reads
// or changes. A Spec's Acts lists a call's acts before it runs.
type Act struct {
	// Command is a shell command line (bash, exec_command).
	Command string
	// Argv is a program and its arguments (Codex's shell).
	Argv []string
	// Tool is "Read" or "Edit" when Path is a file the call reads or
	// changes (absolute).
	Tool, Path string
	// Timeout bounds the wait for a human's answer to a question about
	// it: the call's own timeout (0: Rules.AskTimeout).
	Timeout time.Duration
}

// Rules are the command rules the tools' calls are judged by (nil: none).
type Rules struct {
	// Live holds the rules as they are now (reloaded on change).
	Live *rules.Live
	// AskTimeout bounds the wait for a human's answer when the call gives
	// no timeout of its own.
	AskTimeout time.Duration
	// key binds an answer given through a retried call (the 2026-07-28
	// era's input requests) to the question it answers.
	key []byte
}

// NewRules returns the tools' rules over live.
func NewRules(live *rules.Live, askTimeout time.Duration) *Rules {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	if askTimeout <= 0 {
		askTimeout = 2 * time.Minute
	}
	return &Rules{Live: live, AskTimeout: askTimeout, key: key}
}

// RuleObserver is the Observer's optional side that counts the rules'
// decisions (the metrics package implements it).
type RuleObserver interface {
	RuleDecision(decision, stage, answer string)
}

// Stages of a decision, for metrics.
const (
	StageCommand = "command"
	StagePath    = "path"
	StageExec    = "exec"
)

// approvalID is the id of boris's input request for an approval.
const approvalID = "boris_rule_approval"

// Gate applies the command rules to one call: to what it is about to do
// (its Acts, judged by the kernel before the handler runs), and to every
// program the call's command starts (Exec, for the per-exec check). A
// handler gets its call's gate with Call.Gate.
type Gate struct {
	rules *Rules
	req   *mcp.CallToolRequest
	rec   *audit.Record
	env   *Env
	// approved are the parts a human approved during this call: asked
	// once, not again for every exec of the same argv. all is set when
	// the human approved the call's whole command before it ran: its
	// programs that a rule asks about run without asking again (what is
	// forbidden stays forbidden).
	approved map[string]bool
	all      bool
	// sealed is set when the call has answered and its audit record is
	// being written (seal): later decisions — of processes the command
	// left running — go to the metrics only, and nobody is asked.
	sealed bool
	// mu guards approved, all and rec's rule fields: Exec may be called
	// from the goroutine that watches the command's execs while the
	// handler runs; one question at a time.
	mu sync.Mutex
}

// Gate is the call's gate; nil-safe: without rules, every Exec is nil.
func (c *Call) Gate() *Gate { return c.gate }

func newGate(env *Env, req *mcp.CallToolRequest, rec *audit.Record) *Gate {
	if env.Rules == nil || env.Rules.Live == nil {
		return nil
	}
	return &Gate{rules: env.Rules, req: req, rec: rec, env: env, approved: map[string]bool{}}
}

// Restrictive reports whether any rule now asks or forbids: without one,
// no exec can be refused and the per-exec check may be left out.
func (g *Gate) Restrictive() bool {
	return g != nil && g.rules.Live.Rules().Restrictive()
}

// Exec judges one program about to start with its real argv: nil lets it
// run; an error refuses it, its text the reason (the rule, the argv, the
// justification). An argv the rules ask about is put to the human while
// the client can be asked mid-call (the handshake era's
// elicitation/create), bounded by timeout (0: the rules' AskTimeout);
// otherwise it is refused with RULE_APPROVAL_NEEDED.
func (g *Gate) Exec(ctx context.Context, argv []string) error {
	if g == nil {
		return nil
	}
	r := g.rules.Live.Rules()
	v := r.Exec(argv)
	return g.decide(ctx, v, StageExec, 0, false)
}

// Judge is the per-exec judge of a command the call runs and waits for
// (session.Cmd.Judge): Exec. Nil without rules, and then the command runs
// unjudged.
func (g *Gate) Judge() func(ctx context.Context, pid int, argv []string) error {
	if g == nil {
		return nil
	}
	return func(ctx context.Context, _ int, argv []string) error { return g.Exec(ctx, argv) }
}

// TaskJudge is the per-exec judge of a task the call starts, which
// outlives it (session.TaskOptions.Judge): nobody can be asked once the
// call has answered, so an exec a rule asks about is refused with
// RULE_APPROVAL_NEEDED. Its decisions go to the metrics; the call's audit
// record was written when it answered, so the task's status is where a
// refusal is named. Nil without rules.
func (g *Gate) TaskJudge() func(ctx context.Context, pid int, argv []string) error {
	if g == nil {
		return nil
	}
	return func(_ context.Context, _ int, argv []string) error {
		v := g.rules.Live.Rules().Exec(argv)
		if o, ok := g.env.Observer.(RuleObserver); ok && v.Decision != rules.NoMatch {
			answer := ""
			if v.Decision == rules.Ask {
				answer = "unavailable"
			}
			o.RuleDecision(v.Decision.String(), StageExec, answer)
		}
		return unasked(v)
	}
}

// Fallback judges an exec without asking anyone: a process no command
// owns any more (one that outlived its command). A forbidden argv is
// refused with RULE_FORBIDDEN, one a rule asks about with
// RULE_APPROVAL_NEEDED.
func (r *Rules) Fallback(_ context.Context, _ int, argv []string) error {
	return unasked(r.Live.Rules().Exec(argv))
}

// unasked turns a verdict into nil (run) or a refusal where nobody can be
// asked.
func unasked(v rules.Verdict) error {
	switch v.Decision {
	case rules.Forbid:
		return codes.Errorf(codes.RuleForbidden, "%s", refusal(v, false))
	case rules.Ask:
		return codes.Errorf(codes.RuleApprovalNeeded, "%s", needsApproval(v, "it ran where no one can be asked (a background task, or a process that outlived its command), so it was not run"))
	}
	return nil
}

// check judges a call's acts before its handler runs. It returns the
// answer to give instead of running the call: an error result, or (the
// 2026-07-28 era) a result asking the client for the human's approval;
// nil lets the call run.
func (g *Gate) check(ctx context.Context, acts []Act) (*mcp.CallToolResult, error) {
	if g == nil || len(acts) == 0 {
		return nil, nil
	}
	r := g.rules.Live.Rules()
	var best rules.Verdict
	stage, timeout := "", time.Duration(0)
	if g.rec != nil {
		// What was asked is on the record even when it does not run.
		for _, a := range acts {
			switch {
			case a.Tool != "":
				g.rec.Paths = append(g.rec.Paths, a.Path)
			case a.Argv != nil && g.rec.Command == "":
				g.rec.Command = strings.Join(a.Argv, " ")
			case g.rec.Command == "":
				g.rec.Command = a.Command
			}
		}
	}
	for i, a := range acts {
		var v rules.Verdict
		st := StageCommand
		switch {
		case a.Tool != "":
			v, st = r.Path(a.Tool, a.Path), StagePath
		case a.Argv != nil:
			v = r.Argv(a.Argv)
		default:
			v = r.Command(a.Command)
		}
		if i == 0 || v.Decision > best.Decision {
			best, stage, timeout = v, st, a.Timeout
		}
	}
	if best.Decision == rules.Ask && g.stateless() {
		return g.askByRetry(best, stage)
	}
	return nil, g.decide(ctx, best, stage, timeout, true)
}

// decide turns a verdict into nil (run) or the refusal, asking the human
// where the verdict asks and the client can be asked now.
func (g *Gate) decide(ctx context.Context, v rules.Verdict, stage string, timeout time.Duration, whole bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch v.Decision {
	case rules.NoMatch:
		return nil
	case rules.Allow:
		g.note(v, stage, "")
		return nil
	case rules.Forbid:
		g.note(v, stage, "")
		return codes.Errorf(codes.RuleForbidden, "%s", refusal(v, whole))
	}
	if g.all || g.approved[v.Part] {
		g.note(v, stage, "approved")
		return nil
	}
	if g.sealed {
		g.note(v, stage, "unavailable")
		return unasked(v)
	}
	if g.stateless() || !g.canElicit() {
		g.note(v, stage, "unavailable")
		return codes.Errorf(codes.RuleApprovalNeeded, "%s", needsApproval(v, "this client cannot ask a human (it declares no elicitation capability), so it was not run: ask the user to run it themselves or to change the rules"))
	}
	if timeout <= 0 {
		timeout = g.rules.AskTimeout
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := g.req.Session.Elicit(actx, question(v))
	switch {
	case err != nil && errors.Is(actx.Err(), context.DeadlineExceeded):
		g.note(v, stage, "unanswered")
		return codes.Errorf(codes.RuleApprovalNeeded, "%s", needsApproval(v, fmt.Sprintf("no answer came within %s, so it was not run", timeout)))
	case err != nil:
		g.note(v, stage, "unavailable")
		return codes.Errorf(codes.RuleApprovalNeeded, "%s", needsApproval(v, fmt.Sprintf("asking the human failed (%v), so it was not run", err)))
	case approvedBy(res):
		g.approved[v.Part] = true
		g.all = g.all || whole
		g.note(v, stage, "approved")
		return nil
	}
	g.note(v, stage, "declined")
	return codes.Errorf(codes.RuleDeclined, "%s", declined(v))
}

// askByRetry answers a call in the 2026-07-28 era whose acts need
// approval: with the answer the client gives on its retry (bound to this
// question by the request state), or else with an input request the
// client puts to the human before it retries.
func (g *Gate) askByRetry(v rules.Verdict, stage string) (*mcp.CallToolResult, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	state := g.stateFor(v)
	if resp, ok := g.req.Params.InputResponses[approvalID]; ok && hmac.Equal([]byte(g.req.Params.RequestState), []byte(state)) {
		if res, ok := resp.(*mcp.ElicitResult); ok && approvedBy(res) {
			g.approved[v.Part], g.all = true, true
			g.note(v, stage, "approved")
			return nil, nil
		}
		g.note(v, stage, "declined")
		return nil, codes.Errorf(codes.RuleDeclined, "%s", declined(v))
	}
	if !g.canElicit() {
		g.note(v, stage, "unavailable")
		return nil, codes.Errorf(codes.RuleApprovalNeeded, "%s", needsApproval(v, "this client cannot ask a human (it declares no elicitation capability), so it was not run: ask the user to run it themselves or to change the rules"))
	}
	g.note(v, stage, "asked")
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{approvalID: question(v)},
		RequestState:  state,
	}, nil
}

// stateFor binds an answer to the question: the part and the rule, under
// a key of this process.
func (g *Gate) stateFor(v rules.Verdict) string {
	m := hmac.New(sha256.New, g.rules.key)
	m.Write([]byte(v.Part + "\x00" + v.Rule + "\x00" + v.Reason))
	return hex.EncodeToString(m.Sum(nil))
}

// stateless reports whether the call comes in the 2026-07-28 era, where
// a server asks its client through the call's result, not mid-call.
func (g *Gate) stateless() bool {
	return g.req != nil && g.req.ProtocolVersion() >= "2026-07-28"
}

// canElicit reports whether the client declares it can ask its human.
func (g *Gate) canElicit() bool {
	if g.req == nil || g.req.Session == nil {
		return false
	}
	caps := g.req.ClientCapabilities()
	return caps != nil && caps.Elicitation != nil && (caps.Elicitation.Form != nil || caps.Elicitation.URL == nil)
}

// seal ends the gate's writes to the call's audit record, which is about
// to be written: taken under mu, it orders every earlier decision's
// writes before the record is read (a judge runs on the exec watcher's
// goroutine). Nil-safe.
func (g *Gate) seal() {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.sealed = true
	g.mu.Unlock()
}

// note records a decision in the call's audit record (the strictest one
// of the call) and the metrics.
func (g *Gate) note(v rules.Verdict, stage, answer string) {
	if g.rec != nil && !g.sealed && (g.rec.RuleDecision == "" || decisionRank(v.Decision.String()) >= decisionRank(g.rec.RuleDecision)) {
		g.rec.RuleDecision, g.rec.Rule, g.rec.RulePart, g.rec.RuleAnswer = v.Decision.String(), v.Rule, v.Part, answer
	}
	if o, ok := g.env.Observer.(RuleObserver); ok {
		o.RuleDecision(v.Decision.String(), stage, answer)
	}
}

func decisionRank(d string) int {
	switch d {
	case "allow":
		return 1
	case "ask":
		return 2
	case "forbid":
		return 3
	}
	return 0
}

func approvedBy(res *mcp.ElicitResult) bool {
	if res == nil || res.Action != "accept" {
		return false
	}
	if v, ok := res.Content["approve"]; ok {
		b, isBool := v.(bool)
		return !isBool || b
	}
	return true
}

// approvalSchema is the form the human answers: accepting it approves;
// its one checkbox, unticked, refuses.
var approvalSchema = json.RawMessage(`{"type":"object","properties":{"approve":{"type":"boolean","title":"Run it","default":true}}}`)

// question is what the human is asked.
func question(v rules.Verdict) *mcp.ElicitParams {
	var b strings.Builder
	fmt.Fprintf(&b, "The agent wants to run: %s\n", v.Part)
	switch {
	case v.Rule != "" && v.Reason != "":
		fmt.Fprintf(&b, "It may match the rule %s at %s, which asks first: %s.", v.Pattern, v.Rule, v.Reason)
	case v.Rule != "":
		fmt.Fprintf(&b, "The rule %s at %s asks for your approval.", v.Pattern, v.Rule)
	default:
		fmt.Fprintf(&b, "It cannot be checked against the rules before it runs: %s.", v.Reason)
	}
	if v.Justification != "" {
		fmt.Fprintf(&b, "\nJustification: %s", v.Justification)
	}
	b.WriteString("\nApprove to run it; decline to refuse it.")
	return &mcp.ElicitParams{Mode: "form", Message: b.String(), RequestedSchema: approvalSchema}
}

// about names the rule of a verdict and the part it judged.
func about(v rules.Verdict) string {
	var b strings.Builder
	if v.Rule != "" {
		fmt.Fprintf(&b, "the rule %s (%s)", v.Pattern, v.Rule)
	} else {
		b.WriteString("the rules")
	}
	fmt.Fprintf(&b, " on `%s`", v.Part)
	if v.Reason != "" {
		fmt.Fprintf(&b, ": %s", v.Reason)
	}
	if v.Justification != "" {
		fmt.Fprintf(&b, " (justification: %s)", v.Justification)
	}
	return b.String()
}

func refusal(v rules.Verdict, whole bool) string {
	what := "it was not run"
	if whole {
		what = "nothing was run, not even the parts before it"
	}
	return fmt.Sprintf("forbidden by %s; %s. Do not try to get around the rule by other means: do something else, or ask the user", about(v), what)
}

func needsApproval(v rules.Verdict, why string) string {
	return fmt.Sprintf("needs a human's approval under %s; %s", about(v), why)
}

func declined(v rules.Verdict) string {
	return fmt.Sprintf("the user declined it when asked under %s; it was not run. Do not retry it: ask the user what to do instead", about(v))
}

// CommandActs is the Acts of a tool whose argument arg holds the command
// it runs: a shell command line, or an argv array. timeoutArg, when set,
// names its timeout in milliseconds, which bounds a question's wait.
func CommandActs(arg, timeoutArg string) func(json.RawMessage, string) []Act {
	return func(args json.RawMessage, _ string) []Act {
		var in map[string]json.RawMessage
		if json.Unmarshal(args, &in) != nil {
			return nil
		}
		a := Act{}
		var cmd string
		var argv []string
		switch {
		case json.Unmarshal(in[arg], &cmd) == nil:
			if strings.TrimSpace(cmd) == "" {
				return nil
			}
			a.Command = cmd
		case json.Unmarshal(in[arg], &argv) == nil && len(argv) > 0:
			a.Argv = argv
		default:
			return nil
		}
		if timeoutArg != "" {
			var ms Int
			if json.Unmarshal(in[timeoutArg], &ms) == nil && ms > 0 {
				a.Timeout = time.Duration(ms) * time.Millisecond
			}
		}
		return []Act{a}
	}
}

// PathActs is the Acts of a file tool whose argument arg names the path
// it reads (tool "Read") or changes ("Edit"); an absent path is the
// working directory.
func PathActs(tool, arg string) func(json.RawMessage, string) []Act {
	return func(args json.RawMessage, cwd string) []Act {
		var in map[string]json.RawMessage
		if json.Unmarshal(args, &in) != nil {
			return nil
		}
		var p string
		_ = json.Unmarshal(in[arg], &p)
		return []Act{{Tool: tool, Path: AbsPath(p, cwd)}}
	}
}

// AbsPath resolves a tool's path argument against the session's working
// directory.
func AbsPath(p, cwd string) string {
	p = strings.TrimSpace(p)
	if p == "" {
		return cwd
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p)
}
