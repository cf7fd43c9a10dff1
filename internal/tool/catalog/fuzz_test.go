package catalog

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/dialect"
	"github.com/boris-mcp/boris/internal/session"
	"github.com/boris-mcp/boris/internal/shell"
	"github.com/boris-mcp/boris/internal/tool/tooltest"
)

var allCodes = []codes.Code{
	codes.InvalidInput, codes.PathNotFound, codes.AccessDenied, codes.FileTooLarge, codes.IOError,
	codes.FileNotViewed, codes.CommandEmpty, codes.CommandStartFailed, codes.TaskLimit,
	codes.TaskNotFound, codes.SessionClosed, codes.StrReplaceNotFound, codes.StrReplaceAmbiguous,
	codes.GrepInvalidPattern, codes.GrepInvalidOutputMode, codes.GrepInvalidType, codes.FindInvalidPattern,
	codes.FindInvalidType, codes.EditorInvalidCommand, codes.FileChangedSinceView, codes.SessionNotFound,
	codes.PatchInvalid, codes.PatchContextNotFound, codes.UndoNoHistory,
}

var errorText = regexp.MustCompile(`^\[([A-Z_]+)\] \S`)

// fuzzClient serves the full tool set of one mode over an in-memory
// transport. File tools are confined to a sandbox; the "shell" is
// /bin/true, so fuzzed commands go through the whole bash path and the
// runner without running anything.
func fuzzClient(t testing.TB, compat bool) (*mcp.ClientSession, []string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"a.txt": "alpha\nbeta\n", "sub/b.go": "package sub\n", "secret.env": "TOKEN=x\n", "crlf.txt": "x\r\ny\r\n"} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	st := setup{workdir: dir, shell: "/bin/true", allow: []string{dir}, deny: []string{"**/secret*"}, maxFileSize: 64 << 10, viewFirst: true, timeout: 2 * time.Second}
	if compat {
		st.mode = dialect.Claude
	}
	set := newSet(t, st)
	sess := session.New("fuzz", session.Options{Workdir: dir, Runner: shell.NewRunner("/bin/true", nil, shell.Options{Grace: 100 * time.Millisecond})})
	t.Cleanup(sess.Close)
	return tooltest.Connect(t, set, sess), set.Names()
}

// FuzzToolCalls sends arbitrary arguments to every tool through the real
// MCP handler: no panic (a protocol error), no hang, and every failure a
// "[CODE] message" result with a known code.
func FuzzToolCalls(f *testing.F) {
	seeds := []struct {
		tool uint8
		args string
	}{
		{0, `{"command":"echo hi"}`}, {0, `{"command":""}`}, {0, `{"command":"x","timeout":-5}`},
		{0, `{"command":"x","timeout":1e300}`}, {0, `{"command":"x","run_in_background":"yes"}`},
		{1, `{"task_id":"task_1"}`}, {1, `{"task_id":"\u0000"}`},
		{2, `{"path":"a.txt","view_range":[1,-1]}`}, {2, `{"path":"a\u0000b"}`}, {2, `{"path":"\udc80\udcff"}`},
		{2, `{"path":"a.txt","view_range":[9007199254740993,2]}`}, {2, `{"path":"../../etc/passwd"}`},
		{3, `{"path":"a.txt","old_str":"alpha","new_str":"ALPHA"}`}, {3, `{"path":"crlf.txt","old_str":"x\ny","new_str":"z"}`},
		{4, `{"path":"new/deep/f.txt","content":"x"}`}, {4, `{"path":"secret.env","content":"y"}`},
		{5, "{\"input\":\"*** Begin Patch\\n*** Update File: a.txt\\n@@\\n-alpha\\n+ALPHA\\n*** End Patch\"}"},
		{5, "{\"input\":\"*** Begin Patch\\n*** Add File: n/x.txt\\n+x\\n*** Delete File: crlf.txt\\n*** Update File: secret.env\\n@@\\n-T\\n*** End Patch\"}"},
		{5, `{"operation":{"type":"update_file","path":"crlf.txt","diff":"@@\n x\n-y\n+z\n"}}`}, {5, `{"operation":{"type":"create_file","path":"../x","diff":"+a"}}`},
		{5, `{"input":"<<'EOF'\n*** Begin Patch\n*** Update File: a.txt\n@@ alpha\n@@ beta\n+gamma\n*** End of File\n*** End Patch\nEOF"}`},
		{6, `{"pattern":"(a{1000}){1000}"}`}, {6, `{"pattern":"a","output_mode":"lines"}`}, {6, `{"pattern":"x","-C":99999999,"head_limit":-1}`},
		{6, `{"pattern":"[[:alpha:]]+","type":"nope","include":"{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"}`},
		{7, `{"pattern":"**/**/**/**/**/*.go"}`}, {7, `{"pattern":"[!"}`}, {7, `{"pattern":"*","type":"socket"}`},
		{2, `{"command":"undo_edit","path":"a.txt"}`}, {2, `{"command":"insert","path":"crlf.txt","insert_line":3,"new_str":"z"}`},
		{8, `[1,2,3]`}, {8, `"just a string"`}, {8, `null`}, {8, `{}`},
	}
	for _, s := range seeds {
		f.Add(s.tool, s.args, false)
		f.Add(s.tool, s.args, true)
	}
	clients := map[bool]*mcp.ClientSession{}
	names := map[bool][]string{}
	for _, compat := range []bool{false, true} {
		clients[compat], names[compat] = fuzzClient(f, compat)
	}
	f.Fuzz(func(t *testing.T, tool uint8, args string, compat bool) {
		if !json.Valid([]byte(args)) {
			return
		}
		list := names[compat]
		name := list[int(tool)%len(list)]
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := clients[compat].CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("%s %s: protocol error or hang: %v", name, args, err)
		}
		if !res.IsError {
			return
		}
		text := resultText(res)
		m := errorText.FindStringSubmatch(text)
		if m == nil || !slices.Contains(allCodes, codes.Code(m[1])) {
			t.Fatalf("%s %s: error result is not [CODE] message: %q", name, args, text)
		}
	})
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
