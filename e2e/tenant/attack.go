package tenant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// How agent A's attacking command comes to an end.
const (
	EndTimeout    = "timeout"     // the bash call's timeout
	EndExit       = "exit"        // it ends by itself (killed, or done)
	EndTaskKill   = "task_kill"   // task_kill of the background task, or of what the command left running
	EndRestart    = "restart"     // bash with restart: true (session end when the tool has no restart)
	EndSessionEnd = "session end" // A's session is closed
)

// ADir is agent A's directory: its commands run there, which is how its
// processes are told from B's.
const ADir = Workspace + "/a"

// Attack is what agent A does.
type Attack struct {
	Name   string // for people
	Key    string // for test names
	Script string // A's bash command, run in ADir
	// Timeout is the bash call's timeout (0: boris's default).
	Timeout time.Duration
	// Background starts the command as a background task.
	Background bool
	// Hold is how long the attack lasts at least, from the call: B is
	// measured that long even when A's call answers sooner, and A ends a
	// background task or a command's leftovers after it.
	Hold time.Duration
	End  string // how the command is over: EndTimeout, …
	// Memory marks the memory attacks, through which boris's RSS matters.
	Memory bool
}

// hog defines hog N, which holds N MiB in one process: busybox awk builds
// a string of that many spaces (every page written), then blocks opening a
// FIFO that nothing ever writes to. One process of one thread: a Go
// program has 3 threads at least, and 60 of them would run into the pids
// limit before the memory limit. In the background a shell function forks
// twice (a subshell, then awk): bghog forks once.
const hog = `mkfifo hold 2>/dev/null; hold='BEGIN { s = sprintf("%" n "s", ""); getline < "hold" }'; hog() { awk -v n=$(($1 << 20)) "$hold"; }; `

// bghog is one hog of N MiB started in the background: "$(bghog N)".
func bghog(mib int) string { return fmt.Sprintf(`awk -v n=%d "$hold" &`, mib<<20) }

// Attacks are what agent A does, each run in a fresh container.
var Attacks = []Attack{
	{
		// The bomb alone dies out in about one run of three here: each of
		// its processes exits once it has forked, and busybox sh exits when
		// a fork fails (bash would retry), so whole branches end at the
		// limit. awk relaunches it for the whole window: a failed system()
		// is only a return value to awk.
		Name: "fork bomb", Key: "ForkBomb",
		Script: `awk 'BEGIN { while (1) system("bomb() { bomb | bomb & }; bomb") }' &`,
		Hold:   10 * time.Second, End: EndRestart,
	},
	{
		// One process at a time, each past the limit, again and again
		// for 8 s: the kernel kills one every few seconds.
		Name: "one process past the memory limit", Key: "MemoryHog",
		Script:  hog + `end=$(($(date +%s) + 8)); n=1; hog 1024; while [ "$(date +%s)" -lt "$end" ]; do n=$((n + 1)); hog 1024; done; echo "runs: $n"; hog 1024`,
		Timeout: 30 * time.Second, Hold: 10 * time.Second, End: EndExit, Memory: true,
	},
	{
		Name: "60 processes of 10 MiB", Key: "ManyHogs",
		Script:  hog + "for i in $(seq 60); do " + bghog(10) + " done; wait",
		Timeout: 10 * time.Second, Hold: 10 * time.Second, End: EndTimeout, Memory: true,
	},
	{
		// Each process smaller than boris: what the kernel picks when
		// nothing tells it otherwise is boris. With the guard the process
		// budget stops the loop before the memory limit, and the hogs
		// started are left running: A ends them with task_kill.
		Name: "150 processes of 4 MiB", Key: "SmallHogs",
		Script:  hog + "for i in $(seq 150); do " + bghog(4) + " done; wait",
		Timeout: 10 * time.Second, Hold: 10 * time.Second, End: EndTaskKill, Memory: true,
	},
	{
		Name: "yes on every core", Key: "CPU",
		Script:     "for i in $(seq $(nproc)); do yes >/dev/null & done; wait",
		Background: true, Hold: 10 * time.Second, End: EndTaskKill,
	},
	{
		// More burners than cores (8 on the 2): each core has
		// several runnable burners to choose from whenever B's work wakes.
		Name: "8 yes, more than cores", Key: "CPUOver",
		Script:     "for i in 1 2 3 4 5 6 7 8; do yes >/dev/null & done; wait",
		Background: true, Hold: 20 * time.Second, End: EndTaskKill,
	},
	{
		Name: "disk filler", Key: "DiskFill",
		Script: "dd if=/dev/zero of=fill bs=1M; echo dd-exit=$?; df -k " + Workspace,
		Hold:   6 * time.Second, End: EndSessionEnd,
	},
}

