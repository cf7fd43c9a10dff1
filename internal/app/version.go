package app

import (
	"runtime"
	"runtime/debug"
)

// Version is the release version, which package main sets from its own
// -ldflags "-X main.version=…" before calling Run. Empty, boris reports
// what the Go toolchain recorded: the module version, else the VCS
// revision.
var Version string

// buildVersion is Version, else what the Go toolchain recorded.
func buildVersion() string {
	if Version != "" {
		return Version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev (" + runtime.Version() + ")"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "dev-" + rev
}
