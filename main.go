// Command boris serves a coding agent's tools — bash, view, str_replace,
// create_file, grep, find — over the Model Context Protocol, on streamable
// HTTP or stdio.
package main

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
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/boris-mcp/boris/internal/audit"
	"github.com/boris-mcp/boris/internal/config"
	"github.com/boris-mcp/boris/internal/files"
	"github.com/boris-mcp/boris/internal/metrics"
	"github.com/boris-mcp/boris/internal/sandbox"
	"github.com/boris-mcp/boris/internal/scope"
	"github.com/boris-mcp/boris/internal/server"
	"github.com/boris-mcp/boris/internal/session"
	"github.com/boris-mcp/boris/internal/shell"
	"github.com/boris-mcp/boris/internal/telemetry"
	"github.com/boris-mcp/boris/internal/tlscert"
	"github.com/boris-mcp/boris/internal/tools"
	"golang.org/x/sys/unix"
)

// version is set at build time with -ldflags "-X main.version=…".
var version string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	// Reaping is process-wide (one set of children, one SIGCHLD), so it is
	// switched on here for the real binary, not inside run.
	reapErr := shell.EnableReaping()
	// A client that goes away closes our stdout: writing to it must fail
	// with EPIPE, not kill boris by SIGPIPE before it has ended the
	// session's processes. A handler (not SIG_IGN) is not inherited by
	// commands, which keep the default SIGPIPE behaviour.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	tuneGC(os.Getenv)
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "boris:", err)
		os.Exit(1)
	}
	_ = reapErr // only Linux reaps; elsewhere os/exec waits for each shell
}

// Garbage-collector defaults, unless the operator sets GOGC or GOMEMLIMIT.
// A call's JSON handling in the SDK makes 70–700 KB of short-lived buffers
// while boris's live heap is a few MB, so at Go's default the collector
// runs every few calls. 200 halves that (a null call over stateless HTTP:
// 387 → 326 µs p50) for half again the memory under load (500 sessions:
// 99 → 162 MB peak; 400 would take 232 MB for little more). The soft
// limit caps the heap's growth: 256 MiB, or a quarter of the cgroup's
// memory limit when that is lower (the commands boris runs share it).
const (
	gcPercent   = 200
	gcSoftLimit = 256 << 20
)

func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softLimit(cgroupMemoryLimit()))
	}
}

// softLimit is the collector's soft memory limit under a cgroup limit
// (0: none).
func softLimit(cgroup int64) int64 {
	if cgroup > 0 && cgroup/4 < gcSoftLimit {
		return cgroup / 4
	}
	return gcSoftLimit
}

// cgroupMemoryLimit reads the memory limit of boris's cgroup (v2, else
// v1), or 0 when there is none or it cannot be read.
func cgroupMemoryLimit() int64 {
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n <= 0 || n >= 1<<62 { // "max", or v1's "unlimited"
			return 0
		}
		return n
	}
	return 0
}

// run starts boris with the given arguments and environment and serves
// until ctx is done (or stdin ends, in stdio mode).
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	ver := buildVersion()
	cfg, err := config.Parse(args, getenv, ver, stdout, stderr)
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

	policy, err := scope.New(cfg.AllowDirs, cfg.DenyPatterns, cfg.Workdir)
	if err != nil {
		return err
	}
	m := metrics.New(ver)
	sessOpts := session.Options{
		Workdir:      cfg.Workdir,
		TaskTimeout:  cfg.BackgroundTaskTimeout,
		OnTaskChange: m.TaskChange,
		// Up to 64 sessions keep their next bash started, each for a
		// minute after its last command.
		Warm: session.NewWarmPool(64, time.Minute),
	}
	var sb *sandbox.Sandbox
	if cfg.Sandbox {
		t0 := time.Now()
		sb, err = newSandbox(cfg, policy, getenv)
		if err != nil {
			return err
		}
		total := time.Since(t0)
		defer sb.Close()
		st := sb.Status()
		m.SandboxEnforced(st.ABI, st.Net, st.Scoped)
		logger.Info("sandbox on: bash commands run under Landlock",
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
	} else {
		m.SandboxEnforced(0, "", false)
	}
	if cfg.Shell != "" {
		opts := shell.Options{}
		if sb != nil {
			opts.Start = sb.Start
		}
		sessOpts.Runner = shell.NewRunner(cfg.Shell, shell.Environ(os.Environ()), opts)
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
	set, err := tools.NewSet(tools.Deps{
		Config:   cfg,
		Policy:   policy,
		Files:    files.New(files.Options{Policy: policy, MaxFileSize: cfg.MaxFileSize, RequireViewBeforeEdit: cfg.RequireViewBeforeEdit}),
		Logger:   logger,
		Observer: m,
		// The audit trail is written at info whatever --log-level says.
		Audit:   audit.New(base, cfg.Audit),
		Tracing: tracing,
	})
	if err != nil {
		return err
	}
	var certs *tlscert.Reloader
	deps := server.Deps{Config: cfg, Version: ver, Logger: logger, Tools: set, Sessions: sessOpts, Metrics: m, Sandbox: sandboxHealth(sb), Tracing: tracing}
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
	logListening(logger, cfg, ln.Addr(), leaf)
	err = srv.ServeHTTP(ctx, ln, m.Handler())
	logger.Info("boris stopped")
	return err
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

// newSandbox builds the Landlock sandbox of the bash tool from the
// configuration: writable are the allowed directories (or the workdir),
// the temp directory and --sandbox-write; unreadable are the --deny-dir
// paths, globs expanded now.
func newSandbox(cfg *config.Config, policy *scope.Policy, getenv func(string) string) (*sandbox.Sandbox, error) {
	deny, err := policy.DenyPaths(scope.DefaultDenyWalkLimit)
	if err != nil {
		return nil, err
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
	sc := sandbox.Config{Writable: writable, Deny: deny, Ports: cfg.SandboxPorts}
	switch cfg.SandboxNet {
	case config.SandboxNetDeny:
		sc.Net = sandbox.NetDeny
	case config.SandboxNetPorts:
		sc.Net = sandbox.NetPorts
	}
	return sandbox.New(sc)
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
func logListening(logger *slog.Logger, cfg *config.Config, addr net.Addr, leaf *x509.Certificate) {
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
	auth := "none"
	switch {
	case len(cfg.Tokens) == 1:
		auth = "bearer token"
	case len(cfg.Tokens) > 1:
		auth = strconv.Itoa(len(cfg.Tokens)) + " bearer tokens"
	}
	origins := "none (browser pages are refused)"
	if len(cfg.AllowOrigins) > 0 {
		origins = strings.Join(cfg.AllowOrigins, ",")
	}
	listen := net.JoinHostPort(cfg.Host, strconv.Itoa(port))
	if cfg.NoAuth && len(cfg.Tokens) == 0 && !cfg.HostLoopback {
		logger.Warn("no authentication (--no-auth): anyone who can reach " + listen + " can run commands as this user; use it only on a trusted network or behind an authenticating proxy")
	}
	if len(cfg.Tokens) > 0 && leaf == nil && !loopback {
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

// buildVersion is the -X version, else what the Go toolchain recorded.
func buildVersion() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev (" + runtime.Version() + ")"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "dev-" + rev
}
