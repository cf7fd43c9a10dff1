package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/e2e/tenant"
)

// The tenant tests run boris:latest as a shared deployment runs it: two
// tokens (two agents), --pids-limit 200, --memory 512m without swap, a
// 64 MiB tmpfs workspace. Agent A attacks, agent B works on (bash, view,
// grep every 100 ms), one attack per fresh container; package tenant does
// the driving and measuring, these tests say what must hold. They run one
// after the other, never in parallel: B's latency is what they measure.
// boris runs with the image's defaults: with two tokens the sandbox is on
// (--sandbox auto), each session in a Landlock domain of its own, and the
// command guard is on.

// startTenant starts a tenant container, removed at cleanup (its log
// printed first if the test failed).
func startTenant(t *testing.T, o tenant.Options) *tenant.Box {
	t.Helper()
	requireImages(t)
	o.Image = imageLatest
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	box, err := tenant.Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log of boris:\n%s", box.Logs(context.Background()))
		}
		if err := box.Close(); err != nil {
			t.Logf("terminate: %v", err)
		}
	})
	return box
}

// runAttack runs one attack in a fresh container and logs its figures.
func runAttack(t *testing.T, o tenant.Options, at tenant.Attack) *tenant.Result {
	t.Helper()
	box := startTenant(t, o)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r, err := tenant.Run(ctx, box, at, tenant.RunOptions{Idle: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: B with A idle: %s", at.Name, r.Idle)
	t.Logf("%s: B during the attack: %s", at.Name, r.During)
	t.Logf("%s: B until A's processes were gone (%s): %s", at.Name, r.CleanedIn.Round(time.Millisecond), r.Cleanup)
	t.Logf("%s: boris's RSS %s idle, %s peak; container peak %d processes, %s; %d OOM kills",
		at.Name, mib(r.RSSIdle), mib(r.RSSPeak), r.PidsPeak, mib(r.MemoryPeak), r.OOMKills)
	t.Logf("%s: A's answer: %q (error: %v); what it left running: %q; ended by %s: %q (error: %v)", at.Name, clip(r.Answer), r.AnswerErr, clip(r.LeftStatus), r.EndedBy, r.EndAnswer, r.EndErr)
	return r
}

// TestTenantAttacks: whatever A does — a fork bomb, processes past the
// memory limit (one big one, 60 of 10 MiB, 150 of 4 MiB each smaller than
// boris), yes on every core or 8 of them, filling the workspace — B's calls all
// succeed and stay fast, boris is never restarted, A's answer says what
// happened, and once A's command is over none of its processes remain.
func TestTenantAttacks(t *testing.T) {
	requireImages(t)
	o := tenant.Options{}
	for _, at := range tenant.Attacks {
		t.Run(at.Key, func(t *testing.T) {
			r := runAttack(t, o, at)
			if r.Failed != 0 {
				t.Errorf("B had %d failed calls; the first: %s", r.Failed, strings.Join(append(r.During.Errors, r.Cleanup.Errors...), "\n"))
			}
			if err := r.After.Alive(r.Before); err != nil {
				t.Fatalf("boris did not survive: %v", err)
			}
			checkLatency(t, r)
			checkAnswer(t, r)
			if r.EndErr != nil {
				t.Errorf("ending A's command (%s): %v", r.EndedBy, r.EndErr)
			}
			switch {
			case r.RemainingErr != nil:
				t.Errorf("listing the container's processes: %v", r.RemainingErr)
			case len(r.Remaining) > 0:
				t.Errorf("%d of A's processes remain %s after its command was over (%s), e.g. %v",
					len(r.Remaining), r.CleanedIn.Round(time.Millisecond), r.EndedBy, r.Remaining[:min(5, len(r.Remaining))])
			}
		})
	}
}

// checkLatency holds B's p99 during the attack to a bound derived from its
// p99 with A idle, measured in the same container just before: at most 3×
// idle or 5 s, whichever is more. The bound is one a broken guard exceeds
// (B's calls stalling for seconds behind a fork storm or the OOM killer)
// and a loaded machine does not: the container's cgroup as a whole
// competes with the machine's other work, which no guard inside it
// decides, and on this project's build machines (load 20 on 2 cores) B's
// p99 with A idle alone reached 0.3 s, during the memory attacks over 1 s.
// What the attacks cost B on a machine to itself is measured by the
// tenant benchmark (e2e/cmd/tenantbench), its ratios within one run;
// the CPU attacks' protection is checked by what it does (checkIdled).
func checkLatency(t *testing.T, r *tenant.Result) {
	t.Helper()
	bound := max(3*r.Idle.P99, 5*time.Second)
	if r.During.Calls == 0 {
		t.Fatal("B made no calls during the attack")
	}
	if r.During.P99 > bound {
		t.Errorf("B's p99 during %s is %s, over the bound %s (idle p99 %s)", r.Attack.Name, r.During.P99, bound, r.Idle.P99)
	}
}

// checkIdled: once A's burners have run for the attack's hold, every one
// of them is at SCHED_IDLE, where B's work and boris's preempt them at
// once; boris and B's processes are not. The burners are A's processes
// that are running (R): busybox runs yes in the forked shell, without an
// exec, so their command line is the shell's; the shell that waits for
// them (S) has burned nothing and keeps its policy.
func checkIdled(t *testing.T, r *tenant.Result, want int) {
	t.Helper()
	if r.HoldErr != nil {
		t.Fatalf("listing the processes at the hold: %v", r.HoldErr)
	}
	burners := 0
	for _, p := range r.AtHold {
		switch {
		case p.PID == 1 && p.Policy != 0:
			t.Errorf("boris is at policy %d: %v", p.Policy, p)
		case p.Cwd == tenant.ADir && p.State == "R":
			burners++
			if p.Policy != schedIdle {
				t.Errorf("A's burner is not at SCHED_IDLE: %v", p)
			}
		case (p.Cwd == tenant.BDir || strings.HasPrefix(p.Cwd, tenant.BDir+"/")) && p.Policy == schedIdle:
			t.Errorf("B's process is at SCHED_IDLE: %v", p)
		}
	}
	if burners < want {
		t.Errorf("%d burners at the hold, want %d: %v", burners, want, r.AtHold)
	}
}

// schedIdle is SCHED_IDLE's policy number.
const schedIdle = 5

// checkAnswer: A's answer says what happened to its command.
func checkAnswer(t *testing.T, r *tenant.Result) {
	t.Helper()
	if r.AnswerErr != nil || r.AnswerIsError {
		t.Fatalf("A's bash call failed: %v %s", r.AnswerErr, r.Answer)
	}
	var want []string
	switch r.Attack.Key {
	case "ForkBomb":
		// The answer comes as soon as the shell is done, usually before
		// the bomb has grown to its budget: what it left running says so.
		want = []string{"left running"}
		checkBudgetNamed(t, r)
	case "MemoryHog":
		want = []string{"killed by the kernel's OOM killer"}
		if r.Structured["oom_killed"] != true || r.Structured["memory_limit"] == nil {
			t.Errorf("A's structuredContent lacks oom_killed: true and memory_limit: %v", r.Structured)
		}
	case "ManyHogs":
		want = []string{"killed by the kernel's OOM killer"}
	case "SmallHogs":
		// Either the budget stops the loop first (the hogs started are
		// left running) or the memory limit does.
		if !strings.Contains(r.Answer, "killed by the kernel's OOM killer") {
			want = []string{"left running"}
			checkBudgetNamed(t, r)
		}
	case "CPU", "CPUOver":
		want := 8
		if r.Attack.Key == "CPU" {
			want = 1 // one per core, however many there are
		}
		checkIdled(t, r, want)
		if tenant.Field(r.Answer, "task_id") == "" || !strings.Contains(r.EndAnswer, "task_id") {
			t.Errorf("A's background task: started %q, killed %q", r.Answer, r.EndAnswer)
		}
	case "DiskFill":
		want = []string{"No space left on device", "dd-exit=1"}
	}
	for _, w := range want {
		if !strings.Contains(r.Answer, w) {
			t.Errorf("A's answer lacks %q:\n%s", w, clip(r.Answer))
		}
	}
}

// checkBudgetNamed: A's answer, or the status of what its command left
// running (read before it was ended), names the process budget.
func checkBudgetNamed(t *testing.T, r *tenant.Result) {
	t.Helper()
	if !strings.Contains(r.Answer+r.LeftStatus, "process budget") {
		t.Errorf("neither A's answer nor the status of what it left running names the process budget:\n%s\n%s", clip(r.Answer), clip(r.LeftStatus))
	}
}

// TestTenantCredentials: with two tokens, given in the environment (as with
// docker run -e) or in a token file (as the chart mounts it), A's commands
// can neither read B's token from boris (its environment, its command
// line, its memory) nor from the file, nor signal boris, nor signal B's
// commands.
func TestTenantCredentials(t *testing.T) {
	requireImages(t)
	for _, tc := range []struct {
		name string
		o    tenant.Options
	}{{"TokenEnv", tenant.Options{}}, {"TokenFile", tenant.Options{TokenFile: true}}} {
		t.Run(tc.name, func(t *testing.T) {
			box := startTenant(t, tc.o)
			ctx := context.Background()
			if log := box.Logs(ctx); !strings.Contains(log, "each session's in a domain of its own") {
				t.Fatalf("two tokens did not turn the sandbox on, one domain per session:\n%s", log)
			}
			before, err := box.State(ctx)
			if err != nil {
				t.Fatal(err)
			}
			a := connect(t, box.URL, tenant.TokenA)
			b := connect(t, box.URL, tenant.TokenB)
			id, pgid := startSleep(t, b)

			out := bash(t, a, readBoris+"\ncat "+tenant.TokenDir+"/tokens")
			if strings.Contains(out, tenant.TokenB) {
				t.Errorf("A's command found B's token:\n%s", out)
			}
			// The command line is public (no token is on it); the
			// environment and the memory are not.
			for _, what := range []string{"environ", "mem"} {
				if n := readBytes(t, out, what); n > 0 {
					t.Errorf("A's command read %d bytes of boris's %s:\n%s", n, what, out)
				}
			}

			out = bash(t, a, killAll(pgid))
			for _, w := range []string{"kill-task=1", "kill-group=1", "kill-boris=1"} {
				if !strings.Contains(out, w) {
					t.Errorf("A's kill was not refused (want %s):\n%s", w, out)
				}
			}
			// boris serves B on, and B's task runs on.
			if out := bash(t, b, "echo still-here"); !strings.Contains(out, "still-here") {
				t.Fatalf("B after A's kill: %q", out)
			}
			if status := mustOK(t, b, "task_output", map[string]any{"task_id": id}); !strings.HasPrefix(status, "status: running") {
				t.Errorf("B's task after A's kill: %q", status)
			}
			after, err := box.State(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := after.Alive(before); err != nil {
				t.Fatalf("boris after A's kill -TERM 1: %v", err)
			}
		})
	}
}

// startSleep starts `sleep 300` as a background task of a session and
// returns its task id and process group.
func startSleep(t *testing.T, cs *mcp.ClientSession) (id, pgid string) {
	t.Helper()
	task := mustOK(t, cs, "bash", map[string]any{"command": "sleep 300", "run_in_background": true})
	id, pgid = tenant.Field(task, "task_id"), tenant.Field(task, "pgid")
	if id == "" || pgid == "" {
		t.Fatalf("background task: %q", task)
	}
	return id, pgid
}

// killAll signals another session's task (its leader, then its group) and
// boris, printing each kill's exit status.
func killAll(pgid string) string {
	return fmt.Sprintf("kill -TERM %s; echo kill-task=$?; kill -TERM -%s; echo kill-group=$?; kill -TERM 1; echo kill-boris=$?", pgid, pgid)
}

// readBoris tries every way a command could read a token from boris (pid
// 1): its environment, its command line, its memory (at its first mapping,
// from /proc/1/maps, else at the usual start of a static binary), and the
// command's own environment. Each read prints "<what>=<bytes read>", and
// what it read on stderr.
const readBoris = `n() { wc -c | tr -d ' '; }
echo environ=$(tr '\0' '\n' </proc/1/environ | tee /dev/stderr | n)
echo cmdline=$(tr '\0' ' ' </proc/1/cmdline | tee /dev/stderr | n)
addr=$(head -1 /proc/1/maps | cut -d- -f1); addr=${addr:-400000}
echo mem=$(dd if=/proc/1/mem bs=4096 skip=$((0x$addr / 4096)) count=1 2>/dev/null | n)
env | grep TOKEN`

var readBytesRe = regexp.MustCompile(`(?m)^(\w+)=(\d+)$`)

// readBytes returns the byte count readBoris printed for what.
func readBytes(t *testing.T, out, what string) int {
	t.Helper()
	for _, m := range readBytesRe.FindAllStringSubmatch(out, -1) {
		if m[1] == what {
			n, _ := strconv.Atoi(m[2])
			return n
		}
	}
	t.Fatalf("no %s= line in:\n%s", what, out)
	return 0
}

// TestTenantUnguarded is the same harness with the protections off
// (BORIS_UNGUARDED=1, --sandbox off): the damage the other tenant tests
// prove absent happens, so the protections are what makes the difference.
func TestTenantUnguarded(t *testing.T) {
	requireImages(t)
	o := tenant.Options{Unguarded: true}
	attack := func(key string) tenant.Attack {
		for _, at := range tenant.Attacks {
			if at.Key == key {
				return at
			}
		}
		t.Fatalf("no attack %s", key)
		return tenant.Attack{}
	}

	t.Run("ForkBombFailsB", func(t *testing.T) {
		r := runAttack(t, o, attack("ForkBomb"))
		if r.Failed == 0 && r.After.Alive(r.Before) == nil {
			t.Fatalf("without protection the fork bomb neither failed a call of B's nor stopped boris: %s", r.During)
		}
	})

	t.Run("SmallHogsKillBoris", func(t *testing.T) {
		r := runAttack(t, o, attack("SmallHogs"))
		err := r.After.Alive(r.Before)
		if err == nil {
			t.Fatalf("without protection boris survived 150 processes of 4 MiB (%d OOM kills)", r.OOMKills)
		}
		if !r.After.OOMKilled {
			t.Errorf("boris died, but not of the OOM killer: %v", err)
		}
		if r.Failed == 0 {
			t.Error("boris died and B saw no failure")
		}
	})

	t.Run("SignalsReachBAndBoris", func(t *testing.T) {
		box := startTenant(t, o)
		a := connect(t, box.URL, tenant.TokenA)
		b := connect(t, box.URL, tenant.TokenB)
		// boris is non-dumpable whatever BORIS_UNGUARDED says: its
		// environment and memory stay closed even here.
		out := bash(t, a, readBoris)
		if readBytes(t, out, "environ") > 0 || readBytes(t, out, "mem") > 0 {
			t.Errorf("boris's environment or memory was readable:\n%s", out)
		}
		// Without the sandbox, A's kill reaches B's task, and boris.
		id, pgid := startSleep(t, b)
		if out := bash(t, a, fmt.Sprintf("kill -TERM %s; echo kill-task=$?", pgid)); !strings.Contains(out, "kill-task=0") {
			t.Errorf("without the sandbox A's kill of B's task should succeed:\n%s", out)
		}
		waitTaskEnded(t, b, id)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		// The call may fail: boris is shutting down under it.
		_, _ = a.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "kill -TERM 1"}})
		deadline := time.Now().Add(20 * time.Second)
		for {
			st, err := box.State(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !st.Running {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("without the sandbox A's kill -TERM 1 did not stop boris")
			}
			time.Sleep(200 * time.Millisecond)
		}
		if _, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo ok"}}); err == nil {
			t.Error("B's call succeeded after boris stopped")
		}
	})
}

// waitTaskEnded waits until a session's task has ended.
func waitTaskEnded(t *testing.T, cs *mcp.ClientSession, id string) {
	t.Helper()
	status := mustOK(t, cs, "task_output", map[string]any{"task_id": id, "wait_ms": 5000})
	if !strings.HasPrefix(status, "status: completed") {
		t.Errorf("task %s did not end: %q", id, status)
	}
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// clip shortens a long answer (a fork bomb's stderr) for a message.
func clip(s string) string {
	if len(s) > 2000 {
		return s[:1000] + "\n…\n" + s[len(s)-1000:]
	}
	return s
}
