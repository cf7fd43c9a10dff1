package execcheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel's structures (include/uapi/linux/seccomp.h).
type seccompData struct {
	Nr   int32
	Arch uint32
	IP   uint64
	Args [6]uint64
}

type notif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Data  seccompData
}

type notifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// Watcher answers the notifications of one exec filter: the commands
// forked from one thread. Its methods are safe for concurrent use.
type Watcher struct {
	f     *os.File // the listener, in the runtime's poller
	rc    interface{ Control(func(uintptr)) error }
	calls execCalls
	self  int
	// bin is boris's own binary: the execs its forked children make are
	// not held (see ownExecIP), so a command may not run it as a server.
	bin selfBinary

	mu       sync.Mutex
	cmds     map[int]*Command // by process group
	fallback Judge
	orphans  []Refusal

	closed   chan struct{}
	served   chan struct{}
	handlers sync.WaitGroup
	once     sync.Once

	checked, refused atomic.Int64
}

// Attach installs the exec filter on a thread through do (which runs its
// function on the thread the commands are forked from: Thread.Do, or a
// sandbox domain's Do) and starts a Watcher for it.
func Attach(do func(func()) error) (*Watcher, error) {
	ip, err := ownExecIP()
	if err != nil {
		return nil, err
	}
	fd, ierr := -1, error(nil)
	if err := do(func() { fd, ierr = install(ip) }); err != nil {
		return nil, err
	}
	if ierr != nil {
		return nil, ierr
	}
	return newWatcher(fd)
}

func newWatcher(fd int) (*Watcher, error) {
	calls, err := callsOf(runtime.GOARCH)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	// Non-blocking, so that os.File puts it in the runtime's poller: the
	// watcher waits for notifications without holding a thread, and Close
	// ends the wait.
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	unix.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), "seccomp-exec-listener")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	w := &Watcher{f: f, rc: rc, calls: calls, self: os.Getpid(), bin: ownBinary(),
		cmds: map[int]*Command{}, closed: make(chan struct{}), served: make(chan struct{})}
	go w.serve(rc)
	return w, nil
}

// SetFallback sets the judge of execs no tracked command owns: a process
// that left its command's group and parent chain (a double fork) while its
// command is gone or was never tracked. Nil (the default) refuses them.
func (w *Watcher) SetFallback(j Judge) {
	w.mu.Lock()
	w.fallback = j
	w.mu.Unlock()
}

// Orphans returns the execs refused that no tracked command owned.
func (w *Watcher) Orphans() []Refusal {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Refusal(nil), w.orphans...)
}

// Counts returns how many execs were checked (the commands' own first
// execs not included) and how many were refused.
func (w *Watcher) Counts() (checked, refused int64) { return w.checked.Load(), w.refused.Load() }

// Command is a command whose execs are judged by its own judge.
type Command struct {
	w     *Watcher
	pgid  int
	mu    sync.Mutex
	ctx   context.Context
	judge Judge
	list  []Refusal
	count int
}

// Track makes judge, with ctx, the judge of every exec of process group
// pgid (and of processes that leave it but descend from it) until Untrack.
// Call it before the command runs anything (its gate is still closed).
func (w *Watcher) Track(pgid int, ctx context.Context, judge Judge) *Command {
	c := &Command{w: w, pgid: pgid, ctx: ctx, judge: judge}
	w.mu.Lock()
	w.cmds[pgid] = c
	w.mu.Unlock()
	return c
}

// Rejudge changes the command's judge and context (a command that goes on
// as a background task is judged with the task's from then on).
func (c *Command) Rejudge(ctx context.Context, judge Judge) {
	c.mu.Lock()
	c.ctx, c.judge = ctx, judge
	c.mu.Unlock()
}

// Untrack ends the tracking; later execs of the group are the fallback's.
func (c *Command) Untrack() {
	c.w.mu.Lock()
	if c.w.cmds[c.pgid] == c {
		delete(c.w.cmds, c.pgid)
	}
	c.w.mu.Unlock()
}

// Refused returns the execs refused so far (at most maxRefusals) and how
// many there were in all.
func (c *Command) Refused() ([]Refusal, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Refusal(nil), c.list...), c.count
}

func (c *Command) record(r Refusal) {
	c.mu.Lock()
	c.count++
	if len(c.list) < maxRefusals {
		c.list = append(c.list, r)
	}
	c.mu.Unlock()
}

// Close stops answering: execs held then, and later ones of the filtered
// processes, fail (ENOSYS: the kernel's answer once no listener is left).
// It waits for the judges asked (their contexts are cancelled).
func (w *Watcher) Close() {
	w.once.Do(func() {
		close(w.closed)
		w.f.Close()
		<-w.served
		w.handlers.Wait()
	})
}

