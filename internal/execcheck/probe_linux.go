package execcheck

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Why the probe: Go's os/exec forks with vfork (CLONE_VFORK|CLONE_VM) in a
// raw system call, and the forking thread keeps its scheduler slot (P)
// and cannot be preempted until the child has exec'd. Were the child's own
// exec held for boris to answer, boris would have to run the answer while
// that P is held: with every P so held (two starts at once on two cores,
// or one with GOMAXPROCS=1), or while a garbage collection waits to stop
// the world, nothing runs the answer and boris stalls for good. So the
// filter lets the exec made by that one instruction of boris's binary pass
// without asking (the start's own exec, which is checked before it runs
// anyway), and the probe finds the instruction: once per process, it
// starts a program that does not exist from a thread with a filter that
// holds every exec, and reads the instruction pointer off the
// notification.

var probed struct {
	once sync.Once
	ip   uint64
	err  error
}

// Prepare finds what the filter needs (the address of boris's own exec);
// Attach calls it, and a server may call it at start-up, before it serves
// (where nothing else stops the world).
func Prepare() error {
	_, err := ownExecIP()
	return err
}

func ownExecIP() (uint64, error) {
	probed.once.Do(func() { probed.ip, probed.err = probe() })
	return probed.ip, probed.err
}

func probe() (uint64, error) {
	// No collection may start (and wait to stop the world) while the
	// probe's fork holds a P, and the receiver needs a P of its own.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	th := NewThread()
	defer th.Close()
	fd, ierr := -1, error(nil)
	if err := th.Do(func() { fd, ierr = install(0) }); err != nil {
		return 0, err
	}
	if ierr != nil {
		return 0, ierr
	}
	defer unix.Close(fd)

	// The receiver waits in the kernel before the fork, in a raw call that
	// keeps its P: from then on the fork, the notification and the answer
	// need no scheduling at all.
	type got struct {
		ip  uint64
		err error
	}
	tidc, res := make(chan int, 1), make(chan got, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tidc <- unix.Gettid()
		var n notif
		for {
			n = notif{}
			_, _, e := unix.RawSyscall(unix.SYS_IOCTL, uintptr(fd), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&n)))
			if e == 0 {
				break
			}
			if e != unix.EINTR && e != unix.ENOENT {
				res <- got{err: e}
				return
			}
		}
		resp := notifResp{ID: n.ID, Error: -int32(unix.ENOENT)}
		unix.RawSyscall(unix.SYS_IOCTL, uintptr(fd), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
		res <- got{ip: n.Data.IP}
	}()
	tid := <-tidc
	if err := waitInIoctl(tid); err != nil {
		return 0, err
	}
	cmd := exec.Command("/nonexistent/boris-exec-probe-" + strconv.Itoa(os.Getpid()))
	var startErr error
	if err := th.Do(func() { startErr = cmd.Start() }); err != nil {
		return 0, err
	}
	if startErr == nil {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		return 0, errors.New("the exec probe started a program that should not exist")
	}
	g := <-res
	if g.err != nil {
		return 0, fmt.Errorf("the exec probe: %w", g.err)
	}
	if g.ip == 0 {
		return 0, errors.New("the exec probe saw no instruction pointer")
	}
	return g.ip, nil
}

// waitInIoctl waits until thread tid is blocked in ioctl (the receive).
func waitInIoctl(tid int) error {
	path := "/proc/self/task/" + strconv.Itoa(tid) + "/syscall"
	want := strconv.Itoa(unix.SYS_IOCTL) + " "
	deadline := time.Now().Add(5 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil && strings.HasPrefix(string(b), want) {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("the exec probe's receiver never waited")
		}
		time.Sleep(100 * time.Microsecond)
	}
}
