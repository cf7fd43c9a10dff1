//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as a helper command: with BORIS_SANDBOX_HELPER
// set it connects or binds and exits, so the network tests need no tools.
func TestMain(m *testing.M) {
	switch os.Getenv("BORIS_SANDBOX_HELPER") {
	case "connect", "connect-mptcp":
		d := net.Dialer{Timeout: 2 * time.Second}
		d.SetMultipathTCP(os.Getenv("BORIS_SANDBOX_HELPER") == "connect-mptcp")
		c, err := d.Dial("tcp", os.Getenv("BORIS_SANDBOX_ADDR"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		c.Close()
		os.Exit(0)
	case "bind", "bind-mptcp":
		// Go listens with MPTCP by default, which Landlock's TCP rules do
		// not cover (see SECURITY.md); plain TCP is what they govern.
		var lc net.ListenConfig
		lc.SetMultipathTCP(os.Getenv("BORIS_SANDBOX_HELPER") == "bind-mptcp")
		l, err := lc.Listen(context.Background(), "tcp", os.Getenv("BORIS_SANDBOX_ADDR"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		l.Close()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// layout is a tree under a fresh temp dir: ws (writable), outside, pub.
// The test creates and writes all of it itself, so without the sandbox
// every write the tests expect to be refused would succeed.
type layout struct{ root, ws, outside, pub string }

func newLayout(t *testing.T) layout {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l := layout{root: root, ws: filepath.Join(root, "ws"), outside: filepath.Join(root, "outside"), pub: filepath.Join(root, "pub")}
	for _, d := range []string{l.ws, l.outside, l.pub} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(l.outside, "victim"), "keep me\n")
	write(t, filepath.Join(l.pub, "readme"), "public\n")
	return l
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o666); err != nil {
		t.Fatal(err)
	}
}

func newSandbox(t *testing.T, cfg Config) *Sandbox {
	t.Helper()
	sb, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(sb.Close)
	return sb
}

// sh runs script with /bin/sh through the sandbox and returns its combined
// output and whether it exited 0.
func sh(t *testing.T, sb *Sandbox, dir, script string, env ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = append(os.Environ(), env...)
	return runIn(t, sb, dir, cmd)
}

// runIn runs cmd in dir under sb and returns its output and whether it
// exited 0.
func runIn(t *testing.T, sb *Sandbox, dir string, cmd *exec.Cmd) (string, bool) {
	t.Helper()
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := sb.Start(cmd); err != nil {
		t.Fatalf("start: %v", err)
	}
	err := cmd.Wait()
	return out.String(), err == nil
}

func TestWritesStayInside(t *testing.T) {
	l := newLayout(t)
	sb := newSandbox(t, Config{Writable: []string{l.ws}})
	if err := os.Symlink(l.outside, filepath.Join(l.ws, "escape")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(l.ws, "mine"), "x\n")

	refused := map[string]string{
		"touch":           "touch " + l.outside + "/new",
		"redirect":        "echo x > " + l.outside + "/new",
		"append":          "echo x >> " + l.outside + "/victim",
		"truncate":        ": > " + l.outside + "/victim",
		"mv into":         "mv mine " + l.outside + "/",
		"rm":              "rm -f " + l.outside + "/victim",
		"mkdir":           "mkdir " + l.outside + "/d",
		"child":           "sh -c 'touch " + l.outside + "/child'",
		"grandchild":      `sh -c 'sh -c "touch ` + l.outside + `/grandchild"'`,
		"symlink escape":  "echo x > escape/via-link",
		"symlink victim":  "echo x > escape/victim",
		"hard link out":   "ln mine " + l.outside + "/hard",
		"mv out of":       "mv " + l.outside + "/victim .",
		"background":      "(sleep 0.05; touch " + l.outside + "/bg) & wait $!",
		"write in parent": "touch " + l.root + "/new",
	}
	for name, script := range refused {
		t.Run(name, func(t *testing.T) {
			out, ok := sh(t, sb, l.ws, script)
			if ok {
				t.Fatalf("%q succeeded, want a refusal; output %q", script, out)
			}
			if !strings.Contains(out, "ermission denied") && !strings.Contains(out, "not permitted") {
				t.Fatalf("%q: want a permission error, got %q", script, out)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(l.outside, "victim")); err != nil || string(b) != "keep me\n" {
		t.Fatalf("outside file changed: %q %v", b, err)
	}
	for _, name := range []string{"new", "child", "grandchild", "via-link", "hard", "bg", "d"} {
		if _, err := os.Lstat(filepath.Join(l.outside, name)); err == nil {
			t.Fatalf("%s was created outside", name)
		}
	}

	// Inside, everything works, and reads outside are fine.
	out, ok := sh(t, sb, l.ws, "touch a && echo x > b && mkdir d && mv a d/ && ln -s b s && rm b && cat "+l.outside+"/victim "+l.pub+"/readme && sh -c 'sh -c \"echo deep > deep\"' && cat deep")
	if !ok || out != "keep me\npublic\ndeep\n" {
		t.Fatalf("inside: ok=%v %q", ok, out)
	}
}

// Only the sandbox's thread is restricted: boris itself writes anywhere,
// and new threads the runtime makes do not inherit the domain.
func TestOnlyTheSandboxThread(t *testing.T) {
	l := newLayout(t)
	// The threads of sandboxes closed by earlier tests exit shortly after
	// their goroutines return; none is open now.
	before := nnpThreads(t)
	for deadline := time.Now().Add(5 * time.Second); before != 0 && time.Now().Before(deadline); before = nnpThreads(t) {
		time.Sleep(10 * time.Millisecond)
	}
	sb := newSandbox(t, Config{Writable: []string{l.ws}})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, ok := sh(t, sb, l.ws, "touch "+l.outside+"/t"+strconv.Itoa(i)); ok {
				t.Errorf("command %d wrote outside: %q", i, out)
			}
		}()
	}
	// Goroutines blocked in syscalls make the runtime start more threads
	// while the sandbox thread forks.
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(20 * time.Millisecond)
			f, err := os.Open("/dev/zero")
			if err == nil {
				f.Read(make([]byte, 1<<20))
				f.Close()
			}
		}()
	}
	wg.Wait()
	write(t, filepath.Join(l.outside, "by-the-test"), "the test process is not confined\n")
	if b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(os.Getpid()) + "/status"); err != nil || !bytes.Contains(b, []byte("NoNewPrivs:\t0")) {
		t.Fatalf("the main thread is restricted (it never exits, so it must not carry the sandbox): %v", err)
	}
	if got := nnpThreads(t); got != before+1 {
		t.Fatalf("threads with no_new_privs: %d before, %d after; want exactly the sandbox's one more", before, got)
	}
}

// nnpThreads counts this process's threads with no_new_privs set.
func nnpThreads(t *testing.T) int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/status")
		if err == nil && bytes.Contains(b, []byte("NoNewPrivs:\t1")) {
			n++
		}
	}
	return n
}

