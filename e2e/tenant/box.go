// Package tenant runs boris the way a shared deployment does — one
// container, two agents with a token each, a pids limit, a memory limit
// without swap and a small workspace — and has one agent (A) attack it
// while the other (B) keeps working: a fork bomb, memory hogs, every core
// busy, a full disk. It measures what B sees (latency, failures), boris's
// memory, whether boris survived, and what A's processes left behind.
//
// The e2e tests (tenant_test.go) assert on these measurements;
// cmd/tenantbench prints them as a table. Both start boris:latest as built
// by `make images`; nothing is pulled.
package tenant

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/testcontainers/testcontainers-go"
	tcexec "github.com/testcontainers/testcontainers-go/exec"
	"github.com/testcontainers/testcontainers-go/wait"
)

// The container's limits: those of the measurements, and of a
// modest pod.
const (
	PidsLimit     = 200
	MemoryLimit   = 512 << 20 // bytes; swap is off (memory-swap = memory)
	WorkspaceSize = "64m"     // the tmpfs at /workspace
	Workspace     = "/workspace"
)

// The two agents' tokens.
const (
	TokenA = "alpha"
	TokenB = "beta"
)

// Options describe one container.
type Options struct {
	Image string // boris:latest
	// Unguarded turns boris's protections off: BORIS_UNGUARDED=1 (no
	// process budget, priorities or OOM scores for commands) and
	// --sandbox off. This is the configuration the damage is shown in.
	Unguarded bool
	// Sandbox, when not empty and not Unguarded, is passed as --sandbox.
	Sandbox string
	// TokenFile gives boris the tokens in a file (one per line, the
	// recommended way), mounted read-only at TokenDir and named by
	// BORIS_TOKEN_FILE, instead of BORIS_TOKEN.
	TokenFile bool
	// Args are further arguments for boris.
	Args []string
	// CPUShares, when positive, is the container's cpu.shares (docker's
	// default is 1024). A benchmark on a machine that other work loads
	// gives the container a large weight so that the other work does not
	// decide B's latency: the machine's other tasks then hardly compete
	// with the container, and what is measured is what A's commands do
	// to B inside it.
	CPUShares int64
}

// TokenDir is where Options.TokenFile mounts the token file, "tokens".
const TokenDir = "/etc/boris"

// Box is a running boris container.
type Box struct {
	C   testcontainers.Container
	URL string // http://host:port, reachable from here
	// HostPID is boris's pid as this machine sees it, when the engine runs
	// on this machine's kernel (0 otherwise): its /proc is read directly,
	// which costs the container nothing.
	HostPID int
	// cgroups maps a cgroup v1 controller ("pids", "memory"; "" for the
	// v2 unified hierarchy) to the container's directory on this machine,
	// when HostPID is set.
	cgroups map[string]string
	// Args and Env are what boris was started with.
	Args []string
	Env  map[string]string
	// tokenDir is the host directory of the token file, removed by Close.
	tokenDir string
}

// Start starts boris in a container with the limits above and waits until
// it answers /health.
func Start(ctx context.Context, o Options) (*Box, error) {
	args := append([]string(nil), o.Args...)
	env := map[string]string{}
	tokenDir := ""
	if o.TokenFile {
		var err error
		if tokenDir, err = tokenFile(); err != nil {
			return nil, err
		}
		env["BORIS_TOKEN_FILE"] = TokenDir + "/tokens"
	} else {
		env["BORIS_TOKEN"] = TokenA + "," + TokenB
	}
	if o.Unguarded {
		env["BORIS_UNGUARDED"] = "1"
		args = append(args, "--sandbox", "off")
	} else if o.Sandbox != "" {
		args = append(args, "--sandbox", o.Sandbox)
	}
	opts := []testcontainers.ContainerCustomizer{
		testcontainers.WithExposedPorts("8080/tcp"),
		testcontainers.WithWaitStrategy(wait.ForLog("msg=listening").WithStartupTimeout(60 * time.Second)),
		testcontainers.WithEnv(env),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			pids := int64(PidsLimit)
			hc.PidsLimit = &pids
			hc.Memory = MemoryLimit
			if o.CPUShares > 0 {
				hc.CPUShares = o.CPUShares
			}
			hc.MemorySwap = MemoryLimit
			if hc.Tmpfs == nil {
				hc.Tmpfs = map[string]string{}
			}
			hc.Tmpfs[Workspace] = "size=" + WorkspaceSize + ",uid=65532,gid=65532,mode=0755"
			if tokenDir != "" {
				hc.Binds = append(hc.Binds, tokenDir+":"+TokenDir+":ro")
			}
		}),
	}
	if len(args) > 0 {
		opts = append(opts, testcontainers.WithCmd(args...))
	}
	c, err := testcontainers.Run(ctx, o.Image, opts...)
	if err != nil {
		if c != nil {
			_ = testcontainers.TerminateContainer(c)
		}
		if tokenDir != "" {
			os.RemoveAll(tokenDir)
		}
		return nil, fmt.Errorf("start %s: %w", o.Image, err)
	}
	b := &Box{C: c, Args: args, Env: env, tokenDir: tokenDir}
	port, err := c.MappedPort(ctx, "8080/tcp")
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("mapped port: %w", err)
	}
	hosts := []string{}
	if h, err := c.Host(ctx); err == nil {
		hosts = append(hosts, h)
	}
	if b.URL, err = reachable(ctx, append(hosts, "localhost"), port.Port()); err != nil {
		b.Close()
		return nil, err
	}
	if info, err := c.Inspect(ctx); err == nil && info.State != nil {
		b.HostPID = samePIDNamespace(info.State.Pid)
		b.cgroups = cgroupDirs(b.HostPID)
	}
	return b, nil
}

