// Command search times boris's grep and find against ripgrep and fd on
// the same tree and prints the ratio.
//
//	go run ./bench/search [-tree DIR] [-runs N] [-via auto|mcp|lib] [-only NAME] [-rss]
//
// With -via mcp the boris binary is built from the repository and driven
// over MCP (stdio), so the times include the protocol; with -via lib the
// search package is called in-process. auto (the default) uses MCP when
// the built server offers grep and find, the library otherwise. Every
// command runs once to warm the page cache and N more times; the table
// shows medians. rg and fd get the flags that make them do the same work
// as boris: hidden files searched, .gitignore honoured outside a git
// repository too, .git and node_modules skipped, symlinks followed (grep).
// fd 8 cannot read .gitignore outside a repository, so on such trees it
// lists a few more files than boris (the results column shows both).
//
// With -rss (and -via mcp) every case gets a fresh server and the table
// adds its peak resident memory (VmHWM) after the case's runs.
//
// The Linux kernel tree used for the numbers in the report:
//
//	apt-get install -y linux-source-6.1
//	mkdir -p /tmp/linux && tar -xJf /usr/src/linux-source-6.1.tar.xz -C /tmp/linux
//	# Debian appends "/*" and "!/debian/" to the top .gitignore, which
//	# ignores the whole tree; drop that block to get the upstream file.
//	sed -i '/^# Debian packaging/,$d' /tmp/linux/linux-source-6.1/.gitignore
//	go run ./bench/search -tree /tmp/linux/linux-source-6.1
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/search"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench/search:", err)
		os.Exit(1)
	}
}

// benchCase is one measured call: a grep (Pattern set) or a find (Glob).
type benchCase struct {
	Name            string
	Pattern         string
	CaseInsensitive bool
	Include         string
	OutputMode      string
	Glob            string // find
}

