package main

import (
	"context"
	"fmt"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/bench/internal/kit"
)

// The cost of an edit's diagnostics, per language server, on a real
// project each: the answer of a str_replace with diagnostics off, on with
// the default wait, and on waiting as long as it takes (--diagnostics-wait
// at its 10 s maximum: how long the server itself takes to report), in the
// same rounds.

// project is a real project a server is measured on.
type project struct {
	lang    string // --lsp name
	title   string
	file    string // the edited file, relative to the tree
	comment string // how a line comment starts
	// anchor is a line of file after which the benchmark's comment goes.
	anchor string
	// bad replaces anchor to introduce an error whose message holds msg.
	bad, msg string
	// lay copies the project into dir; it returns what it is.
	lay func(dir string) (string, error)
}

var projects = []project{
	{
		lang: "go", title: "Go", file: "decode.go", comment: "//",
		anchor: "func (md *MetaData) unify(data any, rv reflect.Value) error {",
		bad:    "func (md *MetaData) unify(data any, rv reflect.Value) error {\n\tundefinedThing++",
		msg:    "undefined: undefinedThing",
		lay: func(dir string) (string, error) {
			out, err := exec.Command("go", "env", "GOMODCACHE").Output()
			if err != nil {
				return "", err
			}
			src := filepath.Join(strings.TrimSpace(string(out)), "github.com", "!burnt!sushi", "toml@v1.6.0")
			if _, err := os.Stat(src); err != nil {
				return "", fmt.Errorf("%v: run `go mod download github.com/BurntSushi/toml@v1.6.0`", err)
			}
			return "BurntSushi/toml v1.6.0 (module cache), decode.go", copyDir(src, dir, func(rel string) bool { return !strings.HasPrefix(rel, "testdata") })
		},
	},
	{
		lang: "python", title: "Python", file: "src/flask/helpers.py", comment: "#",
		anchor: "def get_debug_flag() -> bool:",
		bad:    "def get_debug_flag() -> bool:\n    undefined_thing",
		msg:    "undefined name 'undefined_thing'",
		lay: func(dir string) (string, error) {
			const src = "/usr/lib/python3/dist-packages/flask"
			if _, err := os.Stat(filepath.Join(src, "helpers.py")); err != nil {
				return "", fmt.Errorf("%v: apt-get install python3-flask (Debian's flask 2.2.2)", err)
			}
			if err := copyDir(src, filepath.Join(dir, "src", "flask"), func(rel string) bool { return !strings.Contains(rel, "__pycache__") }); err != nil {
				return "", err
			}
			return "pallets/flask 2.2.2 (Debian's python3-flask), src/flask/helpers.py", os.WriteFile(filepath.Join(dir, "pyproject.toml"), []byte("[project]\nname = \"Flask\"\n"), 0o644)
		},
	},
	{
		lang: "c", title: "C", file: "gzlog.c", comment: "//",
		anchor: "local void log_touch(struct log *log)",
		bad:    "local void log_touch(struct log *log)\nint bad = nosuch;",
		msg:    "Use of undeclared identifier 'nosuch'",
		lay: func(dir string) (string, error) {
			const src = "/usr/share/doc/zlib1g-dev/examples"
			if _, err := os.Stat(filepath.Join(src, "gzlog.c")); err != nil {
				return "", fmt.Errorf("%v: apt-get install zlib1g-dev", err)
			}
			if err := copyDir(src, dir, func(rel string) bool { return strings.HasPrefix(rel, "gzlog.") }); err != nil {
				return "", err
			}
			return "zlib's examples/gzlog.c (Debian's zlib1g-dev)", os.WriteFile(filepath.Join(dir, "compile_flags.txt"), []byte("-xc\n-std=c11\n-D_POSIX_C_SOURCE=200809L\n"), 0o644)
		},
	},
}

func copyDir(src, dst string, keep func(rel string) bool) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel != "." && !keep(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
}

// config is one way of running boris in the rounds.
type config struct {
	name string
	args []string
	on   bool
	bin  string // another boris binary ("": the one measured)
}

var configs = []config{
	{"off", []string{"--diagnostics=off"}, false, ""},
	{"on", nil, true, ""},
	{"on, wait 10s", []string{"--diagnostics-wait=10s"}, true, ""},
}

// instance is one boris of a config on a tree of its own.
type instance struct {
	cfg  config
	tree string
	cs   *mcp.ClientSession
	cmd  *exec.Cmd
	seq  int // the benchmark comment's counter
	owed int // errors made whose report has not come yet
}

func (in *instance) close() {
	in.cs.Close()
	_ = in.cmd.Wait()
}

// serverStats are the figures of one config on one project.
type serverStats struct {
	first, warm          []time.Duration
	firstLate, warmLate  int // answers whose diagnostics were not all in them
	broke, brokeReported int // error edits, and those whose error the answer held
	brokeLater           int // error edits whose error came with a later answer instead
	brokeNever           int // error edits whose error no answer of the round held
}

