// Package hostenv looks at the machine boris starts on — the user it runs
// as, its home directory, the shell, the root filesystem, who owns the
// workspace — and decides what the environment of commands and language
// servers needs so that they work in any image: a writable HOME and cache
// when the image has none for this user, and git's safe.directory for a
// workspace another uid owns. It changes no file of the user's: everything
// it gives is an environment variable (git's through GIT_CONFIG_COUNT) or a
// directory of boris's own in the temp directory.
//
// Probe returns plain values; the start-up log prints its Notes, and
// Report.Environ applies its variables to the commands' base environment.
package hostenv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Options say what to look at.
type Options struct {
	// Workdir is boris's working directory, Roots the directories the
	// file tools may touch (none: the workdir).
	Workdir string
	Roots   []string
	// Shell is the shell commands run with ("" when there is none),
	// ShellSource how it was chosen ("--shell", "detected", "none").
	Shell, ShellSource string
	// Environ is the environment commands start from (os.Environ()).
	Environ []string
	// TempDir is where boris may make a home of its own (os.TempDir()).
	TempDir string
	// LookPath finds a program on the commands' PATH (git); nil: not looked up.
	LookPath func(string) (string, error)
}

// Level of a note: Info is how things are, Warn what will fail or
// surprise unless the operator acts.
type Level int

// Levels of a note.
const (
	Info Level = iota
	Warn
)

// Note is one line of the start-up log.
type Note struct {
	Level Level
	Msg   string
}

// Report is what Probe found and decided.
type Report struct {
	UID, GID int
	// User is the passwd name of UID ("" when /etc/passwd has none).
	User string
	// Home is the HOME commands and language servers get; HomeWhy is why
	// it is not the one boris was given ("" when it is).
	Home, HomeWhy string
	// Cache is the XDG_CACHE_HOME they get when boris sets one ("").
	Cache string
	// ReadOnlyRoot: the root filesystem is mounted read-only.
	ReadOnlyRoot bool
	// SafeDirs are the directories git is told to trust (safe.directory)
	// in the commands' environment.
	SafeDirs []string
	// Set are the variables boris sets or replaces in the commands'
	// environment, in order.
	Set []string
	// Notes are the start-up log's lines about all of this.
	Notes []Note
}

// Probe looks at the machine and decides the commands' environment.
func Probe(o Options) *Report {
	r := &Report{UID: os.Getuid(), GID: os.Getgid()}
	env := envMap(o.Environ)
	if u, err := user.LookupId(strconv.Itoa(r.UID)); err == nil {
		r.User = u.Username
	}
	r.ReadOnlyRoot = readOnly("/")
	r.home(o, env)
	r.shell(o)
	r.workspace(o)
	r.git(o, env)
	return r
}

// Environ returns base with the report's variables set (replacing any of
// the same name).
func (r *Report) Environ(base []string) []string {
	if len(r.Set) == 0 {
		return base
	}
	replaced := map[string]bool{}
	for _, kv := range r.Set {
		k, _, _ := strings.Cut(kv, "=")
		replaced[k] = true
	}
	out := make([]string, 0, len(base)+len(r.Set))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if !replaced[k] {
			out = append(out, kv)
		}
	}
	return append(out, r.Set...)
}

func (r *Report) note(l Level, format string, args ...any) {
	r.Notes = append(r.Notes, Note{Level: l, Msg: fmt.Sprintf(format, args...)})
}

func (r *Report) set(k, v string) { r.Set = append(r.Set, k+"="+v) }

// who names boris's user for the notes.
func (r *Report) who() string {
	if r.User != "" {
		return fmt.Sprintf("uid %d (%s), gid %d", r.UID, r.User, r.GID)
	}
	return fmt.Sprintf("uid %d, gid %d", r.UID, r.GID)
}