func TestDeniedPathsUnreadable(t *testing.T) {
	l := newLayout(t)
	secret := filepath.Join(l.root, "secret")
	if err := os.MkdirAll(filepath.Join(secret, "sub"), 0o777); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(secret, "key"), "s3cret\n")
	write(t, filepath.Join(secret, "sub", "key"), "s3cret\n")
	write(t, filepath.Join(l.pub, "token"), "t0ken\n")
	later := filepath.Join(l.root, "later") // denied before it exists
	sb := newSandbox(t, Config{Writable: []string{l.ws}, Deny: []string{secret, filepath.Join(l.pub, "token"), later}})

	for _, script := range []string{
		"cat " + secret + "/key",
		"cat " + secret + "/sub/key",
		"cat " + l.pub + "/token",
		"ln -s " + secret + "/key k && cat k",
		"cat " + later + "/file",
	} {
		if script == "cat "+later+"/file" {
			if err := os.Mkdir(later, 0o777); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(later, "file"), "made after start-up\n")
		}
		if out, ok := sh(t, sb, l.ws, script); ok || strings.Contains(out, "s3cret") || strings.Contains(out, "t0ken") || strings.Contains(out, "start-up") {
			t.Errorf("%q: ok=%v %q, want refused", script, ok, out)
		}
	}
	// Siblings and parents stay readable; names stay listable.
	out, ok := sh(t, sb, l.ws, "cat "+l.pub+"/readme && ls "+l.root+" && ls "+secret)
	if !ok || !strings.Contains(out, "public\n") || !strings.Contains(out, "secret") || !strings.Contains(out, "key") {
		t.Fatalf("reads around the denied paths: ok=%v %q", ok, out)
	}
	if out, ok := sh(t, sb, l.ws, "cat /etc/passwd >/dev/null && ls / >/dev/null"); !ok {
		t.Fatalf("reads elsewhere: %q", out)
	}
}

