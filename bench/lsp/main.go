// Command lsp measures boris's language-server tool on this repository (a
// copy of its tracked files), with gopls warm:
//
//   - goToDefinition and findReferences through MCP — the lsp tool over
//     stdio, called by a line client (a request line written, the answer
//     line read: boris and the pipes) and by the official go-sdk client —
//     against the same requests sent by a bare LSP client straight to a
//     gopls of its own on the same tree, interleaved in the same rounds
//     (medians, p90 in brackets, and the ratios); with the time of an lsp
//     call that does no work (an unknown operation) for scale;
//
//   - an edit's answer (str_replace) with diagnostics on against off: two
//     boris servers on two copies, edits interleaved — an edit that breaks
//     nothing, and one that introduces an error (then its fix);
//
//   - cold start: from starting boris to the first goToDefinition answer
//     (gopls started and the module loaded);
//
//   - resident memory: boris's own, and its language servers' (gopls and the
//     go commands it runs) separately;
//
//   - per language server (gopls on BurntSushi/toml v1.6.0, pylsp on flask
//     2.2.2, clangd on zlib's gzlog.c: see servers.go), an edit's answer with
//     diagnostics off, on, and on with the longest wait, the first edit after
//     start and warm edits, interleaved in the same rounds.
//
//     go run ./bench/lsp [-n 200] [-part all|nav|servers] [-servers go,python,c] [-firsts 5] [-warm 40] [-ref BORIS] [-gopls PATH] [-bin BORIS]
//
// gopls comes from -gopls, else PATH, else the pinned one scripts/lsp-deps.sh
// builds into the user cache directory.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/sourcegraph/jsonrpc2"

	"github.com/boris-mcp/boris/bench/internal/kit"
)

// A question: a file, and a text on one of its lines whose first
// character is the symbol asked about.
type question struct {
	name, op, file, marker string
	// skip is added to the marker's column (to land on the symbol).
	skip int
}

var questions = []question{
	{"goToDefinition (shell.NewRunner in internal/app)", "goToDefinition", "internal/app/app.go", "shell.NewRunner(cfg.Shell", len("shell.")},
	{"findReferences (files.HumanSize, ~10)", "findReferences", "internal/files/files.go", "func HumanSize", len("func ")},
	{"findReferences (codes.Errorf, hundreds)", "findReferences", "internal/codes/codes.go", "func Errorf", len("func ")},
}

func main() {
	n := flag.Int("n", 200, "rounds")
	goplsFlag := flag.String("gopls", "", "gopls binary (default: PATH, else the pinned one in the user cache directory)")
	binFlag := flag.String("bin", "", "boris binary (default: build from the repository)")
	part := flag.String("part", "all", "what to measure: nav (navigation, edits on this repository, memory), servers (edits per language server), or all")
	serversFlag := flag.String("servers", "go,python,c", "the language servers whose edits to measure (go, python, c)")
	firsts := flag.Int("firsts", 5, "servers: rounds of a fresh boris (its first edit)")
	warm := flag.Int("warm", 40, "servers: warm edits per config")
	ref := flag.String("ref", "", "servers: a reference boris binary (an earlier build) measured with its defaults in the same rounds")
	flag.Parse()
	gopls := findGopls(*goplsFlag)
	tmp, bin := "", *binFlag
	if bin == "" {
		tmp, bin = kit.Build("boris-bench-lsp")
	} else {
		var err error
		if tmp, err = os.MkdirTemp("", "boris-bench-lsp"); err != nil {
			log.Fatal(err)
		}
	}
	defer os.RemoveAll(tmp)
	treeA, treeB := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	files := copyTree(treeA)
	copyTree(treeB)
	fmt.Printf("tree: %d tracked files of this repository, twice; gopls: %s\n", files, gopls)

	ctx := context.Background()
	if *part == "servers" || *part == "all" {
		servers(ctx, bin, *ref, tmp, serverCommands(*serversFlag, gopls), *firsts, *warm)
	}
	if *part == "servers" {
		return
	}
	cold(ctx, bin, gopls, treeA)

	on, onCmd := kit.Stdio(ctx, bin, "--workdir="+treeA, "--lsp", "go="+gopls, "--diagnostics-wait=10s")
	defer on.Close()
	off, _ := kit.Stdio(ctx, bin, "--workdir="+treeB, "--lsp", "go="+gopls, "--diagnostics=off")
	defer off.Close()
	line := startLine(bin, "--transport=stdio", "--workdir="+treeA, "--lsp", "go="+gopls)
	defer line.close()
	bare := startBare(ctx, gopls, treeA)
	defer bare.close()

	// Warm all: every question once.
	for _, q := range questions {
		l, c := locate(treeA, q)
		args := map[string]any{"operation": q.op, "filePath": q.file, "line": l, "character": c}
		kit.Call(ctx, on, "lsp", args)
		line.call("lsp", args, false)
		bare.ask(ctx, q.op, filepath.Join(treeA, q.file), l, c)
	}

	fmt.Printf("\nnavigation, %d rounds (median [p90]):\n", *n)
	fmt.Printf("  %-44s %-20s %-20s %-20s %-10s %s\n", "", "boris, line client", "boris, go-sdk", "bare LSP client", "line/bare", "go-sdk/bare")
	var null []time.Duration
	for _, q := range questions {
		l, c := locate(treeA, q)
		args := map[string]any{"operation": q.op, "filePath": q.file, "line": l, "character": c}
		var viaLine, viaSDK, viaBare []time.Duration
		for range *n {
			viaLine = append(viaLine, line.call("lsp", args, false))
			t0 := time.Now()
			kit.Call(ctx, on, "lsp", args)
			viaSDK = append(viaSDK, time.Since(t0))
			t0 = time.Now()
			bare.ask(ctx, q.op, filepath.Join(treeA, q.file), l, c)
			viaBare = append(viaBare, time.Since(t0))
			null = append(null, line.call("lsp", map[string]any{"operation": "none", "filePath": q.file}, true))
		}
		b := float64(kit.Pct(viaBare, 50))
		fmt.Printf("  %-44s %-20s %-20s %-20s %-10.2f %.2f\n", q.name, cell(viaLine), cell(viaSDK), cell(viaBare), float64(kit.Pct(viaLine, 50))/b, float64(kit.Pct(viaSDK, 50))/b)
	}
	fmt.Printf("  %-44s %-20s\n", "an lsp call that does no work", cell(null))

	edits(ctx, on, off, *n/4)

	fmt.Printf("\nresident memory after the rounds:\n")
	fmt.Printf("  boris (diagnostics on):        %s\n", mb(rss(onCmd.Process.Pid)))
	var servers int64
	for pid := range descendants(onCmd.Process.Pid) {
		servers += rss(pid)
	}
	fmt.Printf("  its language servers (gopls):  %s\n", mb(servers))
	fmt.Printf("  bare client's gopls:           %s\n", mb(rss(bare.cmd.Process.Pid)))
}

