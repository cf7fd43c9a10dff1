// Package config turns the command line and the environment into the
// immutable Config that the rest of boris is built from.
//
// Every flag has an environment variable; a flag given on the command line
// beats its variable. List flags are repeatable on the command line and
// comma-separated in the environment. Everything that can be decided at
// start-up is decided here (the workdir is made absolute and symlink-free,
// `auto` becomes a boolean, the shell is detected), so the tools only ever see
// resolved values.
package config

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kong"
	"github.com/bmatcuk/doublestar/v4"

	"github.com/boris-mcp/boris/internal/dialect"
	"github.com/boris-mcp/boris/internal/lsp"
	"github.com/boris-mcp/boris/internal/tlscert"
	"github.com/boris-mcp/boris/internal/tokens"
)

// Transport names.
const (
	TransportHTTP  = "http"
	TransportStdio = "stdio"
)

// Config is the resolved, immutable configuration of one boris process:
// one part per concern, each embedded so that its fields read as the
// Config's own, and each handed whole to what it configures.
type Config struct {
	Server
	Auth
	Tools
	Commands
	Sandboxing
	CodeIntel
	Checkpointing
	Operations
	// Isolation is --isolation and the bounds of its workspaces.
	Isolation Isolation
	// Warnings are messages to log once the logger exists (deprecated
	// spellings, contradictory settings).
	Warnings []string
}

// Server is how boris serves MCP.
type Server struct {
	Transport string
	// Host is the address HTTP listens on; HostLoopback says whether every
	// address it stands for is a loopback address.
	Host         string
	HostLoopback bool
	Port         int
	// MaxSessions bounds the live sessions of every kind.
	MaxSessions        int
	SessionIdleTimeout time.Duration
	// ShutdownTimeout is how long, at stdin's end, the calls already read
	// may run to finish before they are cancelled.
	ShutdownTimeout time.Duration
	// Healthcheck asks for a probe of a running server instead of a server.
	Healthcheck bool
}

// Auth is who may call /mcp, and over what.
type Auth struct {
	// Tokens are the bearer tokens of --token, accepted on /mcp, each its
	// own credential; with no TokenFile either, none means no auth.
	Tokens []string
	// TokenFile is the absolute path of the --token-file (one token per
	// line, each its own credential besides Tokens), "" for none. Symlinks
	// are kept, as for the TLS pair, so a Secret volume's update is seen.
	// Over HTTP it was read successfully at start; whatever the transport
	// it is denied to the tools.
	TokenFile string
	// fileTokens counts the token file's tokens at start (beyond
	// Tokens), for Credentials.
	fileTokens int
	// TokenGenerated is true when Tokens holds one token made at start-up
	// (--generate-token, or a non-loopback listener without a token) that
	// must be shown once to the operator; TokenGeneratedWhy says which.
	TokenGenerated    bool
	TokenGeneratedWhy string
	// NoAuth is --no-auth: the operator says the network is trusted.
	NoAuth bool
	// AllowOrigins are the browser origins (scheme://host[:port], or "*")
	// whose requests /mcp accepts; requests with any other Origin get 403.
	AllowOrigins []string
	// TLSCert and TLSKey are the absolute paths of the PEM certificate and
	// key HTTPS is served with, both empty for plain HTTP. Symlinks are
	// kept, not resolved: a Secret volume's files are symlinks that a
	// rotation points elsewhere.
	TLSCert, TLSKey string
}

// Tools is what the tools are and what the file tools may reach.
type Tools struct {
	// Workdir is absolute and free of symlinks.
	Workdir string
	// AllowDirs are absolute, symlink-free directories; empty means no limit.
	AllowDirs []string
	// DenyPatterns are the raw --deny-dir values (directories or globs).
	DenyPatterns []string
	// DisableTools are the --disable-tools names as given (any dialect's
	// name of a tool; --no-bash adds bash), and Disabled what they come to:
	// boris's names of the tools they turn off.
	DisableTools          []string
	Disabled              map[string]bool
	MaxFileSize           int64
	RequireViewBeforeEdit bool
	// MaxAnswer is the most characters a tool's answer holds (its text,
	// and its structured content likewise); what is left out is said,
	// with how to get it.
	MaxAnswer int
	// Dialect is the tools' dialect: boris's own, Claude's
	// (--anthropic-compat) or OpenAI's (--openai-compat).
	Dialect dialect.Mode
	// StructuredContent is whether tools declare an output schema and
	// answer with structuredContent beside their text (--structured-content;
	// auto is what the dialect says).
	StructuredContent bool
}

// Commands is how commands run.
type Commands struct {
	// Shell is the absolute path of the shell for the bash tool, or empty
	// when none exists (the shell tools are then not registered).
	Shell string
	// ShellSource says how Shell was chosen ("--shell", "detected", "none").
	ShellSource string
	// BashTimeout is the default timeout of a bash call.
	BashTimeout time.Duration
	// BackgroundTaskTimeout is zero for no limit.
	BackgroundTaskTimeout time.Duration
	// TTYCols and TTYRows are the size of the terminal of a tty command.
	TTYCols, TTYRows int
	// Limits are the limits every command runs under.
	Limits Limits
	// Rules are the absolute paths of the --rules files (Codex .rules,
	// Claude Code settings), in order; loaded, and reloaded on change, by
	// the app.
	Rules []string
}

// Sandboxing is the kernel sandbox commands run in.
type Sandboxing struct {
	// SandboxMode is --sandbox as given: SandboxAuto, SandboxOn or
	// SandboxOff. Sandbox is what it came to (see SandboxWanted): commands
	// run under Landlock, each session's in a domain of its own.
	SandboxMode string
	Sandbox     bool
	// SandboxWrite are extra absolute, symlink-free paths commands may
	// write with the sandbox on.
	SandboxWrite []string
	// SandboxNet is "allow", "deny" or "ports" (then SandboxPorts lists
	// the TCP ports commands may connect to).
	SandboxNet   string
	SandboxPorts []uint16
}

