package walk

import (
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/boris-mcp/boris/internal/ignore"
	"github.com/boris-mcp/boris/internal/scope"
)

// The rules of what a walk skips, exported for other walkers of the same
// trees (the checkpoint scanner), so that grep, find and checkpoints agree
// on what the workspace holds.
const (
	// GitDir is skipped at any depth; a directory holding it starts a new
	// repository, where the .gitignore rules from above no longer apply.
	GitDir = ".git"
	// NodeModules is skipped at any depth, ignored or not.
	NodeModules = "node_modules"
	// IgnoreFile is the name of the files holding ignore rules.
	IgnoreFile = ".gitignore"
)

// Skipped reports whether a directory entry is never part of a walk,
// whatever the ignore rules say.
func Skipped(name string) bool { return name == GitDir || name == NodeModules }

// AncestorIgnores loads the .gitignore files above root, up to the nearest
// directory holding ".git", as a stack to start root's rules from. Outside
// a repository there are none. With a restricted policy, files it denies
// are not read.
func AncestorIgnores(root string, policy *scope.Policy) *ignore.Stack {
	if exists(filepath.Join(root, GitDir)) {
		return nil
	}
	type level struct {
		f   *ignore.File
		rel string
	}
	var levels []level
	for d := root; d != "/"; {
		d = filepath.Dir(d)
		p := filepath.Join(d, IgnoreFile)
		if policy == nil || policy.Check(p) == nil {
			if f := readIgnorePath(p); f != nil {
				rel, _ := filepath.Rel(d, root)
				levels = append(levels, level{f, filepath.ToSlash(rel)})
			}
		}
		if exists(filepath.Join(d, GitDir)) {
			var st *ignore.Stack
			for i := len(levels) - 1; i >= 0; i-- {
				st = st.PushAbove(levels[i].f, levels[i].rel)
			}
			return st
		}
	}
	return nil
}

// maxIgnoreFile mirrors git, which ignores larger pattern files.
const maxIgnoreFile = 100 << 20

// ReadIgnoreAt reads ".gitignore" in the directory dirfd (nil when there
// is none or it holds no rules). Like git, it does not follow a symlink.
func ReadIgnoreAt(dirfd int) *ignore.File {
	fd, err := openat(dirfd, IgnoreFile, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK)
	if err != nil {
		return nil
	}
	return readIgnoreFD(fd)
}

// ReadDir calls fn for each entry of the open directory fd (without "."
// and "..") with its d_type (unix.DT_*, DT_UNKNOWN when the file system
// does not say) and inode number (0 when unknown). buf is scratch space
// for the raw records; 32 KB is a good size. name is only valid during
// the call.
func ReadDir(fd int, buf []byte, fn func(name []byte, typ uint8, ino uint64)) error {
	return readDir(fd, buf, fn)
}