// serve receives notifications until Close, each judged on a goroutine of
// its own so that a judge that waits (for a human) holds only its exec.
func (w *Watcher) serve(rc interface {
	Read(func(uintptr) bool) error
}) {
	defer close(w.served)
	for {
		var batch []notif
		hup := false
		err := rc.Read(func(fd uintptr) bool {
			for {
				pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
				n, err := unix.Poll(pfd, 0)
				if err == unix.EINTR {
					continue
				}
				if err != nil || n == 0 {
					return len(batch) > 0
				}
				if pfd[0].Revents&unix.POLLIN == 0 {
					if pfd[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0 {
						hup = true
						return true
					}
					return len(batch) > 0
				}
				// RECV only after POLLIN: it does not block then (a
				// notification whose process died meanwhile is ENOENT).
				var nt notif
				_, _, e := unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&nt)))
				switch e {
				case 0:
					batch = append(batch, nt)
				case unix.ENOENT, unix.EINTR, unix.EAGAIN:
				default:
					return len(batch) > 0
				}
			}
		})
		for _, nt := range batch {
			w.handlers.Add(1)
			go w.handle(nt)
		}
		if err != nil || hup {
			return // closed, or no process carries the filter any more
		}
	}
}

func (w *Watcher) respond(id uint64, allow bool, errno unix.Errno) {
	resp := notifResp{ID: id}
	if allow {
		resp.Flags = unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE
	} else {
		resp.Error = -int32(errno)
	}
	// The process may be gone (ENOENT): nothing waits for the answer.
	_ = w.rc.Control(func(fd uintptr) {
		unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
	})
}

// valid reports whether notification id still waits: its process is the
// one that made it, blocked in that very call.
func (w *Watcher) valid(id uint64) bool {
	ok := false
	_ = w.rc.Control(func(fd uintptr) {
		_, _, e := unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, uintptr(unsafe.Pointer(&id)))
		ok = e == 0
	})
	return ok
}

func (w *Watcher) handle(nt notif) {
	defer w.handlers.Done()
	allow, errno := false, unix.EPERM
	defer func() {
		if r := recover(); r != nil {
			allow, errno = false, unix.EPERM // a judge's panic refuses the exec, and boris goes on
		}
		w.respond(nt.ID, allow, errno)
	}()
	ex, ok := w.decode(nt)
	if !ok {
		allow = true // not an exec (a number the filter matched by chance)
		return
	}
	pid := int(nt.Pid)
	refuse := func(c *Command, argv []string, reason string) {
		w.refused.Add(1)
		r := Refusal{Argv: argv, Reason: reason, Pid: pid}
		if c != nil {
			c.record(r)
			return
		}
		w.mu.Lock()
		if len(w.orphans) < maxRefusals {
			w.orphans = append(w.orphans, r)
		}
		w.mu.Unlock()
	}
	c := w.owner(pid)
	ctx, judge := context.Background(), Judge(nil)
	if c != nil {
		c.mu.Lock()
		ctx, judge = c.ctx, c.judge
		c.mu.Unlock()
		if judge == nil {
			allow = true // a command run without a judge: nothing to read
			return
		}
	}
	prog, file, argv, err := w.read(nt, pid, ex)
	var fi os.FileInfo
	if err == nil && file != "" {
		// A program that is not there fails without a judge, as the
		// kernel would fail it: a shell trying each directory of PATH
		// (dash's exec) asks nobody about the ones without it. The
		// answer is boris's, so a file made meanwhile does not run.
		var serr error
		if fi, serr = os.Stat(file); errors.Is(serr, unix.ENOENT) || errors.Is(serr, unix.ENOTDIR) {
			errno = unix.ENOENT
			if errors.Is(serr, unix.ENOTDIR) {
				errno = unix.ENOTDIR
			}
			return
		}
	}
	w.checked.Add(1)
	if err != nil {
		refuse(c, argv, "boris could not read what it executes: "+err.Error())
		return
	}
	if fi != nil && w.bin.is(file, fi) && !harmlessBoris(argv) {
		refuse(c, argv, "boris's own binary may run in a checked command only as `boris policy …`, `--version` or `--help`: the programs a boris it started would start are not checked")
		return
	}
	if c == nil {
		w.mu.Lock()
		judge = w.fallback
		w.mu.Unlock()
		if judge == nil {
			refuse(nil, argv, "the process left its command's process group and parent chain, so boris cannot tell which call it belongs to")
			return
		}
	}
	if judge == nil {
		allow = true
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-w.closed:
			cancel()
		case <-ctx.Done():
		}
	}()
	for _, cand := range candidates(prog, argv) {
		if err := judge(ctx, pid, cand); err != nil {
			refuse(c, cand, err.Error())
			return
		}
	}
	// The process must still be blocked in this exec: otherwise the
	// answer would go to nobody, or (with a reused id, which the kernel
	// never makes) elsewhere.
	allow = w.valid(nt.ID)
}

