package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel's structures, declared here with exactly the fields of the
// ABI versions this package knows (x/sys's LandlockRulesetAttr carries
// fields of newer ABIs, and it has no net port rule).
type rulesetAttr struct {
	handledFS  uint64
	handledNet uint64
	scoped     uint64
}

// pathBeneathAttr is packed in the kernel (12 bytes); the kernel reads only
// that many, so Go's trailing padding is never looked at.
type pathBeneathAttr struct {
	allowed  uint64
	parentFd int32
}

type netPortAttr struct {
	allowed uint64
	port    uint64
}

const ruleNetPort = 2 // LANDLOCK_RULE_NET_PORT

// Access rights by the ABI that introduced them.
const (
	fsABI1 = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM

	readFile = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_EXECUTE
	readDir  = readFile | unix.LANDLOCK_ACCESS_FS_READ_DIR
	// fileOnly are the rights a rule on a non-directory may carry.
	fileOnly = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	device = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE |
		unix.LANDLOCK_ACCESS_FS_IOCTL_DEV | unix.LANDLOCK_ACCESS_FS_READ_DIR

	netTCP = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	scopes = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
)

// Minimum ABIs. Truncation (ABI 3) is required: without it a command could
// truncate any file it can open, which is a write outside the writable set.
const (
	minFSABI  = 3
	minNetABI = 4
	ioctlABI  = 5
)

// probe reports the kernel's Landlock ABI; abiCap, set only by a test
// build (see testhook_sandboxtest.go) or a test, can lower it to simulate
// an older or missing Landlock. It cannot raise it.
var abiCap = -1

// ABI returns the kernel's Landlock ABI version, or an error saying why
// Landlock is unavailable.
func ABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	abi := int(v)
	if errno != 0 {
		abi = 0
	}
	if abiCap >= 0 && abi > abiCap {
		abi, errno = abiCap, unix.ENOSYS
	}
	if abi == 0 {
		switch errno {
		case unix.EOPNOTSUPP:
			return 0, errors.New("this kernel has Landlock built in but disabled (add landlock to the lsm= boot parameter)")
		default:
			return 0, fmt.Errorf("this kernel has no Landlock (landlock_create_ruleset: %v); Landlock needs Linux 5.13 or later with CONFIG_SECURITY_LANDLOCK and landlock in the active LSMs", errno)
		}
	}
	return abi, nil
}

