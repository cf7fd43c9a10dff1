// Package app is boris behind its command line: Run parses the flags and
// environment, builds the tools, the sessions' processes, the sandbox, the
// language servers, checkpoints, metrics and traces from them, and serves
// MCP over HTTP or stdio until its context ends. Package main (the module
// root) only sets up what is process-wide — signals, reaping, the garbage
// collector, the release version — and calls Run; the black-box tests in
// blackbox/ call Run too, in process.
package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boris-mcp/boris/internal/audit"
	"github.com/boris-mcp/boris/internal/checkpoint"
	"github.com/boris-mcp/boris/internal/config"
	"github.com/boris-mcp/boris/internal/execcheck"
	"github.com/boris-mcp/boris/internal/files"
	"github.com/boris-mcp/boris/internal/guard"
	"github.com/boris-mcp/boris/internal/hostenv"
	"github.com/boris-mcp/boris/internal/lsp"
	"github.com/boris-mcp/boris/internal/metrics"
	"github.com/boris-mcp/boris/internal/rules"
	"github.com/boris-mcp/boris/internal/sandbox"
	"github.com/boris-mcp/boris/internal/scope"
	"github.com/boris-mcp/boris/internal/server"
	"github.com/boris-mcp/boris/internal/session"
	"github.com/boris-mcp/boris/internal/shell"
	"github.com/boris-mcp/boris/internal/telemetry"
	"github.com/boris-mcp/boris/internal/tlscert"
	"github.com/boris-mcp/boris/internal/tokens"
	"github.com/boris-mcp/boris/internal/tool"
	"github.com/boris-mcp/boris/internal/tool/catalog"
	checkpointtool "github.com/boris-mcp/boris/internal/tool/checkpoint"
	exectool "github.com/boris-mcp/boris/internal/tool/exec"
	"github.com/boris-mcp/boris/internal/workspace"
)

