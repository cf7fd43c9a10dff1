package guard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Guard admits commands. It is safe for concurrent use.
type Guard struct {
	cfg    Config
	limits Limits
	uid    int
	// nproc is true when RLIMIT_NPROC binds commands: not for root,
	// whose forks the kernel does not count against it.
	nproc bool
	// offset counts the tasks of boris's user the kernel sees but this
	// process's /proc does not (other containers of the same user).
	offset  int
	reserve int64
	self    int // boris's pid, never swept
	// watching: Watch is attributing OOM kills.
	watching atomic.Bool
	// idled counts the threads moved to SCHED_IDLE, sweeps the sweeps.
	idled, sweeps atomic.Int64
	// idleGroups are the admitted groups the sweeps moved to
	// SCHED_IDLE (only Watch's goroutine, through sweep, touches it).
	idleGroups map[int]bool

	mu       sync.Mutex
	oomEnded map[int]time.Time // groups Watch ended, by pgid
	// groups are the admitted process groups, until gone, with the
	// RLIMIT_NPROC each was given (0: none).
	groups map[int]uint64
	// victims are the processes the OOM killer took, by the process
	// group they were in, until a command's Outcome reports them.
	victims map[int]oomVictims
	// unattributed counts the OOM kills whose victim was not found among
	// the command processes the sweeps saw.
	unattributed uint64
	// settled is the OOM counter up to which Watch has attributed every
	// kill (or given up on it).
	settled uint64
}

// oomVictims are the victims of one process group.
type oomVictims struct {
	at   time.Time
	list []string
}