func handledFS(abi int) uint64 {
	fs := uint64(fsABI1)
	if abi >= 2 {
		fs |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		fs |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= ioctlABI {
		fs |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return fs
}

// New checks the kernel, builds the ruleset for cfg and starts the shared
// domain's thread. The ruleset is kept for NewDomain until Close.
func New(cfg Config) (*Sandbox, error) {
	start := time.Now()
	rs, rules, abi, err := build(cfg)
	if err != nil {
		return nil, err
	}
	shared, err := rs.newDomain()
	if err != nil {
		rs.release()
		return nil, err
	}
	s := &Sandbox{shared: shared, rules: rs}

	st := Status{ABI: abi, Net: NetString(cfg.Net, cfg.Ports), IoctlDev: abi >= ioctlABI, Scoped: abi >= ScopedABI,
		Rules: len(rules) + len(cfg.Ports), Build: time.Since(start)}
	for _, r := range rules {
		if r.writable {
			st.Writable = append(st.Writable, r.path)
		}
	}
	st.Denied = append(st.Denied, cleanAll(cfg.Deny)...)
	s.status = st
	return s, nil
}

// newDomainWith builds a ruleset for cfg and restricts a new domain's
// thread with it; the ruleset is not kept.
func newDomainWith(cfg Config) (*Domain, error) {
	rs, _, _, err := build(cfg)
	if err != nil {
		return nil, err
	}
	defer rs.release()
	return rs.newDomain()
}

// build checks the kernel and builds the ruleset (and the seccomp filter)
// of cfg.
func build(cfg Config) (ruleset, []rule, int, error) {
	abi, err := ABI()
	if err != nil {
		return ruleset{}, nil, 0, fmt.Errorf("--sandbox on: %w", err)
	}
	if abi < minFSABI {
		return ruleset{}, nil, 0, fmt.Errorf("--sandbox on needs Landlock ABI %d (file truncation rules, Linux 6.2) and this kernel has ABI %d", minFSABI, abi)
	}
	if cfg.Net != NetAllow && abi < minNetABI {
		return ruleset{}, nil, 0, fmt.Errorf("--sandbox-net %s needs Landlock ABI %d (TCP rules, Linux 6.7) and this kernel has ABI %d: use --sandbox-net allow or a newer kernel", NetString(cfg.Net, cfg.Ports), minNetABI, abi)
	}
	if cfg.Net == NetPorts && len(cfg.Ports) == 0 {
		return ruleset{}, nil, 0, errors.New("--sandbox-net: a port list needs at least one port")
	}
	var filter []unix.SockFilter
	if cfg.Net != NetAllow {
		a, err := mptcpArch()
		if err != nil {
			return ruleset{}, nil, 0, err
		}
		filter = mptcpFilter(a)
	}
	rules, err := plan(cfg)
	if err != nil {
		return ruleset{}, nil, 0, err
	}

	attr := rulesetAttr{handledFS: handledFS(abi)}
	if cfg.Net != NetAllow {
		attr.handledNet = netTCP
	}
	if abi >= ScopedABI {
		attr.scoped = scopes
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return ruleset{}, nil, 0, fmt.Errorf("landlock_create_ruleset: %w", errno)
	}
	rfd := int(fd)
	built := false
	defer func() {
		if !built {
			unix.Close(rfd)
		}
	}()

	for _, r := range rules {
		err := addPathRule(rfd, r.path, r.access&attr.handledFS)
		if err != nil && !r.writable && errors.Is(err, unix.ENOENT) {
			// Gone since it was listed, as temp files go: nothing to
			// grant, which is the safe side.
			continue
		}
		if err != nil {
			return ruleset{}, nil, 0, err
		}
	}
	if cfg.Net == NetPorts {
		for _, p := range cfg.Ports {
			na := netPortAttr{allowed: unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, port: uint64(p)}
			if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rfd), ruleNetPort, uintptr(unsafe.Pointer(&na)), 0, 0, 0); errno != 0 {
				return ruleset{}, nil, 0, fmt.Errorf("landlock rule for TCP port %d: %w", p, errno)
			}
		}
	}
	built = true
	return ruleset{fd: rfd, filter: filter}, rules, abi, nil
}

// ruleset is a built Landlock ruleset and the seccomp filter that goes
// with it; every domain is a thread restricted with both.
type ruleset struct {
	fd     int
	filter []unix.SockFilter
}

// newDomain starts a goroutine on a thread of its own, restricts that
// thread and serves the domain's starts on it.
func (r ruleset) newDomain() (*Domain, error) {
	d := newDomainServer()
	ready := make(chan error, 1)
	go r.restrictedThread(d, ready, true)
	if err := <-ready; err != nil {
		return nil, err
	}
	return d, nil
}

func (r ruleset) release() { unix.Close(r.fd) }

// restrictedThread locks itself to its thread for good, restricts that
// thread and serves d's Start requests on it. A thread restricted by
// landlock_restrict_self is a new domain, a sibling of the others made
// from the same ruleset. The thread must not be the process's main thread:
// the runtime never ends that one (it parks it when a goroutine locked to
// it returns), so it would outlive Close and break Pdeathsig's tie to the
// thread. On the main thread it starts over on another one, holding this
// one so the new goroutine cannot land on it.
func (r ruleset) restrictedThread(d *Domain, ready chan<- error, retry bool) {
	// Never unlocked: the thread carries the domain and must die with this
	// goroutine rather than go back to the scheduler. Every thread the
	// runtime hands out is unrestricted: restricted ones never return to
	// it, and it never clones a new thread from a locked one.
	runtime.LockOSThread()
	if unix.Gettid() == unix.Getpid() && retry {
		moved := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			close(moved)
			r.restrictedThread(d, ready, false)
		}()
		<-moved
		runtime.UnlockOSThread() // untouched: nothing was restricted here
		return
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		ready <- fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
		return
	}
	if r.filter != nil {
		if err := installFilter(r.filter); err != nil {
			ready <- err
			return
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(r.fd), 0, 0); errno != 0 {
		ready <- fmt.Errorf("landlock_restrict_self: %w", errno)
		return
	}
	ready <- nil
	d.serve()
}