// lateMarkers are the texts that say an answer's diagnostics were not all
// known when it went out.
var lateMarkers = []string{"has not reported", "still starting", "did not report"}

func late(text string) bool {
	for _, m := range lateMarkers {
		if strings.Contains(text, m) {
			return true
		}
	}
	return false
}

// servers measures each project's edits: firsts rounds of a fresh boris
// per config (the first edit after start), then warm rounds of edits.
func servers(ctx context.Context, bin, ref, tmp string, langs map[string][]string, firsts, warm int) {
	if ref != "" {
		configs = append(configs, config{"on, reference", nil, true, ref})
	}
	fmt.Printf("\nedit answers per language server (str_replace; p50 [p90]); configs interleaved in every round:\n")
	if ref != "" {
		fmt.Printf("(reference: %s with its defaults)\n", ref)
	}
	for _, p := range projects {
		argv, ok := langs[p.lang]
		if !ok {
			continue
		}
		base := filepath.Join(tmp, "srv-"+p.lang)
		what, err := p.lay(filepath.Join(base, "probe"))
		if err != nil {
			fmt.Printf("\n%s: skipped: %v\n", p.title, err)
			continue
		}
		fmt.Printf("\n%s, %s, %s\n", p.title, strings.Join(argv, " "), what)
		stats := make([]serverStats, len(configs))
		var ins0 []*instance
		start := func(round int, c config) *instance {
			tree := filepath.Join(base, fmt.Sprintf("r%d-%s", round, strings.NewReplacer(" ", "", ",", "").Replace(c.name)))
			if _, err := p.lay(tree); err != nil {
				log.Fatal(err)
			}
			// The benchmark's comment, under the anchor.
			path := filepath.Join(tree, p.file)
			data, err := os.ReadFile(path)
			if err != nil {
				log.Fatal(err)
			}
			if !strings.Contains(string(data), p.anchor+"\n") {
				log.Fatalf("%s: anchor %q not found", p.file, p.anchor)
			}
			data = []byte(strings.Replace(string(data), p.anchor+"\n", p.anchor+"\n"+p.comment+" bench 0\n", 1))
			if err := os.WriteFile(path, data, 0o644); err != nil {
				log.Fatal(err)
			}
			args := append([]string{"--workdir=" + tree, "--lsp", p.lang + "=" + shellJoin(argv)}, c.args...)
			b := bin
			if c.bin != "" {
				b = c.bin
			}
			cs, cmd := kit.Stdio(ctx, b, args...)
			return &instance{cfg: c, tree: tree, cs: cs, cmd: cmd}
		}
		// later counts the errors an answer brings that earlier edits
		// made and their answers did not hold.
		later := func(i int, text string) {
			in := ins0[i]
			if in == nil || in.owed == 0 {
				return
			}
			n := min(strings.Count(text, p.msg), in.owed)
			in.owed -= n
			stats[i].brokeLater += n
		}
		// bump edits the comment: an edit that breaks nothing.
		bump := func(i int, in *instance) (time.Duration, string) {
			old := fmt.Sprintf("%s bench %d", p.comment, in.seq)
			in.seq++
			t0 := time.Now()
			text := callAll(ctx, in.cs, "str_replace", map[string]any{"path": p.file, "old_str": old, "new_str": fmt.Sprintf("%s bench %d", p.comment, in.seq)})
			d := time.Since(t0)
			later(i, text)
			return d, text
		}
		// First edit after start: view (which starts the server in the
		// background), then edit at once.
		for r := range firsts {
			ins := make([]*instance, len(configs))
			for i, c := range configs {
				ins[i] = start(r, c)
			}
			ins0 = ins
			for k := range configs {
				i := (k + r) % len(configs)
				kit.Call(ctx, ins[i].cs, "view", map[string]any{"path": p.file})
				d, text := bump(i, ins[i])
				stats[i].first = append(stats[i].first, d)
				if configs[i].on && late(text) {
					stats[i].firstLate++
				}
			}
			if r < firsts-1 {
				for _, in := range ins {
					in.close()
				}
				continue
			}
			// The last round's servers stay for the warm rounds: let
			// them settle first (the diagnostics of the file known).
			for _, in := range ins {
				if in.cfg.on {
					kit.Call(ctx, in.cs, "lsp", map[string]any{"operation": "diagnostics", "filePath": p.file})
				}
			}
			for w := range warm {
				for k := range configs {
					i := (k + w) % len(configs)
					d, text := bump(i, ins[i])
					stats[i].warm = append(stats[i].warm, d)
					if configs[i].on && late(text) {
						stats[i].warmLate++
					}
				}
				// Every fourth round, an edit that introduces an error,
				// and its fix.
				if w%4 != 3 {
					continue
				}
				for i, in := range ins {
					if !in.cfg.on {
						continue
					}
					stats[i].broke++
					text := callAll(ctx, in.cs, "str_replace", map[string]any{"path": p.file, "old_str": p.anchor + "\n", "new_str": p.bad + "\n"})
					later(i, text)
					if strings.Contains(text, p.msg) {
						stats[i].brokeReported++
					} else {
						in.owed++
					}
					later(i, callAll(ctx, in.cs, "str_replace", map[string]any{"path": p.file, "old_str": p.bad + "\n", "new_str": p.anchor + "\n"}))
				}
			}
			// What is still owed comes with a later answer, or never.
			for i, in := range ins {
				for try := 0; in.owed > 0 && try < 50; try++ {
					later(i, callAll(ctx, in.cs, "view", map[string]any{"path": p.file, "view_range": []int{1, 1}}))
					time.Sleep(100 * time.Millisecond)
				}
				stats[i].brokeNever += in.owed
			}
			for _, in := range ins {
				in.close()
			}
		}
		if len(stats[0].warm) == 0 {
			continue
		}
		fmt.Printf("  %-14s %-22s %-10s %-22s %-10s %s\n", "", "first edit after start", "added", "warm edit", "added", "answers without all their diagnostics (first; warm)")
		offFirst, offWarm := kit.Pct(stats[0].first, 50), kit.Pct(stats[0].warm, 50)
		for i, c := range configs {
			s := stats[i]
			addedFirst, addedWarm, lateText := "", "", ""
			if c.on {
				addedFirst = round(kit.Pct(s.first, 50) - offFirst).String()
				addedWarm = round(kit.Pct(s.warm, 50) - offWarm).String()
				lateText = fmt.Sprintf("%d/%d; %d/%d", s.firstLate, len(s.first), s.warmLate, len(s.warm))
				if s.broke > 0 {
					lateText += fmt.Sprintf(" (edits making an error: %d; the error in their answer: %d, in a later one: %d, never: %d)", s.broke, s.brokeReported, s.brokeLater, s.brokeNever)
				}
			}
			fmt.Printf("  %-14s %-22s %-10s %-22s %-10s %s\n", c.name, cell(s.first), addedFirst, cell(s.warm), addedWarm, lateText)
		}
		startup(ctx, bin, base, p, argv)
	}
}