// CodeIntel is the language servers. LSPOff (--lsp off) runs none: no lsp
// tool, no diagnostics in edits. LSPServers are the --lsp LANG=COMMAND
// entries by canonical language name (a nil command turns that language
// off). LSPIdleTimeout stops a server nobody used for that long.
// Diagnostics (--diagnostics on) appends the errors an edit introduced to
// its answer, waiting at most DiagnosticsWait (what is not known by then
// comes with the session's next answer).
type CodeIntel struct {
	LSPOff          bool
	LSPServers      map[string][]string
	LSPIdleTimeout  time.Duration
	Diagnostics     bool
	DiagnosticsWait time.Duration
}

// Checkpointing is the checkpoint store. Checkpoints is --checkpoints on:
// the workspace is checkpointed before every call that can change it and
// the checkpoint tool is served. CheckpointDir is the directory of the
// stores (absolute, outside the workspace), CheckpointMaxBytes its bound
// and CheckpointMaxFileSize the largest file whose content is kept.
// CheckpointUnavailable, when set, says why no default directory could be
// used: the tool then answers CHECKPOINT_DISABLED with it.
type Checkpointing struct {
	Checkpoints           bool
	CheckpointDir         string
	CheckpointMaxBytes    int64
	CheckpointMaxFileSize int64
	CheckpointUnavailable string
}

// Operations is what boris tells its operator.
type Operations struct {
	LogLevel  slog.Level
	LogFormat string
	// Audit is what the audit record of a tool call holds: AuditFull,
	// AuditPaths (no command or input text) or AuditOff (no record).
	Audit string
}

// MinAnswer is the smallest --max-answer.
const MinAnswer = 4000

// MaxDiagnosticsWait is the longest --diagnostics-wait: an edit's answer is
// never held longer for a language server.
const MaxDiagnosticsWait = 10 * time.Second

// Sandbox modes (Config.SandboxMode).
const (
	SandboxAuto = "auto"
	SandboxOn   = "on"
	SandboxOff  = "off"
)

// Credentials is the number of credentials /mcp accepts: the bearer
// tokens, however they were given (the token file's as it was at start: a
// file that gains tokens later does not turn the sandbox on until boris
// restarts). Each is an agent of its own, which is what --sandbox auto
// counts.
func (c *Config) Credentials() int { return len(c.Tokens) + c.fileTokens }

// SandboxWanted decides whether commands run sandboxed: --sandbox on and
// off say so; auto is on when more than one credential is configured, so
// that the agents' commands cannot reach each other or boris, and off for
// a single agent, which has nobody to be kept from.
func (c *Config) SandboxWanted() bool {
	switch c.SandboxMode {
	case SandboxOn:
		return true
	case SandboxAuto:
		return c.Credentials() > 1
	}
	return false
}

// Sandbox network modes (Config.SandboxNet).
const (
	SandboxNetAllow = "allow"
	SandboxNetDeny  = "deny"
	SandboxNetPorts = "ports"
)

// The --audit modes.
const (
	AuditFull  = "full"
	AuditPaths = "paths"
	AuditOff   = "off"
)

