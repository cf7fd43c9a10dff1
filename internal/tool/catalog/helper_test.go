package catalog

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/dialect"
	"github.com/boris-mcp/boris/internal/files"
	"github.com/boris-mcp/boris/internal/scope"
	"github.com/boris-mcp/boris/internal/session"
	"github.com/boris-mcp/boris/internal/tool"
	"github.com/boris-mcp/boris/internal/tool/exec"
	"github.com/boris-mcp/boris/internal/tool/tooltest"
)

// setup is what a test's tool set is built from; zero values are the
// defaults of a test (a 1 MiB file limit, a minute's timeout).
type setup struct {
	mode        dialect.Mode
	workdir     string
	allow, deny []string
	disabled    []string
	shell       string
	maxFileSize int64
	timeout     time.Duration
	viewFirst   bool
}

// newSet builds every family's tools as s says.
func newSet(t testing.TB, s setup) *tool.Set {
	t.Helper()
	if s.workdir == "" {
		s.workdir = t.TempDir()
	}
	if s.maxFileSize == 0 {
		s.maxFileSize = 1 << 20
	}
	if s.timeout == 0 {
		s.timeout = time.Minute
	}
	pol, err := scope.New(s.allow, s.deny, s.workdir)
	if err != nil {
		t.Fatal(err)
	}
	env := tool.Env{
		Mode:     s.mode,
		Workdir:  s.workdir,
		Policy:   pol,
		Files:    files.New(files.Options{Policy: pol, MaxFileSize: s.maxFileSize, RequireViewBeforeEdit: s.viewFirst}),
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Disabled: s.disabled,
	}
	set, err := NewSet(env, Options{Exec: execOptions(s.shell, s.timeout)})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// connect serves s's tool set for one session.
func connect(t testing.TB, s setup, sess *session.Session) *mcp.ClientSession {
	t.Helper()
	return tooltest.Connect(t, newSet(t, s), sess)
}

func execOptions(shell string, timeout time.Duration) exec.Options {
	return exec.Options{Shell: shell, Timeout: timeout, TTYCols: 120, TTYRows: 40}
}