func cell(d []time.Duration) string {
	return fmt.Sprintf("%s [%s]", round(kit.Pct(d, 50)), round(kit.Pct(d, 90)))
}

func round(d time.Duration) time.Duration {
	switch {
	case d > 100*time.Millisecond:
		return d.Round(time.Millisecond)
	case d > time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// edits times str_replace answers with diagnostics on and off.
func edits(ctx context.Context, on, off *mcp.ClientSession, n int) {
	const file = "internal/shell/server.go"
	for _, cs := range []*mcp.ClientSession{on, off} {
		kit.Call(ctx, cs, "view", map[string]any{"path": file})
	}
	type kind struct {
		name     string
		from, to string
	}
	kinds := []kind{
		{"an edit that breaks nothing", "// Stdin is the program's standard input.", "// Stdin is the program's standard input!"},
		{"an edit that introduces an error", "return s.stdin }", "return s.stdin + 1 }"},
	}
	fmt.Printf("\nedit answers (str_replace on %s), %d rounds of each edit and its undoing (median [p90]):\n", file, n)
	fmt.Printf("  %-36s %-22s %-22s %s\n", "", "diagnostics on", "diagnostics off", "added (p50)")
	for _, k := range kinds {
		var withD, without []time.Duration
		for range n {
			for _, pair := range [][2]string{{k.from, k.to}, {k.to, k.from}} {
				t0 := time.Now()
				text := callAll(ctx, on, "str_replace", map[string]any{"path": file, "old_str": pair[0], "new_str": pair[1]})
				withD = append(withD, time.Since(t0))
				if pair[1] == "return s.stdin + 1 }" && !strings.Contains(text, "This edit introduced") {
					log.Fatalf("the breaking edit reported no error: %s", text)
				}
				t0 = time.Now()
				callAll(ctx, off, "str_replace", map[string]any{"path": file, "old_str": pair[0], "new_str": pair[1]})
				without = append(without, time.Since(t0))
			}
		}
		fmt.Printf("  %-36s %-22s %-22s %s\n", k.name, cell(withD), cell(without), round(kit.Pct(withD, 50)-kit.Pct(without, 50)))
	}
}

// callAll is kit.Call returning every text block.
func callAll(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) string {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		log.Fatalf("%s: %v %v", name, err, res)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// cold times starting boris to its first goToDefinition answer.
func cold(ctx context.Context, bin, gopls, tree string) {
	q := questions[0]
	line, char := locate(tree, q)
	var ds []time.Duration
	for range 3 {
		t0 := time.Now()
		cs, cmd := kit.Stdio(ctx, bin, "--workdir="+tree, "--lsp", "go="+gopls)
		kit.Call(ctx, cs, "lsp", map[string]any{"operation": q.op, "filePath": q.file, "line": line, "character": char})
		ds = append(ds, time.Since(t0))
		cs.Close()
		_ = cmd.Wait()
	}
	fmt.Printf("cold start to the first answer (boris and gopls started, the module loaded), 3 runs: median %s (min %s, max %s)\n",
		round(kit.Pct(ds, 50)), round(kit.Pct(ds, 0)), round(kit.Pct(ds, 100)))
}

// locate finds a question's 1-based line and character.
func locate(tree string, q question) (int, int) {
	data, err := os.ReadFile(filepath.Join(tree, q.file))
	if err != nil {
		log.Fatal(err)
	}
	for i, l := range strings.Split(string(data), "\n") {
		if j := strings.Index(l, q.marker); j >= 0 {
			return i + 1, len([]rune(l[:j])) + q.skip + 1
		}
	}
	log.Fatalf("%q not in %s", q.marker, q.file)
	return 0, 0
}

// copyTree copies the repository's tracked files into dir.
func copyTree(dir string) int {
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		log.Fatalf("git ls-files: %v (run from the repository)", err)
	}
	n := 0
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // deleted in the work tree
		}
		dst := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			log.Fatal(err)
		}
		n++
	}
	return n
}