// Run starts boris with the given arguments (without the program name) and
// environment and serves until ctx is done (or stdin ends, in stdio mode).
// It writes --help and --version to stdout, the log and the audit trail to
// stderr. Reaping orphans (shell.EnableReaping) is process-wide and left to
// the caller.
func Run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	// First, before a token is read or a command started: from here on
	// no process of this user can read boris's environment or memory.
	protectErr := protectProcess()
	if len(args) > 0 && args[0] == "install" {
		return runInstall(args[1:], stdout)
	}
	if len(args) > 0 && args[0] == "policy" {
		return runPolicy(args[1:], stdout)
	}
	ver := buildVersion()
	cfg, err := config.Parse(config.Program{Version: ver, Tools: catalog.Naming()}, args, getenv, stdout, stderr)
	if errors.Is(err, config.ErrExit) {
		return nil
	}
	if err != nil {
		return err
	}
	if cfg.Healthcheck {
		return healthcheck(ctx, cfg)
	}
	// One handler, so the log and the audit trail (info whatever the
	// level) take turns writing to stderr.
	base := newLoggerAt(cfg, stderr, min(cfg.LogLevel, slog.LevelInfo))
	logger := slog.New(server.MinLevel(base.Handler(), cfg.LogLevel))
	for _, w := range cfg.Warnings {
		logger.Warn(w)
	}
	if cfg.Shell == "" && !cfg.Disabled[exectool.Bash] {
		logger.Warn("no shell found (neither /bin/bash nor /bin/sh): the bash and task_output tools are not registered; the file tools still work")
	}
	if protectErr != nil {
		logger.Warn("boris could not make itself non-dumpable: processes of its user, the agents' commands among them, can read its environment (tokens) and memory", "error", protectErr)
	}
	if cfg.TokenGenerated {
		// Shown once, on stderr only, never logged.
		if cfg.TokenGeneratedWhy == "non-loopback" {
			fmt.Fprintf(stderr, "boris: %s is reachable beyond this machine and no --token was given: /mcp requires this generated bearer token (shown once): %s\n"+
				"boris: clients send it as 'Authorization: Bearer <token>'; pass --token to choose one, or --no-auth if the network is trusted\n",
				cfg.ListenAddr(), cfg.Tokens[0])
		} else {
			fmt.Fprintf(stderr, "boris: generated bearer token (shown once): %s\n", cfg.Tokens[0])
		}
	}

	// The token file and the rules files are denied to the file tools: an
	// agent must not read the one nor rewrite the other.
	policy, err := scope.New(cfg.AllowDirs, append(append(slices.Clone(cfg.DenyPatterns), tokenFileDeny(cfg.TokenFile)...), cfg.Rules...), cfg.Workdir)
	if err != nil {
		return err
	}
	toks, err := newTokens(cfg, logger)
	if err != nil {
		return err
	}
	m := metrics.New(ver)
	toolRules, err := newRules(ctx, cfg, logger)
	if err != nil {
		return err
	}
	g := guard.New(guard.Config{
		MaxProcs: cfg.Limits.MaxProcs, Memory: cfg.Limits.Memory, FileSize: cfg.Limits.FileSize,
		Nice: cfg.Limits.Nice, Off: cfg.Limits.Unguarded, Logger: logger,
	})
	logger.Info("commands guarded: " + g.Describe())
	go g.Watch(ctx)
	sessOpts := session.Options{
		Guard:       g,
		Workdir:     cfg.Workdir,
		TaskTimeout: cfg.BackgroundTaskTimeout,
		// A read of a task's output fills at most an answer.
		MaxRead:      cfg.MaxAnswer / 2,
		OnTaskChange: m.TaskChange,
		// Up to 64 sessions keep their next bash started, each for a
		// minute after its last command.
		Warm: session.NewWarmPool(64, time.Minute),
	}
	if toolRules != nil {
		// Every program a command starts is judged by the rules too, as
		// it starts (docs/exec-check.md): a kernel that cannot hold execs
		// stops the start rather than leave the rules to the command line.
		if err := execcheck.Prepare(); err != nil {
			return fmt.Errorf("--rules: the check of every exec a command makes is not available here: %w", err)
		}
		sessOpts.ExecCheck = true
		sessOpts.ExecFallback = toolRules.Fallback
	}
	var sb *sandbox.Sandbox
	var sbCfg sandbox.Config
	if cfg.Sandbox {
		t0 := time.Now()
		sb, sbCfg, err = newSandbox(cfg, policy, getenv)
		if err != nil {
			return err
		}
		total := time.Since(t0)
		defer sb.Close()
		st := sb.Status()
		m.SandboxEnforced(st.ABI, st.Net, st.Scoped)
		logger.Info("sandbox on: bash commands run under Landlock, each session's in a domain of its own",
			"mode", sandboxWhy(cfg),
			"landlock_abi", st.ABI,
			"writable", strings.Join(st.Writable, ","),
			"unreadable", strings.Join(st.Denied, ","),
			"net", st.Net,
			"ioctl_dev", st.IoctlDev,
			"scoped_signals_abstract_sockets", st.Scoped,
			"rules", st.Rules,
			"build", st.Build.Round(time.Microsecond),
			"with_deny_globs_expanded", total.Round(time.Microsecond),
		)
		if n := cfg.Credentials(); n > 1 && !st.Scoped {
			logger.Warn(fmt.Sprintf("%d tokens, and this kernel's Landlock (ABI %d) cannot scope signals (ABI %d, Linux 6.12): one agent's commands can signal another's and boris; tracing and /proc/<pid>/mem stay refused across sessions", n, st.ABI, sandbox.ScopedABI))
		}
		// Each session's commands start in a domain of their own, made
		// at its first command; language servers keep the shared one.
		sessOpts.NewDomain = func() (session.Domain, error) {
			d, err := sb.NewDomain()
			if err != nil {
				return nil, err
			}
			return d, nil
		}
	} else {
		m.SandboxEnforced(0, "", false)
	}
	// What this image offers commands (user, HOME, shell, root
	// filesystem, the workspace's owner), and the variables that make up
	// for what it lacks: commands and language servers share them.
	host := probeHost(cfg, logger)
	environ := host.Environ(os.Environ())
	if cfg.Shell != "" {
		opts := shell.Options{MaxOutput: streamChars(cfg)}
		if sb != nil {
			opts.Start = sb.Start
		}
		sessOpts.Runner = shell.NewRunner(cfg.Shell, shell.Environ(environ), opts)
	}
	var ckpt *checkpoint.Service
	if !cfg.Isolation.Worktree() {
		// With a workspace per session, no session works in the
		// workdir: each workspace has checkpoints of its own.
		if ckpt, err = openCheckpoints(cfg, policy, logger, getenv); err != nil {
			return err
		}
	}
	if ckpt != nil {
		defer ckpt.Close()
	}
	tracing, err := telemetry.Setup(ctx, getenv, ver)
	if err != nil {
		return err
	}
	if tracing != nil {
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := tracing.Shutdown(sctx); err != nil {
				logger.Warn("exporting the last spans", "err", err)
			}
		}()
		logger.Info("tracing on: spans exported over OTLP", "protocol", tracing.Protocol, "endpoint", tracing.Endpoint)
	}
	// A language server of a workspace runs its code (build scripts,
	// macros): it is confined like the workspace's commands.
	var wsm *workspace.Manager
	lspMgr := newLSP(ctx, cfg, policy, sb, environ, func(root string) (func(*exec.Cmd) error, func(), error) {
		if sb == nil || wsm == nil {
			return nil, nil, nil
		}
		ws := wsm.Holding(root)
		if ws == nil {
			return nil, nil, nil
		}
		d, err := workspaceDomain(sb, sbCfg, ws)
		if err != nil {
			return nil, nil, err
		}
		return d.Start, d.Close, nil
	}, logger)
	if lspMgr != nil {
		defer lspMgr.Close()
	}
	if wsm, err = openWorkspaces(ctx, cfg, sb, sbCfg, logger); err != nil {
		return err
	}
	iso := newIsolation(cfg, wsm, sb, sbCfg, lspMgr, getenv, logger)
	// Before the sandbox and the language servers close, once the
	// sessions have: their workspaces are released (removed or kept).
	defer iso.Close()
	topts := toolOptions(cfg)
	topts.Workspace = iso
	env := tool.Env{
		Mode:     cfg.Dialect,
		Workdir:  cfg.Workdir,
		Policy:   policy,
		Files:    files.New(files.Options{Policy: policy, MaxFileSize: cfg.MaxFileSize, RequireViewBeforeEdit: cfg.RequireViewBeforeEdit}),
		Logger:   logger,
		Observer: m,
		// The audit trail is written at info whatever --log-level says.
		Audit:              audit.New(base, cfg.Audit),
		Tracing:            tracing,
		LSP:                lspMgr,
		Diagnostics:        tool.Diagnostics{On: cfg.Diagnostics, Wait: cfg.DiagnosticsWait},
		Checkpoints:        ckpt,
		Structured:         cfg.StructuredContent,
		MaxAnswer:          cfg.MaxAnswer,
		SessionIdleTimeout: cfg.SessionIdleTimeout,
		Disabled:           cfg.DisableTools,
		Rules:              toolRules,
	}
	if iso != nil {
		env.Isolation = iso
	}
	set, err := catalog.NewSet(env, topts)
	if err != nil {
		return err
	}
	var certs *tlscert.Reloader
	deps := server.Deps{Options: serverOptions(cfg), Version: ver, Logger: logger, Tools: set, Sessions: sessOpts, Metrics: m, Sandbox: sandboxHealth(sb), Tracing: tracing, Tokens: toks}
	if lspMgr != nil {
		// Language servers serve sessions: with none left, they stop
		// (and start again for the next one).
		deps.OnLastSessionClosed = lspMgr.StopAll
	}
	if cfg.TLSCert != "" {
		if certs, err = tlscert.New(cfg.TLSCert, cfg.TLSKey, logger); err != nil {
			return fmt.Errorf("load the TLS key pair: %w", err)
		}
		deps.TLS = certs.Config()
	}
	srv := server.New(deps)

	logger.Info("boris starting",
		"version", ver,
		"transport", cfg.Transport,
		"workdir", cfg.Workdir,
		"shell", shellDesc(cfg),
		"tools", strings.Join(set.Names(), ","),
		"allow_dirs", strings.Join(cfg.AllowDirs, ","),
		"deny", strings.Join(cfg.DenyPatterns, ","),
		"reaping", shell.Reaping(),
	)
	logFileReach(logger, cfg)
	// Processes that left their group (setsid) escape session close; as
	// the subreaper of everything our commands start, boris ends them too:
	// SIGTERM when shutdown begins, then a final sweep before exiting.
	go func() {
		<-ctx.Done()
		shell.SignalOrphans(syscall.SIGTERM)
	}()
	defer shell.KillOrphans(time.Second)
	if cfg.Transport == config.TransportStdio {
		in, restore := pollable(stdin)
		defer restore()
		err := srv.ServeStdio(ctx, in, stdout)
		logger.Info("boris stopped")
		return err
	}
	ln, err := net.Listen("tcp", cfg.ListenAddr())
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.ListenAddr(), err)
	}
	var leaf *x509.Certificate
	if certs != nil {
		leaf = certs.Certificate().Leaf
	}
	logListening(logger, cfg, toks, ln.Addr(), leaf)
	err = srv.ServeHTTP(ctx, ln, m.Handler())
	logger.Info("boris stopped")
	return err
}

