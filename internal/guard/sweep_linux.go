package guard

import (
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// proc is one command process as a sweep saw it.
type proc struct {
	pgid  int
	rss   int64 // bytes
	comm  string
	start uint64 // start time in clock ticks: tells a reused pid apart
}

// victim is a process the OOM killer took, as the guard attributed it.
type victim struct {
	comm      string
	pid, pgid int
}

func (v victim) String() string { return v.comm + " (pid " + strconv.Itoa(v.pid) + ")" }

// thread is a command thread found by a sweep: how long it has wanted
// the CPU (run or waited to run).
type thread struct {
	tid, pgid, policy int
	wanted            time.Duration
}

// sweep scans the command processes — those at OOMScore (which a command
// cannot lower) in a process group this guard admitted, so that another
// boris's commands on the same machine are not touched — moves every
// thread of a group whose threads together have wanted the CPU for
// IdleAfter to SCHED_IDLE (idleBusyGroups) and returns what it saw, by
// pid. A zombie counts as gone. A process that left its group (setsid)
// is not seen, as it is not reached by a task's kill either.
func (g *Guard) sweep() map[int]proc {
	defer g.sweeps.Add(1)
	procs := map[int]proc{}
	g.mu.Lock()
	groups := make(map[int]bool, len(g.groups))
	for pgid := range g.groups {
		groups[pgid] = true
	}
	g.mu.Unlock()
	var threads []thread
	// done is, by group, the CPU time of the processes its processes
	// have waited for: what the sweeps did not see of short children.
	done := map[int]time.Duration{}
	defer func() { g.idleBusyGroups(groups, threads, done) }()
	if len(groups) == 0 {
		return procs
	}
	ents, _ := os.ReadDir("/proc")
	page := int64(os.Getpagesize())
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == g.self {
			continue
		}
		dir := "/proc/" + e.Name()
		adj, err := os.ReadFile(dir + "/oom_score_adj")
		if err != nil || strings.TrimSpace(string(adj)) != strconv.Itoa(OOMScore) {
			continue
		}
		st, ok := readStat(dir + "/stat")
		if !ok || st.state == 'Z' || st.state == 'X' || !groups[st.pgrp] {
			continue
		}
		procs[pid] = proc{pgid: st.pgrp, rss: st.rss * page, comm: st.comm, start: st.start}
		done[st.pgrp] += st.children
		if st.threads <= 1 {
			if w, ok := runnableFor(dir); ok {
				threads = append(threads, thread{pid, st.pgrp, st.policy, w})
			}
			continue
		}
		tasks, _ := os.ReadDir(dir + "/task")
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			tdir := dir + "/task/" + t.Name()
			if ts, ok := readStat(tdir + "/stat"); ok {
				if w, ok := runnableFor(tdir); ok {
					threads = append(threads, thread{tid, st.pgrp, ts.policy, w})
				}
			}
		}
	}
	return procs
}

// idleBusyGroups adds up what each admitted group has wanted of the CPU
// — its threads' time run or waited to run, and the CPU time of the
// children its processes waited for (a compiler or a test that lived
// between two sweeps) — and moves every thread of a group past IdleAfter
// to SCHED_IDLE, its idle parent shell too, so that what it starts later
// is born there; the group stays there until it ends. A group that wants
// the CPU that long is batch work, and at SCHED_IDLE the scheduler runs
// anything else first — boris, and the short commands of every session —
// and preempts it at once when they wake, where a nice 19 thread keeps
// the CPU for the rest of its slice. Counting the group, not each thread,
// catches eight burners that each get a quarter of a core within a sweep
// or two, and a build of many short compilers. RLIMIT_NICE 0 (set at
// Admit) keeps a thread from switching back: an unprivileged thread may
// leave SCHED_IDLE only for a nice its RLIMIT_NICE allows.
func (g *Guard) idleBusyGroups(groups map[int]bool, threads []thread, done map[int]time.Duration) {
	if g.idleGroups == nil {
		g.idleGroups = map[int]bool{}
	}
	for pgid := range g.idleGroups {
		if !groups[pgid] {
			delete(g.idleGroups, pgid)
		}
	}
	total := done
	for _, t := range threads {
		total[t.pgid] += t.wanted
	}
	for pgid, w := range total {
		if w >= IdleAfter {
			g.idleGroups[pgid] = true
		}
	}
	param := struct{ priority int32 }{0}
	for _, t := range threads {
		if !g.idleGroups[t.pgid] || t.policy == unix.SCHED_IDLE {
			continue
		}
		_, _, errno := unix.Syscall(unix.SYS_SCHED_SETSCHEDULER, uintptr(t.tid), unix.SCHED_IDLE, uintptr(unsafe.Pointer(&param)))
		if errno == 0 {
			g.idled.Add(1)
		}
	}
}

