package guard

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadLimitsV1InAContainer(t *testing.T) {
	root := t.TempDir()
	// A cgroup namespace shows "/" for every controller; the container's
	// own cgroups are mounted at the controllers' roots.
	write(t, root+"/pids/pids.max", "200\n")
	write(t, root+"/pids/pids.current", "17\n")
	write(t, root+"/memory/memory.limit_in_bytes", "536870912\n")
	write(t, root+"/memory/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n")
	l := readLimits(root, "12:pids:/\n4:memory:/\n0::/\n")
	if l.PidsMax != 200 || l.MemoryMax != 512<<20 || l.CgroupV2 {
		t.Fatalf("limits: %+v", l)
	}
	if n := l.PidsCurrent(); n != 17 {
		t.Fatalf("pids.current: %d", n)
	}
	if n, ok := l.OOMKills(); !ok || n != 3 {
		t.Fatalf("oom_kill: %d %v", n, ok)
	}
}

func TestReadLimitsV1OutsideAContainer(t *testing.T) {
	root := t.TempDir()
	write(t, root+"/pids/user.slice/pids.max", "max\n")
	write(t, root+"/memory/docker/abc/memory.limit_in_bytes", "9223372036854771712\n")
	l := readLimits(root, "8:pids:/user.slice\n4:memory:/docker/abc\n")
	if l.PidsMax != 0 || l.MemoryMax != 0 {
		t.Fatalf("no limits expected: %+v", l)
	}
}

func TestReadLimitsV2(t *testing.T) {
	root := t.TempDir()
	write(t, root+"/cgroup.controllers", "cpu memory pids\n")
	write(t, root+"/sub/pids.max", "64\n")
	write(t, root+"/sub/pids.current", "5\n")
	write(t, root+"/sub/memory.max", "1073741824\n")
	write(t, root+"/sub/memory.events", "low 0\nhigh 0\nmax 4\noom 2\noom_kill 2\n")
	l := readLimits(root, "0::/sub\n")
	if !l.CgroupV2 || l.PidsMax != 64 || l.MemoryMax != 1<<30 {
		t.Fatalf("limits: %+v", l)
	}
	if n, ok := l.OOMKills(); !ok || n != 2 {
		t.Fatalf("oom_kill: %d %v", n, ok)
	}
}

func TestShare(t *testing.T) {
	root := t.TempDir()
	write(t, root+"/pids/pids.max", "200\n")
	write(t, root+"/pids/pids.current", "15\n")
	g := &Guard{nproc: true, reserve: 25, limits: readLimits(root, "1:pids:/\n")}
	if got := g.share(15); got != 80 { // (200-25-15)/2
		t.Fatalf("share with 160 free: %d", got)
	}
	write(t, root+"/pids/pids.current", "165\n") // 10 free below the reserve
	if got := g.share(15); got != 10 {
		t.Fatalf("share with 10 free: %d", got)
	}
	write(t, root+"/pids/pids.current", "190\n") // into the reserve
	if got := g.share(15); got != 0 {
		t.Fatalf("share with the reserve in use: %d", got)
	}
	write(t, root+"/pids/pids.current", "15\n")
	g.cfg.MaxProcs = 30
	if got := g.share(15); got != 30 {
		t.Fatalf("share capped by MaxProcs: %d", got)
	}
	g.nproc = false
	if got := g.share(15); got != -1 {
		t.Fatalf("root: %d", got)
	}
}

func TestForkRefused(t *testing.T) {
	for _, s := range []string{"sh: can't fork: Resource temporarily unavailable", "bash: fork: retry: Resource temporarily unavailable", "fork failed"} {
		if !forkRefused(s) {
			t.Errorf("%q not recognized", s)
		}
	}
	if forkRefused("all good") {
		t.Error("false positive")
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{512 << 20: "512 MiB", 3 << 29: "1.5 GiB", 100: "100 bytes", 2048: "2 KiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("%d: %q, want %q", n, got, want)
		}
	}
}

