// Command agent stands in for a coding agent in the chart's sidecar shape:
// it reaches boris on the URL the chart gives it ($BORIS_URL, or
// --mcp-url) with the token from $BORIS_TOKEN, runs a command, creates a
// file, checks both files from its own mount of the shared workspace, and
// prints one JSON line with what it saw. Then it waits for SIGTERM, so
// that its pod stays up to be inspected.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type report struct {
	OK      bool   `json:"ok"`
	Error   string `json:"error,omitempty"`
	Bash    string `json:"bash,omitempty"`    // the bash tool's answer
	Created string `json:"created,omitempty"` // create_file's answer
	// What the agent reads from its own mount of the workspace.
	SeenBash    string `json:"seen_bash,omitempty"`
	SeenCreated string `json:"seen_created,omitempty"`
}

func main() {
	url := flag.String("mcp-url", os.Getenv("BORIS_URL"), "boris's MCP endpoint")
	workspace := flag.String("workspace", "/workspace", "the shared workspace as mounted here")
	flag.Parse()
	r := work(*url, *workspace)
	line, _ := json.Marshal(r)
	fmt.Println("agent-report " + string(line))
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
}

type bearer struct{ token string }

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(req)
}

func work(url, workspace string) report {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := &http.Client{Transport: bearer{os.Getenv("BORIS_TOKEN")}}
	var cs *mcp.ClientSession
	var err error
	for {
		// The containers of a pod start together: wait for boris.
		cs, err = mcp.NewClient(&mcp.Implementation{Name: "sidecar-agent", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: client}, nil)
		if err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err != nil {
		return report{Error: "connect: " + err.Error()}
	}
	defer cs.Close()
	var r report
	if r.Bash, err = call(ctx, cs, "bash", map[string]any{"command": "echo written by bash > agent-bash.txt && pwd && id -u"}); err != nil {
		return report{Error: err.Error()}
	}
	if r.Created, err = call(ctx, cs, "create_file", map[string]any{"path": "agent-created.txt", "content": "written by create_file\n"}); err != nil {
		return report{Error: err.Error()}
	}
	b1, err1 := os.ReadFile(filepath.Join(workspace, "agent-bash.txt"))
	b2, err2 := os.ReadFile(filepath.Join(workspace, "agent-created.txt"))
	if err1 != nil || err2 != nil {
		return report{Error: fmt.Sprintf("reading the workspace: %v %v", err1, err2)}
	}
	r.SeenBash, r.SeenCreated = string(b1), string(b2)
	r.OK = true
	return r
}

func call(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	if res.IsError {
		return "", fmt.Errorf("%s: %s", name, b.String())
	}
	return b.String(), nil
}
