// Package tooltest serves a tool set to a test's MCP client over an
// in-memory transport, every call in one session.
package tooltest

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/codes"
	"github.com/boris-mcp/boris/internal/session"
	"github.com/boris-mcp/boris/internal/tool"
)

// OneSession runs every call in one session, as a server with a single
// implicit session would; handles name nothing.
type OneSession struct{ Session *session.Session }

// Resolve implements tool.Sessions.
func (o OneSession) Resolve(_ context.Context, _ *mcp.CallToolRequest, handle string) (*session.Call, error) {
	if handle != "" {
		return nil, codes.Errorf(codes.SessionNotFound, "no session %q", handle)
	}
	return &session.Call{Session: o.Session}, nil
}

// Connect serves set for one session over an in-memory transport and
// returns a client connected to it, closed when the test ends.
func Connect(t testing.TB, set *tool.Set, sess *session.Session) *mcp.ClientSession {
	t.Helper()
	return ConnectWith(t, set, sess, nil)
}

// ConnectWith is Connect with the client's options (a progress handler,
// say).
func ConnectWith(t testing.TB, set *tool.Set, sess *session.Session, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "boris", Version: "test"}, nil)
	set.Register(srv, OneSession{sess})
	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, opts).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