// TestAdmit admits a real process waiting for its go, and reads back what
// it was given.
func TestAdmit(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	g := New(Config{MaxProcs: 7, FileSize: 1 << 20})
	g.nproc = true // as for a non-root user, whatever this test runs as
	adm, err := g.Admit(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if adm.Budget != 7 {
		t.Fatalf("budget %d", adm.Budget)
	}
	proc := "/proc/" + strconv.Itoa(cmd.Process.Pid)
	if b, _ := os.ReadFile(proc + "/oom_score_adj"); strings.TrimSpace(string(b)) != "1000" {
		t.Fatalf("oom_score_adj %q", b)
	}
	if n := niceOf(t, cmd.Process.Pid); n != DefaultNice {
		t.Fatalf("nice %d", n)
	}
	limits, _ := os.ReadFile(proc + "/limits")
	if !strings.Contains(string(limits), "Max file size             1048576              1048576") {
		t.Fatalf("file size limit not set:\n%s", limits)
	}
	if !regexpLine(string(limits), "Max processes") {
		t.Fatalf("no process limit:\n%s", limits)
	}
	g.Demote(cmd.Process.Pid)
	if n := niceOf(t, cmd.Process.Pid); n != LongNice {
		t.Fatalf("demoted nice %d", n)
	}
	if o := g.Outcome(adm, true, "sh: can't fork: Resource temporarily unavailable"); !o.BudgetHit || o.Budget != 7 || o.OOMKilled {
		t.Fatalf("outcome %+v", o)
	}
}

// TestOff admits nothing.
func TestOff(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	g := New(Config{Off: true})
	if _, err := g.Admit(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/oom_score_adj"); strings.TrimSpace(string(b)) == "1000" {
		t.Fatal("unguarded process got the command OOM score")
	}
	if !strings.HasPrefix(g.Describe(), "off") {
		t.Fatal(g.Describe())
	}
}

// TestWatchEndsTheGroupThatFilledMemory feeds Watch a cgroup whose OOM
// counter rises while a command group holds more than a quarter of the
// (small, fake) limit.
func TestWatchEndsTheGroupThatFilledMemory(t *testing.T) {
	root := t.TempDir()
	write(t, root+"/memory/memory.limit_in_bytes", "4096\n")
	write(t, root+"/memory/memory.oom_control", "oom_kill 0\n")
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	g := New(Config{})
	g.limits = readLimits(root, "4:memory:/\n")
	adm, err := g.Admit(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := contextWithCancel()
	defer cancel()
	go g.Watch(ctx)
	// Watch reads its baseline when it starts, which a slow machine may
	// make after a first write: the counter keeps rising until the group
	// is ended, so one rise always comes after the baseline.
	deadline := time.After(10 * time.Second)
	for n := 1; ; n++ {
		write(t, root+"/memory/memory.oom_control", "oom_kill "+strconv.Itoa(n)+"\n")
		select {
		case <-done:
		case <-time.After(100 * time.Millisecond):
			select {
			case <-deadline:
				t.Fatal("the group was not ended")
			default:
			}
			continue
		}
		break
	}
	if o := g.Outcome(adm, true, ""); !o.OOMKilled || !o.GroupEnded || o.MemoryLimit != 4096 {
		t.Fatalf("outcome %+v", o)
	}
}

func niceOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	n, _ := strconv.Atoi(f[16])
	return n
}

func regexpLine(text, prefix string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) && !strings.Contains(l, "unlimited") {
			return true
		}
	}
	return false
}

func contextWithCancel() (context.Context, context.CancelFunc) {
	return context.WithCancel(context.Background())
}

// startGroup starts a command in a process group of its own, reaped by
// a goroutine: the channel is closed when it has ended.
func startGroup(t *testing.T, name string, args ...string) (*exec.Cmd, <-chan struct{}) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	return cmd, done
}

