package lsp

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// Language is a family of files one language server handles.
type Language struct {
	// Name is the canonical name, as --lsp takes it.
	Name string
	// IDs maps a file extension (with the dot, lower case) to the
	// languageId the server expects for it.
	IDs map[string]string
	// Candidates are the default commands, the first found on PATH wins.
	Candidates [][]string
	// Markers are the files whose nearest directory is the workspace root.
	Markers []string
	// Install says how to get a server.
	Install string
	// Settings, if set, is sent with workspace/didChangeConfiguration once
	// the server is initialized, and its sections answer
	// workspace/configuration.
	Settings map[string]any
	// Launch, if set, returns how to start the server found as argv
	// (argv[0] a path): a faster way to run the same server, or argv.
	Launch func(argv []string) []string
}

// Languages are the languages boris knows a server for, by canonical name.
var Languages = []*Language{
	{
		Name:       "go",
		IDs:        map[string]string{".go": "go"},
		Candidates: [][]string{{"gopls"}},
		Markers:    []string{"go.mod"},
		Install:    "go install golang.org/x/tools/gopls@latest",
	},
	{
		Name: "c",
		IDs: map[string]string{".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp",
			".hh": "cpp", ".hpp": "cpp", ".hxx": "cpp", ".h++": "cpp", ".ipp": "cpp", ".m": "objective-c", ".mm": "objective-cpp"},
		// Errors only on stderr: clangd logs every request at info.
		Candidates: [][]string{{"clangd", "--log=error"}},
		Markers:    []string{"compile_commands.json", "compile_flags.txt", ".clangd", "build/compile_commands.json"},
		Install:    "apt-get install clangd",
	},
	{
		Name:       "python",
		IDs:        map[string]string{".py": "python", ".pyi": "python"},
		Candidates: [][]string{{"pyright-langserver", "--stdio"}, {"basedpyright-langserver", "--stdio"}, {"pylsp"}},
		Markers:    []string{"pyproject.toml", "setup.py", "setup.cfg", "pyrightconfig.json"},
		Install:    "apt-get install python3-pylsp python3-pyflakes, or npm install -g pyright",
		// pylsp: errors from pyflakes, not style warnings (pycodestyle,
		// pydocstyle) or complexity (mccabe). Other servers ignore it.
		Settings: map[string]any{"pylsp": map[string]any{"plugins": map[string]any{
			"pycodestyle": map[string]any{"enabled": false},
			"pydocstyle":  map[string]any{"enabled": false},
			"mccabe":      map[string]any{"enabled": false},
		}}},
		Launch: launchPylsp,
	},
	{
		Name: "typescript",
		IDs: map[string]string{".ts": "typescript", ".tsx": "typescriptreact", ".mts": "typescript", ".cts": "typescript",
			".js": "javascript", ".jsx": "javascriptreact", ".mjs": "javascript", ".cjs": "javascript"},
		Candidates: [][]string{{"typescript-language-server", "--stdio"}},
		Markers:    []string{"tsconfig.json", "jsconfig.json", "package.json"},
		Install:    "npm install -g typescript typescript-language-server",
	},
	{
		Name:       "rust",
		IDs:        map[string]string{".rs": "rust"},
		Candidates: [][]string{{"rust-analyzer"}},
		Markers:    []string{"Cargo.toml"},
		Install:    "rustup component add rust-analyzer",
	},
}

// Aliases are other names --lsp accepts for a language.
var Aliases = map[string]string{
	"golang": "go", "cpp": "c", "c++": "c", "cxx": "c", "objc": "c", "clangd": "c",
	"py": "python", "ts": "typescript", "js": "typescript", "javascript": "typescript", "tsx": "typescript",
	"rs": "rust",
}

// LanguageNamed returns the language a --lsp name means, or nil.
func LanguageNamed(name string) *Language {
	name = strings.ToLower(strings.TrimSpace(name))
	if a, ok := Aliases[name]; ok {
		name = a
	}
	for _, l := range Languages {
		if l.Name == name {
			return l
		}
	}
	return nil
}