// newRules loads the --rules files and keeps them reloaded on change (nil:
// none given). A file that does not load stops the start with its file and
// line.
func newRules(ctx context.Context, cfg *config.Config, logger *slog.Logger) (*tool.Rules, error) {
	if len(cfg.Rules) == 0 {
		return nil, nil
	}
	live, err := rules.NewLive(cfg.Rules, cfg.Workdir, logger)
	if err != nil {
		return nil, fmt.Errorf("--rules: %w", err)
	}
	go live.Watch(ctx, 0)
	r := live.Rules()
	logger.Info("command rules: every command line is judged before it runs, and the file tools' paths",
		"files", strings.Join(cfg.Rules, ","), "restrictive", r.Restrictive())
	return tool.NewRules(live, cfg.BashTimeout), nil
}

// streamChars is how much of each of a command's streams an answer
// keeps: shell.MaxOutputChars, or half an answer where that is less.
func streamChars(cfg *config.Config) int {
	return min(shell.MaxOutputChars, cfg.MaxAnswer/2)
}

// serverOptions are the server's settings.
func serverOptions(cfg *config.Config) server.Options {
	return server.Options{
		SessionIdleTimeout: cfg.SessionIdleTimeout, MaxSessions: cfg.MaxSessions, MaxFileSize: cfg.MaxFileSize, ShutdownTimeout: cfg.ShutdownTimeout,
		AllowOrigins: cfg.AllowOrigins, Tokens: cfg.Tokens, LogLevel: cfg.LogLevel,
		AllowDirs: cfg.AllowDirs, DenyPatterns: cfg.DenyPatterns,
	}
}

