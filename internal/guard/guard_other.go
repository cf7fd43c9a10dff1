//go:build !linux

package guard

import "context"

// Guard admits commands; outside Linux it enforces nothing.
type Guard struct{ cfg Config }

// New returns a Guard that enforces nothing.
func New(cfg Config) *Guard { return &Guard{cfg: cfg} }

// Limits returns nothing found.
func (g *Guard) Limits() Limits { return Limits{} }

// Describe says the guard enforces nothing here.
func (g *Guard) Describe() string { return "off (needs Linux)" }

// Admit does nothing.
func (g *Guard) Admit(pid int) (Admission, error) { return Admission{pgid: pid}, nil }

// Demote does nothing.
func (g *Guard) Demote(pgid int) {}

// Outcome reports nothing but a refused fork.
func (g *Guard) Outcome(adm Admission, killed bool, output string) Outcome {
	return Outcome{}
}

// Watch returns at once.
func (g *Guard) Watch(ctx context.Context) {}

// Idled says no thread was moved to SCHED_IDLE.
func (g *Guard) Idled() int64 { return 0 }