// cli is the kong model. The env tags are read by envResolver through the
// getenv function handed to Parse, never from the process environment
// directly, so tests can run the whole CLI in-process.
type cli struct {
	Transport          string `group:"server" help:"Transport: http or stdio." default:"http" envvar:"BORIS_TRANSPORT"`
	Host               string `group:"server" help:"HTTP listen address: 127.0.0.1 (this machine only), 0.0.0.0 or :: (every interface), or one address." default:"127.0.0.1" envvar:"BORIS_HOST"`
	Port               int    `group:"server" help:"HTTP listen port (0 picks a free port)." default:"8080" envvar:"BORIS_PORT"`
	MaxSessions        int    `group:"server" help:"Most sessions alive at once, of every kind; when full, the least recently used idle one is closed." default:"1000" envvar:"BORIS_MAX_SESSIONS"`
	SessionIdleTimeout string `group:"server" help:"Close sessions idle this long, terminating their processes (0 = never)." default:"10m" envvar:"BORIS_SESSION_IDLE_TIMEOUT"`
	ShutdownTimeout    string `group:"server" help:"At stdin's end (stdio), how long the calls already read may run to finish; the ones still running then are cancelled and answered with an error. Every request read is answered before boris exits." default:"30s" envvar:"BORIS_SHUTDOWN_TIMEOUT"`

	Token         []string `group:"auth" help:"Bearer token required on /mcp (HTTP mode; repeatable: each token is its own credential with its own sessions)." placeholder:"TOKEN" envvar:"BORIS_TOKEN"`
	TokenFile     string   `group:"auth" name:"token-file" help:"File of bearer tokens, one per line (blank lines and # comments skipped), each its own credential as with --token; reloaded when it changes: a removed token's sessions are closed. Denied to the tools." placeholder:"FILE" envvar:"BORIS_TOKEN_FILE"`
	GenerateToken bool     `group:"auth" help:"Generate a random token at start-up and print it once to stderr." envvar:"BORIS_GENERATE_TOKEN"`
	NoAuth        bool     `group:"auth" help:"Serve /mcp without a token on a non-loopback address: the network is trusted (e.g. behind an authenticating proxy)." envvar:"BORIS_NO_AUTH"`
	AllowOrigin   []string `group:"auth" help:"Browser origin allowed to call /mcp, e.g. https://app.example.com (repeatable; * allows any). Requests with another Origin get 403." placeholder:"ORIGIN" envvar:"BORIS_ALLOW_ORIGINS"`
	TLSCert       string   `group:"auth" name:"tls-cert" help:"PEM certificate (leaf first, then intermediates) to serve HTTPS with instead of HTTP, on the same port; reloaded when the file changes. Needs --tls-key." placeholder:"FILE" envvar:"BORIS_TLS_CERT"`
	TLSKey        string   `group:"auth" name:"tls-key" help:"PEM private key of the --tls-cert certificate; reloaded with it." placeholder:"FILE" envvar:"BORIS_TLS_KEY"`

	Workdir               string   `group:"tools" help:"Initial working directory." default:"." envvar:"BORIS_WORKDIR"`
	AllowDir              []string `group:"tools" sep:"none" help:"Directory the file tools may touch (repeatable). Without any, they reach every path boris's user can, except --deny-dir." placeholder:"DIR" envvar:"BORIS_ALLOW_DIRS"`
	DenyDir               []string `group:"tools" sep:"none" help:"Denied directory or glob such as **/.env (repeatable); deny beats allow." placeholder:"PATTERN" envvar:"BORIS_DENY_DIRS"`
	DisableTools          []string `group:"tools" help:"Tool names not to register (repeatable): ${tools}." placeholder:"TOOL" envvar:"BORIS_DISABLE_TOOLS"`
	MaxFileSize           string   `group:"tools" help:"Largest file view reads and create_file/str_replace write (B, KB, MB, GB or bytes)." default:"10MB" envvar:"BORIS_MAX_FILE_SIZE"`
	MaxAnswer             int      `group:"tools" help:"Most characters a tool's answer holds (about 4 per token; at least 4000). A longer one is cut, saying what was left out and how to ask for the next part (a view_range, an offset, another read)." default:"100000" envvar:"BORIS_MAX_ANSWER"`
	RequireViewBeforeEdit string   `group:"tools" help:"Refuse edits of files not viewed in the session: auto, true, false." default:"auto" envvar:"BORIS_REQUIRE_VIEW_BEFORE_EDIT"`
	AnthropicCompat       bool     `group:"tools" help:"Serve the tools Claude models are trained on (bash, str_replace_editor), answering as Anthropic's reference tools do." envvar:"BORIS_ANTHROPIC_COMPAT"`
	OpenaiCompat          bool     `group:"tools" name:"openai-compat" help:"Serve the tools OpenAI's coding models are trained on (shell, apply_patch), answering as Codex does." envvar:"BORIS_OPENAI_COMPAT"`
	StructuredContent     string   `group:"tools" name:"structured-content" help:"Answer with structuredContent and declare each tool's outputSchema (results a program reads without parsing text): auto (on, except with --anthropic-compat), on, off." default:"auto" envvar:"BORIS_STRUCTURED_CONTENT"`

	Shell                 string   `group:"commands" help:"Shell for the bash tool (default: /bin/bash, else /bin/sh)." envvar:"BORIS_SHELL"`
	Timeout               int      `group:"commands" help:"Default bash timeout in seconds." default:"120" envvar:"BORIS_TIMEOUT"`
	BackgroundTaskTimeout int      `group:"commands" help:"Seconds a background task may live (0 = no limit)." default:"0" envvar:"BORIS_BACKGROUND_TASK_TIMEOUT"`
	TTYSize               string   `group:"commands" name:"tty-size" help:"Size of the terminal of a bash command run with tty: true, COLSxROWS." default:"120x40" envvar:"BORIS_TTY_SIZE"`
	Sandbox               string   `group:"commands" help:"Run bash commands under a Landlock sandbox (Linux), each session's in a domain of its own: auto (on when more than one token is configured), on or off. On: writes only in the allowed dirs (or workdir), the temp dir and --sandbox-write paths; --deny-dir paths unreadable; no signal or /proc access to another session's processes or to boris." default:"auto" envvar:"BORIS_SANDBOX"`
	SandboxWrite          []string `group:"commands" sep:"none" help:"Extra path sandboxed commands may write, e.g. a build cache (repeatable)." placeholder:"PATH" envvar:"BORIS_SANDBOX_WRITE"`
	SandboxNet            string   `group:"commands" help:"TCP for sandboxed commands: allow, deny, or the ports they may connect to (e.g. 443,80; binds refused)." default:"allow" envvar:"BORIS_SANDBOX_NET"`
	CommandMaxProcs       int      `group:"commands" name:"command-max-procs" help:"Most processes one command may add (0: half of the free slots below the container's pids limit, keeping a reserve for boris). Needs boris to run as a non-root user." default:"0" envvar:"BORIS_COMMAND_MAX_PROCS"`
	CommandMemory         string   `group:"commands" name:"command-memory" help:"Largest data segment (RLIMIT_DATA: heap and private mappings) of each command process (B, KB, MB, GB; 0 = none). The container's memory limit applies anyway." default:"0" envvar:"BORIS_COMMAND_MEMORY"`
	CommandFileSize       string   `group:"commands" name:"command-file-size" help:"Largest file a command process may write (RLIMIT_FSIZE; B, KB, MB, GB; 0 = none)." default:"0" envvar:"BORIS_COMMAND_FILE_SIZE"`
	Rules                 []string `group:"commands" sep:"none" help:"Rules on what commands may run (repeatable): a Codex .rules file (prefix_rule, host_executable) or a Claude Code settings file (permissions allow/ask/deny: Bash(...), Read(...), Edit(...)). Judged on the parsed command line before it runs and on the file tools' paths; the strictest decision wins; ask goes to the human through elicitation where the client can, else the call is refused. Reloaded when a file changes (a bad file keeps the previous rules). See docs/rules.md." placeholder:"FILE" envvar:"BORIS_RULES"`
	CommandNice           int      `group:"commands" name:"command-nice" help:"Scheduling priority of commands, 1 to 19 (boris runs at 0); a command still running after a second goes to 19, and one whose processes together have wanted the CPU for half a second to SCHED_IDLE." default:"10" envvar:"BORIS_COMMAND_NICE"`

	Checkpoints           string `group:"checkpoints" help:"Checkpoint the workspace before every call that can change it, and serve the checkpoint tool (create, list, diff, restore): on or off." default:"on" envvar:"BORIS_CHECKPOINTS"`
	CheckpointDir         string `group:"checkpoints" help:"Directory of the checkpoint stores, outside the workspace (default: $XDG_STATE_HOME/boris/checkpoints, else ~/.local/state/boris/checkpoints, else boris-checkpoints-UID in the temp dir)." placeholder:"DIR" envvar:"BORIS_CHECKPOINT_DIR"`
	CheckpointMaxBytes    string `group:"checkpoints" help:"Most the checkpoint directory may hold (B, KB, MB, GB); the oldest checkpoints are pruned first." default:"1GB" envvar:"BORIS_CHECKPOINT_MAX_BYTES"`
	CheckpointMaxFileSize string `group:"checkpoints" help:"Largest file whose content checkpoints keep; a larger one is recorded (size, time, mode) but cannot be restored." default:"32MB" envvar:"BORIS_CHECKPOINT_MAX_FILE_SIZE"`

	LSP             []string `group:"code" name:"lsp" sep:"none" help:"Language server of a language, LANG=COMMAND (repeatable): go, c (C and C++), python, typescript (and JavaScript), rust; e.g. python=pylsp, rust=off; or off to run none. Default: gopls, clangd, pyright-langserver or pylsp, typescript-language-server, rust-analyzer when on PATH." placeholder:"LANG=COMMAND" envvar:"BORIS_LSP"`
	LSPIdleTimeout  string   `group:"code" name:"lsp-idle-timeout" help:"Stop a language server nobody used for this long (it starts again when needed)." default:"10m" envvar:"BORIS_LSP_IDLE_TIMEOUT"`
	Diagnostics     string   `group:"code" help:"Append the errors an edit introduced, as the file's language server reports them, to the edit's answer: on or off." default:"on" envvar:"BORIS_DIAGNOSTICS"`
	DiagnosticsWait string   `group:"code" help:"Longest wait of an edit's answer for the language server's diagnostics (at most 10s); what is not known by then is named pending in it and comes with the session's next answer." default:"50ms" envvar:"BORIS_DIAGNOSTICS_WAIT"`

	Isolation        string `group:"workspaces" help:"Keep sessions apart on one git repository: off (they share the workdir; a session may ask for a workspace with the workspace tool) or worktree (each session works in a git workspace of its own, a clone of HEAD on its branch boris/NAME under .git/boris/worktrees, made at its first call; every tool, the sandbox and checkpoints see only it; the main checkout is never changed)." default:"off" envvar:"BORIS_ISOLATION"`
	MaxWorktrees     int    `group:"workspaces" name:"max-worktrees" help:"Most workspaces of the repository, in use and kept with work; past it, making one fails with WORKSPACE_LIMIT." default:"20" envvar:"BORIS_MAX_WORKTREES"`
	WorktreeMaxBytes string `group:"workspaces" name:"worktree-max-bytes" help:"Most disk the workspaces may take together (B, KB, MB, GB; 0 = only the free space); past it, making one fails with WORKSPACE_LIMIT." default:"20GB" envvar:"BORIS_WORKTREE_MAX_BYTES"`

	LogLevel    string `group:"operations" help:"Log level: debug, info, warn, error." default:"info" envvar:"BORIS_LOG_LEVEL"`
	LogFormat   string `group:"operations" help:"Log format: text or json." default:"text" envvar:"BORIS_LOG_FORMAT"`
	Audit       string `group:"operations" help:"Audit record of every tool call, logged at info whatever --log-level: full (with the command text), paths (without command or input text), off." default:"full" envvar:"BORIS_AUDIT"`
	Version     bool   `group:"operations" help:"Print the version and exit."`
	Healthcheck bool   `group:"operations" help:"Probe a running server's /health on 127.0.0.1:--port (over HTTPS with --tls-cert) and exit 0 if it is healthy (for container health checks)."`

	// Deprecated spellings kept so existing deployments keep running.
	NoBash    bool `hidden:"" envvar:"BORIS_NO_BASH"`
	BgTimeout *int `hidden:"" envvar:"BORIS_BG_TIMEOUT"`
}

