package glob

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// types maps a file type name to the base-name globs of its files, in the
// spirit of ripgrep's default type list.
var types = map[string][]string{
	"ada":        {"*.adb", "*.ads"},
	"asm":        {"*.asm", "*.s", "*.S"},
	"awk":        {"*.awk"},
	"bat":        {"*.bat", "*.cmd"},
	"bazel":      {"*.bazel", "*.bzl", "*.BUILD", "*.bazelrc", "BUILD", "MODULE.bazel", "WORKSPACE", "WORKSPACE.bazel"},
	"c":          {"*.c", "*.h", "*.H", "*.cats"},
	"clojure":    {"*.clj", "*.cljc", "*.cljs", "*.cljx", "*.edn"},
	"cmake":      {"*.cmake", "CMakeLists.txt"},
	"coffee":     {"*.coffee"},
	"cpp":        {"*.C", "*.cc", "*.cpp", "*.cxx", "*.c++", "*.h", "*.H", "*.hh", "*.hpp", "*.hxx", "*.h++", "*.inl", "*.ipp", "*.tpp", "*.cppm", "*.ixx"},
	"crystal":    {"*.cr", "*.ecr", "Projectfile", "shard.yml"},
	"cs":         {"*.cs", "*.csx"},
	"csproj":     {"*.csproj", "*.sln", "*.props", "*.targets"},
	"css":        {"*.css", "*.scss", "*.sass", "*.less"},
	"csv":        {"*.csv", "*.tsv"},
	"cuda":       {"*.cu", "*.cuh"},
	"cython":     {"*.pyx", "*.pxi", "*.pxd"},
	"d":          {"*.d"},
	"dart":       {"*.dart"},
	"docker":     {"Dockerfile", "Dockerfile.*", "*.Dockerfile", "*.dockerfile", "Containerfile", "Containerfile.*", ".dockerignore"},
	"elixir":     {"*.ex", "*.exs", "*.eex", "*.heex", "*.leex"},
	"elm":        {"*.elm"},
	"erlang":     {"*.erl", "*.hrl"},
	"fish":       {"*.fish"},
	"fortran":    {"*.f", "*.F", "*.f77", "*.F77", "*.f90", "*.F90", "*.f95", "*.F95", "*.f03", "*.F03", "*.for", "*.FOR", "*.pfo"},
	"fsharp":     {"*.fs", "*.fsx", "*.fsi"},
	"gleam":      {"*.gleam"},
	"go":         {"*.go"},
	"gomod":      {"go.mod", "go.sum", "go.work", "go.work.sum"},
	"gradle":     {"*.gradle", "*.gradle.kts"},
	"graphql":    {"*.graphql", "*.graphqls", "*.gql"},
	"groovy":     {"*.groovy", "*.gradle"},
	"h":          {"*.h", "*.H", "*.hh", "*.hpp", "*.hxx", "*.h++", "*.inl"},
	"haskell":    {"*.hs", "*.lhs", "*.cabal"},
	"hcl":        {"*.hcl", "*.tf", "*.tfvars", "*.nomad"},
	"html":       {"*.htm", "*.html", "*.xhtml", "*.ejs", "*.hbs", "*.mustache"},
	"ini":        {"*.ini", "*.cfg", "*.conf", "*.properties"},
	"java":       {"*.java", "*.jsp", "*.jspx", "*.properties"},
	"jinja":      {"*.j2", "*.jinja", "*.jinja2"},
	"js":         {"*.js", "*.jsx", "*.mjs", "*.cjs"},
	"json":       {"*.json", "*.jsonc", "*.json5", "*.jsonl", "*.ndjson", "*.geojson", "composer.lock", ".babelrc", ".eslintrc", ".prettierrc"},
	"julia":      {"*.jl"},
	"jupyter":    {"*.ipynb"},
	"kotlin":     {"*.kt", "*.kts"},
	"lean":       {"*.lean"},
	"lisp":       {"*.el", "*.jl", "*.lisp", "*.lsp", "*.sc", "*.scm"},
	"lock":       {"*.lock", "package-lock.json", "pnpm-lock.yaml", "go.sum"},
	"lua":        {"*.lua"},
	"make":       {"Makefile", "makefile", "GNUmakefile", "Makefile.*", "*.mk", "*.mak", "Kbuild", "Kconfig"},
	"markdown":   {"*.md", "*.markdown", "*.mdown", "*.mdwn", "*.mkd", "*.mkdn", "*.mdx"},
	"meson":      {"meson.build", "meson_options.txt", "meson.options"},
	"nim":        {"*.nim", "*.nimble", "*.nims"},
	"nix":        {"*.nix"},
	"objc":       {"*.h", "*.m"},
	"objcpp":     {"*.h", "*.mm"},
	"ocaml":      {"*.ml", "*.mli", "*.mll", "*.mly"},
	"org":        {"*.org", "*.org_archive"},
	"perl":       {"*.perl", "*.pl", "*.PL", "*.plh", "*.plx", "*.pm", "*.t"},
	"php":        {"*.php", "*.php3", "*.php4", "*.php5", "*.php7", "*.php8", "*.phtml", "*.pht"},
	"powershell": {"*.ps1", "*.psm1", "*.psd1", "*.ps1xml"},
	"proto":      {"*.proto"},
	"purescript": {"*.purs"},
	"py":         {"*.py", "*.pyi", "*.pyw"},
	"r":          {"*.R", "*.r", "*.Rmd", "*.Rnw"},
	"racket":     {"*.rkt"},
	"rst":        {"*.rst"},
	"ruby":       {"*.rb", "*.rbw", "*.gemspec", "*.rake", "*.erb", "Gemfile", "Rakefile", "Guardfile", "Vagrantfile", "config.ru", ".irbrc"},
	"rust":       {"*.rs"},
	"sass":       {"*.sass", "*.scss"},
	"scala":      {"*.scala", "*.sbt", "*.sc"},
	"sh":         {"*.sh", "*.bash", "*.zsh", "*.ksh", "*.csh", "*.tcsh", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".kshrc", ".cshrc"},
	"solidity":   {"*.sol"},
	"sql":        {"*.sql", "*.psql"},
	"svelte":     {"*.svelte"},
	"swift":      {"*.swift"},
	"tcl":        {"*.tcl", "*.tk"},
	"terraform":  {"*.tf", "*.tfvars", "*.tf.json"},
	"tex":        {"*.tex", "*.ltx", "*.cls", "*.sty", "*.bib", "*.bbx", "*.cbx", "*.dtx", "*.ins"},
	"toml":       {"*.toml", "Cargo.lock"},
	"ts":         {"*.ts", "*.tsx", "*.mts", "*.cts"},
	"txt":        {"*.txt"},
	"vim":        {"*.vim", ".vimrc", ".gvimrc", "vimrc", "gvimrc"},
	"vue":        {"*.vue"},
	"xml":        {"*.xml", "*.xml.dist", "*.xsd", "*.xsl", "*.xslt", "*.svg", "*.dtd", "*.rng", "*.plist", "*.csproj", "*.fsproj", "*.vbproj"},
	"yaml":       {"*.yaml", "*.yml"},
	"zig":        {"*.zig"},
}