// languageOf returns the language of a file by its extension, and the
// languageId to open it with.
func languageOf(path string) (*Language, string) {
	ext := strings.ToLower(filepath.Ext(path))
	if ext == "" {
		return nil, ""
	}
	for _, l := range Languages {
		if id, ok := l.IDs[ext]; ok {
			return l, id
		}
	}
	return nil, ""
}

// findRoot returns the workspace root of a file: the nearest directory
// above it holding one of the language's markers (for Go, a go.work above
// the module wins, as gopls expects), else workdir when the file lies in
// it, else the file's directory.
func findRoot(l *Language, file, workdir string) string {
	dir := filepath.Dir(file)
	root := ""
	for d := dir; ; d = filepath.Dir(d) {
		for _, m := range l.Markers {
			if _, err := os.Stat(filepath.Join(d, m)); err == nil {
				root = d
				break
			}
		}
		if root != "" || filepath.Dir(d) == d {
			break
		}
	}
	if l.Name == "go" && root != "" {
		for d := root; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
				root = d
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if root != "" {
		return root
	}
	if within(file, workdir) {
		return workdir
	}
	return dir
}

// within reports whether path is dir or inside it (both clean, absolute).
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator)) || dir == string(filepath.Separator)
}

// pylsp lints a file (pyflakes, for boris) half a second after the last
// change, a debounce fixed in its code (LINT_DEBOUNCE_S) that no setting
// changes, meant for an editor sending every keystroke; boris sends one
// change per edit. And pylsp before 1.8 publishes without the document's
// version. pylspFast starts pylsp with both changed: its lint runs at once
// (in a thread of its own, as after the debounce) and its diagnostics carry
// the version the lint read. Anything unexpected in pylsp's internals
// leaves it as it is; stderr says which it was.
const pylspFast = `import functools, inspect, sys, threading
def boris_fast():
    from pylsp import _utils, workspace
    debounce, stamp = _utils.debounce, threading.local()
    def fast(interval_s, keyed_by=None):
        def decorate(func):
            if func.__name__ != "lint":
                return debounce(interval_s, keyed_by)(func)
            def stamped(self, doc_uri, *args, **kwargs):
                doc = self._match_uri_to_workspace(doc_uri).documents.get(doc_uri)
                stamp.version = getattr(doc, "version", None)
                try:
                    return func(self, doc_uri, *args, **kwargs)
                finally:
                    stamp.version = None
            return debounce(0, keyed_by)(functools.update_wrapper(stamped, func))
        return decorate
    publish = workspace.Workspace.publish_diagnostics
    if len(inspect.signature(publish).parameters) == 3:
        def versioned(self, doc_uri, diagnostics):
            params = {"uri": doc_uri, "diagnostics": diagnostics}
            if getattr(stamp, "version", None) is not None:
                params["version"] = stamp.version
            self._endpoint.notify(self.M_PUBLISH_DIAGNOSTICS, params=params)
        workspace.Workspace.publish_diagnostics = versioned
    _utils.debounce = fast
try:
    boris_fast()
    print("boris: pylsp lints at once", file=sys.stderr)
except Exception as e:
    print("boris: pylsp runs as it is: %r" % (e,), file=sys.stderr)
from pylsp.__main__ import main
sys.argv[0] = "pylsp"
sys.exit(main())
`

// launchPylsp runs pylsp (a Python script) through pylspFast, with the
// interpreter its first line names; anything else is left as it is.
func launchPylsp(argv []string) []string {
	if filepath.Base(argv[0]) != "pylsp" {
		return argv
	}
	f, err := os.Open(argv[0])
	if err != nil {
		return argv
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	interp, ok := strings.CutPrefix(strings.TrimSpace(line), "#!")
	fields := strings.Fields(interp)
	if !ok || len(fields) == 0 || !strings.HasPrefix(filepath.Base(fields[len(fields)-1]), "python") {
		return argv
	}
	out := append(fields, "-c", pylspFast)
	return append(out, argv[1:]...)
}