// SplitList splits a comma-separated list, except at commas inside braces:
// "*.{pem,key},secrets/" is two items, a glob and a directory.
func SplitList(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// ErrExit is returned by Parse when the command line asked for output and
// an exit (--help, --version) rather than a server.
var ErrExit = errors.New("exit requested")

// Program is what the command line describes besides the flags: boris's
// version (for --version) and the names its tools answer to (for
// --disable-tools), which the tools' declarations give.
type Program struct {
	Version string
	Tools   dialect.Naming
}

// groups are the headings --help lists the flags under, in this order.
var groups = kong.ExplicitGroups([]kong.Group{
	{Key: "server", Title: "Server: how MCP is served"},
	{Key: "auth", Title: "Auth: who may call /mcp"},
	{Key: "tools", Title: "Tools: which, in which dialect, and what the file tools reach"},
	{Key: "commands", Title: "Commands and sandbox: how commands run"},
	{Key: "checkpoints", Title: "Checkpoints: undoing what the agent changed"},
	{Key: "code", Title: "Code intelligence: language servers"},
	{Key: "workspaces", Title: "Workspaces: a git workspace per agent"},
	{Key: "operations", Title: "Operations: logs, audit, health"},
})

// helpTrailer ends --help: where the rest is written.
const helpTrailer = `
Every flag has an environment variable (in parentheses); a flag on the command
line beats it. In the source repository (github.com/boris-mcp/boris): every flag
in docs/flags.md, the tools in docs/tools.md, the security model in SECURITY.md.
`

// vars are the values the flags' help interpolates.
func (p Program) vars() kong.Vars {
	return kong.Vars{"tools": strings.Join(p.Tools.Names, ", ")}
}

// Parse parses args and the environment (through getenv) into a Config.
// --help and --version write to stdout and return ErrExit.
func Parse(p Program, args []string, getenv func(string) string, stdout, stderr io.Writer) (*Config, error) {
	var c cli
	exited := false
	parser, err := kong.New(&c, p.vars(), groups,
		kong.Name("boris"),
		kong.Description("boris serves a coding agent's tools (bash, view, edit, create, grep, find) over the Model Context Protocol."),
		kong.Writers(stdout, stderr),
		kong.Help(func(o kong.HelpOptions, ctx *kong.Context) error {
			if err := kong.DefaultHelpPrinter(o, ctx); err != nil {
				return err
			}
			_, err := io.WriteString(ctx.Stdout, helpTrailer)
			return err
		}),
		kong.Exit(func(int) { exited = true; panic(errExitPanic{}) }),
		kong.Resolvers(envResolver(getenv)),
		kong.ValueFormatter(func(v *kong.Value) string {
			help := kong.DefaultHelpValueFormatter(v)
			if env := v.Tag.Get("envvar"); env != "" {
				help += " ($" + env + ")"
			}
			return help
		}),
		kong.UsageOnError(),
	)
	if err != nil {
		return nil, fmt.Errorf("build command line: %w", err)
	}
	if err := parseRecovering(parser, args); err != nil {
		if exited {
			return nil, ErrExit
		}
		return nil, err
	}
	if exited {
		return nil, ErrExit
	}
	if c.Version {
		fmt.Fprintf(stdout, "boris %s\n", p.Version)
		return nil, ErrExit
	}
	return c.resolve(p, getenv, tokenOnCommandLine(args))
}

// tokenOnCommandLine reports whether args give --token itself (not
// BORIS_TOKEN): a process's command line is readable by every local user.
func tokenOnCommandLine(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--token" || strings.HasPrefix(a, "--token=") {
			return true
		}
	}
	return false
}