// samePIDNamespace returns pid when /proc/pid on this machine is the
// container's pid 1 (the engine shares this kernel), else 0.
func samePIDNamespace(pid int) int {
	if pid <= 0 {
		return 0
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "NSpid:" && f[len(f)-1] == "1" {
			return pid
		}
	}
	return 0
}

// reachable returns the first http://host:port whose /health answers 200.
func reachable(ctx context.Context, hosts []string, port string) (string, error) {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	var last error
	for time.Now().Before(deadline) && ctx.Err() == nil {
		for _, h := range hosts {
			u := "http://" + net.JoinHostPort(h, port)
			resp, err := client.Get(u + "/health")
			if err != nil {
				last = err
				continue
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return u, nil
			}
			last = fmt.Errorf("%s/health: %s", u, resp.Status)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return "", fmt.Errorf("boris not reachable on port %s via %v: %v", port, hosts, last)
}

// tokenFile writes both tokens to a file "tokens" in a new directory,
// readable by the container's user (65532).
func tokenFile() (string, error) {
	dir, err := os.MkdirTemp("", "boris-tenant-tokens")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "tokens"), []byte(TokenA+"\n"+TokenB+"\n"), 0o644); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// Close removes the container (and the token file's directory).
func (b *Box) Close() error {
	err := testcontainers.TerminateContainer(b.C)
	if b.tokenDir != "" {
		os.RemoveAll(b.tokenDir)
	}
	return err
}

// Logs returns the container's log so far.
func (b *Box) Logs(ctx context.Context) string {
	rc, err := b.C.Logs(ctx)
	if err != nil {
		return fmt.Sprintf("(logs: %v)", err)
	}
	defer rc.Close()
	out, _ := io.ReadAll(rc)
	return string(out)
}

// Exec runs a command in the container as the image's user, from /, and
// returns its exit code and combined output.
func (b *Box) Exec(ctx context.Context, cmd ...string) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	code, r, err := b.C.Exec(ctx, cmd, tcexec.Multiplexed(), tcexec.WithWorkingDir("/"))
	if err != nil {
		return -1, "", fmt.Errorf("exec %v: %w", cmd, err)
	}
	out, _ := io.ReadAll(r)
	return code, string(out), nil
}

// Connect opens an MCP session with a token. version "" is the client's
// default protocol revision (stateless: the token's default session);
// "2025-11-25" is a handshake-era session, which closing ends, with its
// processes.
func (b *Box) Connect(ctx context.Context, token, version string) (*mcp.ClientSession, error) {
	hc := &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "boris-tenant", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: b.URL + "/mcp", HTTPClient: hc, MaxRetries: -1},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, fmt.Errorf("connect %s/mcp: %w", b.URL, err)
	}
	return cs, nil
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// State is whether boris is still the process it was.
type State struct {
	Running, Restarting, OOMKilled bool
	ExitCode, RestartCount         int
	StartedAt                      string
	// Boot is pid 1's start time (field 22 of /proc/1/stat, clock ticks
	// since the machine booted): a restarted boris has another. "" when
	// the container is not running.
	Boot string
}

// Alive says whether the state is that of a running boris that has not
// been restarted since before (before.Boot == ""). It returns the reason
// when not.
func (s State) Alive(before State) error {
	switch {
	case !s.Running:
		return fmt.Errorf("the container is not running (exit code %d, OOM-killed %v)", s.ExitCode, s.OOMKilled)
	case s.Restarting || s.RestartCount > 0:
		return fmt.Errorf("the container restarted (%d times)", s.RestartCount)
	case s.OOMKilled:
		return errors.New("the container was OOM-killed")
	case before.Boot != "" && s.Boot != before.Boot:
		return fmt.Errorf("boris (pid 1) was restarted: started at tick %s, now %s", before.Boot, s.Boot)
	case before.StartedAt != "" && s.StartedAt != before.StartedAt:
		return fmt.Errorf("the container was restarted at %s", s.StartedAt)
	}
	return nil
}