// aliases maps other common spellings to a name in types.
var aliases = map[string]string{
	"bash":       "sh",
	"shell":      "sh",
	"zsh":        "sh",
	"c++":        "cpp",
	"cxx":        "cpp",
	"hpp":        "cpp",
	"csharp":     "cs",
	"c#":         "cs",
	"f#":         "fsharp",
	"clj":        "clojure",
	"dockerfile": "docker",
	"ex":         "elixir",
	"erl":        "erlang",
	"golang":     "go",
	"hs":         "haskell",
	"htm":        "html",
	"javascript": "js",
	"jsx":        "js",
	"jl":         "julia",
	"ipynb":      "jupyter",
	"kt":         "kotlin",
	"makefile":   "make",
	"md":         "markdown",
	"ml":         "ocaml",
	"objectivec": "objc",
	"pl":         "perl",
	"ps1":        "powershell",
	"protobuf":   "proto",
	"python":     "py",
	"rb":         "ruby",
	"rs":         "rust",
	"tf":         "terraform",
	"typescript": "ts",
	"tsx":        "ts",
	"text":       "txt",
	"yml":        "yaml",
}

var (
	typeOnce     sync.Once
	typeMatchers map[string]*Matcher
)

// Type returns the matcher for a file type name or alias (case does not
// matter). An unknown name returns an error listing the valid names.
func Type(name string) (*Matcher, error) {
	typeOnce.Do(func() {
		typeMatchers = make(map[string]*Matcher, len(types))
		for n, globs := range types {
			typeMatchers[n] = compileBase(globs)
		}
	})
	key := strings.ToLower(strings.TrimSpace(name))
	if canon, ok := aliases[key]; ok {
		key = canon
	}
	if m, ok := typeMatchers[key]; ok {
		return m, nil
	}
	return nil, fmt.Errorf("unknown file type %q; valid types: %s (aliases: %s)", name, strings.Join(TypeNames(), ", "), strings.Join(aliasNames(), ", "))
}

// TypeNames returns the canonical type names, sorted.
func TypeNames() []string {
	names := make([]string, 0, len(types))
	for n := range types {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func aliasNames() []string {
	names := make([]string, 0, len(aliases))
	for a, c := range aliases {
		names = append(names, a+"→"+c)
	}
	slices.Sort(names)
	return names
}

// TypeGlobs returns the globs of a canonical type name, or nil.
func TypeGlobs(name string) []string { return slices.Clone(types[name]) }