type errExitPanic struct{}

func parseRecovering(parser *kong.Kong, args []string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(errExitPanic); ok {
				err = ErrExit
				return
			}
			panic(r)
		}
	}()
	_, err = parser.Parse(args)
	return err
}

// envResolver supplies flag values from the environment variables named in
// the envvar tags.
func envResolver(getenv func(string) string) kong.Resolver {
	return kong.ResolverFunc(func(_ *kong.Context, _ *kong.Path, flag *kong.Flag) (any, error) {
		name := flag.Tag.Get("envvar")
		if name == "" {
			return nil, nil
		}
		v := getenv(name)
		if v == "" {
			return nil, nil
		}
		if flag.IsSlice() {
			// Items as a list, so kong does not split them again; empty
			// items dropped so "a,,b" and a trailing comma are harmless.
			var items []any
			for _, s := range SplitList(v) {
				if s = strings.TrimSpace(s); s != "" {
					items = append(items, s)
				}
			}
			if len(items) == 0 {
				return nil, nil
			}
			return items, nil
		}
		return v, nil
	})
}

func (c *cli) resolve(p Program, getenv func(string) string, tokenInArgs bool) (*Config, error) {
	cfg := &Config{Operations: Operations{LogFormat: c.LogFormat}, Server: Server{Healthcheck: c.Healthcheck}}
	var err error
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }

	switch c.Transport {
	case TransportHTTP, TransportStdio:
		cfg.Transport = c.Transport
	default:
		fail("invalid --transport %q: valid values are %q and %q", c.Transport, TransportHTTP, TransportStdio)
	}
	if c.Port < 0 || c.Port > 65535 {
		fail("invalid --port %d: must be between 0 and 65535", c.Port)
	}
	cfg.Port = c.Port
	cfg.Host, cfg.HostLoopback, err = resolveHost(c.Host)
	if err != nil {
		fail("invalid --host %q: %v", c.Host, err)
	}
	if c.MaxSessions < 1 {
		fail("invalid --max-sessions %d: must be at least 1", c.MaxSessions)
	}
	cfg.MaxSessions = c.MaxSessions

	if c.Timeout <= 0 {
		fail("invalid --timeout %d: must be a positive number of seconds", c.Timeout)
	}
	cfg.BashTimeout = time.Duration(c.Timeout) * time.Second

	bg := c.BackgroundTaskTimeout
	if c.BgTimeout != nil {
		cfg.Warnings = append(cfg.Warnings, "--bg-timeout and BORIS_BG_TIMEOUT are deprecated: use --background-task-timeout / BORIS_BACKGROUND_TASK_TIMEOUT")
		if bg == 0 {
			bg = *c.BgTimeout
		}
	}
	if bg < 0 {
		fail("invalid --background-task-timeout %d: must be 0 (no limit) or a positive number of seconds", bg)
	}
	cfg.BackgroundTaskTimeout = time.Duration(bg) * time.Second

	var workdir string
	workdir, err = resolveDir(c.Workdir, "")
	if err != nil {
		fail("invalid --workdir: %v", err)
	}
	cfg.Workdir = workdir

	for _, d := range c.AllowDir {
		abs, err := resolveDir(d, workdir)
		if err != nil {
			fail("invalid --allow-dir: %v", err)
			continue
		}
		if !slices.Contains(cfg.AllowDirs, abs) {
			cfg.AllowDirs = append(cfg.AllowDirs, abs)
		}
	}
	for _, p := range c.DenyDir {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !doublestar.ValidatePattern(filepath.ToSlash(p)) {
			fail("invalid --deny-dir %q: not a valid glob pattern", p)
			continue
		}
		cfg.DenyPatterns = append(cfg.DenyPatterns, p)
	}

	for _, name := range c.DisableTools {
		if name = strings.TrimSpace(name); name != "" {
			cfg.DisableTools = append(cfg.DisableTools, name)
		}
	}
	if c.NoBash {
		cfg.Warnings = append(cfg.Warnings, "--no-bash and BORIS_NO_BASH are deprecated: use --disable-tools bash")
		cfg.DisableTools = append(cfg.DisableTools, "bash")
	}
	if cfg.Disabled, err = p.Tools.Disabled(cfg.DisableTools); err != nil {
		fail("%v", err)
	}

	if c.MaxAnswer < MinAnswer {
		fail("invalid --max-answer %d: at least %d characters (a tool must be able to say what it left out)", c.MaxAnswer, MinAnswer)
	}
	cfg.MaxAnswer = c.MaxAnswer

	size, err := ParseSize(c.MaxFileSize)
	if err != nil {
		fail("invalid --max-file-size: %v", err)
	}
	cfg.MaxFileSize = size

	switch strings.ToLower(c.RequireViewBeforeEdit) {
	case "auto", "true":
		cfg.RequireViewBeforeEdit = true
	case "false":
	default:
		fail("invalid --require-view-before-edit %q: valid values are auto, true, false", c.RequireViewBeforeEdit)
	}

	if _, err := fmt.Sscanf(strings.ToLower(strings.TrimSpace(c.TTYSize)), "%dx%d", &cfg.TTYCols, &cfg.TTYRows); err != nil || cfg.TTYCols < 20 || cfg.TTYRows < 5 || cfg.TTYCols > 1000 || cfg.TTYRows > 500 {
		fail("invalid --tty-size %q: give COLSxROWS, e.g. 120x40 (20x5 to 1000x500)", c.TTYSize)
	}
	switch {
	case c.AnthropicCompat && c.OpenaiCompat:
		fail("--anthropic-compat and --openai-compat are exclusive: each serves one model family's tools; choose one")
	case c.AnthropicCompat:
		cfg.Dialect = dialect.Claude
	case c.OpenaiCompat:
		cfg.Dialect = dialect.Codex
	}

	c.resolveAuth(cfg, tokenInArgs, fail)
	c.resolveTLS(cfg, fail)
	c.resolveStructured(cfg, fail)

	cfg.Shell, cfg.ShellSource, err = detectShell(c.Shell)
	if err != nil {
		fail("invalid --shell: %v", err)
	}

	c.resolveSandbox(cfg, workdir, fail)
	c.resolveLSP(cfg, fail)
	c.resolveCheckpoints(cfg, getenv, fail)
	c.resolveCommands(cfg, getenv, fail)
	c.resolveIsolation(cfg, fail)

	idle, err := parseDuration(c.SessionIdleTimeout)
	if err != nil {
		fail("invalid --session-idle-timeout %q: %v (examples: 10m, 90s, 1h, 0 for never)", c.SessionIdleTimeout, err)
	}
	cfg.SessionIdleTimeout = idle
	if cfg.ShutdownTimeout, err = parseDuration(c.ShutdownTimeout); err != nil {
		fail("invalid --shutdown-timeout %q: %v (examples: 30s, 2m, 0 to cancel at once)", c.ShutdownTimeout, err)
	}

	switch strings.ToLower(c.LogLevel) {
	case "debug":
		cfg.LogLevel = slog.LevelDebug
	case "info":
		cfg.LogLevel = slog.LevelInfo
	case "warn", "warning":
		cfg.LogLevel = slog.LevelWarn
	case "error":
		cfg.LogLevel = slog.LevelError
	default:
		fail("invalid --log-level %q: valid values are debug, info, warn, error", c.LogLevel)
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		fail("invalid --log-format %q: valid values are text and json", c.LogFormat)
	}
	switch cfg.Audit = strings.ToLower(c.Audit); cfg.Audit {
	case AuditFull, AuditPaths, AuditOff:
	default:
		fail("invalid --audit %q: valid values are full, paths, off", c.Audit)
	}

	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "\n"))
	}
	return cfg, nil
}