// toolOptions are the settings of the tool families that have their own.
func toolOptions(cfg *config.Config) catalog.Options {
	sb := exectool.Sandbox{On: cfg.Sandbox, Deny: cfg.SandboxNet == config.SandboxNetDeny}
	if cfg.SandboxNet == config.SandboxNetPorts {
		sb.Ports = cfg.SandboxPorts
	}
	return catalog.Options{
		Exec: exectool.Options{Shell: cfg.Shell, Timeout: cfg.BashTimeout, TTYCols: cfg.TTYCols, TTYRows: cfg.TTYRows, Sandbox: sb,
			MaxOutput: streamChars(cfg)},
		Checkpoint: checkpointtool.Options{On: cfg.Checkpoints, Unavailable: cfg.CheckpointUnavailable},
	}
}

// newTokens is the set of bearer tokens /mcp accepts over HTTP: --token's
// and the token file's (nil: no auth, or stdio).
func newTokens(cfg *config.Config, logger *slog.Logger) (*tokens.Set, error) {
	if cfg.Transport != config.TransportHTTP || (len(cfg.Tokens) == 0 && cfg.TokenFile == "") {
		return nil, nil
	}
	toks, err := tokens.New(tokens.Options{Static: cfg.Tokens, File: cfg.TokenFile, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("invalid --token-file: %w", err)
	}
	return toks, nil
}

// tokenFileDeny are the paths denied to the tools so that an agent cannot
// read the token file: the file, and when it lies in a Kubernetes Secret
// (or ConfigMap, projected) volume, the whole volume. There the file is a
// symlink through "..data" to a timestamped directory that the kubelet
// replaces on every update: denying the path as written and as resolved
// at start would leave the next version readable.
func tokenFileDeny(file string) []string {
	if file == "" {
		return nil
	}
	dir := filepath.Dir(file)
	if fi, err := os.Lstat(filepath.Join(dir, "..data")); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return []string{dir}
	}
	return []string{file}
}

