// Package gitrepo reads what a git work tree already holds — its index
// (the stat data and blob id of every tracked file) and its object store
// (loose objects, packs, alternates) — without running git, so that the
// checkpoints of a git work tree can name the blobs git keeps instead of
// copying the files, and copy a blob only once its working file changes.
//
// It reads and never writes, and it says no whenever it is unsure: an
// index of an unknown version or a split index, a repository using SHA-256
// object names, a configuration or attributes that may make a working file
// differ from its blob (line-ending conversion, clean/smudge filters,
// ident, working-tree encodings) all make Open or Clean refuse, and the
// caller copies the file as it would without git.
package gitrepo

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// ID is a git object name (SHA-1).
type ID [20]byte

func (id ID) String() string { return fmt.Sprintf("%x", id[:]) }

// Repo is one git repository: its work tree top, its git directory and
// the directory its objects and configuration live in (the main one, for a
// linked worktree).
type Repo struct {
	// Top is the work tree's top directory; GitDir holds its index;
	// Common holds objects and config.
	Top, GitDir, Common string

	imu   sync.Mutex
	index *Index
	ikey  statKey

	omu  sync.Mutex
	odb  *odb
	home string
}

// statKey tells versions of a file apart.
type statKey struct {
	ino, size    int64
	mtime, ctime int64
}

func keyOf(st *unix.Stat_t) statKey {
	return statKey{int64(st.Ino), st.Size, st.Mtim.Nano(), st.Ctim.Nano()}
}

// ErrUnsupported says the repository is of a kind this package does not
// read (the caller copies files instead).
var ErrUnsupported = errors.New("unsupported git repository")

// Open opens the repository whose work tree top is top (the directory
// holding .git, a directory or a "gitdir:" file). home is the user's home
// directory, whose git configuration and attributes are consulted ("" to
// skip). It refuses repositories whose working files may differ from
// their blobs.
func Open(top, home string) (*Repo, error) {
	gd, err := resolveGitDir(filepath.Join(top, ".git"))
	if err != nil {
		return nil, err
	}
	r := &Repo{Top: top, GitDir: gd, Common: gd, home: home}
	if b, err := os.ReadFile(filepath.Join(gd, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gd, c)
		}
		r.Common = filepath.Clean(c)
	}
	if _, err := os.Stat(filepath.Join(r.Common, "objects")); err != nil {
		return nil, fmt.Errorf("%w: %s has no objects directory", ErrUnsupported, r.Common)
	}
	if why := r.converts(); why != "" {
		return nil, fmt.Errorf("%w: %s", ErrUnsupported, why)
	}
	r.odb = newODB(filepath.Join(r.Common, "objects"))
	return r, nil
}

// resolveGitDir follows a "gitdir: path" file (submodules, linked
// worktrees) to the git directory.
func resolveGitDir(dotgit string) (string, error) {
	var st unix.Stat_t
	if err := unix.Lstat(dotgit, &st); err != nil {
		return "", err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return dotgit, nil
	case unix.S_IFREG:
		b, err := os.ReadFile(dotgit)
		if err != nil {
			return "", err
		}
		s := strings.TrimSpace(string(b))
		p, ok := strings.CutPrefix(s, "gitdir:")
		if !ok {
			return "", fmt.Errorf("%w: %s is not a gitdir file", ErrUnsupported, dotgit)
		}
		p = strings.TrimSpace(p)
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(dotgit), p)
		}
		return filepath.Clean(p), nil
	}
	return "", fmt.Errorf("%w: %s is neither a directory nor a file", ErrUnsupported, dotgit)
}