// resolveStructured settles --structured-content; auto is what the
// dialect says (see dialect.Mode.Structured).
func (c *cli) resolveStructured(cfg *Config, fail func(string, ...any)) {
	switch strings.ToLower(strings.TrimSpace(c.StructuredContent)) {
	case "auto", "":
		cfg.StructuredContent = cfg.Dialect.Structured()
	case "on":
		cfg.StructuredContent = true
	case "off":
	default:
		fail("invalid --structured-content %q: valid values are auto, on, off", c.StructuredContent)
	}
}

// resolveSandbox checks the sandbox settings; the kernel is asked later,
// when the sandbox is built.
func (c *cli) resolveSandbox(cfg *Config, workdir string, fail func(string, ...any)) {
	switch mode := strings.ToLower(strings.TrimSpace(c.Sandbox)); mode {
	case SandboxAuto, "":
		cfg.SandboxMode = SandboxAuto
	case SandboxOn, SandboxOff:
		cfg.SandboxMode = mode
	default:
		fail("invalid --sandbox %q: valid values are auto, on and off", c.Sandbox)
	}
	cfg.Sandbox = cfg.SandboxWanted()
	if n := cfg.Credentials(); n > 1 && cfg.SandboxMode == SandboxOff {
		cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("--sandbox off with %d tokens: the agents' commands are not kept apart — one agent's commands can signal (and stop) the other agents' commands and boris, and read their /proc/<pid>/environ; leave --sandbox at auto (or on) to confine each session's commands on their own", n))
	}
	for _, p := range c.Rules {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			fail("invalid --rules %q: %v", p, err)
			continue
		}
		if !slices.Contains(cfg.Rules, abs) {
			cfg.Rules = append(cfg.Rules, abs)
		}
	}
	for _, p := range c.SandboxWrite {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		abs, err := resolvePath(p, workdir)
		if err != nil {
			fail("invalid --sandbox-write: %v", err)
			continue
		}
		if !slices.Contains(cfg.SandboxWrite, abs) {
			cfg.SandboxWrite = append(cfg.SandboxWrite, abs)
		}
	}
	net := strings.ToLower(strings.TrimSpace(c.SandboxNet))
	switch net {
	case SandboxNetAllow, "":
		cfg.SandboxNet = SandboxNetAllow
	case SandboxNetDeny:
		cfg.SandboxNet = SandboxNetDeny
	default:
		cfg.SandboxNet = SandboxNetPorts
		for _, f := range strings.Split(net, ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 || n > 65535 {
				fail("invalid --sandbox-net %q: valid values are allow, deny, or a comma-separated list of TCP ports (1-65535) such as 443,80", c.SandboxNet)
				return
			}
			if !slices.Contains(cfg.SandboxPorts, uint16(n)) {
				cfg.SandboxPorts = append(cfg.SandboxPorts, uint16(n))
			}
		}
		if len(cfg.SandboxPorts) == 0 {
			fail("invalid --sandbox-net %q: valid values are allow, deny, or a comma-separated list of TCP ports such as 443,80", c.SandboxNet)
		}
	}
	if !cfg.Sandbox && (len(cfg.SandboxWrite) > 0 || cfg.SandboxNet != SandboxNetAllow) {
		cfg.Warnings = append(cfg.Warnings, "--sandbox-write and --sandbox-net take effect only with the sandbox on (--sandbox on, or auto with several tokens); the sandbox is off")
	}
}