// newLSP makes the owner of the language servers (nil with --lsp off).
// They start like commands — through the sandbox when it is on, a
// workspace's servers in that workspace's confinement (confine) — and end
// with boris: on SIGTERM at once, alongside the sessions, and in any case
// before Run returns.
func newLSP(ctx context.Context, cfg *config.Config, policy *scope.Policy, sb *sandbox.Sandbox, environ []string, confine func(root string) (func(*exec.Cmd) error, func(), error), logger *slog.Logger) *lsp.Manager {
	if cfg.LSPOff {
		logger.Info("language servers off (--lsp off): no lsp tool, no diagnostics in edits")
		return nil
	}
	// Servers leave quickly when asked; a shorter grace than commands'
	// keeps shutdown within its budget when one does not.
	opts := shell.Options{Grace: 2 * time.Second}
	if sb != nil {
		opts.Start = sb.Start
	}
	m := lsp.New(lsp.Options{
		Servers:     cfg.LSPServers,
		IdleTimeout: cfg.LSPIdleTimeout,
		Runner:      shell.NewRunner(cfg.Shell, shell.Environ(environ), opts),
		Workdir:     cfg.Workdir,
		MaxFileSize: cfg.MaxFileSize,
		Policy:      policy,
		Confine:     confine,
		Logger:      logger.With("component", "lsp"),
	})
	go func() {
		<-ctx.Done()
		m.Close()
	}()
	diag := "off"
	if cfg.Diagnostics {
		diag = "on, waiting up to " + cfg.DiagnosticsWait.String() + " (what comes later ends the next answer)"
	}
	logger.Info("language servers (started on demand)", "servers", m.Status(), "idle_timeout", cfg.LSPIdleTimeout, "diagnostics", diag)
	return m
}

// pollable puts stdin in non-blocking mode when it is a pipe or a socket
// (never a terminal, whose mode the user's shell shares), so that waiting
// for the next message parks a goroutine in Go's poller instead of holding
// a thread in read(2); handing the message on then needs no other thread
// woken — about 10 µs of a call. restore puts the mode back for whoever
// shares the pipe after boris.
func pollable(r io.Reader) (io.Reader, func()) {
	f, ok := r.(*os.File)
	if !ok {
		return r, func() {}
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return r, func() {}
	}
	rc, err := f.SyscallConn() // not Fd, which would put a pollable file in blocking mode
	if err != nil {
		return r, func() {}
	}
	fd := -1
	_ = rc.Control(func(u uintptr) { fd = int(u) })
	if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err != nil || flags&unix.O_NONBLOCK != 0 {
		return r, func() {} // already served by the poller (or unknown)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		return r, func() {}
	}
	return os.NewFile(uintptr(fd), f.Name()), func() { _ = unix.SetNonblock(fd, false) }
}