// waitSweeps waits until Watch has swept n more times.
func waitSweeps(t *testing.T, g *Guard, n int64) {
	t.Helper()
	want := g.sweeps.Load() + n
	deadline := time.Now().Add(30 * time.Second)
	for g.sweeps.Load() < want {
		if time.Now().After(deadline) {
			t.Fatal("Watch does not sweep")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestWatchIdlesABurner: a command that keeps a CPU busy is moved to
// SCHED_IDLE, one that sleeps stays where it was, and neither may raise
// its priority (RLIMIT_NICE 0).
func TestWatchIdlesABurner(t *testing.T) {
	g, burner := watchBusyBesideQuiet(t, "while :; do :; done", "sleep 60")
	if g.Idled() < 1 {
		t.Errorf("Idled %d", g.Idled())
	}
	limits, _ := os.ReadFile("/proc/" + strconv.Itoa(burner) + "/limits")
	if !strings.Contains(string(limits), "Max nice priority         0                    0") {
		t.Errorf("RLIMIT_NICE not 0:\n%s", limits)
	}
}

// TestWatchIdlesABusyGroup: a command whose short-lived children keep a
// CPU busy between them, none of them for long, is moved to SCHED_IDLE
// as a whole — its idle parent shell too, so that what it starts next is
// born there — while a neighbour's command stays where it was.
func TestWatchIdlesABusyGroup(t *testing.T) {
	// Each child counts for a fraction of a second and exits; the shell
	// waits for it, busy for a moment only at each fork.
	watchBusyBesideQuiet(t, `while :; do (i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done) & wait; done`, "sleep 60 & wait")
}

// watchBusyBesideQuiet admits two commands of sh, each in a group of its
// own, watches them, and waits until the busy one's shell is at
// SCHED_IDLE; the quiet one's must still be at SCHED_OTHER then. It
// returns the guard and the busy shell's pid.
func watchBusyBesideQuiet(t *testing.T, busy, quiet string) (*Guard, int) {
	t.Helper()
	b, _ := startGroup(t, "sh", "-c", busy)
	q, _ := startGroup(t, "sh", "-c", quiet)
	g := New(Config{})
	for _, c := range []*exec.Cmd{b, q} {
		if _, err := g.Admit(c.Process.Pid); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := contextWithCancel()
	t.Cleanup(cancel)
	go g.Watch(ctx)
	deadline := time.Now().Add(30 * time.Second)
	for policyOf(t, b.Process.Pid) != unix.SCHED_IDLE {
		if time.Now().After(deadline) {
			t.Fatalf("the busy command %q is still at policy %d", busy, policyOf(t, b.Process.Pid))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if p := policyOf(t, q.Process.Pid); p != 0 { // SCHED_OTHER
		t.Errorf("the quiet command %q was moved to policy %d", quiet, p)
	}
	return g, b.Process.Pid
}

// TestWatchAttributesTheOOMKill: when the OOM counter rises, the kill is
// the command's whose process is gone: its Outcome names the process, a
// neighbour's does not, even one that died of a KILL itself.
func TestWatchAttributesTheOOMKill(t *testing.T) {
	root := t.TempDir()
	write(t, root+"/memory/memory.limit_in_bytes", "1099511627776\n") // no group holds a quarter
	write(t, root+"/memory/memory.oom_control", "oom_kill 0\n")
	victim, vdone := startGroup(t, "sleep", "60")
	neighbour, _ := startGroup(t, "sleep", "60")
	g := New(Config{})
	g.limits = readLimits(root, "4:memory:/\n")
	va, err := g.Admit(victim.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	na, err := g.Admit(neighbour.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := contextWithCancel()
	defer cancel()
	go g.Watch(ctx)
	waitSweeps(t, g, 2) // both seen
	// As the OOM killer does: a KILL, then the counter.
	_ = victim.Process.Kill()
	<-vdone
	write(t, root+"/memory/memory.oom_control", "oom_kill 1\n")
	waitSweeps(t, g, 2)
	o := g.Outcome(va, false, "")
	want := "sleep (pid " + strconv.Itoa(victim.Process.Pid) + ")"
	if !o.OOMKilled || len(o.Victims) != 1 || o.Victims[0] != want {
		t.Fatalf("victim's outcome %+v, want %s named", o, want)
	}
	if o := g.Outcome(na, true, ""); o.OOMKilled || len(o.Victims) > 0 {
		t.Fatalf("the neighbour's outcome names the kill: %+v", o)
	}
}

// TestAttribute: the largest process gone is the victim; one gone and
// back under the same pid (a new process) counts as gone.
func TestAttribute(t *testing.T) {
	before := map[int]proc{
		10: {pgid: 10, rss: 100 << 20, comm: "tail", start: 5},
		11: {pgid: 10, rss: 1 << 20, comm: "wc", start: 5},
		20: {pgid: 20, rss: 2 << 20, comm: "echo", start: 6},
		30: {pgid: 30, rss: 300 << 20, comm: "big", start: 7},
	}
	after := map[int]proc{11: before[11], 30: before[30], 20: {pgid: 20, start: 9}}
	got := attribute(before, after, 1)
	if len(got) != 1 || got[0].pid != 10 || got[0].pgid != 10 || got[0].String() != "tail (pid 10)" {
		t.Fatalf("one kill: %+v", got)
	}
	if got := attribute(before, after, 2); len(got) != 2 || got[1].pid != 20 {
		t.Fatalf("two kills: %+v", got)
	}
	if got := attribute(before, before, 1); len(got) != 0 {
		t.Fatalf("nothing gone: %+v", got)
	}
}

func policyOf(t *testing.T, pid int) int {
	t.Helper()
	st, ok := readStat("/proc/" + strconv.Itoa(pid) + "/stat")
	if !ok {
		t.Fatalf("no stat for %d", pid)
	}
	return st.policy
}

// BenchmarkSweep is one sweep of this machine's processes: what Watch
// spends every 100 ms.
func BenchmarkSweep(b *testing.B) {
	g := New(Config{})
	g.groups[1<<30] = 0 // a group admitted, so that the sweep reads every process
	n := 0
	if ents, err := os.ReadDir("/proc"); err == nil {
		n = len(ents)
	}
	b.ReportMetric(float64(n), "proc-entries")
	for b.Loop() {
		g.sweep()
	}
}