// resolveLSP checks the language-server settings: --lsp entries name a
// known language and a command (or off), the durations parse, the wait is
// within MaxDiagnosticsWait.
func (c *cli) resolveLSP(cfg *Config, fail func(string, ...any)) {
	cfg.LSPServers = map[string][]string{}
	for _, v := range c.LSP {
		v = strings.TrimSpace(v)
		switch {
		case v == "":
			continue
		case strings.EqualFold(v, "off"):
			cfg.LSPOff = true
			continue
		}
		name, cmd, ok := strings.Cut(v, "=")
		l := lsp.LanguageNamed(name)
		if !ok || l == nil {
			var names []string
			for _, l := range lsp.Languages {
				names = append(names, l.Name)
			}
			fail("invalid --lsp %q: give LANG=COMMAND (LANG one of %s; COMMAND a program and its arguments, or off), or off to run no language server", v, strings.Join(names, ", "))
			continue
		}
		if strings.EqualFold(strings.TrimSpace(cmd), "off") {
			cfg.LSPServers[l.Name] = nil
			continue
		}
		argv, err := splitCommand(cmd)
		if err != nil || len(argv) == 0 {
			fail("invalid --lsp %q: the command after = is empty or badly quoted", v)
			continue
		}
		cfg.LSPServers[l.Name] = argv
	}
	idle, err := parseDuration(c.LSPIdleTimeout)
	if err != nil || idle == 0 {
		fail("invalid --lsp-idle-timeout %q: give a positive duration such as 10m or 90s", c.LSPIdleTimeout)
	}
	cfg.LSPIdleTimeout = idle
	switch strings.ToLower(strings.TrimSpace(c.Diagnostics)) {
	case "on", "":
		cfg.Diagnostics = !cfg.LSPOff
	case "off":
	default:
		fail("invalid --diagnostics %q: valid values are on and off", c.Diagnostics)
	}
	wait, err := parseDuration(c.DiagnosticsWait)
	switch {
	case err != nil || wait <= 0:
		fail("invalid --diagnostics-wait %q: give a duration such as 2s or 500ms, at most %s", c.DiagnosticsWait, MaxDiagnosticsWait)
	case wait > MaxDiagnosticsWait:
		fail("invalid --diagnostics-wait %q: at most %s (an edit's answer is not held longer for a language server)", c.DiagnosticsWait, MaxDiagnosticsWait)
	}
	cfg.DiagnosticsWait = wait
}

// splitCommand splits a command line into words, honouring single and
// double quotes and backslash escapes (no other shell syntax).
func splitCommand(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord := false
	var quote rune
	esc := false
	for _, r := range s {
		switch {
		case esc:
			cur.WriteRune(r)
			esc = false
		case r == '\\' && quote != '\'':
			esc, inWord = true, true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 || esc {
		return nil, errors.New("unterminated quote or escape")
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}

// resolveTLS checks the HTTPS settings: both files or neither, the HTTP
// transport, and a pair that loads now, so a mistake stops boris at start
// rather than at the first client's handshake.
func (c *cli) resolveTLS(cfg *Config, fail func(string, ...any)) {
	cert, key := strings.TrimSpace(c.TLSCert), strings.TrimSpace(c.TLSKey)
	switch {
	case cert == "" && key == "":
		return
	case key == "":
		fail("--tls-cert is set but --tls-key is missing: HTTPS needs the certificate and its private key (--tls-key or BORIS_TLS_KEY)")
		return
	case cert == "":
		fail("--tls-key is set but --tls-cert is missing: HTTPS needs the certificate and its private key (--tls-cert or BORIS_TLS_CERT)")
		return
	}
	if cfg.Transport == TransportStdio {
		fail("--tls-cert/--tls-key serve HTTPS and need --transport http: stdio has no network listener to protect")
		return
	}
	var err error
	if cfg.TLSCert, err = filepath.Abs(cert); err != nil {
		fail("invalid --tls-cert %q: %v", cert, err)
	}
	if cfg.TLSKey, err = filepath.Abs(key); err != nil {
		fail("invalid --tls-key %q: %v", key, err)
	}
	if cfg.Healthcheck {
		return // the probe needs the scheme, not the key
	}
	pair, err := tlscert.Load(cfg.TLSCert, cfg.TLSKey)
	var le *tlscert.Error
	switch {
	case errors.As(err, &le) && le.Part == tlscert.Key:
		fail("invalid --tls-key: %v (it must be the PEM private key of the --tls-cert certificate)", err)
	case err != nil:
		fail("invalid --tls-cert: %v (it must hold the PEM certificate, leaf first)", err)
	case time.Now().After(pair.Leaf.NotAfter):
		cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("the --tls-cert certificate expired at %s: clients that verify it refuse the connection", pair.Leaf.NotAfter.UTC().Format(time.RFC3339)))
	}
}

// resolveAuth decides how /mcp is protected: the tokens given, a generated
// one (asked for, or because the listener is reachable beyond this machine
// and --no-auth was not given), and the browser origins allowed.
func (c *cli) resolveAuth(cfg *Config, tokenInArgs bool, fail func(string, ...any)) {
	if tokenInArgs {
		cfg.Warnings = append(cfg.Warnings, "a token given with --token on the command line is visible to every user of this machine (ps, /proc/<pid>/cmdline): put it in a file readable only by boris's user and pass --token-file/BORIS_TOKEN_FILE instead")
	}
	for _, t := range c.Token {
		t = strings.TrimSpace(t)
		switch {
		case t == "":
			continue
		case strings.ContainsAny(t, " \t\r\n,"):
			fail("invalid --token: a token must not contain spaces or commas (BORIS_TOKEN separates tokens with commas)")
			continue
		}
		if !slices.Contains(cfg.Tokens, t) {
			cfg.Tokens = append(cfg.Tokens, t)
		}
	}
	file := strings.TrimSpace(c.TokenFile)
	if (len(cfg.Tokens) > 0 || file != "") && c.GenerateToken {
		fail("--token/--token-file and --generate-token are exclusive: give tokens or ask for one to be generated, not both")
	}
	if c.NoAuth && (len(cfg.Tokens) > 0 || file != "" || c.GenerateToken) {
		fail("--no-auth contradicts --token/--token-file/--generate-token: drop --no-auth to require the token")
	}
	cfg.NoAuth = c.NoAuth
	if file != "" {
		abs, err := filepath.Abs(file)
		if err != nil {
			fail("invalid --token-file %q: %v", file, err)
		}
		cfg.TokenFile = abs
	}
	if cfg.Transport == TransportStdio {
		cfg.Tokens = nil // accepted and ignored: stdio has no HTTP
		return
	}
	if cfg.TokenFile != "" && !cfg.Healthcheck {
		toks, err := tokens.ReadFile(cfg.TokenFile)
		for _, t := range toks {
			if !slices.Contains(cfg.Tokens, t) {
				cfg.fileTokens++
			}
		}
		switch {
		case errors.Is(err, fs.ErrPermission):
			fail("invalid --token-file: %v (boris runs as uid %d, gid %d: make the file readable by them)", err, os.Getuid(), os.Getgid())
		case err != nil:
			fail("invalid --token-file: %v", err)
		}
	}
	why := ""
	switch {
	case c.GenerateToken:
		why = "--generate-token"
	case len(cfg.Tokens) == 0 && cfg.TokenFile == "" && !cfg.HostLoopback && !cfg.NoAuth && cfg.Host != "":
		why = "non-loopback"
	}
	if why != "" && len(cfg.Tokens) == 0 {
		tok, err := generateToken()
		if err != nil {
			fail("generate token: %v", err)
		}
		cfg.Tokens, cfg.TokenGenerated, cfg.TokenGeneratedWhy = []string{tok}, true, why
	}
	for _, o := range c.AllowOrigin {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		norm, err := normalizeOrigin(o)
		if err != nil {
			fail("invalid --allow-origin %q: %v", o, err)
			continue
		}
		if !slices.Contains(cfg.AllowOrigins, norm) {
			cfg.AllowOrigins = append(cfg.AllowOrigins, norm)
		}
	}
	if slices.Contains(cfg.AllowOrigins, "*") {
		w := "--allow-origin * lets every web page the user opens call /mcp and run commands: list the exact origins instead"
		if len(cfg.Tokens) > 0 || cfg.TokenFile != "" {
			w = "--allow-origin * lets every web page the user opens call /mcp (the token is still required): list the exact origins instead"
		}
		cfg.Warnings = append(cfg.Warnings, w)
	}
}

// normalizeOrigin checks an origin as browsers send it (scheme://host with
// an optional port, or "null"), lower-cases what is case-insensitive and
// drops a default port, so the comparison with the Origin header is exact.
func normalizeOrigin(o string) (string, error) {
	if o == "*" || o == "null" {
		return o, nil
	}
	scheme, rest, ok := strings.Cut(o, "://")
	if !ok || scheme == "" || rest == "" {
		return "", errors.New("an origin is scheme://host[:port], e.g. https://app.example.com")
	}
	if strings.ContainsAny(rest, "/?#@ ") {
		return "", errors.New("an origin has no path, query or user: scheme://host[:port] only")
	}
	scheme = strings.ToLower(scheme)
	host := strings.ToLower(rest)
	if h, port, err := net.SplitHostPort(host); err == nil {
		if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
			host = h
			if strings.Contains(h, ":") {
				host = "[" + h + "]"
			}
		}
	}
	return scheme + "://" + host, nil
}

// resolveHost checks the listen address and says whether it reaches only
// this machine: a loopback IP, "localhost", or a name that resolves to
// loopback addresses only. 0.0.0.0 and :: (every interface) are not.
func resolveHost(h string) (host string, loopback bool, err error) {
	host = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(h), "["), "]")
	if host == "" {
		return "", false, errors.New("empty: use 127.0.0.1 for this machine only, or 0.0.0.0 for every interface")
	}
	if ip := net.ParseIP(host); ip != nil {
		return host, ip.IsLoopback(), nil
	}
	if strings.EqualFold(host, "localhost") {
		return host, true, nil
	}
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return "", false, fmt.Errorf("not an IP address and does not resolve: %v", err)
	}
	loopback = true
	for _, ip := range ips {
		loopback = loopback && ip.IsLoopback()
	}
	return host, loopback, nil
}

