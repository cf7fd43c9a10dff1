// Package kit is what boris's benchmark programs share: building the boris
// binary from the repository, starting it over stdio or HTTP, connecting
// the official client to it, and percentiles.
package kit

import (
	"bufio"
	"context"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Build builds boris into a new temporary directory, which it returns with
// the binary's path; the caller removes the directory. It must run from the
// repository root.
func Build(prefix string) (dir, bin string) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		log.Fatal(err)
	}
	bin = filepath.Join(dir, "boris")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		log.Fatalf("build: %v (run from the repository root)", err)
	}
	return dir, bin
}

// Stdio starts bin over stdio with args and connects to it.
func Stdio(ctx context.Context, bin string, args ...string) (*mcp.ClientSession, *exec.Cmd) {
	cmd := exec.Command(bin, append([]string{"--transport=stdio"}, args...)...)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		log.Fatal(err)
	}
	return cs, cmd
}

var listenRe = regexp.MustCompile(`msg=listening addr=\S*:(\d+)`)

// HTTP starts bin serving HTTP on a free loopback port with args (which
// must not lower the log level below info: the port is read from the
// log) and returns it running with its base URL.
func HTTP(bin string, args ...string) (*exec.Cmd, string) {
	cmd := exec.Command(bin, append([]string{"--port=0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := listenRe.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(io.Discard, stderr)
			return cmd, "http://127.0.0.1:" + m[1]
		}
	}
	log.Fatalf("%s exited before listening", bin)
	return nil, ""
}

// Call calls a tool that must succeed and returns its text.
func Call(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) string {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	text := ""
	if res != nil {
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		text = b.String()
	}
	if err != nil || res.IsError {
		log.Fatalf("%s: %v %s", name, err, text)
	}
	return text
}

// Pct returns the p-th percentile of d.
func Pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}