func addPathRule(ruleset int, path string, access uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("sandbox rule for %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("sandbox rule for %s: %w", path, err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
	case unix.S_IFLNK:
		// Listed as something else, a symlink now: grant nothing; what
		// it points to is granted (or not) where it lives.
		return nil
	default:
		access &= fileOnly
	}
	if access == 0 {
		return nil
	}
	pb := pathBeneathAttr{allowed: access, parentFd: int32(fd)}
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&pb)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("landlock rule for %s: %w", path, errno)
	}
	return nil
}

// rule grants access beneath path.
type rule struct {
	path     string
	access   uint64
	writable bool
}

// plan turns cfg into path rules: reads everywhere but the denied paths,
// writes on the writable set, device access on the devices. It refuses a
// denied path inside a writable one (Landlock cannot take back a right a
// parent grants) and a writable path inside a denied one.
func plan(cfg Config) ([]rule, error) {
	writable, err := resolveAll(cfg.Writable, "--sandbox writable path")
	if err != nil {
		return nil, err
	}
	deny := cleanAll(cfg.Deny)
	for _, d := range deny {
		// Deny where the path really leads too, when it exists.
		if real, err := filepath.EvalSymlinks(d); err == nil && real != d && !slices.Contains(deny, real) {
			deny = append(deny, real)
		}
	}
	devices := cfg.Devices
	if devices == nil {
		devices = DefaultDevices()
	}
	for _, d := range deny {
		for _, w := range writable {
			if within(d, w) {
				return nil, fmt.Errorf("--sandbox on: the denied path %s lies inside the writable directory %s, and Landlock can only grant, not take back, what a parent grants: drop the --deny-dir entry, move it out of %s, or leave the sandbox off", d, w, w)
			}
			if within(w, d) {
				return nil, fmt.Errorf("--sandbox on: the writable directory %s lies inside the denied path %s: commands could read it there; choose a writable directory outside the denied ones", w, d)
			}
		}
	}

	var rules []rule
	if len(deny) == 0 {
		rules = append(rules, rule{path: "/", access: readDir})
	} else if err := complement("/", deny, &rules); err != nil {
		return nil, err
	}
	for _, w := range writable {
		rules = append(rules, rule{path: w, access: ^uint64(0), writable: true})
	}
	for _, d := range devices {
		if _, err := os.Lstat(d); err != nil {
			continue
		}
		if slices.ContainsFunc(deny, func(x string) bool { return within(d, x) }) {
			continue
		}
		rules = append(rules, rule{path: d, access: device})
	}
	return rules, nil
}

// complement grants reads on everything in dir except the denied paths,
// descending into the entries on the way to one. dir itself gets READ_DIR
// only, which Landlock extends to everything beneath it: names stay
// listable, contents of denied paths do not become readable.
func complement(dir string, deny []string, rules *[]rule) error {
	*rules = append(*rules, rule{path: dir, access: unix.LANDLOCK_ACCESS_FS_READ_DIR})
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			return nil // grant nothing under a directory boris cannot list
		}
		return fmt.Errorf("--sandbox on: list %s to grant reads around the denied paths: %w", dir, err)
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.Type()&os.ModeSymlink != 0 {
			continue // a name for something granted (or not) where it lives
		}
		if slices.Contains(deny, p) {
			continue
		}
		if slices.ContainsFunc(deny, func(d string) bool { return within(d, p) }) {
			if e.IsDir() {
				if err := complement(p, deny, rules); err != nil {
					return err
				}
			}
			continue
		}
		*rules = append(*rules, rule{path: p, access: readDir})
	}
	return nil
}

func resolveAll(paths []string, what string) ([]string, error) {
	var out []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("%s %q is not absolute", what, p)
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", what, p, err)
		}
		if !slices.Contains(out, real) {
			out = append(out, real)
		}
	}
	return out, nil
}

func cleanAll(paths []string) []string {
	var out []string
	for _, p := range paths {
		p = filepath.Clean(p)
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// within reports whether path is dir or lies beneath it.
func within(path, dir string) bool {
	if dir == "/" {
		return true
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}
