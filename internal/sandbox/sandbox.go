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
// Each restricted thread is a Landlock domain of its own, even when it is
// restricted with the same ruleset: NewDomain makes one per session, so that
// with the scoping of ABI 6 a session's commands can signal, ptrace and (as
// a non-root user) read /proc/<pid>/environ of their own processes only —
// not another session's (sibling domains), not boris (outside every domain). Sandbox.Start uses a
// shared domain, for what belongs to no session (language servers).
//
// Nothing is weakened silently: if the kernel lacks Landlock, or an ABI that
// a requested rule needs, New fails and says what is missing.
package sandbox

import (
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ScopedABI is the Landlock ABI (Linux 6.12) from which a command cannot
// signal a process outside its domain, nor connect to its abstract unix
// sockets. Tracing across domains (ptrace, /proc/<pid>/mem, and for a
// non-root user /proc/<pid>/environ) is refused with every ABI.
const ScopedABI = 6

// CanIsolate reports whether this kernel can keep domains apart, signals
// included: Landlock with ScopedABI; the error says what is missing.
func CanIsolate() error {
	abi, err := ABI()
	if err != nil {
		return err
	}
	if abi < ScopedABI {
		return fmt.Errorf("this kernel has Landlock ABI %d, and keeping commands from signalling processes outside their domain needs ABI %d (Linux 6.12 or later)", abi, ScopedABI)
	}
	return nil
}

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

// Sandbox holds the ruleset commands are confined by and starts commands in
// its shared domain. Its methods are safe for concurrent use.
type Sandbox struct {
	status Status
	shared *Domain
	// mu guards the ruleset descriptor against Close while NewDomain
	// restricts a thread with it.
	mu     sync.RWMutex
	closed bool
	rules  ruleset
}

// Status reports what the sandbox enforces.
func (s *Sandbox) Status() Status { return s.status }

// Start starts cmd (as cmd.Start does) in the sandbox's shared domain, so
// the process and all its descendants are confined.
func (s *Sandbox) Start(cmd *exec.Cmd) error { return s.shared.Start(cmd) }

// NewDomain makes a Landlock domain of its own, with the sandbox's rules:
// a thread restricted on its own, from which its Start forks. Commands
// started in one domain can signal and trace each other but nothing in
// another domain (signals with the scoping of Landlock ABI 6, tracing with
// every ABI; see ScopedABI). Each domain holds an OS thread until Close.
func (s *Sandbox) NewDomain() (*Domain, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed
	}
	return s.rules.newDomain()
}

// NewDomainWith makes a Landlock domain of its own with other rules: cfg
// instead of the sandbox's (a session confined to a workspace of its own:
// its directory writable, the other workspaces unreadable). The ruleset is
// built for this domain alone, from the file system as it is now; a path
// made later under a directory that cfg grants only in part is not
// granted.
func (s *Sandbox) NewDomainWith(cfg Config) (*Domain, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed
	}
	return newDomainWith(cfg)
}

// Close ends the shared domain's thread and releases the ruleset. Commands
// already started keep running confined; domains made earlier keep working
// until their own Close; Start and NewDomain fail afterwards.
func (s *Sandbox) Close() {
	s.shared.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		s.rules.release()
	}
}

var errClosed = errors.New("the sandbox is closed")

// Domain starts commands in one Landlock domain. Its Start is safe for
// concurrent use; starts are serialized on the domain's restricted thread.
type Domain struct {
	reqs      chan startReq
	done      chan struct{}
	closeOnce sync.Once
}

type startReq struct {
	cmd  *exec.Cmd
	fn   func() // instead of cmd: run on the thread (Do)
	errc chan error
}

func newDomainServer() *Domain {
	return &Domain{reqs: make(chan startReq), done: make(chan struct{})}
}

// Start starts cmd (as cmd.Start does) on the domain's restricted thread,
// so the process and all its descendants are in the domain.
func (d *Domain) Start(cmd *exec.Cmd) error {
	req := startReq{cmd: cmd, errc: make(chan error, 1)}
	select {
	case d.reqs <- req:
	case <-d.done:
		return errors.New("this sandbox domain is closed")
	}
	return <-req.errc
}

// Do runs fn on the domain's restricted thread, between starts, and
// returns when it has: what must be done to the thread the commands are
// forked from (the exec check's seccomp filter) goes there.
func (d *Domain) Do(fn func()) error {
	req := startReq{fn: fn, errc: make(chan error, 1)}
	select {
	case d.reqs <- req:
	case <-d.done:
		return errors.New("this sandbox domain is closed")
	}
	return <-req.errc
}

// Close ends the domain's thread. Commands already started keep running
// in the domain; Start fails afterwards.
func (d *Domain) Close() { d.closeOnce.Do(func() { close(d.done) }) }

// serve runs Start requests until Close. It runs on the restricted thread.
func (d *Domain) serve() {
	for {
		select {
		case req := <-d.reqs:
			if req.fn != nil {
				req.fn()
				req.errc <- nil
				continue
			}
			req.errc <- req.cmd.Start()
		case <-d.done:
			return // the goroutine is locked: its thread exits with it
		}
	}
}
