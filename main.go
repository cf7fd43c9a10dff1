// Command boris serves a coding agent's tools — bash, view, str_replace,
// create_file, grep, find — over the Model Context Protocol, on streamable
// HTTP or stdio.
//
// This file sets up what belongs to the process; boris itself is
// internal/app, its parts the other packages under internal/. The
// black-box tests in blackbox/ build this command and drive it with real
// MCP clients.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/boris-mcp/boris/internal/app"
	"github.com/boris-mcp/boris/internal/shell"
)

// version is set at build time with -ldflags "-X main.version=…".
var version string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	// Reaping is process-wide (one set of children, one SIGCHLD), so it is
	// switched on here for the real binary, not inside app.Run.
	reapErr := shell.EnableReaping()
	// A client that goes away closes our stdout: writing to it must fail
	// with EPIPE, not kill boris by SIGPIPE before it has ended the
	// session's processes. A handler (not SIG_IGN) is not inherited by
	// commands, which keep the default SIGPIPE behaviour.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	app.TuneGC(os.Getenv)
	app.Version = version
	if err := app.Run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "boris:", err)
		os.Exit(1)
	}
	_ = reapErr // only Linux reaps; elsewhere os/exec waits for each shell
}