func TestRefusesWhatLandlockCannotExpress(t *testing.T) {
	l := newLayout(t)
	_, err := New(Config{Writable: []string{l.ws}, Deny: []string{filepath.Join(l.ws, ".env")}})
	if err == nil || !strings.Contains(err.Error(), "lies inside the writable directory "+l.ws) {
		t.Fatalf("deny inside writable: %v", err)
	}
	_, err = New(Config{Writable: []string{l.ws}, Deny: []string{l.root}})
	if err == nil || !strings.Contains(err.Error(), "writable directory "+l.ws+" lies inside the denied path") {
		t.Fatalf("writable inside deny: %v", err)
	}
	_, err = New(Config{Writable: []string{filepath.Join(l.root, "missing")}})
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("missing writable: %v", err)
	}
}

func TestMissingLandlockRefused(t *testing.T) {
	l := newLayout(t)
	defer func(c int) { abiCap = c }(abiCap)
	abiCap = 0
	if _, err := New(Config{Writable: []string{l.ws}}); err == nil || !strings.Contains(err.Error(), "no Landlock") {
		t.Fatalf("no Landlock: %v", err)
	}
	abiCap = 2
	if _, err := New(Config{Writable: []string{l.ws}}); err == nil || !strings.Contains(err.Error(), "needs Landlock ABI 3") {
		t.Fatalf("ABI 2: %v", err)
	}
	abiCap = 3
	if _, err := New(Config{Writable: []string{l.ws}, Net: NetDeny}); err == nil || !strings.Contains(err.Error(), "--sandbox-net deny needs Landlock ABI 4") {
		t.Fatalf("net on ABI 3: %v", err)
	}
	sb := newSandbox(t, Config{Writable: []string{l.ws}})
	if st := sb.Status(); st.ABI != 3 || st.IoctlDev || st.Scoped {
		t.Fatalf("status on ABI 3: %+v", st)
	}
}

func TestNetwork(t *testing.T) {
	l := newLayout(t)
	listen := func() (net.Listener, string) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		return ln, ln.Addr().String()
	}
	_, open := listen()
	// closed is a listener too: it is refused only by the port rule.
	_, closed := listen()
	openPort := func() uint16 {
		_, p, _ := net.SplitHostPort(open)
		n, _ := strconv.Atoi(p)
		return uint16(n)
	}()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name             string
		cfg              Config
		open, other, bnd bool
	}{
		{"allow", Config{Net: NetAllow}, true, true, true},
		{"deny", Config{Net: NetDeny}, false, false, false},
		{"ports", Config{Net: NetPorts, Ports: []uint16{openPort}}, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Writable = []string{l.ws}
			sb := newSandbox(t, tc.cfg)
			check := func(what string, want bool, out string, ok bool) {
				if ok != want {
					t.Errorf("%s: succeeded=%v, want %v (%q)", what, ok, want, out)
				}
				if !ok && !strings.Contains(out, "permission denied") {
					t.Errorf("%s: want permission denied, got %q", what, out)
				}
			}
			out, ok := helperRun(t, sb, l.ws, self, "connect", open)
			check("connect to the listed port", tc.open, out, ok)
			out, ok = helperRun(t, sb, l.ws, self, "connect", closed)
			check("connect to another port", tc.other, out, ok)
			out, ok = helperRun(t, sb, l.ws, self, "connect-mptcp", closed)
			check("MPTCP connect to another port", tc.other, out, ok)
			out, ok = helperRun(t, sb, l.ws, self, "bind-mptcp", freeAddr(t))
			check("MPTCP bind", tc.bnd, out, ok)
			out, ok = helperRun(t, sb, l.ws, self, "bind", "127.0.0.1:0")
			check("bind to an ephemeral port", tc.bnd, out, ok)
			out, ok = helperRun(t, sb, l.ws, self, "bind", freeAddr(t))
			check("bind to a fixed port", tc.bnd, out, ok)
		})
	}
}

