package guard

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// unlimitedMemory is above any real limit: cgroup v1 reports "no limit"
// as a page-rounded LONG_MAX.
const unlimitedMemory = 1 << 62

// readLimits finds boris's cgroups under root (normally /sys/fs/cgroup)
// from selfCgroup (the text of /proc/self/cgroup) and reads their limits.
// In a container the namespaced paths are "/" and the container's own
// cgroup is mounted at root; outside one they are real paths below root.
func readLimits(root, selfCgroup string) Limits {
	var l Limits
	paths := map[string]string{} // controller ("" for v2) -> path
	sc := bufio.NewScanner(strings.NewReader(selfCgroup))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			paths[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			paths[c] = parts[2]
		}
	}
	// dir finds a controller's directory: the path from /proc/self/cgroup
	// below the mount, or the mount itself when that path is not there
	// (a cgroup namespace shows "/", a private mount shows the leaf).
	dir := func(mount, path string) string {
		for _, d := range []string{filepath.Join(mount, path), mount} {
			if _, err := os.Stat(d); err == nil {
				return d
			}
		}
		return ""
	}
	if p, ok := paths["pids"]; ok {
		if d := dir(filepath.Join(root, "pids"), p); d != "" {
			l.PidsMax = readLimit(filepath.Join(d, "pids.max"))
			l.pidsCurrent = filepath.Join(d, "pids.current")
		}
	}
	if p, ok := paths["memory"]; ok {
		if d := dir(filepath.Join(root, "memory"), p); d != "" {
			l.MemoryMax = readLimit(filepath.Join(d, "memory.limit_in_bytes"))
			l.oomEvents = filepath.Join(d, "memory.oom_control")
		}
	}
	if p, ok := paths[""]; ok && (l.pidsCurrent == "" || l.oomEvents == "") {
		if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
			if d := dir(root, p); d != "" {
				l.CgroupV2 = true
				if l.pidsCurrent == "" {
					l.PidsMax = readLimit(filepath.Join(d, "pids.max"))
					l.pidsCurrent = filepath.Join(d, "pids.current")
				}
				if l.oomEvents == "" {
					l.MemoryMax = readLimit(filepath.Join(d, "memory.max"))
					l.oomEvents = filepath.Join(d, "memory.events")
				}
			}
		}
	}
	if l.MemoryMax >= unlimitedMemory {
		l.MemoryMax = 0
	}
	return l
}

// readLimit reads a number from a cgroup file: 0 for "max", a missing
// file or anything unreadable.
func readLimit(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// OOMKills reads the cgroup's count of processes the OOM killer ended;
// ok is false when the counter cannot be read (no memory controller, or
// a kernel older than 4.13 on cgroup v1).
func (l *Limits) OOMKills() (n uint64, ok bool) {
	if l.oomEvents == "" {
		return 0, false
	}
	b, err := os.ReadFile(l.oomEvents)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, found := strings.CutPrefix(line, "oom_kill "); found {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// PidsCurrent reads the tasks the pids cgroup holds now; -1 when unknown.
func (l *Limits) PidsCurrent() int64 {
	if l.pidsCurrent == "" {
		return -1
	}
	b, err := os.ReadFile(l.pidsCurrent)
	if err != nil {
		return -1
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil {
		return -1
	}
	return n
}
