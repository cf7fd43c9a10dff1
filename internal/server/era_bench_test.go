package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/config"
	"github.com/boris-mcp/boris/internal/scope"
	"github.com/boris-mcp/boris/internal/session"
)

// BenchmarkToolCallByEra is one small view over loopback HTTP through the
// go-sdk client, at the stateless revision (a temporary SDK session per
// request) and in the handshake era (one connection): what each era costs
// per call, client included.
func BenchmarkToolCallByEra(b *testing.B) {
	for _, era := range []struct{ name, version string }{{"stateless", ""}, {"handshake", "2025-11-25"}} {
		b.Run(era.name, func(b *testing.B) {
			dir := b.TempDir()
			cfg, err := config.Parse(testProgram, []string{"--workdir=" + dir}, func(string) string { return "" }, io.Discard, io.Discard)
			if err != nil {
				b.Fatal(err)
			}
			policy, _ := scope.New(nil, nil, dir)
			set, err := testSet(cfg, policy, slog.New(slog.DiscardHandler), nil, false)
			if err != nil {
				b.Fatal(err)
			}
			srv := New(Deps{Options: testOptions(cfg), Version: "test", Logger: slog.New(slog.DiscardHandler), Tools: set, Sessions: session.Options{Workdir: dir}})
			ts := httptest.NewServer(srv.Handler(nil))
			defer ts.Close()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "b", Version: "1"}, nil).Connect(context.Background(),
				&mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: &http.Client{}}, &mcp.ClientSessionOptions{ProtocolVersion: era.version})
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "view", Arguments: map[string]any{"path": "."}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