// home makes sure commands and language servers have a HOME (and a cache
// directory) they can write: pip, go, npm, git and jedi all write there,
// and an image run as a uid it has no passwd entry for gives HOME=/.
func (r *Report) home(o Options, env map[string]string) {
	given := env["HOME"]
	if r.User == "" {
		r.note(Info, "user: boris runs as %s, which has no entry in /etc/passwd (its name is unknown to git, ssh and pip; git commit needs user.name and user.email, from git config or GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL)", r.who())
	}
	switch why := unusable(given); {
	case why == "":
		r.Home = given
	default:
		r.HomeWhy = why
		home, err := r.ownHome(o.TempDir)
		if err != nil {
			r.Home = given
			r.note(Warn, "HOME %s: %s, and boris could not make one of its own in %s (%v): commands and language servers that keep caches or settings there (pip, go, npm, jedi) will fail; mount a writable directory and set HOME to it", orUnset(given), why, o.TempDir, err)
			break
		}
		r.Home = home
		r.set("HOME", home)
		r.note(Info, "HOME %s: %s; commands and language servers get HOME=%s (boris's own, mode 0700; caches of go, pip, npm and jedi go there)", orUnset(given), why, home)
	}
	if c, ok := env["XDG_CACHE_HOME"]; ok && c != "" {
		if why := unusable(c); why != "" {
			r.Cache = filepath.Join(r.Home, ".cache")
			r.set("XDG_CACHE_HOME", r.Cache)
			r.note(Info, "XDG_CACHE_HOME %s: %s; commands and language servers get XDG_CACHE_HOME=%s", c, why, r.Cache)
		}
	} else if r.HomeWhy != "" && r.Home != given {
		// Said outright, for programs that read only XDG_CACHE_HOME.
		r.Cache = filepath.Join(r.Home, ".cache")
		r.set("XDG_CACHE_HOME", r.Cache)
	}
	if r.ReadOnlyRoot {
		tmp := o.TempDir
		if tmp == "" {
			tmp = os.TempDir()
		}
		var can, cannot []string
		for _, d := range append(append([]string(nil), roots(o)...), tmp, r.Home) {
			if d == "" || slices.Contains(can, d) || slices.Contains(cannot, d) {
				continue
			}
			if unix.Access(d, unix.W_OK) == nil {
				can = append(can, d)
			} else {
				cannot = append(cannot, d)
			}
		}
		msg := "the root filesystem is read-only: commands can write only to mounted volumes; writable: " + orNone(can)
		if len(cannot) > 0 {
			msg += "; not writable: " + strings.Join(cannot, ", ") + " (mount a volume there, e.g. docker run --tmpfs /tmp)"
		}
		r.note(Info, "%s", msg)
	}
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

func orUnset(s string) string {
	if s == "" {
		return "(unset)"
	}
	return s
}

// unusable says why dir cannot serve as a home or cache directory ("" if
// it can: an existing directory this user may write).
func unusable(dir string) string {
	if dir == "" {
		return "unset"
	}
	if !filepath.IsAbs(dir) {
		return "not an absolute path"
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// A missing home is made by whoever needs it, if its parent
		// lets them.
		if unix.Access(filepath.Dir(dir), unix.W_OK) == nil {
			return ""
		}
		return "does not exist and cannot be created"
	case err != nil:
		return err.Error()
	case !fi.IsDir():
		return "not a directory"
	}
	if err := unix.Access(dir, unix.W_OK); err != nil {
		if errors.Is(err, unix.EROFS) {
			return "on a read-only filesystem"
		}
		return "not writable by this user"
	}
	return ""
}

// ownHome makes (or reuses) boris's home for this uid in the temp
// directory: boris-home-UID, mode 0700, owned by this user. One another
// user made first is not used; a fresh random one is made instead.
func (r *Report) ownHome(tmp string) (string, error) {
	if tmp == "" {
		tmp = os.TempDir()
	}
	dir := filepath.Join(tmp, "boris-home-"+strconv.Itoa(r.UID))
	err := os.Mkdir(dir, 0o700)
	if err == nil || errors.Is(err, fs.ErrExist) {
		fi, lerr := os.Lstat(dir)
		if lerr == nil && fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0 && ownedBy(fi, r.UID) && fi.Mode().Perm()&0o077 == 0 {
			return dir, nil
		}
	}
	return os.MkdirTemp(tmp, "boris-home-"+strconv.Itoa(r.UID)+"-")
}

func ownedBy(fi fs.FileInfo, uid int) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == uid
}

func owner(fi fs.FileInfo) (uid, gid int) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), int(st.Gid)
	}
	return -1, -1
}

// shell says what commands run with when the image has no bash.
func (r *Report) shell(o Options) {
	if o.Shell == "" || o.ShellSource != "detected" || filepath.Base(o.Shell) == "bash" {
		return
	}
	r.note(Info, "shell: %s — this image has no /bin/bash, so the bash tool runs commands with %s: bash-only syntax ([[ ]], arrays, <(...), set -o pipefail on old shells) fails; add bash to the image or pass --shell", o.Shell, o.Shell)
}