// Result is what one attack did.
type Result struct {
	Attack Attack
	// Idle is B with A idle, During B while the attack lasted (from A's
	// call until its command was over), Cleanup B from then until A's
	// processes were gone; Failed counts B's failures over the whole run.
	Idle, During, Cleanup Stats
	Failed                int
	// Answer is the text of A's bash call, Structured its
	// structuredContent; AnswerErr a protocol error instead.
	Answer        string
	Structured    map[string]any
	AnswerIsError bool
	AnswerErr     error
	// EndedBy is how A's command was ended (the attack's End, or session
	// end where the bash tool has no restart); EndAnswer the text of that
	// call (task_kill, restart).
	EndedBy   string
	EndAnswer string
	EndErr    error
	// LeftStatus is task_output of what A's command left running, read
	// just before it was ended ("" when it left nothing): what the agent
	// sees of processes that outlived the answer.
	LeftStatus string
	// Remaining are A's processes still there when the wait for them
	// ended (none: all gone); RemainingErr says why they could not be
	// listed. CleanedIn is how long after A's command was over they were
	// gone.
	Remaining    []Proc
	RemainingErr error
	// AtHold are the container's processes when the attack had lasted
	// its Hold, just before A's command was ended (HoldErr: why not).
	AtHold    []Proc
	HoldErr   error
	CleanedIn time.Duration
	// Boris's resident memory: the peak with A idle and during the attack
	// (0 if not sampled); the container's peak processes and memory use
	// during the attack, and the OOM kills in it over the run (where the
	// cgroup is readable here, else 0).
	RSSIdle, RSSPeak, PidsPeak, MemoryPeak int64
	OOMKills                               int64
	Gauges                                 []Gauge
	// Before and After are boris's state around the run.
	Before, After State
	Samples       []Sample
}

// RunOptions tune a run.
type RunOptions struct {
	// Idle is how long B is measured with A idle before the attack.
	Idle time.Duration
	// Log, if set, gets progress lines.
	Log func(format string, args ...any)
}

// Run has A attack while B works, in a box that has served nothing yet.
// It returns an error only when the run could not be set up; what the
// attack did, boris dying included, is in the Result.
func Run(ctx context.Context, box *Box, at Attack, o RunOptions) (*Result, error) {
	logf := o.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if o.Idle == 0 {
		o.Idle = 5 * time.Second
	}
	r := &Result{Attack: at, EndedBy: at.End}
	var err error
	if r.Before, err = box.State(ctx); err != nil {
		return nil, err
	}
	// A's session is handshake-era, so that closing it ends it.
	a, err := box.Connect(ctx, TokenA, "2025-11-25")
	if err != nil {
		return nil, err
	}
	aOpen := true
	defer func() {
		if aOpen {
			a.Close()
		}
	}()
	b, err := box.Connect(ctx, TokenB, "")
	if err != nil {
		return nil, err
	}
	defer b.Close()
	canRestart, err := bashHasRestart(ctx, a)
	if err != nil {
		return nil, err
	}
	// Two calls each: the shell boris prestarted for a session before its
	// first cd is used up, so every shell of A's runs in ADir and every
	// one of B's in BDir.
	for _, c := range []struct {
		cs      *mcp.ClientSession
		command string
	}{{a, "mkdir -p " + ADir + " && cd " + ADir}, {b, setupB}, {a, "pwd"}, {b, "pwd"}} {
		if text, err := bashText(ctx, c.cs, map[string]any{"command": c.command}); err != nil || !strings.HasPrefix(text, "exit_code: 0\n") {
			return nil, fmt.Errorf("setup %q: %v %s", c.command, err, text)
		}
	}

	oomBefore, _ := box.OOMKills()
	gaugeCtx, stopGauges := context.WithCancel(ctx)
	every := 200 * time.Millisecond
	if box.HostPID == 0 {
		every = 500 * time.Millisecond // each sample is a docker exec
	}
	gaugesDone := sampleGauges(gaugeCtx, box, every)
	workCtx, stopWork := context.WithCancel(ctx)
	rec := &Recorder{}
	workDone := make(chan struct{})
	go func() { Work(workCtx, b, rec); close(workDone) }()

	idleStart := time.Now()
	logf("%s: B with A idle for %s", at.Key, o.Idle)
	sleep(ctx, o.Idle)
	start := time.Now()
	logf("%s: A runs %q", at.Key, at.Script)
	args := map[string]any{"command": at.Script}
	if at.Timeout > 0 {
		args["timeout"] = at.Timeout.Milliseconds()
	}
	if at.Background {
		args["run_in_background"] = true
	}
	actx, cancel := context.WithTimeout(ctx, at.Timeout+at.Hold+time.Minute)
	res, err := a.CallTool(actx, &mcp.CallToolParams{Name: "bash", Arguments: args})
	cancel()
	r.AnswerErr = err
	if res != nil {
		r.Answer, r.AnswerIsError = resultText(res), res.IsError
		r.Structured = structured(res)
	}
	logf("%s: A's answer after %s: %v %q", at.Key, time.Since(start).Round(time.Millisecond), err, r.Answer)
	sleep(ctx, time.Until(start.Add(at.Hold)))
	r.AtHold, r.HoldErr = box.Processes(ctx)
	leftID := "" // what A's command left running, still to be ended
	if m := leftTask.FindStringSubmatch(r.Answer); m != nil {
		r.LeftStatus, _ = callText(ctx, a, "task_output", map[string]any{"task_id": m[1]})
		// A completed leftover is forgotten with this read: nothing is
		// left to end.
		if !strings.HasPrefix(r.LeftStatus, "status: completed") {
			leftID = m[1]
		}
	}

	switch at.End {
	case EndTimeout:
		if !strings.Contains(r.Answer, "timed out after") {
			r.EndedBy = EndExit // ended before its timeout (killed)
		}
	case EndTaskKill:
		id := Field(r.Answer, "task_id")
		if id == "" {
			id = leftID
		}
		if id == "" {
			r.EndedBy = EndExit // nothing left to kill
			break
		}
		r.EndAnswer, r.EndErr = callText(ctx, a, "task_kill", map[string]any{"task_id": id})
	case EndRestart:
		if canRestart {
			r.EndAnswer, r.EndErr = callText(ctx, a, "bash", map[string]any{"restart": true})
			break
		}
		r.EndedBy = EndSessionEnd
		fallthrough
	case EndSessionEnd:
		r.EndErr = a.Close()
		aOpen = false
	}
	over := time.Now()
	logf("%s: A's command over (%s): %v %q", at.Key, r.EndedBy, r.EndErr, r.EndAnswer)

	// A's processes must all be gone: after a timeout or a kill within
	// boris's grace (SIGTERM, then SIGKILL 5 s later), so 15 s is ample.
	deadline := over.Add(15 * time.Second)
	for {
		procs, err := box.Processes(ctx)
		r.Remaining, r.RemainingErr = processesOfA(procs), err
		if (err == nil && len(r.Remaining) == 0) || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		if st, serr := box.State(ctx); err != nil && serr == nil && !st.Running {
			break // boris is gone, and its processes with it
		}
		sleep(ctx, 250*time.Millisecond)
	}
	cleaned := time.Now()
	r.CleanedIn = cleaned.Sub(over)
	stopWork()
	<-workDone
	stopGauges()
	r.Gauges = <-gaugesDone
	if n, err := box.OOMKills(); err == nil {
		r.OOMKills = n - oomBefore
	}

	r.Samples = rec.Samples()
	r.Idle = Summarize(r.Samples, idleStart, start)
	r.During = Summarize(r.Samples, start, over)
	r.Cleanup = Summarize(r.Samples, over, cleaned.Add(time.Hour))
	r.Failed = Summarize(r.Samples, idleStart, cleaned.Add(time.Hour)).Failed
	rss := func(g Gauge) int64 { return g.RSS }
	r.RSSIdle, r.RSSPeak = Peak(r.Gauges, idleStart, start, rss), Peak(r.Gauges, start, cleaned, rss)
	r.PidsPeak = Peak(r.Gauges, start, cleaned, func(g Gauge) int64 { return g.Pids })
	r.MemoryPeak = Peak(r.Gauges, start, cleaned, func(g Gauge) int64 { return g.MemoryUse })
	if r.After, err = box.State(ctx); err != nil {
		return r, err
	}
	return r, nil
}

