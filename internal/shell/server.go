package shell

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// ServerSpec is a long-lived program boris talks to over its standard
// input and output, such as a language server.
type ServerSpec struct {
	// Argv is the program and its arguments; argv[0] is looked up in the
	// PATH of the runner's environment unless it contains a slash.
	Argv []string
	// Dir is the working directory; Env are NAME=value variables added to
	// the runner's environment.
	Dir string
	Env []string
	// Stderr receives what the program writes to its standard error, from
	// one goroutine (nil: discarded).
	Stderr io.Writer
}

// Server is a started ServerSpec: a process group of its own whose stdin
// and stdout are pipes held by the caller. Like a command, it is started
// through the runner's Options.Start (so the sandbox confines it exactly
// as it does commands), reaped by the reaper, and ended with TERM, then
// KILL after the runner's grace period.
type Server struct {
	cmd    *exec.Cmd
	pgid   int
	stdin  *os.File
	stdout *os.File
	grace  time.Duration

	status chan syscall.WaitStatus // from the reaper; nil when os/exec waits
	exited chan struct{}
	ws     syscall.WaitStatus
	errRd  sync.WaitGroup
	// errR is the read end of the program's stderr and errSink where
	// it goes; errMu is held while bytes read from errR are on their way
	// to errSink, so SettleStderr can hand over all that is pending.
	errR    *os.File
	errSink io.Writer
	errMu   sync.Mutex

	stopOnce sync.Once
	stopped  chan struct{}
}

// StartServer starts spec in a new process group with piped stdin and
// stdout.
func (r *Runner) StartServer(spec ServerSpec) (*Server, error) {
	if len(spec.Argv) == 0 {
		return nil, &StartError{Err: errors.New("no program given")}
	}
	path, err := r.lookPath(spec.Argv[0], spec.Dir)
	if err != nil {
		return nil, &StartError{Err: err}
	}
	cmd := exec.Command(path, spec.Argv[1:]...)
	cmd.Args[0] = spec.Argv[0]
	cmd.Dir = spec.Dir
	cmd.Env = append(append(append(make([]string, 0, len(r.env)+len(spec.Env)+1), r.env...), spec.Env...), "PWD="+spec.Dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}

	var files []*os.File // closed on failure
	fail := func(err error) (*Server, error) {
		for _, f := range files {
			f.Close()
		}
		return nil, &StartError{Err: err}
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	files = append(files, inR, inW)
	outR, outW, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	files = append(files, outR, outW)
	cmd.Stdin, cmd.Stdout = inR, outW
	var errR *os.File
	if spec.Stderr != nil {
		var errW *os.File
		if errR, errW, err = os.Pipe(); err != nil {
			return fail(err)
		}
		files = append(files, errR, errW)
		cmd.Stderr = errW
	}

	s := &Server{cmd: cmd, stdin: inW, stdout: outR, grace: r.opts.Grace, exited: make(chan struct{}), stopped: make(chan struct{})}
	start := r.opts.Start
	if start == nil {
		start = (*exec.Cmd).Start
	}
	children.startMu.RLock()
	err = start(cmd)
	if err == nil && Reaping() {
		s.status = children.register(cmd.Process.Pid)
	}
	children.startMu.RUnlock()
	if err != nil {
		return fail(err)
	}
	// The child holds its ends now.
	inR.Close()
	outW.Close()
	if cmd.Stderr != nil {
		cmd.Stderr.(*os.File).Close()
		s.errR, s.errSink = errR, spec.Stderr
		s.errRd.Add(1)
		go func() {
			defer s.errRd.Done()
			s.copyStderr()
			errR.Close()
		}()
	}
	s.pgid = cmd.Process.Pid
	go s.wait()
	return s, nil
}

func (s *Server) wait() {
	if s.status != nil {
		s.ws = <-s.status
		_ = s.cmd.Process.Release()
	} else {
		_ = s.cmd.Wait()
		s.ws, _ = s.cmd.ProcessState.Sys().(syscall.WaitStatus)
	}
	close(s.exited)
}

// Stdin is the program's standard input.
func (s *Server) Stdin() io.WriteCloser { return s.stdin }

// Stdout is the program's standard output.
func (s *Server) Stdout() io.ReadCloser { return s.stdout }

// Pid returns the program's process id (also its process group's).
func (s *Server) Pid() int { return s.pgid }

// Exited is closed when the program has exited and been reaped.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// ExitCode is the program's exit status once Exited is closed: 128+N
// when signal N ended it.
func (s *Server) ExitCode() int { return exitCode(s.ws) }

// WaitStderr waits until everything the program wrote to its standard
// error has been handed to ServerSpec.Stderr (the program and whatever
// held its stderr have ended).
func (s *Server) WaitStderr() { s.errRd.Wait() }

// copyStderr hands the program's stderr to the sink until it ends. Reads
// happen only under errMu, from a non-blocking descriptor, so that
// SettleStderr can take the lock and know nothing read is still on its
// way.
func (s *Server) copyStderr() {
	rc, err := s.errR.SyscallConn()
	if err != nil {
		_, _ = io.Copy(s.errSink, s.errR)
		return
	}
	buf := make([]byte, 32<<10)
	_ = rc.Read(func(fd uintptr) bool {
		s.errMu.Lock()
		defer s.errMu.Unlock()
		for {
			n, err := syscall.Read(int(fd), buf)
			if n > 0 {
				_, _ = s.errSink.Write(buf[:n])
				continue
			}
			if err == syscall.EINTR {
				continue
			}
			// EAGAIN: wait for more; 0 or another error: the end.
			return err != syscall.EAGAIN
		}
	})
}

// SettleStderr hands to ServerSpec.Stderr everything the program has
// written to its standard error so far, before it returns: what a server
// logged before it answered a request is seen with the answer, though the
// two come through different pipes.
func (s *Server) SettleStderr() {
	if s.errR == nil {
		return
	}
	rc, err := s.errR.SyscallConn()
	if err != nil {
		return
	}
	buf := make([]byte, 32<<10)
	s.errMu.Lock()
	defer s.errMu.Unlock()
	_ = rc.Control(func(fd uintptr) {
		for {
			n, err := syscall.Read(int(fd), buf)
			if n > 0 {
				_, _ = s.errSink.Write(buf[:n])
				continue
			}
			if err != syscall.EINTR {
				return
			}
		}
	})
}

// Stop ends the program's process group — TERM, then KILL after the grace
// period — closes the pipes and returns once the program has been reaped
// and the group is gone (or shortly after KILL). It is idempotent.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		s.stdin.Close()
		select {
		case <-s.exited:
			if groupAlive(s.pgid) {
				KillGroup(s.pgid, s.grace)
			}
		default:
			KillGroup(s.pgid, s.grace)
			select {
			case <-s.exited:
			case <-time.After(time.Second):
				// Unkillable for now (uninterruptible sleep): the
				// reaper collects it when it goes.
			}
		}
		s.stdout.Close()
		close(s.stopped)
	})
	<-s.stopped
}

// LookPath finds a program as StartServer would: in the PATH of the
// runner's environment, or as a path (relative to dir) when it has a
// slash.
func (r *Runner) LookPath(name, dir string) (string, error) {
	p, err := r.lookPath(name, dir)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s: no such executable file", p)
	}
	return p, nil
}