// freeAddr returns a loopback address with a port nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func helperRun(t *testing.T, sb *Sandbox, dir, self, mode, addr string) (string, bool) {
	t.Helper()
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), "BORIS_SANDBOX_HELPER="+mode, "BORIS_SANDBOX_ADDR="+addr)
	return runIn(t, sb, dir, cmd)
}

// With ABI 6, a command cannot signal processes outside its domain (boris)
// but can signal its own.
func TestSignalsScoped(t *testing.T) {
	l := newLayout(t)
	sb := newSandbox(t, Config{Writable: []string{l.ws}})
	if !sb.Status().Scoped {
		t.Fatalf("kernel ABI %d: this test needs ABI 6", sb.Status().ABI)
	}
	out, ok := sh(t, sb, l.ws, "kill -0 "+strconv.Itoa(os.Getpid()))
	if ok {
		t.Fatalf("a command signalled the process outside the sandbox: %q", out)
	}
	if out, ok := sh(t, sb, l.ws, "sleep 5 & kill $! && wait $!; test $? -eq 143"); !ok {
		t.Fatalf("a command could not signal its own child: %q", out)
	}
}

func TestNetString(t *testing.T) {
	for _, tc := range []struct {
		mode  NetMode
		ports []uint16
		want  string
	}{{NetAllow, nil, "allow"}, {NetDeny, nil, "deny"}, {NetPorts, []uint16{443, 80}, "ports:443,80"}} {
		if got := NetString(tc.mode, tc.ports); got != tc.want {
			t.Errorf("NetString(%v, %v) = %q, want %q", tc.mode, tc.ports, got, tc.want)
		}
	}
}

// Pdeathsig is tied to the thread that forked the child: the sandbox's
// thread lives until Close, so a command started with it is not killed by
// the runtime's thread churn, and is killed when the sandbox closes.
func TestPdeathsigFollowsTheSandboxThread(t *testing.T) {
	l := newLayout(t)
	sb, err := New(Config{Writable: []string{l.ws}})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := sb.Start(cmd); err != nil {
		t.Fatal(err)
	}
	// Commands started afterwards run on the same, still living thread.
	if out, ok := sh(t, sb, l.ws, "true"); !ok {
		t.Fatalf("second command: %q", out)
	}
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the child died while the sandbox thread lives: %v", err)
	}
	sb.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("child ended with %v, want SIGKILL from Pdeathsig", err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the child outlived the sandbox thread despite Pdeathsig")
	}
	if err := sb.Start(exec.Command("/bin/true")); err == nil {
		t.Fatal("Start after Close succeeded")
	}
}

// startIn starts cmd with start (nil: unconfined) and ends it when the
// test ends.
func startIn(t *testing.T, start func(*exec.Cmd) error, cmd *exec.Cmd) {
	t.Helper()
	if start == nil {
		start = (*exec.Cmd).Start
	}
	if err := start(cmd); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
}

// shIn runs script with /bin/sh in domain d (start nil: unconfined) in
// dir, as the given user (nil: the test's), and returns its combined
// output and whether it exited 0.
func shIn(t *testing.T, start func(*exec.Cmd) error, cred *syscall.Credential, dir, script string) (string, bool) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = dir
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if start == nil {
		start = (*exec.Cmd).Start
	}
	if err := start(cmd); err != nil {
		t.Fatalf("start: %v", err)
	}
	err := cmd.Wait()
	return out.String(), err == nil
}

// nobody is the user the probes of /proc run as when the test runs as
// root: root reads any process's /proc/<pid>/environ whatever Landlock
// says (seen on Linux 6.18), and the point is what the domains refuse.
func nobody() *syscall.Credential {
	if os.Getuid() != 0 {
		return nil
	}
	return &syscall.Credential{Uid: 65534, Gid: 65534}
}

