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