// selfBinary identifies boris's own executable: the file, and its size
// and first page (a copy of it runs with the same addresses).
type selfBinary struct {
	fi   os.FileInfo
	head []byte
}

func ownBinary() selfBinary {
	var b selfBinary
	b.fi, _ = os.Stat("/proc/self/exe")
	b.head = firstPage("/proc/self/exe")
	return b
}

func firstPage(path string) []byte {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	buf := make([]byte, 4096)
	n, _ := unix.Pread(fd, buf, 0)
	return buf[:max(n, 0)]
}

// is reports whether prog (stat fi) is boris's binary or a copy of it.
func (b selfBinary) is(prog string, fi os.FileInfo) bool {
	if b.fi == nil || !fi.Mode().IsRegular() {
		return false
	}
	if os.SameFile(fi, b.fi) {
		return true
	}
	return fi.Size() == b.fi.Size() && len(b.head) > 0 && string(firstPage(prog)) == string(b.head)
}

// harmlessBoris reports whether boris's binary run with argv starts no
// programs: its policy check, its version and its help.
func harmlessBoris(argv []string) bool {
	if len(argv) < 2 {
		return false
	}
	switch argv[1] {
	case "policy", "--version", "-version", "version", "--help", "-help", "-h", "help":
		return true
	}
	return false
}

// exec is what a notification's registers say about the exec.
type execArgs struct {
	dirfd      int // AT_FDCWD for execve
	path, argv uint64
	flags      int
	ptr        int // pointer size in the process: 8, or 4 (compat, x32)
}

func (w *Watcher) decode(nt notif) (execArgs, bool) {
	c, d := w.calls, nt.Data
	nr := uint32(d.Nr)
	a := d.Args
	switch {
	case d.Arch == c.arch && nr == c.execve:
		return execArgs{dirfd: unix.AT_FDCWD, path: a[0], argv: a[1], ptr: 8}, true
	case d.Arch == c.arch && nr == c.execveat:
		return execArgs{dirfd: int(int32(a[0])), path: a[1], argv: a[2], flags: int(a[4]), ptr: 8}, true
	case d.Arch == c.arch && nr == c.x32Execve:
		return execArgs{dirfd: unix.AT_FDCWD, path: a[0], argv: a[1], ptr: 4}, true
	case d.Arch == c.arch && nr == c.x32Execveat:
		return execArgs{dirfd: int(int32(a[0])), path: a[1], argv: a[2], flags: int(a[4]), ptr: 4}, true
	case d.Arch == c.compat && nr == c.compatExecve:
		return execArgs{dirfd: unix.AT_FDCWD, path: a[0] & 0xffffffff, argv: a[1] & 0xffffffff, ptr: 4}, true
	case d.Arch == c.compat && nr == c.compatExecveat:
		return execArgs{dirfd: int(int32(a[0])), path: a[1] & 0xffffffff, argv: a[2] & 0xffffffff, flags: int(int32(a[4])), ptr: 4}, true
	}
	return execArgs{}, false
}

// owner finds the tracked command an exec'ing process belongs to: by its
// process group, else by the nearest ancestor's group.
func (w *Watcher) owner(pid int) *Command {
	for i := 0; i < 64 && pid > 1 && pid != w.self; i++ {
		ppid, pgrp, err := procStat(pid)
		if err != nil {
			return nil
		}
		w.mu.Lock()
		c := w.cmds[pgrp]
		w.mu.Unlock()
		if c != nil {
			return c
		}
		pid = ppid
	}
	return nil
}

// procStat reads a process's parent and process group.
func procStat(pid int) (ppid, pgrp int, err error) {
	// Plain system calls, not os.File's: an exec's check is a handful of
	// these, and os.File would add its poller's two to each.
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, 0, err
	}
	var buf [1024]byte // up to pgrp: pid, a comm of at most 64 bytes, three fields
	k, err := unix.Read(fd, buf[:])
	unix.Close(fd)
	if err != nil {
		return 0, 0, err
	}
	b := buf[:k]
	// "pid (comm) state ppid pgrp ...": comm may hold anything, up to
	// the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, 0, errors.New("malformed stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 {
		return 0, 0, errors.New("malformed stat")
	}
	if ppid, err = strconv.Atoi(f[1]); err != nil {
		return 0, 0, err
	}
	pgrp, err = strconv.Atoi(f[2])
	return ppid, pgrp, err
}