func newDomain(t *testing.T, sb *Sandbox) *Domain {
	t.Helper()
	d, err := sb.NewDomain()
	if err != nil {
		t.Fatalf("NewDomain: %v", err)
	}
	t.Cleanup(d.Close)
	return d
}

// Two domains of one sandbox are siblings: a command in one cannot signal
// or read the environment of a process in the other, nor of a process in
// the shared domain or outside the sandbox, nor signal the test process; a
// command can signal and read a process started earlier, by another Start,
// in its own domain. The same probes succeed between unconfined processes,
// so a refusal comes from the domains.
func TestDomainsAreApart(t *testing.T) {
	l := newLayout(t)
	sb := newSandbox(t, Config{Writable: []string{l.ws}})
	if !sb.Status().Scoped {
		t.Fatalf("kernel ABI %d: this test needs ABI 6", sb.Status().ABI)
	}
	a, b := newDomain(t, sb), newDomain(t, sb)
	victim := func(start func(*exec.Cmd) error) string {
		cmd := exec.Command("/bin/sleep", "300")
		cmd.Env = []string{"VICTIM_SECRET=b0r1s"}
		if cred := nobody(); cred != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		startIn(t, start, cmd)
		return strconv.Itoa(cmd.Process.Pid)
	}
	probe := func(pid string) string {
		return "kill -0 " + pid + " && echo signalled; grep -c b0r1s /proc/" + pid + "/environ && echo read"
	}
	inB, inShared, unconfined := victim(b.Start), victim(sb.Start), victim(nil)

	for what, pid := range map[string]string{"another domain's process": inB, "a shared-domain process": inShared, "an unconfined process": unconfined} {
		out, _ := shIn(t, a.Start, nobody(), "/", probe(pid))
		if strings.Contains(out, "signalled") || strings.Contains(out, "read") {
			t.Errorf("a command in domain A reached %s: %q", what, out)
		}
	}
	if out, ok := shIn(t, a.Start, nil, "/", "kill -0 "+strconv.Itoa(os.Getpid())); ok {
		t.Errorf("a command in domain A signalled the test process: %q", out)
	}
	// Outside any domain, the same probes work: the refusals above are
	// the domains'.
	if out, _ := shIn(t, nil, nobody(), "/", probe(unconfined)); !strings.Contains(out, "signalled") || !strings.Contains(out, "read") {
		t.Fatalf("unconfined probe: %q", out)
	}
	if out, ok := shIn(t, nil, nil, "/", "kill -0 "+strconv.Itoa(os.Getpid())); !ok {
		t.Fatalf("unconfined signal to the test process: %q", out)
	}

	// Within B, a later command signals and reads B's earlier process, and
	// kills it.
	if out, ok := shIn(t, b.Start, nobody(), "/", probe(inB)+" && kill "+inB); !ok || !strings.Contains(out, "signalled") || !strings.Contains(out, "read") {
		t.Fatalf("a command in domain B could not reach B's own earlier process: %q", out)
	}
	// A domain is confined like the shared one.
	if out, ok := shIn(t, a.Start, nil, l.ws, "touch "+l.outside+"/from-a"); ok {
		t.Fatalf("a command in a domain wrote outside: %q", out)
	}
	if out, ok := shIn(t, a.Start, nil, l.ws, "touch from-a"); !ok {
		t.Fatalf("a command in a domain could not write in the workspace: %q", out)
	}
}

