package app

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Garbage-collector defaults, unless the operator sets GOGC or GOMEMLIMIT.
// A call's JSON handling in the SDK makes 70–700 KB of short-lived buffers
// while boris's live heap is a few MB, so at Go's default the collector
// runs every few calls. 200 halves that (a null call over stateless HTTP:
// 387 → 326 µs p50) for half again the memory under load (500 sessions:
// 99 → 162 MB peak; 400 would take 232 MB for little more). The soft
// limit caps the heap's growth: 256 MiB, or a quarter of the cgroup's
// memory limit when that is lower (the commands boris runs share it).
const (
	gcPercent   = 200
	gcSoftLimit = 256 << 20
)

// TuneGC sets the collector's defaults above, for the process, unless the
// operator's GOGC or GOMEMLIMIT (read through getenv) already did.
func TuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softLimit(cgroupMemoryLimit()))
	}
}

// softLimit is the collector's soft memory limit under a cgroup limit
// (0: none).
func softLimit(cgroup int64) int64 {
	if cgroup > 0 && cgroup/4 < gcSoftLimit {
		return cgroup / 4
	}
	return gcSoftLimit
}

// cgroupMemoryLimit reads the memory limit of boris's cgroup (v2, else
// v1), or 0 when there is none or it cannot be read.
func cgroupMemoryLimit() int64 {
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n <= 0 || n >= 1<<62 { // "max", or v1's "unlimited"
			return 0
		}
		return n
	}
	return 0
}
