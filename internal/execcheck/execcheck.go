// Package execcheck checks every program a command's process tree
// executes, while it runs: each execve and execveat is held by the kernel
// (a seccomp filter returning SECCOMP_RET_USER_NOTIF) until boris has read
// the call's real argv from the process's memory and a Judge has decided;
// a refused exec fails with EPERM. What a string check of the command line
// cannot see — a variable in command position, a script, a Makefile, a
// program started by an interpreter — is an exec the kernel shows here.
//
// The filter belongs to the thread that forks the commands: a Thread (a
// locked OS thread of its own) or a sandbox domain's restricted thread,
// through its Do. Every process forked from that thread, and everything
// they start, carries it; nothing else of boris does. One Watcher reads the
// filter's notifications; each command registers its process group with
// Track, so a notification is judged by its own command's judge (with its
// call's context), found through the process group of the exec'ing process
// and, for one that moved to a group of its own, its parent chain.
//
// The first exec of each started command — boris's own exec of the shell,
// or of the program of an argv command — is let through by the filter
// itself, by the instruction it comes from (see probe_linux.go: holding it
// could stall boris, whose vfork keeps the forking thread's P until the
// child has exec'd). The command line it runs is checked before it starts
// (the rules' pre-run check), and it runs nothing until its gate opens.
//
// Limits (see docs/exec-check.md): the kernel continues an allowed exec
// with the memory as it is then, so a process that rewrites its argv from
// another thread after the check execs what it wrote (the kernel's
// documentation says SECCOMP_USER_NOTIF_FLAG_CONTINUE is no security
// boundary for this reason); code that runs without an exec (a shell's
// builtins, an interpreter's own code, a program already running) is not
// seen; and each exec costs a round trip to boris.
package execcheck

import (
	"context"
	"path/filepath"
	"strings"
)

// Judge decides one exec in a command's process tree: nil lets it run; an
// error refuses it (the exec fails with EPERM) and its text is what the
// answer reports. It may block (asking a human), bounded by ctx (the
// call's timeout). pid is the process (thread) making the exec.
//
// argv is the exec's argv as the program will see it. When the program
// the kernel runs is named otherwise than argv[0] says (exec -a, a symlink
// such as ./notgit → /usr/bin/git), the judge is asked a second time with
// argv[0] replaced by the program's absolute, symlink-free path; the exec
// runs only if both answers allow it.
type Judge func(ctx context.Context, pid int, argv []string) error

// Refusal is one exec a judge (or the check itself) refused.
type Refusal struct {
	// Argv is the refused exec's argv (as judged).
	Argv []string `json:"argv"`
	// Reason is the judge's error text, or why the exec could not be
	// checked.
	Reason string `json:"reason"`
	// Pid is the process that tried the exec.
	Pid int `json:"pid"`
}

// String renders a refusal for a text answer: the argv, shell-quoted, and
// the reason.
func (r Refusal) String() string {
	return Quote(r.Argv) + ": " + r.Reason
}

// maxRefusals bounds the refusals kept per command (a loop that retries a
// refused exec would otherwise grow the list without limit); the count
// goes on.
const maxRefusals = 20

// Quote renders argv as a shell would need it typed: words with
// characters special to the shell in single quotes.
func Quote(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r == '/' || r == '.' || r == '-' || r == '_' || r == '=' || r == ':' || r == ',' || r == '+' || r == '@' ||
				r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		}) < 0 {
			b.WriteString(a)
			continue
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(a, "'", `'\''`))
		b.WriteByte('\'')
	}
	return b.String()
}

// candidates returns the argvs a judge is asked about for an exec of
// program (absolute, symlinks resolved; "" when unknown) with argv.
func candidates(program string, argv []string) [][]string {
	if len(argv) == 0 {
		if program == "" {
			return [][]string{{""}}
		}
		return [][]string{{program}}
	}
	out := [][]string{argv}
	if program != "" && filepath.Base(program) != filepath.Base(argv[0]) {
		alt := append([]string{program}, argv[1:]...)
		out = append(out, alt)
	}
	// The dynamic loader run as a program (/lib64/ld-linux-x86-64.so.2
	// /usr/bin/git push) runs the program it is given without an exec of
	// its own: that program's argv is judged too.
	if isLoader(program) || isLoader(argv[0]) {
		if rest := loaded(argv[1:]); len(rest) > 0 {
			out = append(out, rest)
		}
	}
	return out
}

// isLoader reports whether path names a dynamic loader (glibc's ld-linux*,
// ld.so, musl's ld-musl-*).
func isLoader(path string) bool {
	b := filepath.Base(path)
	return strings.HasPrefix(b, "ld-linux") || strings.HasPrefix(b, "ld-musl") || b == "ld.so" || strings.HasPrefix(b, "ld.so.")
}

// loaded returns the argv of the program a loader's arguments run: what
// follows its options (those of glibc's ld.so taking a value skip it).
func loaded(args []string) []string {
	withValue := map[string]bool{"--library-path": true, "--preload": true, "--audit": true, "--argv0": true, "--inhibit-rpath": true, "--glibc-hwcaps-prepend": true, "--glibc-hwcaps-mask": true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return args[i+1:]
		case withValue[a]:
			i++
		case strings.HasPrefix(a, "--"):
		default:
			return args[i:]
		}
	}
	return nil
}