// A domain's thread ends with Close; its commands keep running confined;
// the sandbox's Close stops NewDomain but not domains already made.
func TestDomainClose(t *testing.T) {
	l := newLayout(t)
	sb, err := New(Config{Writable: []string{l.ws}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := sb.NewDomain()
	if err != nil {
		t.Fatal(err)
	}
	// The domain's own thread, by its id: a count of restricted threads
	// would also see earlier tests' domains whose threads are still
	// exiting.
	var tid int
	if err := d.Do(func() { tid = syscall.Gettid() }); err != nil {
		t.Fatal(err)
	}
	status := "/proc/self/task/" + strconv.Itoa(tid) + "/status"
	if b, err := os.ReadFile(status); err != nil || !bytes.Contains(b, []byte("NoNewPrivs:\t1")) {
		t.Fatalf("the domain's thread %d is not restricted: %v %q", tid, err, b)
	}
	keep, err := sb.NewDomain()
	if err != nil {
		t.Fatal(err)
	}
	defer keep.Close()
	cmd := exec.Command("/bin/sh", "-c", "read x; touch "+l.outside+"/late")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	startIn(t, d.Start, cmd)
	d.Close()
	gone := func() bool { _, err := os.Stat(status); return os.IsNotExist(err) }
	for deadline := time.Now().Add(10 * time.Second); !gone() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if !gone() {
		t.Fatalf("the domain's thread %d is still there after Close", tid)
	}
	if err := d.Start(exec.Command("/bin/true")); err == nil {
		t.Fatal("Start after Close succeeded")
	}
	in.Write([]byte("go\n"))
	if err := cmd.Wait(); err == nil {
		t.Fatal("a command of a closed domain wrote outside")
	}
	sb.Close()
	if _, err := sb.NewDomain(); err == nil {
		t.Fatal("NewDomain after the sandbox's Close succeeded")
	}
	if out, ok := shIn(t, keep.Start, nil, l.ws, "true"); !ok {
		t.Fatalf("a domain made before the sandbox's Close stopped working: %q", out)
	}
}

// BenchmarkNewDomain is the cost of a session's domain: a locked thread,
// restricted (what a session pays once, at its first command).
func BenchmarkNewDomain(b *testing.B) {
	dir := b.TempDir()
	sb, err := New(Config{Writable: []string{dir}})
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	for b.Loop() {
		d, err := sb.NewDomain()
		if err != nil {
			b.Fatal(err)
		}
		d.Close()
	}
}

// A domain with rules of its own (a session confined to its workspace):
// it writes its own directory and nothing else — not the sandbox's
// writable one — and reads none of the hidden paths, nor what appears
// later beside them (their names stay listable, as with every denied
// path); the sandbox's shared domain keeps its own rules.
func TestNewDomainWith(t *testing.T) {
	l := newLayout(t)
	mine, theirs := filepath.Join(l.ws, "wt", "mine"), filepath.Join(l.ws, "wt", "theirs")
	for _, d := range []string{mine, theirs, filepath.Join(l.ws, ".git")} {
		if err := os.MkdirAll(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(theirs, "secret"), "theirs\n")
	write(t, filepath.Join(l.ws, "main.txt"), "main\n")
	write(t, filepath.Join(l.ws, ".git", "objects"), "shared\n")
	sb := newSandbox(t, Config{Writable: []string{l.ws}})
	d, err := sb.NewDomainWith(Config{Writable: []string{mine}, Deny: []string{theirs, filepath.Join(l.ws, "main.txt")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	write(t, filepath.Join(l.ws, "wt", "later"), "made after the domain\n")
	for _, c := range []struct {
		script string
		ok     bool
	}{
		{"echo x > new && cat new", true},
		{"cat ../../.git/objects", true},
		{"ls ..", true},
		{"cat ../theirs/secret", false},
		{"cat ../theirs/*", false},
		{"echo x > ../theirs/planted", false},
		{"cat ../later", false},
		{"cat ../../main.txt", false},
		{"echo x > ../../main.txt", false},
		{"echo x > ../../new.txt", false},
	} {
		out, ok := shIn(t, d.Start, nil, mine, c.script)
		if ok != c.ok {
			t.Errorf("%s: ok=%v, want %v: %s", c.script, ok, c.ok, out)
		}
	}
	if out, ok := sh(t, sb, l.ws, "cat wt/theirs/secret && echo y > shared.txt"); !ok {
		t.Fatalf("the shared domain lost its rules: %s", out)
	}
	sb.Close()
	if _, err := sb.NewDomainWith(Config{Writable: []string{mine}}); err == nil {
		t.Fatal("a domain was made after Close")
	}
}