// startup times a fresh boris's first lsp answer about the project's file:
// the server's own start-up (and boris's), for scale.
func startup(ctx context.Context, bin, base string, p project, argv []string) {
	tree := filepath.Join(base, "probe")
	var ds []time.Duration
	for range 3 {
		t0 := time.Now()
		cs, cmd := kit.Stdio(ctx, bin, "--workdir="+tree, "--lsp", p.lang+"="+shellJoin(argv))
		kit.Call(ctx, cs, "lsp", map[string]any{"operation": "documentSymbol", "filePath": p.file})
		ds = append(ds, time.Since(t0))
		cs.Close()
		_ = cmd.Wait()
	}
	fmt.Printf("  start-up to the first lsp answer (boris and the server started): median %s (min %s, max %s) of 3\n", round(kit.Pct(ds, 50)), round(kit.Pct(ds, 0)), round(kit.Pct(ds, 100)))
}

// shellJoin writes argv as --lsp reads it.
func shellJoin(argv []string) string {
	var parts []string
	for _, a := range argv {
		if strings.ContainsAny(a, " '\"\\") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// serverCommands returns the servers to measure, by --lsp name: the pinned
// gopls, and the others as boris finds them on PATH. It says which of the
// servers boris knows are not installed.
func serverCommands(list, gopls string) map[string][]string {
	want := map[string]bool{}
	for _, l := range strings.Split(list, ",") {
		want[strings.TrimSpace(l)] = true
	}
	out := map[string][]string{}
	if want["go"] {
		out["go"] = []string{gopls}
	}
	find := func(lang string, cands ...[]string) {
		for _, c := range cands {
			if p, err := exec.LookPath(c[0]); err == nil {
				if err := exec.Command(p, "--version").Run(); err != nil {
					fmt.Printf("found but does not run (%s --version: %v): %s\n", p, err, c[0])
					continue
				}
				if want[lang] {
					out[lang] = append([]string{p}, c[1:]...)
				}
				return
			}
		}
		var names []string
		for _, c := range cands {
			names = append(names, c[0])
		}
		fmt.Printf("not installed: %s\n", strings.Join(names, ", "))
	}
	find("python", []string{"pyright-langserver", "--stdio"}, []string{"basedpyright-langserver", "--stdio"}, []string{"pylsp"})
	find("c", []string{"clangd", "--log=error"})
	find("typescript", []string{"typescript-language-server", "--stdio"})
	find("rust", []string{"rust-analyzer"})
	return out
}