// newSandbox builds the Landlock sandbox of the bash tool (sandboxConfig)
// and returns it with its configuration.
// When --sandbox auto turned it on (several tokens) the kernel must also
// scope signals, since keeping the agents apart is the point; a refusal
// then names --sandbox off as the operator's explicit way out.
func newSandbox(cfg *config.Config, policy *scope.Policy, getenv func(string) string) (*sandbox.Sandbox, sandbox.Config, error) {
	auto := cfg.SandboxMode == config.SandboxAuto
	if auto {
		if err := sandbox.CanIsolate(); err != nil {
			return nil, sandbox.Config{}, fmt.Errorf("--sandbox auto: %d tokens are configured, so each session's commands must run in a Landlock domain of their own (no signal to, no /proc access to another agent's commands or to boris), but %v. Run boris on such a kernel, or start it with --sandbox off (BORIS_SANDBOX=off) to accept that the agents' commands can reach each other and boris", cfg.Credentials(), err)
		}
	}
	sc, err := sandboxConfig(cfg, policy, getenv)
	var sb *sandbox.Sandbox
	if err == nil {
		sb, err = sandbox.New(sc)
	}
	if err != nil && auto {
		return nil, sc, fmt.Errorf("%w (the sandbox is on because of --sandbox auto with %d tokens; --sandbox off turns it off, accepting that the agents' commands can reach each other and boris)", err, cfg.Credentials())
	}
	return sb, sc, err
}

// sandboxWhy says why the sandbox is on, for the start-up log.
func sandboxWhy(cfg *config.Config) string {
	if cfg.SandboxMode == config.SandboxAuto {
		return fmt.Sprintf("auto: %d tokens", cfg.Credentials())
	}
	return cfg.SandboxMode
}

// sandboxConfig is the sandbox's configuration: writable are the allowed
// directories (or the workdir), the temp directory and --sandbox-write;
// unreadable are the --deny-dir paths, globs expanded now.
func sandboxConfig(cfg *config.Config, policy *scope.Policy, getenv func(string) string) (sandbox.Config, error) {
	deny, err := policy.DenyPaths(scope.DefaultDenyWalkLimit)
	if err != nil {
		return sandbox.Config{}, err
	}
	writable := append([]string(nil), cfg.AllowDirs...)
	if len(writable) == 0 {
		writable = append(writable, cfg.Workdir)
	}
	for _, t := range []string{os.TempDir(), getenv("TMPDIR")} {
		if t == "" {
			continue
		}
		if _, err := os.Stat(t); err == nil {
			writable = append(writable, t)
		}
	}
	writable = append(writable, cfg.SandboxWrite...)
	for _, d := range tokenFileDeny(cfg.TokenFile) {
		for _, w := range writable {
			if scope.Within(d, w) {
				return sandbox.Config{}, fmt.Errorf("--sandbox on: the --token-file %s lies inside %s, where commands may write (and so read): keep the token file outside the workspace, the temp directory and --sandbox-write", cfg.TokenFile, w)
			}
		}
	}
	if cfg.CheckpointDir != "" {
		// Commands must neither read the recorded states of the workspace
		// nor change the store their work is undone from.
		deny = append(deny, cfg.CheckpointDir)
	}
	sc := sandbox.Config{Writable: writable, Deny: deny, Ports: cfg.SandboxPorts}
	switch cfg.SandboxNet {
	case config.SandboxNetDeny:
		sc.Net = sandbox.NetDeny
	case config.SandboxNetPorts:
		sc.Net = sandbox.NetPorts
	}
	return sc, nil
}

// checkpointOptions are the settings of a checkpoint store of roots.
func checkpointOptions(cfg *config.Config, roots []string, policy *scope.Policy, getenv func(string) string, logger *slog.Logger) checkpoint.Options {
	return checkpoint.Options{
		Dir:         cfg.CheckpointDir,
		Roots:       roots,
		Policy:      policy,
		MaxBytes:    cfg.CheckpointMaxBytes,
		MaxFileSize: cfg.CheckpointMaxFileSize,
		Logger:      logger,
		// An escape hatch, not a flag: files git holds are copied too.
		NoGit: getenv("BORIS_CHECKPOINT_GIT") == "off",
		Home:  getenv("HOME"),
	}
}