func (c benchCase) isFind() bool { return c.Glob != "" }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench/search", flag.ContinueOnError)
	fs.SetOutput(stderr)
	goroot := strings.TrimSpace(goEnv("GOROOT"))
	tree := fs.String("tree", filepath.Join(goroot, "src"), "directory to search")
	runs := fs.Int("runs", 5, "timed runs per command (after one warm-up run)")
	via := fs.String("via", "auto", "how to call boris: auto, mcp (build and drive the server over stdio) or lib (call the search package)")
	only := fs.String("only", "", "run only the cases whose name contains this")
	rss := fs.Bool("rss", false, "start a fresh server for each case and report its peak RSS (needs -via mcp)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *runs < 1 {
		return errors.New("-runs must be at least 1")
	}
	root, err := filepath.Abs(*tree)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return err
	}
	rg, err := exec.LookPath("rg")
	if err != nil {
		return errors.New("rg (ripgrep) is not installed")
	}
	fd, err := exec.LookPath("fdfind")
	if err != nil {
		if fd, err = exec.LookPath("fd"); err != nil {
			return errors.New("fd (fdfind) is not installed")
		}
	}

	ext, headers := "*.go", "*_test.go"
	frequentLiteral, twoLiterals := `return\s+nil,\s+\w+Error\b`, `func.*Context`
	if _, err := os.Stat(filepath.Join(root, "Kbuild")); err == nil {
		ext, headers = "*.c", "*.h"
		frequentLiteral, twoLiterals = `#define\s+\w+_H\b`, `struct.*ops`
	}
	cases := []benchCase{
		{Name: "grep literal", Pattern: "func main"},
		{Name: "grep regex", Pattern: `func [A-Z][a-z]+\(`},
		{Name: "grep regex, inner literal", Pattern: `\w+\s*:=\s*\d{3,}`},
		{Name: "grep -i literal", Pattern: "func main", CaseInsensitive: true},
		{Name: "grep absent literal", Pattern: "zqxjkvwq_not_there"},
		{Name: "grep include " + ext, Pattern: "TODO", Include: ext},
		{Name: "grep count", Pattern: "return", OutputMode: "count"},
		// Pattern classes beyond literal-led ones: no literal to prefilter
		// on, a literal on most lines of the matched files, two literals
		// far apart, an alternation, -i with a class, \b-bounded words,
		// a very frequent match.
		{Name: "grep class: no literal", Pattern: `[A-Z_]{24,}`},
		{Name: "grep class: literal on most lines", Pattern: frequentLiteral, Include: headers},
		{Name: "grep class: two literals apart", Pattern: twoLiterals},
		{Name: "grep class: alternation", Pattern: `mutex|spinlock|semaphore|rwlock|waitgroup`},
		{Name: "grep class: -i with a class", Pattern: `unlock_[a-z]+`, CaseInsensitive: true},
		{Name: "grep class: \\b words", Pattern: `\b\w+_lock\b`},
		{Name: "grep class: frequent, count", Pattern: `\w+\(`, OutputMode: "count"},
		{Name: "find " + ext, Glob: ext},
		{Name: "find all files", Glob: "*"},
	}

	if *rss && *via != "mcp" {
		return errors.New("-rss needs -via mcp")
	}
	var b backend
	switch *via {
	case "lib":
		b = libBackend{}
	case "mcp", "auto":
		mb, err := newMCPBackend(ctx, root)
		if err != nil {
			if *via == "mcp" {
				return err
			}
			fmt.Fprintf(stderr, "note: using -via lib: %v\n", err)
			b = libBackend{}
			break
		}
		defer mb.close()
		b = mb
	default:
		return fmt.Errorf("-via %q: use auto, mcp or lib", *via)
	}

	fmt.Fprintf(stdout, "tree %s, %d runs after a warm-up, %d CPUs, boris via %s\n\n", root, *runs, runtime.NumCPU(), b.name())
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "case\tboris\trg/fd\tratio\tresults boris/other\t"
	if *rss {
		header += "boris peak RSS\t"
	}
	fmt.Fprintln(tw, header)
	for _, c := range cases {
		if *only != "" && !strings.Contains(c.Name, *only) {
			continue
		}
		if *rss {
			if err := b.(*mcpBackend).restart(ctx); err != nil {
				return err
			}
		}
		ours := func() (string, error) { return b.call(ctx, root, c) }
		var other func() (string, error)
		if c.isFind() {
			other = func() (string, error) { return command(ctx, fd, fdArgs(root, c)...) }
		} else {
			other = func() (string, error) { return command(ctx, rg, rgArgs(root, c)...) }
		}
		tOurs, tOther, outOurs, outOther, err := measure(*runs, ours, other)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%d/%d\t", c.Name, ms(tOurs), ms(tOther), float64(tOurs)/float64(tOther), results(outOurs), results(outOther))
		if *rss {
			fmt.Fprintf(tw, "%s\t", b.(*mcpBackend).peakRSS())
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// rgArgs makes rg do boris's work: hidden files, .gitignore without a
// repository, no .ignore/.rgignore, no global excludes, .git and
// node_modules skipped, symlinks followed.
func rgArgs(root string, c benchCase) []string {
	args := []string{"--hidden", "--no-require-git", "--no-ignore-dot", "--no-ignore-global", "--no-ignore-exclude", "--no-ignore-parent",
		"-L", "-g", "!.git", "-g", "!node_modules", "--no-messages"}
	switch c.OutputMode {
	case "count":
		args = append(args, "-c")
	default:
		args = append(args, "-l")
	}
	if c.CaseInsensitive {
		args = append(args, "-i")
	}
	if c.Include != "" {
		args = append(args, "-g", c.Include)
	}
	return append(args, "-e", c.Pattern, root)
}

// fdArgs makes fd list what boris lists: hidden files, .git and
// node_modules skipped, case-sensitive glob on the base name. fd 8 reads
// .gitignore files only inside a git repository (and has no
// --no-require-git), so outside one it does slightly less work.
func fdArgs(root string, c benchCase) []string {
	return []string{"-H", "-s", "--no-ignore-parent", "-E", ".git", "-E", "node_modules", "-t", "f", "-g", c.Glob, root}
}

// results counts the lines of a result (0 for "No files found").
func results(out string) int {
	out = strings.TrimSpace(out)
	if out == "" || strings.HasPrefix(out, "No ") {
		return 0
	}
	if i := strings.Index(out, "\n[Output truncated"); i >= 0 {
		// The note gives the total: "... showing entries 1-N of M. ..."
		var total int
		if j := strings.Index(out[i:], " of "); j >= 0 {
			if _, err := fmt.Sscanf(out[i+j+4:], "%d", &total); err == nil {
				return total
			}
		}
		out = out[:i]
	}
	return strings.Count(out, "\n") + 1
}

// measure runs a and b alternately (after one warm-up run each), so that
// changes in the machine's load affect both alike, and returns their
// median times and first outputs.
func measure(runs int, a, b func() (string, error)) (ta, tb time.Duration, outA, outB string, err error) {
	if outA, err = a(); err != nil {
		return 0, 0, "", "", fmt.Errorf("boris: %w", err)
	}
	if outB, err = b(); err != nil {
		return 0, 0, "", "", fmt.Errorf("rg/fd: %w", err)
	}
	timesA := make([]time.Duration, runs)
	timesB := make([]time.Duration, runs)
	for i := range runs {
		start := time.Now()
		if _, err := a(); err != nil {
			return 0, 0, "", "", fmt.Errorf("boris: %w", err)
		}
		timesA[i] = time.Since(start)
		start = time.Now()
		if _, err := b(); err != nil {
			return 0, 0, "", "", fmt.Errorf("rg/fd: %w", err)
		}
		timesB[i] = time.Since(start)
	}
	slices.Sort(timesA)
	slices.Sort(timesB)
	return timesA[runs/2], timesB[runs/2], outA, outB, nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }

func command(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 && stderr.Len() == 0 {
		err = nil // rg: no match
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w: %s", name, err, stderr.String())
	}
	return out.String(), nil
}

func goEnv(key string) string {
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

type backend interface {
	name() string
	call(ctx context.Context, root string, c benchCase) (string, error)
}

type libBackend struct{}

func (libBackend) name() string { return "lib (in-process search package)" }

func (libBackend) call(ctx context.Context, root string, c benchCase) (string, error) {
	if c.isFind() {
		return search.Find(ctx, nil, search.FindRequest{Pattern: c.Glob, Root: root})
	}
	return search.Grep(ctx, nil, search.GrepRequest{
		Pattern: c.Pattern, Root: root, Include: c.Include, CaseInsensitive: c.CaseInsensitive,
		OutputMode: c.OutputMode, LineNumbers: true, Before: -1, After: -1,
	})
}

type mcpBackend struct {
	dir, bin, tree string
	cmd            *exec.Cmd
	session        *mcp.ClientSession
}

func (*mcpBackend) name() string { return "mcp (boris binary over stdio)" }

// newMCPBackend builds the boris binary from the repository this program
// is part of and connects to it over stdio.
func newMCPBackend(ctx context.Context, tree string) (*mcpBackend, error) {
	repo := strings.TrimSpace(goEnv("GOMOD"))
	if repo == "" || repo == os.DevNull {
		return nil, errors.New("not inside the boris module; run from the repository")
	}
	dir, err := os.MkdirTemp("", "boris-bench-")
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "boris")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	build.Dir = filepath.Dir(repo)
	if out, err := build.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("go build: %w\n%s", err, out)
	}
	b := &mcpBackend{dir: dir, bin: bin, tree: tree}
	if err := b.connect(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	tools, err := b.session.ListTools(ctx, nil)
	if err != nil {
		b.close()
		return nil, err
	}
	have := map[string]bool{}
	for _, t := range tools.Tools {
		have[t.Name] = true
	}
	if !have["grep"] || !have["find"] {
		b.close()
		return nil, errors.New("the server does not offer the grep and find tools yet")
	}
	return b, nil
}

// connect starts the server and connects to it over stdio.
func (b *mcpBackend) connect(ctx context.Context) error {
	client := mcp.NewClient(&mcp.Implementation{Name: "boris-bench", Version: "0"}, nil)
	b.cmd = exec.Command(b.bin, "--transport", "stdio", "--workdir", b.tree)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: b.cmd}, nil)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", b.bin, err)
	}
	b.session = session
	return nil
}