func findGopls(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if p, err := exec.LookPath("gopls"); err == nil {
		return p
	}
	if c, err := os.UserCacheDir(); err == nil {
		p := filepath.Join(c, "boris-lsp", "gopls-v0.23.0", "gopls")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	log.Fatal("no gopls: give -gopls, put it on PATH, or run scripts/lsp-deps.sh")
	return ""
}

// lineClient is kit's line client with this benchmark's checks.
type lineClient struct{ *kit.Line }

func startLine(bin string, args ...string) *lineClient {
	return &lineClient{kit.StartLine(bin, args...)}
}

func (c *lineClient) call(tool string, args map[string]any, wantError bool) time.Duration {
	a, err := json.Marshal(args)
	if err != nil {
		log.Fatal(err)
	}
	answer, _, d := c.CallTool(tool, a)
	var resp struct {
		Result struct {
			IsError bool `json:"isError"`
		} `json:"result"`
		Error *struct{ Message string } `json:"error"`
	}
	if err := json.Unmarshal(answer, &resp); err != nil || resp.Error != nil || resp.Result.IsError != wantError {
		log.Fatalf("%s %s: %s", tool, a, answer)
	}
	return d
}

func (c *lineClient) close() { c.Close() }

// bareClient is a plain LSP client of a gopls of its own: the baseline.
type bareClient struct {
	cmd  *exec.Cmd
	conn *jsonrpc2.Conn
	open map[string]bool
}

type rwc struct {
	io.ReadCloser
	io.WriteCloser
}

func (r rwc) Close() error { r.WriteCloser.Close(); return r.ReadCloser.Close() }

type nopHandler struct{}

func (nopHandler) Handle(ctx context.Context, c *jsonrpc2.Conn, r *jsonrpc2.Request) {
	if !r.Notif {
		_ = c.Reply(ctx, r.ID, nil)
	}
}

func startBare(ctx context.Context, gopls, root string) *bareClient {
	cmd := exec.Command(gopls)
	cmd.Dir = root
	in, err := cmd.StdinPipe()
	if err != nil {
		log.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	conn := jsonrpc2.NewConn(ctx, jsonrpc2.NewBufferedStream(rwc{out, in}, jsonrpc2.VSCodeObjectCodec{}), jsonrpc2.AsyncHandler(nopHandler{}))
	uri := "file://" + root
	var res any
	if err := conn.Call(ctx, "initialize", map[string]any{
		"processId": os.Getpid(), "rootUri": uri,
		"workspaceFolders": []map[string]any{{"uri": uri, "name": "bench"}},
		"capabilities":     map[string]any{"textDocument": map[string]any{"definition": map[string]any{"linkSupport": true}}},
	}, &res); err != nil {
		log.Fatal(err)
	}
	if err := conn.Notify(ctx, "initialized", map[string]any{}); err != nil {
		log.Fatal(err)
	}
	return &bareClient{cmd: cmd, conn: conn, open: map[string]bool{}}
}

// ask sends the request the lsp tool sends for op (with the file opened
// first, once).
func (b *bareClient) ask(ctx context.Context, op, path string, line, char int) {
	uri := "file://" + path
	if !b.open[path] {
		data, err := os.ReadFile(path)
		if err != nil {
			log.Fatal(err)
		}
		if err := b.conn.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": string(data)}}); err != nil {
			log.Fatal(err)
		}
		b.open[path] = true
	}
	params := map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": line - 1, "character": char - 1}}
	method := "textDocument/definition"
	if op == "findReferences" {
		method = "textDocument/references"
		params["context"] = map[string]any{"includeDeclaration": true}
	}
	var res any
	if err := b.conn.Call(ctx, method, params, &res); err != nil {
		log.Fatal(err)
	}
	if res == nil {
		log.Fatalf("%s at %s:%d:%d: no answer", method, path, line, char)
	}
}

func (b *bareClient) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = b.conn.Call(ctx, "shutdown", nil, nil)
	_ = b.conn.Notify(ctx, "exit", nil)
	_ = b.conn.Close()
	_ = b.cmd.Wait()
}

// rss returns a process's resident set size in bytes.
func rss(pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

func mb(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/(1<<20)) }

// descendants returns the processes below pid.
func descendants(pid int) map[int]bool {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 {
			parent[p], _ = strconv.Atoi(f[1])
		}
	}
	out := map[int]bool{}
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out[p] = true
				break
			}
		}
	}
	return out
}