// leftTask finds the task an answer says lists what the command left
// running.
var leftTask = regexp.MustCompile(`left running \(listed as (\S+) in the task list\)`)

// processesOfA are the processes that are neither boris (pid 1) nor B's
// (which run in BDir).
func processesOfA(procs []Proc) []Proc {
	var out []Proc
	for _, p := range procs {
		if p.PID != 1 && p.Cwd != BDir && !strings.HasPrefix(p.Cwd, BDir+"/") {
			out = append(out, p)
		}
	}
	return out
}

// bashHasRestart says whether the bash tool takes restart: true.
func bashHasRestart(ctx context.Context, cs *mcp.ClientSession) (bool, error) {
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("tools/list: %w", err)
	}
	for _, t := range tools.Tools {
		if t.Name != "bash" {
			continue
		}
		raw, err := json.Marshal(t.InputSchema)
		if err != nil {
			return false, err
		}
		var schema struct {
			Properties map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			return false, err
		}
		_, ok := schema.Properties["restart"]
		return ok, nil
	}
	return false, errors.New("no bash tool")
}

// callText calls a tool and returns its text; a tool error is an error.
func callText(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", err
	}
	text := resultText(res)
	if res.IsError {
		return text, fmt.Errorf("%s: %s", tool, text)
	}
	return text, nil
}

func bashText(ctx context.Context, cs *mcp.ClientSession, args map[string]any) (string, error) {
	return callText(ctx, cs, "bash", args)
}

// Bash runs a command through a session's bash tool and returns the text.
func Bash(ctx context.Context, cs *mcp.ClientSession, command string) (string, error) {
	return bashText(ctx, cs, map[string]any{"command": command})
}

// structured is a result's structuredContent as a map (nil if none).
func structured(res *mcp.CallToolResult) map[string]any {
	if res.StructuredContent == nil {
		return nil
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// Field returns the value of a "name: value" line of an answer.
func Field(text, name string) string {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, name+": "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
