// Package catalog is the one place that lists boris's tool families: every
// tool a server can register comes from the Specs of a family named here,
// in the order a client lists them. Adding a tool to a family is a file in
// that family and a line in its Specs; adding a family is a package and a
// line here.
package catalog

import (
	"slices"

	"github.com/boris-mcp/boris/internal/dialect"
	"github.com/boris-mcp/boris/internal/tool"
	"github.com/boris-mcp/boris/internal/tool/checkpoint"
	"github.com/boris-mcp/boris/internal/tool/edit"
	"github.com/boris-mcp/boris/internal/tool/exec"
	"github.com/boris-mcp/boris/internal/tool/lsp"
	"github.com/boris-mcp/boris/internal/tool/patch"
	"github.com/boris-mcp/boris/internal/tool/search"
	"github.com/boris-mcp/boris/internal/tool/workspace"
)

// Options are the settings of the families that have their own.
type Options struct {
	Exec       exec.Options
	Checkpoint checkpoint.Options
	// Workspace binds sessions to git workspaces (nil: no repository).
	Workspace *workspace.Isolation
}

// Specs declares every tool of every family, in registration order.
func Specs(o Options) []tool.Spec {
	return slices.Concat(
		exec.Specs(o.Exec),
		edit.Specs(),
		patch.Specs(),
		search.Specs(),
		lsp.Specs(),
		checkpoint.Specs(o.Checkpoint),
		workspace.Specs(o.Workspace),
	)
}

// Naming is what --disable-tools accepts: every tool's names.
func Naming() dialect.Naming { return tool.NamingOf(Specs(Options{})) }

// NewSet builds the tool set of a server from every family, with the
// families' hooks on every answer.
func NewSet(env tool.Env, o Options) (*tool.Set, error) {
	env.After = append(env.After, lsp.DeliverLate)
	return tool.NewSet(env, Specs(o))
}