// Bounds on what is read of an exec: beyond them the exec is refused
// rather than judged on a part.
const (
	maxArgs     = 1 << 15
	maxArgBytes = 1 << 20
)

// read reads the exec's program path and argv from the process's memory,
// then checks that the notification still waits (so the memory read was
// the exec'ing process's, not a process that reused its pid). It returns
// the program as an absolute, symlink-free path when it can be found.
func (w *Watcher) read(nt notif, pid int, ex execArgs) (prog, file string, argv []string, err error) {
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/mem", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", "", nil, err
	}
	defer unix.Close(fd)
	mem := procMem(fd)
	if !w.valid(nt.ID) {
		return "", "", nil, errors.New("the process went away")
	}
	path, err := readString(mem, ex.path, 4096)
	if err != nil {
		return "", "", nil, fmt.Errorf("the program's path: %w", err)
	}
	total := 0
	for i := 0; ; i++ {
		if i >= maxArgs {
			return "", "", argv, fmt.Errorf("more than %d arguments", maxArgs)
		}
		var buf [8]byte
		if _, err := mem.ReadAt(buf[:ex.ptr], int64(ex.argv)+int64(i*ex.ptr)); err != nil {
			if ex.argv == 0 {
				break // a NULL argv: the program gets none
			}
			return "", "", argv, fmt.Errorf("argv: %w", err)
		}
		var p uint64
		if ex.ptr == 8 {
			p = *(*uint64)(unsafe.Pointer(&buf[0]))
		} else {
			p = uint64(*(*uint32)(unsafe.Pointer(&buf[0])))
		}
		if p == 0 {
			break
		}
		s, err := readString(mem, p, maxArgBytes-total)
		if err != nil {
			return "", "", argv, fmt.Errorf("argv[%d]: %w", i, err)
		}
		total += len(s) + 1
		argv = append(argv, s)
	}
	if !w.valid(nt.ID) {
		return "", "", argv, errors.New("the process went away")
	}
	prog, file = programPath(pid, ex, path)
	return prog, file, argv, nil
}

// programPath makes the exec's path absolute and symlink-free, as the
// process sees it (its working directory, or the directory dirfd is); ""
// when it cannot (then the argv alone is judged).
//
// file names the same file through the process's own view of the file
// system (/proc/<pid>/root, cwd or fd/<n>): what is checked for existence,
// so that a descriptor of a deleted file or a memfd (fexecve) counts as
// there, and a process in another root is looked at in its own.
func programPath(pid int, ex execArgs, path string) (prog, file string) {
	proc := "/proc/" + strconv.Itoa(pid)
	dirfd := proc + "/fd/" + strconv.Itoa(ex.dirfd)
	switch {
	case filepath.IsAbs(path):
		file = proc + "/root" + path
	case path == "" && ex.flags&unix.AT_EMPTY_PATH != 0:
		file = dirfd
	case ex.dirfd == unix.AT_FDCWD:
		file = proc + "/cwd/" + path
	default:
		file = dirfd + "/" + path
	}
	base := ""
	switch {
	case filepath.IsAbs(path):
	case ex.dirfd == unix.AT_FDCWD:
		base, _ = os.Readlink(proc + "/cwd")
	default:
		base, _ = os.Readlink(proc + "/fd/" + strconv.Itoa(ex.dirfd))
	}
	if !filepath.IsAbs(path) {
		if base == "" {
			return "", file
		}
		if path == "" && ex.flags&unix.AT_EMPTY_PATH != 0 {
			path = base // fexecve: the descriptor is the program
		} else {
			path = filepath.Join(base, path)
		}
	}
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r, file
	}
	return filepath.Clean(path), file
}

// readString reads a NUL-ended string at addr of at most max bytes, a page
// at a time (a read across the end of a mapping fails).
func readString(mem procMem, addr uint64, max int) (string, error) {
	if addr == 0 {
		return "", errors.New("NULL pointer")
	}
	var out []byte
	buf := make([]byte, 4096)
	for len(out) <= max {
		n := 4096 - int(addr%4096)
		k, err := mem.ReadAt(buf[:n], int64(addr))
		if k > 0 {
			if i := indexNul(buf[:k]); i >= 0 {
				return string(append(out, buf[:i]...)), nil
			}
			out = append(out, buf[:k]...)
			addr += uint64(k)
		}
		if err != nil && k == 0 {
			return "", err
		}
	}
	return "", fmt.Errorf("longer than %d bytes", max)
}

// procMem reads a process's memory (/proc/<pid>/mem) at an address.
type procMem int

func (m procMem) ReadAt(b []byte, off int64) (int, error) {
	for {
		n, err := unix.Pread(int(m), b, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 && len(b) > 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func indexNul(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}

func onMainThread() bool { return unix.Gettid() == unix.Getpid() }