// roots are the directories the agent works in.
func roots(o Options) []string {
	if len(o.Roots) > 0 {
		return o.Roots
	}
	if o.Workdir != "" {
		return []string{o.Workdir}
	}
	return nil
}

// workspace says who owns the workspace when it is not boris's user, and
// what that means for writing to it.
func (r *Report) workspace(o Options) {
	for _, dir := range roots(o) {
		fi, err := os.Stat(dir)
		if err != nil {
			continue
		}
		uid, gid := owner(fi)
		if uid < 0 || uid == r.UID {
			continue
		}
		writable := unix.Access(dir, unix.W_OK) == nil
		switch {
		case r.UID == 0:
			r.note(Warn, "workspace %s belongs to uid %d, gid %d and boris runs as root: files commands create there will belong to root (the file tools give the files they create the directory's owner); run boris as the owner instead (docker run --user %d:%d; Kubernetes: runAsUser %d, runAsGroup %d)", dir, uid, gid, uid, gid, uid, gid)
		case !writable:
			r.note(Warn, "workspace %s belongs to uid %d, gid %d and boris runs as %s, which cannot write it: every edit and every command writing there will fail with permission denied. Run boris as the owner (docker run --user %d:%d; Kubernetes: runAsUser %d, runAsGroup %d, or an fsGroup the volume honours)", dir, uid, gid, r.who(), uid, gid, uid, gid)
		default:
			r.note(Info, "workspace %s belongs to uid %d, gid %d; boris runs as %s and may write it (through its group or mode): files it creates belong to uid %d, edited files keep their owner where the kernel allows", dir, uid, gid, r.who(), r.UID)
		}
	}
}

// git gives commands safe.directory entries for the workspace when git is
// there, so that a checkout another uid owns is not refused as of
// "dubious ownership". It goes through GIT_CONFIG_COUNT (git 2.31+),
// appended to any entries the environment already has, so no user's or
// system's git configuration file is written.
func (r *Report) git(o Options, env map[string]string) {
	if o.LookPath == nil {
		return
	}
	if _, err := o.LookPath("git"); err != nil {
		return
	}
	var dirs, foreign []string
	add := func(d string, fi fs.FileInfo) {
		if slices.Contains(dirs, d) {
			return
		}
		dirs = append(dirs, d)
		if uid, _ := owner(fi); uid >= 0 && uid != r.UID {
			foreign = append(foreign, d)
		}
	}
	for _, root := range roots(o) {
		fi, err := os.Stat(root)
		if err != nil {
			continue
		}
		add(root, fi)
		// The repository the root is inside of, when it is not the root.
		if top := repoAbove(root); top != "" && top != root {
			if tfi, err := os.Stat(top); err == nil {
				add(top, tfi)
			}
		}
		// Checkouts one level down (a directory of projects mounted).
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			sub := filepath.Join(root, e.Name())
			if _, err := os.Lstat(filepath.Join(sub, ".git")); err != nil {
				continue
			}
			if sfi, err := os.Stat(sub); err == nil {
				add(sub, sfi)
			}
		}
	}
	if len(dirs) == 0 {
		return
	}
	n := 0
	if c := env["GIT_CONFIG_COUNT"]; c != "" {
		if v, err := strconv.Atoi(c); err == nil && v >= 0 {
			n = v
		}
	}
	for _, d := range dirs {
		r.set(fmt.Sprintf("GIT_CONFIG_KEY_%d", n), "safe.directory")
		r.set(fmt.Sprintf("GIT_CONFIG_VALUE_%d", n), d)
		n++
	}
	r.set("GIT_CONFIG_COUNT", strconv.Itoa(n))
	r.SafeDirs = dirs
	if len(foreign) > 0 {
		r.note(Info, "git: %s belong%s to another uid; commands get safe.directory for %s through GIT_CONFIG_COUNT (no git configuration file is written), so git works there", strings.Join(foreign, ", "), pluralS(len(foreign)), strings.Join(dirs, ", "))
	}
}

func pluralS(n int) string {
	if n == 1 {
		return "s"
	}
	return ""
}

// repoAbove returns the nearest directory at or above dir holding .git
// ("" when none).
func repoAbove(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

func envMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}