// converts says why working files of the repository may differ from
// their blobs ("" when they cannot, as far as the configuration and the
// attributes outside the work tree tell; the work tree's own
// .gitattributes files are judged by AttributesConvert as they are found).
func (r *Repo) converts() string {
	var files []string
	files = append(files, filepath.Join(r.Common, "config"))
	if r.GitDir != r.Common {
		files = append(files, filepath.Join(r.GitDir, "config.worktree"))
	}
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && r.home != "" {
		xdg = filepath.Join(r.home, ".config")
	}
	if r.home != "" {
		files = append(files, filepath.Join(r.home, ".gitconfig"))
	}
	if xdg != "" {
		files = append(files, filepath.Join(xdg, "git", "config"))
	}
	files = append(files, "/etc/gitconfig", "/usr/local/etc/gitconfig")
	if p := os.Getenv("GIT_CONFIG_GLOBAL"); p != "" {
		files = append(files, p)
	}
	if p := os.Getenv("GIT_CONFIG_SYSTEM"); p != "" {
		files = append(files, p)
	}
	if os.Getenv("GIT_CONFIG_COUNT") != "" || os.Getenv("GIT_CONFIG_PARAMETERS") != "" {
		return "git configuration is given in the environment (GIT_CONFIG_COUNT, GIT_CONFIG_PARAMETERS)"
	}
	attrs := []string{filepath.Join(r.Common, "info", "attributes"), "/etc/gitattributes", "/usr/local/etc/gitattributes"}
	if xdg != "" {
		attrs = append(attrs, filepath.Join(xdg, "git", "attributes"))
	}
	seen := map[string]bool{}
	for len(files) > 0 {
		f := files[0]
		files = files[1:]
		if seen[f] || len(seen) > 32 {
			continue
		}
		seen[f] = true
		c, err := readConfig(f)
		if err != nil {
			continue
		}
		for _, kv := range c {
			switch {
			case kv.key == "core.autocrlf" && !isFalse(kv.val):
				return "core.autocrlf is set in " + f
			case kv.key == "core.eol" && strings.EqualFold(kv.val, "crlf"):
				return "core.eol is crlf in " + f
			case kv.key == "extensions.objectformat" && !strings.EqualFold(kv.val, "sha1"):
				return "objects are named with " + kv.val + " in " + f
			case kv.key == "core.attributesfile":
				attrs = append(attrs, expandHome(kv.val, r.home))
			case kv.key == "include.path" || (strings.HasPrefix(kv.key, "includeif.") && strings.HasSuffix(kv.key, ".path")):
				p := expandHome(kv.val, r.home)
				if !filepath.IsAbs(p) {
					p = filepath.Join(filepath.Dir(f), p)
				}
				files = append(files, p)
			}
		}
	}
	for _, a := range attrs {
		b, err := os.ReadFile(a)
		if err != nil {
			continue
		}
		if AttributesConvert(b) {
			return "the attributes in " + a + " convert working files (text, eol, filter, ident or working-tree-encoding)"
		}
	}
	return ""
}

func isFalse(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "no", "off", "0":
		return true
	}
	return false
}

func expandHome(p, home string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
		return filepath.Join(home, rest)
	}
	return p
}

type configKV struct{ key, val string }

// readConfig reads the keys of a git configuration file, lower-cased as
// section.subsection.name (subsections keep their case only for include
// conditions, which are not interpreted: every included file is read).
func readConfig(path string) ([]configKV, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []configKV
	section := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			head := line[1:end]
			name, sub, hasSub := strings.Cut(head, " ")
			section = strings.ToLower(strings.TrimSpace(name))
			if hasSub {
				section += "." + strings.Trim(strings.TrimSpace(sub), `"`)
			}
			section = strings.ToLower(section)
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		k, v, hasV := strings.Cut(line, "=")
		k = strings.ToLower(strings.TrimSpace(k))
		v = strings.TrimSpace(v)
		if i := strings.IndexAny(v, "#;"); i >= 0 && !strings.Contains(v[:i], `"`) {
			v = strings.TrimSpace(v[:i])
		}
		v = strings.Trim(v, `"`)
		if !hasV {
			v = "true"
		}
		out = append(out, configKV{section + "." + k, v})
	}
	return out, sc.Err()
}

// AttributesConvert says whether a gitattributes text sets an attribute
// that makes git convert a file between its blob and its working copy:
// text, eol, crlf, filter, ident, working-tree-encoding (unset with "-"
// is no conversion; anything else, even "!" which falls back to the
// configuration, counts).
func AttributesConvert(b []byte) bool {
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		for _, a := range fields[1:] {
			if strings.HasPrefix(a, "-") {
				continue
			}
			a = strings.TrimPrefix(a, "!")
			name, _, _ := strings.Cut(a, "=")
			switch strings.ToLower(name) {
			case "text", "eol", "crlf", "filter", "ident", "working-tree-encoding":
				return true
			}
		}
	}
	return false
}

// Index returns the repository's index as it is now, read again when the
// file changed since the last call. A missing index is an empty one.
func (r *Repo) Index() (*Index, error) {
	path := filepath.Join(r.GitDir, "index")
	r.imu.Lock()
	defer r.imu.Unlock()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			r.index, r.ikey = &Index{}, statKey{}
			return r.index, nil
		}
		return nil, err
	}
	k := keyOf(&st)
	if r.index != nil && k == r.ikey {
		return r.index, nil
	}
	idx, err := ReadIndex(path)
	if err != nil {
		r.index, r.ikey = nil, statKey{}
		return nil, err
	}
	r.index, r.ikey = idx, k
	return idx, nil
}

// Has says whether the object store holds the object.
func (r *Repo) Has(id ID) bool {
	r.omu.Lock()
	defer r.omu.Unlock()
	return r.odb.has(id)
}

// Blob reads a blob, checked against its name.
func (r *Repo) Blob(id ID) ([]byte, error) {
	r.omu.Lock()
	defer r.omu.Unlock()
	return r.odb.blob(id)
}

// Close releases the repository's open files.
func (r *Repo) Close() {
	r.omu.Lock()
	defer r.omu.Unlock()
	r.odb.close()
}
