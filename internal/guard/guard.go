// Package guard keeps one session's commands from hurting boris or the
// other sessions through the resources they share: process slots, memory
// and CPU. Every command is admitted before it runs anything (Admit):
// it gets a process budget below the container's pids limit, the highest
// OOM score (so the kernel's OOM killer takes a command before boris) and a
// lower scheduling priority; a command that goes on running is lowered
// further (Demote). A watcher (Watch) sweeps the command processes: a
// command whose processes together have wanted the CPU for IdleAfter is
// moved to SCHED_IDLE, an
// OOM kill is attributed to the command whose process it took, and the
// command group that drove the container out of memory is ended.
package guard

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

// Defaults.
const (
	// DefaultNice is a new command's scheduling priority (boris runs at 0).
	DefaultNice = 10
	// LongNice is the priority of a command that has run for LongAfter,
	// and of processes a finished command left running.
	LongNice  = 19
	LongAfter = time.Second
	// IdleAfter is how long a command's processes together may have run
	// or waited to run before the command is moved to SCHED_IDLE: the
	// burners of one session then give way at once to boris and to every
	// session's short commands. Eight burners sharing two cores reach it
	// in a sixteenth of a second of wall time.
	IdleAfter = 500 * time.Millisecond
	// attributeFor is how long Watch looks for the process an OOM kill
	// took, from the counter's rise: the victim exits after the KILL.
	attributeFor = 2 * time.Second
	// sweepEvery is how often Watch sweeps the command processes.
	sweepEvery = 100 * time.Millisecond
	// OOMScore is every command's oom_score_adj: the OOM killer's first
	// choice, whatever its size.
	OOMScore = 1000
	// oomPoll is how often Watch reads the cgroup's OOM counter.
	oomPoll = 10 * time.Millisecond
	// minShare is the least budget a command gets while slots are free.
	minShare = 16
)

// Config tunes a Guard.
type Config struct {
	// MaxProcs caps the processes one command may add (0: derived from
	// the pids limit alone).
	MaxProcs int
	// Memory and FileSize, when positive, are each command process's
	// RLIMIT_DATA and RLIMIT_FSIZE in bytes.
	Memory, FileSize int64
	// Nice is a new command's priority (0 means DefaultNice; negative
	// values are not allowed without privilege and are refused).
	Nice int
	// Off turns the guard off: Admit does nothing.
	Off bool
	// Logger receives what the guard found at start and what it did.
	Logger *slog.Logger
}

// Limits are what the container (the cgroups boris runs in) allows, as
// read at start. Zero means unknown or unlimited.
type Limits struct {
	// PidsMax is the pids controller's limit on tasks.
	PidsMax int64
	// MemoryMax is the memory controller's limit in bytes.
	MemoryMax int64
	// CgroupV2 is true on the unified hierarchy.
	CgroupV2 bool

	pidsCurrent string // file holding the tasks in use now
	oomEvents   string // file holding the oom_kill counter
}

// Admission is what a command was given.
type Admission struct {
	// Budget is the number of processes the command may add; 0 when no
	// budget applies.
	Budget int
	// oomBase is the OOM counter when the command was admitted.
	oomBase uint64
	oomOK   bool
	// unattributedBase is the guard's count of OOM kills it could not
	// attribute, when the command was admitted.
	unattributedBase uint64
	pgid             int
}

// Outcome is what the guard can tell about how a command ended.
type Outcome struct {
	// OOMKilled: the OOM killer took one of the command's processes (see
	// Victims), or the command died of a KILL while the container's OOM
	// counter rose and the kill's victim could not be told (the
	// attribution is uncertain then), or Watch ended the group after it.
	OOMKilled bool
	// Victims are the command's processes the OOM killer took, as
	// "tail (pid 42)", when they were told.
	Victims []string
	// MemoryLimit is the container's memory limit in bytes (0: unknown).
	MemoryLimit int64
	// GroupEnded: Watch ended the command's whole group after the OOM
	// killer took one of its processes.
	GroupEnded bool
	// BudgetHit: the output shows a fork refused while a budget applied.
	BudgetHit bool
	Budget    int
}

// BudgetHit says whether a command given budget (0: none) had a fork
// refused, from what it printed: what decides Outcome.BudgetHit, for a
// command's answer and for what it left running afterwards.
func BudgetHit(budget int, output string) bool {
	return budget > 0 && forkRefused(output)
}

// forkRefused recognizes the shells' and libc's words for a failed fork.
func forkRefused(s string) bool {
	for _, w := range []string{"Resource temporarily unavailable", "can't fork", "Cannot fork", "fork: retry", "fork failed"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// FormatBytes writes n as a binary size: 512 MiB, 1.5 GiB.
func FormatBytes(n int64) string {
	units := []string{"bytes", "KiB", "MiB", "GiB", "TiB"}
	f, i := float64(n), 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d bytes", n)
	}
	s := strconv.FormatFloat(f, 'f', 1, 64)
	return strings.TrimSuffix(s, ".0") + " " + units[i]
}
