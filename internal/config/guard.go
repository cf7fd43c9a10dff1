package config

import "strings"

// Limits are the limits every command runs under (see package guard).
type Limits struct {
	// MaxProcs caps the processes one command may add (0: derived from
	// the container's pids limit alone).
	MaxProcs int
	// Memory and FileSize, when positive, are each command process's
	// RLIMIT_DATA and RLIMIT_FSIZE in bytes.
	Memory, FileSize int64
	// Nice is a new command's scheduling priority.
	Nice int
	// Unguarded turns the guard off (BORIS_UNGUARDED=1): commands run
	// with boris's own limits, priority and OOM score.
	Unguarded bool
}

// resolveCommands checks the command limits.
func (c *cli) resolveCommands(cfg *Config, getenv func(string) string, fail func(string, ...any)) {
	if c.CommandMaxProcs < 0 {
		fail("invalid --command-max-procs %d: must be 0 (derived from the container's process limit) or positive", c.CommandMaxProcs)
	}
	if c.CommandNice < 1 || c.CommandNice > 19 {
		fail("invalid --command-nice %d: must be 1 to 19 (boris runs at 0; a command may not be above it)", c.CommandNice)
	}
	cfg.Limits = Limits{MaxProcs: c.CommandMaxProcs, Nice: c.CommandNice}
	for _, l := range []struct {
		flag, v string
		to      *int64
	}{{"--command-memory", c.CommandMemory, &cfg.Limits.Memory}, {"--command-file-size", c.CommandFileSize, &cfg.Limits.FileSize}} {
		if strings.TrimSpace(l.v) == "" || strings.TrimSpace(l.v) == "0" {
			continue
		}
		n, err := ParseSize(l.v)
		if err != nil {
			fail("invalid %s: %v", l.flag, err)
			continue
		}
		*l.to = n
	}
	switch strings.ToLower(strings.TrimSpace(getenv("BORIS_UNGUARDED"))) {
	case "", "0", "false", "no":
	default:
		cfg.Limits.Unguarded = true
		cfg.Warnings = append(cfg.Warnings, "BORIS_UNGUARDED is set: commands run without process budget, OOM score or lower priority, so one command can starve or stop boris and every session")
	}
}
