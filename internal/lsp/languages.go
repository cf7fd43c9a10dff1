package lsp

import (
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