// openCheckpoints opens the workspace's checkpoint store (nil when
// checkpoints are off or no directory could be used for them; the
// checkpoint tool then says why).
func openCheckpoints(cfg *config.Config, policy *scope.Policy, logger *slog.Logger, getenv func(string) string) (*checkpoint.Service, error) {
	if !cfg.Checkpoints || cfg.CheckpointDir == "" {
		return nil, nil
	}
	roots := cfg.AllowDirs
	if len(roots) == 0 {
		roots = []string{cfg.Workdir}
	}
	sv, err := checkpoint.Open(checkpointOptions(cfg, roots, policy, getenv, logger))
	if err != nil {
		return nil, fmt.Errorf("checkpoints: %w (set --checkpoint-dir to another directory, or --checkpoints off)", err)
	}
	// What checkpoints cost, where they live and how to turn them off,
	// in the start-up log (the start-up checkpoint's own line follows once
	// it is taken, with the files it borrowed from git and read).
	held, recorded := sv.Holding()
	logger.Info("checkpoints on: the workspace is recorded before every call that can change it",
		"store", sv.StoreDir(), "store_bytes", files.HumanSize(held), "files_recorded", recorded,
		"max_bytes", files.HumanSize(cfg.CheckpointMaxBytes), "max_file_size", files.HumanSize(cfg.CheckpointMaxFileSize),
		"cost", "a git work tree: what git status costs, its tracked files borrowed from git; otherwise a compressed copy, read in the background, then only what changed",
		"off", "--checkpoints off")
	return sv, nil
}

// sandboxHealth is the "sandbox" object of /health, present only when the
// sandbox is on, so /health keeps its flat shape for existing checks.
func sandboxHealth(sb *sandbox.Sandbox) map[string]any {
	if sb == nil {
		return nil
	}
	st := sb.Status()
	// Counts, not paths: /health is open and never names a path (the
	// start-up log has them).
	return map[string]any{
		"enabled":          true,
		"domains":          "per-session",
		"landlock_abi":     st.ABI,
		"writable_paths":   len(st.Writable),
		"unreadable_paths": len(st.Denied),
		"net":              st.Net,
		"ioctl_dev":        st.IoctlDev,
		"scoped":           st.Scoped,
	}
}

// logListening says where boris listens, the URL a client should use and
// how /mcp is protected, in words. leaf is the certificate served, nil for
// plain HTTP.
func logListening(logger *slog.Logger, cfg *config.Config, toks *tokens.Set, addr net.Addr, leaf *x509.Certificate) {
	tcp, _ := addr.(*net.TCPAddr)
	reach := "this machine only (loopback)"
	urlHost, port := cfg.Host, cfg.Port
	loopback := cfg.HostLoopback
	if tcp != nil {
		urlHost, port = tcp.IP.String(), tcp.Port
		loopback = tcp.IP.IsLoopback()
		if tcp.IP.IsUnspecified() {
			reach = "every network interface"
			urlHost = "127.0.0.1"
		} else if !tcp.IP.IsLoopback() {
			reach = "the network (" + tcp.IP.String() + ")"
		}
	}
	scheme := "http"
	if leaf != nil {
		scheme = "https"
	}
	url := scheme + "://" + net.JoinHostPort(urlHost, strconv.Itoa(port)) + "/mcp"
	auth, ntok := "none", 0
	if toks != nil {
		ntok = toks.Len()
	}
	switch {
	case ntok == 1:
		auth = "bearer token"
	case ntok > 1:
		auth = strconv.Itoa(ntok) + " bearer tokens"
	}
	if toks != nil && toks.File() != "" {
		auth += " (--token-file reloaded on change)"
	}
	origins := "none (browser pages are refused)"
	if len(cfg.AllowOrigins) > 0 {
		origins = strings.Join(cfg.AllowOrigins, ",")
	}
	listen := net.JoinHostPort(cfg.Host, strconv.Itoa(port))
	if cfg.NoAuth && ntok == 0 && !cfg.HostLoopback {
		logger.Warn("no authentication (--no-auth): anyone who can reach " + listen + " can run commands as this user; use it only on a trusted network or behind an authenticating proxy")
	}
	if ntok > 0 && leaf == nil && !loopback {
		logger.Warn("plain HTTP beyond loopback: the bearer token crosses the network in clear text, readable by anyone on the path to " + listen + "; serve HTTPS with --tls-cert/--tls-key, or put a TLS-terminating proxy in front")
	}
	attrs := []any{"addr", listen, "url", url, "reachable_from", reach, "auth", auth, "browser_origins", origins}
	if leaf != nil {
		attrs = append(attrs, "tls_fingerprint", tlscert.Fingerprint(leaf), "tls_not_after", leaf.NotAfter.UTC().Format(time.RFC3339), "tls_names", strings.Join(certNames(leaf), ","))
	}
	logger.Info("listening", attrs...)
}