// ListenAddr is the host:port HTTP listens on.
func (c *Config) ListenAddr() string {
	return net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
}

// resolveDir makes dir absolute (relative to base, or the process working
// directory when base is empty), resolves symlinks and checks that it is an
// existing directory.
func resolveDir(dir, base string) (string, error) {
	if dir == "" {
		return "", errors.New("empty directory name")
	}
	p := dir
	if !filepath.IsAbs(p) && base != "" {
		p = filepath.Join(base, p)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%s does not exist", dir)
		}
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	return real, nil
}

// resolvePath makes p absolute (relative to base) and symlink-free; it must
// exist (a file or a directory).
func resolvePath(p, base string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%s does not exist (create it first)", p)
		}
		return "", fmt.Errorf("%s: %w", p, err)
	}
	return real, nil
}

// detectShell chooses the shell: an explicit one must exist; otherwise
// /bin/bash, then /bin/sh, then none.
func detectShell(explicit string) (path, source string, err error) {
	if explicit != "" {
		p := explicit
		if !filepath.IsAbs(p) {
			found, lookErr := lookPath(p)
			if lookErr != nil {
				return "", "", fmt.Errorf("%s: not found", explicit)
			}
			p = found
		}
		fi, statErr := os.Stat(p)
		if statErr != nil {
			return "", "", fmt.Errorf("%s: %v", explicit, statErr)
		}
		if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			return "", "", fmt.Errorf("%s is not an executable file", explicit)
		}
		return p, "--shell", nil
	}
	for _, candidate := range []string{"/bin/bash", "/bin/sh"} {
		if fi, err := os.Stat(candidate); err == nil && !fi.IsDir() {
			return candidate, "detected", nil
		}
	}
	return "", "none", nil
}

func lookPath(name string) (string, error) {
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", os.ErrNotExist
}

// ParseSize parses sizes such as "10MB", "512 KB", "1GB", "100B" and plain
// byte counts. Units are 1024-based and case-insensitive.
func ParseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	units := []struct {
		suffix string
		mult   int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t = strings.TrimSpace(strings.TrimSuffix(t, u.suffix))
			mult = u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a size: use a positive number of bytes or a number with B, KB, MB or GB (e.g. 10MB)", s)
	}
	if n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * mult, nil
}

// parseDuration accepts Go durations and a bare number of seconds.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil {
		if n < 0 {
			return 0, errors.New("must not be negative")
		}
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New("not a duration")
	}
	if d < 0 {
		return 0, errors.New("must not be negative")
	}
	return d, nil
}

func generateToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