// State inspects the container and reads pid 1's start time.
func (b *Box) State(ctx context.Context) (State, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	info, err := b.C.Inspect(ctx)
	if err != nil {
		return State{}, fmt.Errorf("inspect: %w", err)
	}
	st := info.State
	s := State{Running: st.Running, Restarting: st.Restarting, OOMKilled: st.OOMKilled, ExitCode: st.ExitCode,
		RestartCount: info.RestartCount, StartedAt: st.StartedAt}
	if !s.Running {
		return s, nil
	}
	var stat string
	if b.HostPID != 0 {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", b.HostPID))
		if err != nil {
			return s, nil // gone: Boot stays "", which Alive reports
		}
		stat = string(raw)
	} else {
		code, out, err := b.Exec(ctx, "cat", "/proc/1/stat")
		if err != nil || code != 0 {
			return s, fmt.Errorf("read /proc/1/stat: exit %d, %v: %s", code, err, out)
		}
		stat = out
	}
	// pid (comm) state ppid … : starttime is the 20th field after comm.
	if i := strings.LastIndexByte(stat, ')'); i >= 0 {
		if f := strings.Fields(stat[i+1:]); len(f) > 19 {
			s.Boot = f[19]
		}
	}
	return s, nil
}

// Proc is one process in the container.
type Proc struct {
	PID, PPID int
	State     string // R, S, Z, …
	Cwd       string // "" when unreadable (a zombie, or not ours to read)
	Args      string
	// Policy is the scheduling policy (0 SCHED_OTHER, 5 SCHED_IDLE, …).
	Policy int
}

func (p Proc) String() string {
	return fmt.Sprintf("pid %d ppid %d %s policy %d cwd=%q %q", p.PID, p.PPID, p.State, p.Policy, p.Cwd, p.Args)
}

// listProcs prints pid, ppid, state, scheduling policy, cwd and arguments
// of every process but itself and its own children, tab-separated:
// busybox sh and /proc.
const listProcs = `self=$$
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  [ "$p" = "$self" ] && continue
  s=$(cat "$d/stat" 2>/dev/null) || continue
  set -- ${s##*) }
  [ "$2" = "$self" ] && continue
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$p" "$2" "$1" "${39}" "$(readlink "$d/cwd" 2>/dev/null)" "$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null)"
done`

// Processes lists the container's processes (docker exec, busybox).
func (b *Box) Processes(ctx context.Context) ([]Proc, error) {
	code, out, err := b.Exec(ctx, "sh", "-c", listProcs)
	if err != nil {
		return nil, err
	}
	if code != 0 {
		return nil, fmt.Errorf("listing processes: exit %d: %s", code, out)
	}
	var procs []Proc
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), "\t", 6)
		if len(f) != 6 {
			continue
		}
		pid, err1 := strconv.Atoi(f[0])
		ppid, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			continue
		}
		policy, _ := strconv.Atoi(f[3])
		procs = append(procs, Proc{PID: pid, PPID: ppid, State: f[2], Policy: policy, Cwd: f[4], Args: strings.TrimSpace(f[5])})
	}
	return procs, nil
}

// RSS returns boris's resident memory (VmRSS of pid 1), in bytes.
func (b *Box) RSS(ctx context.Context) (int64, error) {
	var status string
	if b.HostPID != 0 {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", b.HostPID))
		if err != nil {
			return 0, err
		}
		status = string(raw)
	} else {
		code, out, err := b.Exec(ctx, "cat", "/proc/1/status")
		if err != nil || code != 0 {
			return 0, fmt.Errorf("read /proc/1/status: exit %d, %v", code, err)
		}
		status = out
	}
	for _, line := range strings.Split(status, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmRSS in /proc/1/status")
}

// cgroupDirs reads /proc/pid/cgroup: for each controller, the directory
// of pid's cgroup under /sys/fs/cgroup.
func cgroupDirs(pid int) map[string]string {
	if pid == 0 {
		return nil
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return nil
	}
	dirs := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[1] == "" {
			dirs[""] = "/sys/fs/cgroup" + f[2]
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			dirs[c] = "/sys/fs/cgroup/" + c + f[2]
		}
	}
	return dirs
}

// cgroupRead reads a file of the container's cgroup: the v1 controller's,
// else the v2 unified one's.
func (b *Box) cgroupRead(controller, name string) (string, error) {
	dir, ok := b.cgroups[controller]
	if !ok {
		if dir, ok = b.cgroups[""]; !ok {
			return "", errors.New("the container's cgroup is not readable here")
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, name))
	return string(raw), err
}

func (b *Box) cgroupInt(controller, name string) (int64, error) {
	s, err := b.cgroupRead(controller, name)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(s), 10, 64)
}

// memoryUse is the container's memory use in bytes (v1, else v2).
func (b *Box) memoryUse() (int64, error) {
	if n, err := b.cgroupInt("memory", "memory.usage_in_bytes"); err == nil {
		return n, nil
	}
	return b.cgroupInt("memory", "memory.current")
}

// OOMKills is how many processes the OOM killer has killed in the
// container so far (memory.oom_control in v1, memory.events in v2).
func (b *Box) OOMKills() (int64, error) {
	for _, name := range []string{"memory.oom_control", "memory.events"} {
		s, err := b.cgroupRead("memory", name)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(s, "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[0] == "oom_kill" {
				return strconv.ParseInt(f[1], 10, 64)
			}
		}
	}
	return 0, errors.New("no oom_kill counter readable")
}
