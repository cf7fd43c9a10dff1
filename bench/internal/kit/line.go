package kit

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"os/exec"
	"time"
)

// Line speaks MCP over a server's stdin and stdout with nothing but writes
// and reads of lines: a request is made before the clock starts, its
// answer is checked after it stops.
type Line struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

// StartLine starts bin with args and initializes an MCP session over its
// standard input and output.
func StartLine(bin string, args ...string) *Line {
	cmd := exec.Command(bin, args...)
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
	c := &Line{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	c.RoundTrip([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n"))
	if _, err := io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		log.Fatal(err)
	}
	return c
}

// RoundTrip writes one request line and reads one answer line, timed.
func (c *Line) RoundTrip(req []byte) ([]byte, time.Duration) {
	start := time.Now()
	if _, err := c.in.Write(req); err != nil {
		log.Fatal(err)
	}
	answer, err := c.out.ReadBytes('\n')
	d := time.Since(start)
	if err != nil {
		log.Fatalf("%s: %v", c.cmd.Path, err)
	}
	return answer, d
}

// CallTool sends a tools/call of tool with args (JSON) and returns the
// answer line, the call's id and its time.
func (c *Line) CallTool(tool string, args []byte) (answer []byte, id int, d time.Duration) {
	c.id++
	answer, d = c.RoundTrip(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`+"\n", c.id, tool, args))
	return answer, c.id, d
}

// Close ends the server's input and waits for it to exit.
func (c *Line) Close() {
	c.in.Close()
	_ = c.cmd.Wait()
}