// runnableFor reads how long a thread has run plus waited on a run queue
// (/proc/<tid>/schedstat): how long it has wanted the CPU, whether it got
// it or not. A thread that waits behind seven others has used an eighth
// of that; its demand is what marks it as a burner.
func runnableFor(dir string) (time.Duration, bool) {
	b, err := os.ReadFile(dir + "/schedstat")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	run, err1 := strconv.ParseInt(f[0], 10, 64)
	wait, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(run + wait), true
}

// stat is what the guard reads of /proc/<pid>/stat.
type stat struct {
	comm    string
	state   byte
	pgrp    int
	threads int
	start   uint64
	rss     int64 // pages
	policy  int
	// children is the CPU time (user and system) of the children it
	// waited for.
	children time.Duration
}

// userHZ is the unit of /proc's clock ticks, fixed at 100 for user
// space whatever the kernel's own tick.
const userHZ = 100

// readStat parses a stat file. comm may hold spaces and parentheses, so
// the fields are counted from the last ')'.
func readStat(path string) (stat, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return stat{}, false
	}
	s := string(b)
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || close < open {
		return stat{}, false
	}
	f := strings.Fields(s[close+1:])
	// f[0] is field 3 (state): field n is f[n-3].
	if len(f) < 39 {
		return stat{}, false
	}
	st := stat{comm: s[open+1 : close], state: f[0][0]}
	st.pgrp, _ = strconv.Atoi(f[2])
	st.threads, _ = strconv.Atoi(f[17])
	st.start, _ = strconv.ParseUint(f[19], 10, 64)
	st.rss, _ = strconv.ParseInt(f[21], 10, 64)
	st.policy, _ = strconv.Atoi(f[38])
	cutime, _ := strconv.ParseInt(f[13], 10, 64)
	cstime, _ := strconv.ParseInt(f[14], 10, 64)
	st.children = time.Duration(cutime+cstime) * time.Second / userHZ
	return st, true
}

// attribute names the victims of k new OOM kills: the command processes
// seen by the previous sweep (before) that are gone now (after), largest
// first. Every command runs at oom_score_adj 1000, so the kernel takes the
// command process with the most memory; a process that ended by itself
// in the same moment could be taken for it only if it held more. A
// victim that no sweep saw (it lived less than a sweep's interval) is
// not found: the kill is then counted as unattributed.
func attribute(before, after map[int]proc, k int) []victim {
	type cand struct {
		pid int
		p   proc
	}
	var gone []cand
	for pid, p := range before {
		if q, ok := after[pid]; ok && q.start == p.start {
			continue
		}
		gone = append(gone, cand{pid, p})
	}
	sort.Slice(gone, func(i, j int) bool {
		if gone[i].p.rss != gone[j].p.rss {
			return gone[i].p.rss > gone[j].p.rss
		}
		return gone[i].pid < gone[j].pid
	})
	var out []victim
	for _, c := range gone[:min(k, len(gone))] {
		out = append(out, victim{c.p.comm, c.pid, c.p.pgid})
	}
	return out
}
