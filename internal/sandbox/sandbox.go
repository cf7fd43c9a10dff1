// Package sandbox confines the commands of the bash tool with Linux
// Landlock, and only them: boris itself keeps its rights.
//
// A Landlock domain belongs to a thread and is inherited by every process
// forked from it. New builds one ruleset, then a dedicated goroutine locks
// itself to an OS thread for good, restricts that thread (no_new_privs, then
// landlock_restrict_self without TSYNC, so no other thread of boris is
// touched) and from then on performs every exec.Cmd.Start handed to
// Sandbox.Start. Go's os/exec forks from the calling thread, so each command
// and everything it starts runs in the domain. The Go runtime never clones
// new threads from a locked thread (it hands that to its template thread),
// so the restriction cannot spread to the rest of boris.
//
// Landlock only grants: a ruleset lists what is allowed and everything else
// of the handled kinds is refused. Reads are therefore granted as the
// complement of the denied paths (every sibling along the way from / to
// each denied path), writes only on the writable set, and TCP by port.
//
// Nothing is weakened silently: if the kernel lacks Landlock, or an ABI that
// a requested rule needs, New fails and says what is missing.
package sandbox

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// NetMode says what TCP commands may use.
type NetMode int

// Network modes.
const (
	// NetAllow leaves the network alone.
	NetAllow NetMode = iota
	// NetDeny refuses every TCP connect and bind.
	NetDeny
	// NetPorts allows TCP connects to Config.Ports only and refuses binds.
	NetPorts
)

// Config is what the commands may do.
type Config struct {
	// Writable are the directories (or files) commands may create, write,
	// truncate, rename and remove in. They must exist.
	Writable []string
	// Deny are absolute paths nothing under which may be read or executed
	// (globs already expanded). A path that does not exist is covered by
	// refusing reads of whatever appears in its nearest existing parent
	// later.
	Deny []string
	// Devices are character devices (or directories of them, /dev/pts)
	// commands may read, write and (on ABI 5 and later) use ioctl on; the
	// ones that do not exist are skipped. Nil means DefaultDevices.
	Devices []string
	Net     NetMode
	// Ports are the TCP ports commands may connect to when Net is NetPorts.
	Ports []uint16
}

// DefaultDevices returns the character devices a shell and its tools
// expect to write to.
func DefaultDevices() []string {
	return []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom", "/dev/ptmx", "/dev/pts"}
}

// Status says what a Sandbox enforces, for the log, /health and metrics.
type Status struct {
	// ABI is the kernel's Landlock ABI version.
	ABI int
	// Writable and Denied are the paths as granted and refused.
	Writable []string
	Denied   []string
	// Net is "allow", "deny" or "ports:443,80".
	Net string
	// IoctlDev is true when ioctl on devices is limited to the device list
	// (ABI 5).
	IoctlDev bool
	// Scoped is true when signals to and abstract unix sockets of processes
	// outside the sandbox are refused (ABI 6).
	Scoped bool
	// Rules is the number of Landlock rules; Build the time to make them.
	Rules int
	Build time.Duration
}

// NetString renders a network mode as the --sandbox-net value it came from.
func NetString(mode NetMode, ports []uint16) string {
	switch mode {
	case NetDeny:
		return "deny"
	case NetPorts:
		s := make([]string, len(ports))
		for i, p := range ports {
			s[i] = strconv.Itoa(int(p))
		}
		return "ports:" + strings.Join(s, ",")
	}
	return "allow"
}

// Sandbox starts commands inside the Landlock domain. Its Start is safe for
// concurrent use; starts are serialized on the one restricted thread.
type Sandbox struct {
	status Status
	reqs   chan startReq
	done   chan struct{}
}

type startReq struct {
	cmd  *exec.Cmd
	errc chan error
}

// Status reports what the sandbox enforces.
func (s *Sandbox) Status() Status { return s.status }

// Start starts cmd (as cmd.Start does) on the restricted thread, so the
// process and all its descendants are confined.
func (s *Sandbox) Start(cmd *exec.Cmd) error {
	req := startReq{cmd: cmd, errc: make(chan error, 1)}
	select {
	case s.reqs <- req:
	case <-s.done:
		return fmt.Errorf("sandbox is closed")
	}
	return <-req.errc
}

// Close ends the restricted thread. Commands already started keep running
// confined; Start fails afterwards.
func (s *Sandbox) Close() {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
}

// loop serves Start requests until Close. It runs on the restricted thread.
func (s *Sandbox) loop() {
	for {
		select {
		case req := <-s.reqs:
			req.errc <- req.cmd.Start()
		case <-s.done:
			return // the goroutine is locked: its thread exits with it
		}
	}
}
