package scope

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxSymlinks bounds symlink expansion, as the kernel does (ELOOP).
const maxSymlinks = 255

// ErrSymlinkLoop is returned when resolving a path meets too many symlinks.
var ErrSymlinkLoop = errors.New("too many levels of symbolic links")

// Resolve returns the location an absolute path refers to: every symlink
// expanded and every ".." applied after the expansion of what precedes it,
// as the kernel does. Unlike filepath.EvalSymlinks, a path whose tail does not
// exist yet resolves too (the missing part is appended as written), so a file
// about to be created can be checked. exists reports whether the whole path
// exists.
func Resolve(path string) (resolved string, exists bool, err error) {
	if !filepath.IsAbs(path) {
		return "", false, errors.New("path is not absolute: " + path)
	}
	if strings.IndexByte(path, 0) >= 0 {
		return "", false, errors.New("path contains a NUL byte")
	}
	// todo holds the components still to walk, resolved is what is done.
	todo := path
	resolved = "/"
	links := 0
	for todo != "" {
		var comp string
		comp, todo = nextComponent(todo)
		switch comp {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, comp)
		fi, lerr := os.Lstat(next)
		if lerr != nil {
			if errors.Is(lerr, fs.ErrNotExist) || errors.Is(lerr, syscall.ENOTDIR) {
				// The rest does not exist: append it lexically.
				rest := filepath.Join(next, todo)
				return filepath.Clean(rest), false, nil
			}
			return "", false, lerr
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		links++
		if links > maxSymlinks {
			return "", false, ErrSymlinkLoop
		}
		target, rerr := os.Readlink(next)
		if rerr != nil {
			return "", false, rerr
		}
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		if todo == "" {
			todo = target
		} else {
			todo = target + "/" + todo
		}
	}
	return resolved, true, nil
}

// nextComponent splits the first slash-separated component off p.
func nextComponent(p string) (comp, rest string) {
	p = strings.TrimLeft(p, "/")
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i], p[i+1:]
	}
	return p, ""
}

// Within reports whether path is dir or inside it. Both must be clean and
// absolute.
func Within(path, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == dir || (strings.HasPrefix(path, dir) && path[len(dir)] == '/')
}