// certNames are the names a certificate is valid for: its DNS names and IP
// addresses.
func certNames(c *x509.Certificate) []string {
	names := append([]string(nil), c.DNSNames...)
	for _, ip := range c.IPAddresses {
		names = append(names, ip.String())
	}
	return names
}

// healthcheck probes a local server, so container health checks need no
// curl or shell. A server on every interface is probed on loopback.
func healthcheck(ctx context.Context, cfg *config.Config) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	host := cfg.Host
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip.To4() == nil {
			host = "::1"
		}
	}
	scheme, client := "http", http.DefaultClient
	if cfg.TLSCert != "" {
		// The certificate is not verified. The probe dials boris's own
		// port on loopback, where a correctly configured certificate
		// does not apply: it names the service (boris.example.com), not
		// 127.0.0.1. The probe sends no credential (/health is open) and
		// acts only on the status, so an impostor on this machine's
		// loopback could learn nothing from it; what is probed is that
		// boris answers over TLS, the handshake included.
		scheme = "https"
		client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}}}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+net.JoinHostPort(host, strconv.Itoa(cfg.Port))+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("unhealthy: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("unhealthy: /health answered %s", resp.Status)
	}
	return nil
}

func shellDesc(cfg *config.Config) string {
	if cfg.Shell == "" {
		return "none (bash and task_output disabled)"
	}
	return cfg.Shell + " (" + cfg.ShellSource + ")"
}

// newLoggerAt is the logger of --log-format writing to w from level up.
func newLoggerAt(cfg *config.Config, w io.Writer, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// probeHost looks at the image boris runs in (package hostenv) and logs
// what commands will find there: one line per finding, a warning for what
// will fail unless the operator acts.
func probeHost(cfg *config.Config, logger *slog.Logger) *hostenv.Report {
	r := hostenv.Probe(hostenv.Options{
		Workdir:     cfg.Workdir,
		Roots:       cfg.AllowDirs,
		Shell:       cfg.Shell,
		ShellSource: cfg.ShellSource,
		Environ:     os.Environ(),
		TempDir:     os.TempDir(),
		LookPath:    exec.LookPath,
	})
	for _, n := range r.Notes {
		if n.Level == hostenv.Warn {
			logger.Warn(n.Msg)
		} else {
			logger.Info(n.Msg)
		}
	}
	return r
}

// logFileReach says at start-up what the file tools (view, the edits,
// grep, find) may touch: without --allow-dir that is every path boris's
// user can reach, which a reader of "the file tools are scoped" may not
// expect.
func logFileReach(logger *slog.Logger, cfg *config.Config) {
	deny := strings.Join(cfg.DenyPatterns, ",")
	if len(cfg.AllowDirs) == 0 {
		logger.Info("file tools: no --allow-dir, so they read and write every path boris's user can (the workdir is only where relative paths start); --allow-dir confines them", "workdir", cfg.Workdir, "deny", deny)
		return
	}
	logger.Info("file tools: confined to the --allow-dir directories", "allow_dirs", strings.Join(cfg.AllowDirs, ","), "deny", deny)
}