// restart replaces the server with a fresh one, so that its peak memory
// is that of the calls made from now on.
func (b *mcpBackend) restart(ctx context.Context) error {
	b.session.Close()
	return b.connect(ctx)
}

// peakRSS reads the server's peak resident set size from /proc.
func (b *mcpBackend) peakRSS() string {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", b.cmd.Process.Pid))
	if err != nil {
		return "?"
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return fmt.Sprintf("%.1f MiB", float64(kb)/1024)
		}
	}
	return "?"
}

func (b *mcpBackend) call(ctx context.Context, root string, c benchCase) (string, error) {
	params := &mcp.CallToolParams{Name: "grep"}
	if c.isFind() {
		params.Name = "find"
		params.Arguments = map[string]any{"pattern": c.Glob, "path": root}
	} else {
		args := map[string]any{"pattern": c.Pattern, "path": root, "case_insensitive": c.CaseInsensitive}
		if c.Include != "" {
			args["include"] = c.Include
		}
		if c.OutputMode != "" {
			args["output_mode"] = c.OutputMode
		}
		params.Arguments = args
	}
	res, err := b.session.CallTool(ctx, params)
	if err != nil {
		return "", err
	}
	var text strings.Builder
	for _, ct := range res.Content {
		if t, ok := ct.(*mcp.TextContent); ok {
			text.WriteString(t.Text)
		}
	}
	if res.IsError {
		return "", fmt.Errorf("tool error: %s", text.String())
	}
	return text.String(), nil
}

func (b *mcpBackend) close() {
	b.session.Close()
	os.RemoveAll(b.dir)
}