// New reads the container's limits and returns a Guard for them.
func New(cfg Config) *Guard {
	if cfg.Nice == 0 {
		cfg.Nice = DefaultNice
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	self, _ := os.ReadFile("/proc/self/cgroup")
	g := &Guard{cfg: cfg, limits: readLimits("/sys/fs/cgroup", string(self)), uid: os.Getuid(), oomEnded: map[int]time.Time{}, groups: map[int]uint64{}, victims: map[int]oomVictims{}, self: os.Getpid()}
	if cfg.Off {
		return g
	}
	g.nproc = g.uid != 0
	if g.limits.PidsMax > 0 {
		g.reserve = min(max(g.limits.PidsMax/8, 16), 64)
	}
	if g.nproc && (g.limits.PidsMax > 0 || cfg.MaxProcs > 0) {
		g.offset = probeOffset(g.uid)
	}
	return g
}

// Limits returns what the guard found.
func (g *Guard) Limits() Limits { return g.limits }

// Describe says in one line what the guard enforces, for the start log.
func (g *Guard) Describe() string {
	if g.cfg.Off {
		return "off (BORIS_UNGUARDED)"
	}
	var parts []string
	switch {
	case !g.nproc:
		parts = append(parts, "no process budget (boris runs as root, whose processes RLIMIT_NPROC does not count)")
	case g.limits.PidsMax > 0:
		parts = append(parts, fmt.Sprintf("process budget below the pids limit %d (%d kept for boris)", g.limits.PidsMax, g.reserve))
	case g.cfg.MaxProcs > 0:
		parts = append(parts, fmt.Sprintf("process budget %d per command", g.cfg.MaxProcs))
	default:
		parts = append(parts, "no process budget (no pids limit found; see --command-max-procs)")
	}
	parts = append(parts, fmt.Sprintf("oom_score_adj %d", OOMScore), fmt.Sprintf("nice %d, %d after %s", g.cfg.Nice, LongNice, LongAfter))
	parts = append(parts, fmt.Sprintf("SCHED_IDLE after %s wanting the CPU (a command's processes together)", IdleAfter))
	if g.limits.MemoryMax > 0 {
		parts = append(parts, "memory limit "+FormatBytes(g.limits.MemoryMax))
	}
	return strings.Join(parts, ", ")
}

// Admit applies the command limits to pid, a process that has not run
// the command yet, so that everything it starts inherits them.
func (g *Guard) Admit(pid int) (Admission, error) {
	adm := Admission{pgid: pid}
	if g.cfg.Off {
		return adm, nil
	}
	adm.oomBase, adm.oomOK = g.limits.OOMKills()
	if err := setOOMScore(pid); err != nil {
		return adm, fmt.Errorf("oom_score_adj: %w", err)
	}
	if err := unix.Setpriority(unix.PRIO_PROCESS, pid, g.cfg.Nice); err != nil {
		return adm, fmt.Errorf("setpriority: %w", err)
	}
	g.mu.Lock()
	g.pruneLocked()
	adm.unattributedBase = g.unattributed
	// A reused process group id starts with nothing reported.
	delete(g.victims, pid)
	delete(g.oomEnded, pid)
	var lim uint64
	visible := -1 // counted once, and only where a budget applies
	if g.nproc && (g.limits.PidsMax > 0 || g.cfg.MaxProcs > 0) {
		visible = countTasks(g.uid)
	}
	if share := g.share(visible); share >= 0 {
		// Above every limit a live command holds, so that commands admitted
		// earlier, however far they grow, leave this one its share.
		base := uint64(visible + g.offset)
		for _, l := range g.groups {
			base = max(base, l)
		}
		lim = base + uint64(share)
		adm.Budget = share
	}
	g.groups[pid] = lim
	g.mu.Unlock()
	if lim > 0 {
		if err := unix.Prlimit(pid, unix.RLIMIT_NPROC, &unix.Rlimit{Cur: lim, Max: lim}, nil); err != nil {
			return adm, fmt.Errorf("prlimit RLIMIT_NPROC: %w", err)
		}
	}
	// RLIMIT_NICE 0: the command can neither raise its priority above
	// the nice it is given nor leave SCHED_IDLE once moved there.
	if err := unix.Prlimit(pid, unix.RLIMIT_NICE, &unix.Rlimit{Cur: 0, Max: 0}, nil); err != nil {
		return adm, fmt.Errorf("prlimit RLIMIT_NICE: %w", err)
	}
	for _, l := range []struct {
		res int
		n   int64
	}{{unix.RLIMIT_DATA, g.cfg.Memory}, {unix.RLIMIT_FSIZE, g.cfg.FileSize}} {
		if l.n > 0 {
			if err := unix.Prlimit(pid, l.res, &unix.Rlimit{Cur: uint64(l.n), Max: uint64(l.n)}, nil); err != nil {
				return adm, fmt.Errorf("prlimit: %w", err)
			}
		}
	}
	return adm, nil
}

// setOOMScore writes OOMScore to pid's oom_score_adj. boris is
// non-dumpable, and a child it forks stays so until its exec has reset
// the flag, which the kernel does after the exec's close-on-exec pipe has
// told os/exec the exec succeeded: in that moment the child's /proc files
// belong to root and the write is refused. It is tried again for a while.
func setOOMScore(pid int) error {
	path := "/proc/" + strconv.Itoa(pid) + "/oom_score_adj"
	deadline := time.Now().Add(2 * time.Second)
	for {
		err := os.WriteFile(path, []byte(strconv.Itoa(OOMScore)), 0)
		if !errors.Is(err, os.ErrPermission) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(time.Millisecond)
	}
}

// share is how many processes a command admitted now may add: half of
// the slots free below the reserve (at least minShare while that many
// are free), capped by MaxProcs; -1 when no budget applies. Its limit is
// that many above the highest limit of the commands still running, so a
// later command always has its share left however the earlier ones grow
// (many commands at once each get less: the slots free halve with each).
//
// visible is the tasks of boris's user this process sees now.
func (g *Guard) share(visible int) int {
	if !g.nproc {
		return -1
	}
	if g.limits.PidsMax <= 0 {
		if g.cfg.MaxProcs > 0 {
			return g.cfg.MaxProcs
		}
		return -1
	}
	used := g.limits.PidsCurrent()
	if used < 0 {
		used = int64(visible)
	}
	// Slots the running commands may still take count as used.
	tasks := int64(visible + g.offset)
	for _, l := range g.groups {
		used += max(int64(l)-tasks, 0)
		tasks = max(tasks, int64(l))
	}
	free := g.limits.PidsMax - g.reserve - used
	share := max(free/2, min(free, minShare), 0)
	if g.cfg.MaxProcs > 0 {
		share = min(share, int64(g.cfg.MaxProcs))
	}
	return int(share)
}

// Demote lowers a running command's group to LongNice.
func (g *Guard) Demote(pgid int) {
	if g.cfg.Off || pgid <= 0 {
		return
	}
	_ = unix.Setpriority(unix.PRIO_PGRP, pgid, LongNice)
}

// Outcome reports on a finished command: killed says it (or a process
// in its foreground) died of SIGKILL, output is what it printed.
func (g *Guard) Outcome(adm Admission, killed bool, output string) Outcome {
	o := Outcome{MemoryLimit: g.limits.MemoryMax, Budget: adm.Budget}
	n, counted := g.limits.OOMKills()
	if counted && adm.oomOK && n > adm.oomBase && g.watching.Load() {
		// A kill while the command ran: wait until Watch has told whose
		// it was (a pipeline may exit the moment its tail is killed).
		deadline := time.Now().Add(attributeFor + time.Second)
		for {
			g.mu.Lock()
			done := g.settled >= n
			g.mu.Unlock()
			if done || time.Now().After(deadline) {
				break
			}
			time.Sleep(oomPoll)
		}
	}
	g.mu.Lock()
	if _, ok := g.oomEnded[adm.pgid]; ok && adm.pgid > 0 {
		o.GroupEnded = true
		delete(g.oomEnded, adm.pgid)
	}
	if v, ok := g.victims[adm.pgid]; ok && adm.pgid > 0 {
		o.Victims = v.list
		delete(g.victims, adm.pgid)
	}
	uncertain := g.unattributed > adm.unattributedBase
	g.mu.Unlock()
	// A command that died of a KILL while the counter rose is taken for
	// the OOM killer's victim only when some kill since it started was not
	// attributed: a kill attributed to another command is not its own.
	if counted && adm.oomOK && n > adm.oomBase && killed && (uncertain || !g.watching.Load()) {
		o.OOMKilled = true
	}
	o.OOMKilled = o.OOMKilled || o.GroupEnded || len(o.Victims) > 0
	o.BudgetHit = BudgetHit(adm.Budget, output)
	return o
}

// Watch sweeps the command processes until ctx ends (see sweep): every
// sweepEvery it moves the busy commands to SCHED_IDLE and notes which
// processes there are. Where the container has a memory limit it also
// polls the OOM counter; after each OOM kill it attributes the kill to
// the command whose process is gone (attribute), and ends (SIGKILL)
// every command group it admitted that still holds more than a quarter
// of the memory limit: the OOM killer takes one process at a time, and a
// command made of many processes would otherwise keep the container at
// its limit, and every session slow, for as long as it has processes to
// lose.
func (g *Guard) Watch(ctx context.Context) {
	if g.cfg.Off {
		return
	}
	last, ok := g.limits.OOMKills()
	oom := ok && g.limits.MemoryMax > 0
	every := sweepEvery
	if oom {
		every = oomPoll
		g.mu.Lock()
		g.settled = last
		g.mu.Unlock()
		g.watching.Store(true)
		defer g.watching.Store(false)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	seen := g.sweep()
	swept := time.Now()
	// Kills not attributed yet, the processes before the first of them,
	// and since when they wait: the counter rises when the OOM killer
	// sends its KILL, and the victim may take a while to exit.
	pending := 0
	var before map[int]proc
	var since time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, ok := uint64(0), false
		if oom {
			n, ok = g.limits.OOMKills()
		}
		rose := ok && n != last
		if !rose && pending == 0 {
			if time.Since(swept) >= sweepEvery {
				now := g.sweep()
				swept = time.Now()
				// A kill during the sweep may have caught its victim
				// exiting (its memory half given back) or gone: such a
				// sweep is no record of what was there before the kill.
				if m, ok := g.limits.OOMKills(); !oom || !ok || m == last {
					seen = now
				}
			}
			continue
		}
		if rose {
			kills := int(min(n-last, 64))
			if n < last {
				kills = 0 // the counter was reset
			}
			last = n
			if pending == 0 {
				before, since = seen, time.Now()
			}
			pending += kills
		}
		now := g.sweep()
		swept = time.Now()
		victims := attribute(before, now, pending)
		for _, v := range victims {
			delete(before, v.pid)
		}
		pending -= len(victims)
		lost := 0
		if pending > 0 && time.Since(since) > attributeFor {
			lost, pending = pending, 0
		}
		if pending == 0 {
			seen = now
		}
		g.mu.Lock()
		g.pruneLocked()
		g.unattributed += uint64(lost)
		for _, v := range victims {
			e := g.victims[v.pgid]
			e.at, e.list = time.Now(), append(e.list, v.String())
			g.victims[v.pgid] = e
		}
		for p, e := range g.victims { // forget what nobody asked about
			if time.Since(e.at) > time.Hour {
				delete(g.victims, p)
			}
		}
		if pending == 0 {
			g.settled = last
		}
		g.mu.Unlock()
		for _, v := range victims {
			g.cfg.Logger.Warn("out of memory: the OOM killer took a command's process", "process", v.String(), "pgid", v.pgid)
		}
		if lost > 0 {
			g.cfg.Logger.Warn("out of memory: the OOM killer took a process the guard could not attribute", "kills", lost)
		}
		if rose {
			g.endHogs(now)
		}
	}
}

// endHogs ends every admitted command group that holds more than a
// quarter of the memory limit (now: the command processes).
func (g *Guard) endHogs(now map[int]proc) {
	rss := map[int]int64{}
	for _, p := range now {
		rss[p.pgid] += p.rss
	}
	for pgid, r := range rss {
		g.mu.Lock()
		_, ours := g.groups[pgid]
		g.mu.Unlock()
		if !ours || r <= g.limits.MemoryMax/4 {
			continue
		}
		_ = unix.Kill(-pgid, unix.SIGKILL)
		g.mu.Lock()
		g.oomEnded[pgid] = time.Now()
		for p, at := range g.oomEnded { // forget what nobody asked about
			if time.Since(at) > time.Hour {
				delete(g.oomEnded, p)
			}
		}
		g.mu.Unlock()
		g.cfg.Logger.Warn("out of memory: ended a command's process group", "pgid", pgid, "rss", FormatBytes(r))
	}
}

// Idled says how many threads the sweeps moved to SCHED_IDLE.
func (g *Guard) Idled() int64 { return g.idled.Load() }

// pruneLocked forgets admitted groups that have no process left.
func (g *Guard) pruneLocked() {
	for pgid := range g.groups {
		if unix.Kill(-pgid, 0) == unix.ESRCH {
			delete(g.groups, pgid)
		}
	}
}

// countTasks counts the tasks (threads) of uid's processes this process
// can see.
func countTasks(uid int) int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	want := strconv.Itoa(uid)
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		var realUID string
		threads := 1
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Uid:"); ok {
				if f := strings.Fields(v); len(f) > 0 {
					realUID = f[0]
				}
			} else if v, ok := strings.CutPrefix(line, "Threads:"); ok {
				threads, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		if realUID == want {
			n += threads
		}
	}
	return n
}

// probeOffset measures how many tasks of uid the kernel counts that
// /proc does not show (the same user in other containers: RLIMIT_NPROC
// counts a user's tasks across the whole user namespace). A fork under a
// soft RLIMIT_NPROC of visible+k succeeds exactly when the offset is
// below k; the probe forks a child that fails its exec at once.
func probeOffset(uid int) int {
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NPROC, &old); err != nil {
		return 0
	}
	defer unix.Setrlimit(unix.RLIMIT_NPROC, &old)
	fits := func(k int) bool {
		lim := uint64(countTasks(uid) + k)
		if lim > old.Max {
			return true
		}
		if err := unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: lim, Max: old.Max}); err != nil {
			return true
		}
		_, err := syscall.ForkExec("/dev/null", []string{"boris-probe"}, &syscall.ProcAttr{})
		return !errors.Is(err, syscall.EAGAIN)
	}
	// A few tasks of slack: the runtime may start threads meanwhile.
	const slack = 4
	if fits(slack) {
		return 0
	}
	lo, hi := slack, 2*slack
	for !fits(hi) {
		lo, hi = hi, hi*2
		if hi > 1<<22 {
			return 0
		}
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if fits(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi - 1
}
