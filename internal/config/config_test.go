package config

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/boris-mcp/boris/internal/tlscert/certtest"
	"github.com/boris-mcp/boris/internal/tool/catalog"
)

func parse(t *testing.T, args []string, env map[string]string) (*Config, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	return Parse(program, args, func(k string) string { return env[k] }, &out, &errOut)
}

func mustParse(t *testing.T, args []string, env map[string]string) *Config {
	t.Helper()
	cfg, err := parse(t, args, env)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestDefaults(t *testing.T) {
	cfg := mustParse(t, nil, nil)
	wd, _ := os.Getwd()
	wd, _ = filepath.EvalSymlinks(wd)
	if cfg.Transport != "http" || cfg.Port != 8080 || cfg.Workdir != wd || cfg.BashTimeout != 120*time.Second ||
		cfg.MaxFileSize != 10<<20 || !cfg.RequireViewBeforeEdit || cfg.BackgroundTaskTimeout != 0 ||
		cfg.SessionIdleTimeout != 10*time.Minute || cfg.LogLevel != slog.LevelInfo || cfg.LogFormat != "text" || len(cfg.Tokens) != 0 ||
		cfg.Host != "127.0.0.1" || !cfg.HostLoopback || cfg.NoAuth || len(cfg.AllowOrigins) != 0 || cfg.MaxSessions != 1000 {
		t.Fatalf("defaults: %+v", cfg)
	}
	if cfg.Shell != "/bin/bash" {
		t.Fatalf("shell %q on a machine with /bin/bash", cfg.Shell)
	}
}

func TestFlagsEnvAndPrecedence(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	ra, _ := filepath.EvalSymlinks(a)
	rb, _ := filepath.EvalSymlinks(b)
	cfg := mustParse(t, []string{"--port=9000", "--timeout", "60"}, map[string]string{
		"BORIS_PORT": "8000", "BORIS_ALLOW_DIRS": a + "," + b, "BORIS_DISABLE_TOOLS": "bash,grep",
		"BORIS_TRANSPORT": "stdio", "BORIS_MAX_FILE_SIZE": "512 kb", "BORIS_REQUIRE_VIEW_BEFORE_EDIT": "false",
		"BORIS_DENY_DIRS": "**/.env,secrets/", "BORIS_SESSION_IDLE_TIMEOUT": "90s", "BORIS_LOG_LEVEL": "debug",
	})
	if cfg.Port != 9000 {
		t.Fatalf("flag did not beat env: port %d", cfg.Port)
	}
	if cfg.BashTimeout.Milliseconds() != 60000 {
		t.Fatalf("--timeout=60 gave %v", cfg.BashTimeout)
	}
	if len(cfg.AllowDirs) != 2 || cfg.AllowDirs[0] != ra || cfg.AllowDirs[1] != rb {
		t.Fatalf("allow dirs %v", cfg.AllowDirs)
	}
	if !cfg.Disabled["bash"] || !cfg.Disabled["grep"] || cfg.Disabled["view"] {
		t.Fatalf("disabled %v", cfg.Disabled)
	}
	if cfg.Transport != "stdio" || cfg.MaxFileSize != 512<<10 || cfg.RequireViewBeforeEdit || cfg.SessionIdleTimeout != 90*time.Second || cfg.LogLevel != slog.LevelDebug {
		t.Fatalf("env values: %+v", cfg)
	}
	if strings.Join(cfg.DenyPatterns, "|") != "**/.env|secrets/" {
		t.Fatalf("deny %v", cfg.DenyPatterns)
	}
	// Repeatable flags.
	cfg = mustParse(t, []string{"--allow-dir=" + a, "--allow-dir=" + b, "--disable-tools", "bash", "--disable-tools", "create_file"}, nil)
	if len(cfg.AllowDirs) != 2 || !cfg.Disabled["create_file"] || !cfg.Disabled["bash"] {
		t.Fatalf("repeated flags: %+v", cfg)
	}
	// Compat names disable the same tools.
	cfg = mustParse(t, []string{"--disable-tools", "Glob"}, nil)
	if !cfg.Disabled["find"] {
		t.Fatal("Glob did not disable find")
	}
}

func TestInvalid(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	tests := []struct {
		args []string
		env  map[string]string
		want []string
	}{
		{[]string{"--transport=websocket"}, nil, []string{`"websocket"`, `"http"`, `"stdio"`}},
		{nil, map[string]string{"BORIS_TRANSPORT": "grpc"}, []string{"grpc", "http", "stdio"}},
		{[]string{"--disable-tools=nonexistent"}, nil, []string{"nonexistent", "bash, task_output, task_input, task_kill, view, str_replace, create_file, apply_patch, grep, find"}},
		{[]string{"--token=x", "--generate-token"}, nil, []string{"exclusive"}},
		{[]string{"--max-file-size=10XB"}, nil, []string{"10XB", "MB"}},
		{[]string{"--max-file-size=-5"}, nil, []string{"-5"}},
		{[]string{"--workdir=/definitely/missing"}, nil, []string{"does not exist"}},
		{[]string{"--workdir=" + file}, nil, []string{"not a directory"}},
		{[]string{"--allow-dir=/definitely/missing"}, nil, []string{"allow-dir", "does not exist"}},
		{[]string{"--require-view-before-edit=maybe"}, nil, []string{"auto, true, false"}},
		{[]string{"--timeout=0"}, nil, []string{"--timeout"}},
		{[]string{"--port=70000"}, nil, []string{"--port"}},
		{[]string{"--shell=/definitely/missing"}, nil, []string{"--shell"}},
		{[]string{"--log-level=loud"}, nil, []string{"debug, info, warn, error"}},
		{[]string{"--log-format=xml"}, nil, []string{"text and json"}},
		{[]string{"--session-idle-timeout=soon"}, nil, []string{"soon"}},
		{[]string{"--deny-dir=[unclosed"}, nil, []string{"[unclosed"}},
		{[]string{"--anthropic-compat", "--openai-compat"}, nil, []string{"--anthropic-compat", "--openai-compat", "exclusive"}},
		{[]string{"--openai-compat"}, map[string]string{"BORIS_ANTHROPIC_COMPAT": "true"}, []string{"--anthropic-compat", "--openai-compat"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := parse(t, tt.args, tt.env)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestDeprecatedAliasesAndToken(t *testing.T) {
	cfg := mustParse(t, []string{"--no-bash", "--bg-timeout=30"}, nil)
	if !cfg.Disabled["bash"] || cfg.BackgroundTaskTimeout != 30*time.Second || len(cfg.Warnings) != 2 {
		t.Fatalf("aliases: %+v", cfg)
	}
	cfg = mustParse(t, nil, map[string]string{"BORIS_NO_BASH": "true", "BORIS_BG_TIMEOUT": "5"})
	if !cfg.Disabled["bash"] || cfg.BackgroundTaskTimeout != 5*time.Second {
		t.Fatalf("env aliases: %+v", cfg)
	}
	cfg = mustParse(t, []string{"--generate-token"}, nil)
	if !cfg.TokenGenerated || len(cfg.Tokens) != 1 || len(cfg.Tokens[0]) != 64 {
		t.Fatalf("tokens %q", cfg.Tokens)
	}
	cfg = mustParse(t, []string{"--transport=stdio", "--token=abc"}, nil)
	if len(cfg.Tokens) != 0 {
		t.Fatal("a token applies to stdio")
	}
}

func TestTokens(t *testing.T) {
	cfg := mustParse(t, []string{"--token=a1", "--token", "b2", "--token=a1"}, map[string]string{"BORIS_TOKEN": "ignored"})
	if strings.Join(cfg.Tokens, " ") != "a1 b2" || cfg.TokenGenerated {
		t.Fatalf("flag tokens %q", cfg.Tokens)
	}
	cfg = mustParse(t, nil, map[string]string{"BORIS_TOKEN": "a1, b2,,c3"})
	if strings.Join(cfg.Tokens, " ") != "a1 b2 c3" {
		t.Fatalf("env tokens %q", cfg.Tokens)
	}
	for _, bad := range [][]string{{"--token=a b"}, {"--token=x", "--generate-token"}, {"--token=x", "--no-auth"}} {
		if _, err := parse(t, bad, nil); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestTokenFile: --token-file (BORIS_TOKEN_FILE) is made absolute, kept
// unresolved, read at start (a missing, unreadable or empty file stops
// boris, naming it), merges with --token, stands for a token on a
// non-loopback listener, and is exclusive with --generate-token and
// --no-auth. Over stdio it is not read.
func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tokens")
	if err := os.WriteFile(file, []byte("# agents\nalpha\nbeta\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("tokens", link); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n# none\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := mustParse(t, []string{"--token-file=" + link, "--host=0.0.0.0", "--checkpoints=off"}, map[string]string{"BORIS_TOKEN": "gamma"})
	if !cfg.Sandbox || cfg.Credentials() != 3 {
		t.Fatalf("the file's two tokens and gamma: %d credentials, sandbox %v", cfg.Credentials(), cfg.Sandbox)
	}
	if cfg.TokenFile != link || strings.Join(cfg.Tokens, " ") != "gamma" || cfg.TokenGenerated || len(cfg.Warnings) != 0 {
		t.Fatalf("file %q tokens %q generated %v warnings %q", cfg.TokenFile, cfg.Tokens, cfg.TokenGenerated, cfg.Warnings)
	}
	t.Chdir(dir)
	if cfg = mustParse(t, nil, map[string]string{"BORIS_TOKEN_FILE": "tokens"}); cfg.TokenFile != file {
		t.Fatalf("relative path: %q, want %q", cfg.TokenFile, file)
	}
	if cfg = mustParse(t, []string{"--transport=stdio", "--token-file=" + filepath.Join(dir, "missing")}, nil); cfg.TokenFile == "" {
		t.Fatal("stdio dropped the token file (it is still denied to the tools)")
	}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"--token-file=" + filepath.Join(dir, "missing")}, []string{"invalid --token-file:", "missing", "no such file"}},
		{[]string{"--token-file=" + empty}, []string{"invalid --token-file:", empty, "holds no token"}},
		{[]string{"--token-file=" + dir}, []string{"invalid --token-file:", "is a directory"}},
		{[]string{"--token-file=" + file, "--generate-token"}, []string{"exclusive"}},
		{[]string{"--token-file=" + file, "--no-auth"}, []string{"--no-auth contradicts"}},
	} {
		_, err := parse(t, tt.args, nil)
		if err == nil {
			t.Errorf("%q accepted", tt.args)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q does not mention %q", tt.args, err, w)
			}
		}
	}
}

// TestTokenOnCommandLineWarned: a token in the arguments is readable by
// every local user in /proc/<pid>/cmdline; the same token in BORIS_TOKEN
// is not, and --token-file is not a token.
func TestTokenOnCommandLineWarned(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(file, []byte("alpha\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		env  map[string]string
		warn bool
	}{
		{[]string{"--token=x"}, nil, true},
		{[]string{"--token", "x"}, nil, true},
		{[]string{"--transport=stdio", "--token=x"}, nil, true},
		{nil, map[string]string{"BORIS_TOKEN": "x"}, false},
		{[]string{"--token-file=" + file}, nil, false},
		{[]string{"--token-file", file}, nil, false},
	} {
		cfg := mustParse(t, c.args, c.env)
		warned := slices.ContainsFunc(cfg.Warnings, func(w string) bool {
			return strings.Contains(w, "/proc/<pid>/cmdline") && strings.Contains(w, "--token-file/BORIS_TOKEN_FILE")
		})
		if warned != c.warn {
			t.Errorf("%q %v: warned %v, want %v (%q)", c.args, c.env, warned, c.warn, cfg.Warnings)
		}
	}
}

// TestNetworkDefaults pins issue 10: loopback by default; a listener beyond
// loopback gets a generated token unless --no-auth says the network is
// trusted.
func TestNetworkDefaults(t *testing.T) {
	cases := []struct {
		args      []string
		env       map[string]string
		loopback  bool
		generated bool
		tokens    int
	}{
		{nil, nil, true, false, 0},
		{[]string{"--host=::1"}, nil, true, false, 0},
		{[]string{"--host=[::1]"}, nil, true, false, 0},
		{[]string{"--host=localhost"}, nil, true, false, 0},
		{[]string{"--host=0.0.0.0"}, nil, false, true, 1},
		{nil, map[string]string{"BORIS_HOST": "::"}, false, true, 1},
		{[]string{"--host=0.0.0.0", "--token=t1"}, nil, false, false, 1},
		{[]string{"--host=0.0.0.0", "--no-auth"}, nil, false, false, 0},
		{nil, map[string]string{"BORIS_HOST": "0.0.0.0", "BORIS_NO_AUTH": "true"}, false, false, 0},
		{[]string{"--host=0.0.0.0", "--transport=stdio"}, nil, false, false, 0},
	}
	for _, c := range cases {
		cfg := mustParse(t, c.args, c.env)
		if cfg.HostLoopback != c.loopback || cfg.TokenGenerated != c.generated || len(cfg.Tokens) != c.tokens {
			t.Errorf("%q %v: loopback %v generated %v tokens %d", c.args, c.env, cfg.HostLoopback, cfg.TokenGenerated, len(cfg.Tokens))
		}
		if c.generated && cfg.TokenGeneratedWhy != "non-loopback" {
			t.Errorf("%q: generated because %q", c.args, cfg.TokenGeneratedWhy)
		}
	}
	if _, err := parse(t, []string{"--host="}, nil); err == nil {
		t.Error("empty --host accepted")
	}
	if _, err := parse(t, []string{"--host=no-such-host.invalid"}, nil); err == nil {
		t.Error("unresolvable --host accepted")
	}
	if got := mustParse(t, []string{"--host=::1", "--port=9"}, nil).ListenAddr(); got != "[::1]:9" {
		t.Errorf("listen addr %q", got)
	}
}

// TestTLS: both files or neither, HTTP only, and a pair that loads, each
// mistake named with its flag; the paths are kept unresolved so a Secret
// volume's rotation (a symlink swap) is followed.
func TestTLS(t *testing.T) {
	ca := certtest.NewCA(t)
	good, other := ca.Issue(t, "boris", "localhost"), ca.Issue(t, "other", "localhost")
	expired := ca.IssueUntil(t, "old", time.Now().Add(-time.Hour), "localhost")
	dir := t.TempDir()
	file := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cert, key := file("tls.crt", good.CertPEM), file("tls.key", good.KeyPEM)
	otherKey := file("other.key", other.KeyPEM)
	oldCert, oldKey := file("old.crt", expired.CertPEM), file("old.key", expired.KeyPEM)
	link := filepath.Join(dir, "link.crt")
	if err := os.Symlink("tls.crt", link); err != nil {
		t.Fatal(err)
	}

	cfg := mustParse(t, nil, nil)
	if cfg.TLSCert != "" || cfg.TLSKey != "" {
		t.Fatalf("TLS on by default: %q %q", cfg.TLSCert, cfg.TLSKey)
	}
	cfg = mustParse(t, []string{"--tls-cert=" + link, "--tls-key=" + key}, nil)
	if cfg.TLSCert != link || cfg.TLSKey != key || len(cfg.Warnings) != 0 {
		t.Fatalf("cert %q key %q warnings %q: want the paths as given (symlink kept)", cfg.TLSCert, cfg.TLSKey, cfg.Warnings)
	}
	cfg = mustParse(t, nil, map[string]string{"BORIS_TLS_CERT": cert, "BORIS_TLS_KEY": key})
	if cfg.TLSCert != cert || cfg.TLSKey != key {
		t.Fatalf("from the environment: %q %q", cfg.TLSCert, cfg.TLSKey)
	}
	t.Chdir(dir)
	if cfg = mustParse(t, []string{"--tls-cert=tls.crt", "--tls-key=tls.key"}, nil); cfg.TLSCert != cert || cfg.TLSKey != key {
		t.Fatalf("relative paths: %q %q, want them absolute", cfg.TLSCert, cfg.TLSKey)
	}
	cfg = mustParse(t, []string{"--tls-cert=" + oldCert, "--tls-key=" + oldKey}, nil)
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "expired at "+expired.Leaf.NotAfter.UTC().Format(time.RFC3339)) {
		t.Fatalf("an expired certificate: warnings %q", cfg.Warnings)
	}
	// The health probe needs the scheme only: it does not read the key.
	if cfg = mustParse(t, []string{"--healthcheck", "--tls-cert=" + cert, "--tls-key=" + filepath.Join(dir, "missing")}, nil); cfg.TLSCert == "" {
		t.Fatal("--healthcheck dropped TLS")
	}

	for _, tt := range []struct {
		args []string
		env  map[string]string
		want []string
	}{
		{[]string{"--tls-cert=" + cert}, nil, []string{"--tls-cert is set but --tls-key is missing"}},
		{nil, map[string]string{"BORIS_TLS_KEY": key}, []string{"--tls-key is set but --tls-cert is missing"}},
		{[]string{"--transport=stdio", "--tls-cert=" + cert, "--tls-key=" + key}, nil, []string{"--transport http", "stdio"}},
		{[]string{"--tls-cert=" + filepath.Join(dir, "missing"), "--tls-key=" + key}, nil, []string{"invalid --tls-cert:", "missing", "no such file"}},
		{[]string{"--tls-cert=" + key, "--tls-key=" + key}, nil, []string{"invalid --tls-cert:", "no PEM certificate"}},
		{[]string{"--tls-cert=" + cert, "--tls-key=" + filepath.Join(dir, "missing")}, nil, []string{"invalid --tls-key:", "no such file"}},
		{[]string{"--tls-cert=" + cert, "--tls-key=" + otherKey}, nil, []string{"invalid --tls-key:", "does not match", "private key of the --tls-cert certificate"}},
	} {
		_, err := parse(t, tt.args, tt.env)
		if err == nil {
			t.Errorf("%q %v accepted", tt.args, tt.env)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q %v: error %q does not mention %q", tt.args, tt.env, err, w)
			}
		}
	}
}

func TestAllowOrigins(t *testing.T) {
	cfg := mustParse(t, []string{"--allow-origin=HTTPS://App.Example.com:443", "--allow-origin=http://127.0.0.1:3000", "--allow-origin=http://[::1]:80"}, nil)
	want := "https://app.example.com http://127.0.0.1:3000 http://[::1]"
	if strings.Join(cfg.AllowOrigins, " ") != want || len(cfg.Warnings) != 0 {
		t.Fatalf("origins %q warnings %q", cfg.AllowOrigins, cfg.Warnings)
	}
	cfg = mustParse(t, nil, map[string]string{"BORIS_ALLOW_ORIGINS": "*,null"})
	if strings.Join(cfg.AllowOrigins, " ") != "* null" || len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "every web page") {
		t.Fatalf("origins %q warnings %q", cfg.AllowOrigins, cfg.Warnings)
	}
	for _, bad := range []string{"example.com", "https://example.com/path", "https://", "https://u@h"} {
		if _, err := parse(t, []string{"--allow-origin=" + bad}, nil); err == nil {
			t.Errorf("origin %q accepted", bad)
		}
	}
}

func TestVersionAndHelp(t *testing.T) {
	var out bytes.Buffer
	_, err := Parse(program, []string{"--version"}, func(string) string { return "" }, &out, &out)
	if !errors.Is(err, ErrExit) || out.String() != "boris 1.2.3\n" {
		t.Fatalf("%v %q", err, out.String())
	}
	out.Reset()
	_, err = Parse(program, []string{"--help"}, func(string) string { return "" }, &out, &out)
	if !errors.Is(err, ErrExit) || !strings.Contains(out.String(), "$BORIS_ALLOW_DIRS") || !strings.Contains(strings.Join(strings.Fields(out.String()), " "), strings.Join(program.Tools.Names, ", ")) {
		t.Fatalf("%v %q", err, out.String())
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"10MB": 10 << 20, "1GB": 1 << 30, "512KB": 512 << 10, "100B": 100, "1048576": 1 << 20, "2 mb": 2 << 20} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Fatalf("%q: %d %v", in, got, err)
		}
	}
	for _, in := range []string{"", "MB", "0", "-1", "1.5MB", "10TB", "99999999999GB"} {
		if _, err := ParseSize(in); err == nil {
			t.Fatalf("%q accepted", in)
		}
	}
}

func TestSandboxSettings(t *testing.T) {
	cache, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := mustParse(t, nil, nil)
	if cfg.SandboxMode != SandboxAuto || cfg.Sandbox || cfg.SandboxNet != SandboxNetAllow || len(cfg.SandboxWrite) != 0 {
		t.Fatalf("sandbox defaults: %q %v %q %v", cfg.SandboxMode, cfg.Sandbox, cfg.SandboxNet, cfg.SandboxWrite)
	}
	cfg = mustParse(t, []string{"--sandbox=on", "--sandbox-write=" + cache, "--sandbox-net=443, 80,443"}, nil)
	if !cfg.Sandbox || cfg.SandboxNet != SandboxNetPorts || !slices.Equal(cfg.SandboxPorts, []uint16{443, 80}) || !slices.Equal(cfg.SandboxWrite, []string{cache}) {
		t.Fatalf("flags: %v %q %v %v", cfg.Sandbox, cfg.SandboxNet, cfg.SandboxPorts, cfg.SandboxWrite)
	}
	cfg = mustParse(t, nil, map[string]string{"BORIS_SANDBOX": "ON", "BORIS_SANDBOX_NET": "deny", "BORIS_SANDBOX_WRITE": cache + ",,"})
	if !cfg.Sandbox || cfg.SandboxNet != SandboxNetDeny || !slices.Equal(cfg.SandboxWrite, []string{cache}) {
		t.Fatalf("env: %v %q %v", cfg.Sandbox, cfg.SandboxNet, cfg.SandboxWrite)
	}
	cfg = mustParse(t, []string{"--sandbox-net=deny"}, nil)
	if len(cfg.Warnings) == 0 || !strings.Contains(cfg.Warnings[len(cfg.Warnings)-1], "only with the sandbox on") {
		t.Fatalf("no warning for --sandbox-net without the sandbox: %v", cfg.Warnings)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sandbox=yes"}, "valid values are auto, on and off"},
		{[]string{"--sandbox-net=https"}, "comma-separated list of TCP ports"},
		{[]string{"--sandbox-net=0"}, "1-65535"},
		{[]string{"--sandbox-net=70000"}, "1-65535"},
		{[]string{"--sandbox-net=,"}, "comma-separated list of TCP ports"},
		{[]string{"--sandbox-write=/definitely/missing"}, "does not exist"},
	} {
		if _, err := parse(t, tc.args, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: want an error with %q, got %v", tc.args, tc.want, err)
		}
	}
}

// TestSandboxAuto: --sandbox auto (the default) is on with more than one
// token, however given, and off with one, none, a generated one, or over
// stdio (where tokens are ignored); on and off are what they say, and off
// with several tokens is warned about.
func TestSandboxAuto(t *testing.T) {
	const warning = "the agents' commands are not kept apart"
	dir := t.TempDir()
	twoTokens, oneToken := filepath.Join(dir, "two"), filepath.Join(dir, "one")
	if err := os.WriteFile(twoTokens, []byte("alpha\nbeta\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(oneToken, []byte("# the agent\nalpha\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		env    map[string]string
		on     bool
		warned bool
	}{
		{"default, no token", nil, nil, false, false},
		{"one token", []string{"--token=alpha"}, nil, false, false},
		{"the same token twice", []string{"--token=alpha", "--token=alpha"}, nil, false, false},
		{"generated token", []string{"--host=0.0.0.0"}, nil, false, false},
		{"two tokens", []string{"--token=alpha", "--token=beta"}, nil, true, false},
		{"two tokens from the environment", nil, map[string]string{"BORIS_TOKEN": "alpha,beta"}, true, false},
		{"explicit auto", []string{"--sandbox=auto", "--token=alpha", "--token=beta"}, nil, true, false},
		{"auto from the environment", nil, map[string]string{"BORIS_SANDBOX": "Auto", "BORIS_TOKEN": "alpha,beta"}, true, false},
		{"two tokens over stdio", []string{"--transport=stdio", "--token=alpha", "--token=beta"}, nil, false, false},
		{"on with one token", []string{"--sandbox=on", "--token=alpha"}, nil, true, false},
		{"on without a token", []string{"--sandbox=on"}, nil, true, false},
		{"off with two tokens", []string{"--sandbox=off", "--token=alpha", "--token=beta"}, nil, false, true},
		{"off with one token", []string{"--sandbox=off", "--token=alpha"}, nil, false, false},
		{"two tokens in the token file", []string{"--token-file=" + twoTokens}, nil, true, false},
		{"one in the file, one on the command line", []string{"--token-file=" + oneToken, "--token=beta"}, nil, true, false},
		{"one token in the file", []string{"--token-file=" + oneToken}, nil, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mustParse(t, tc.args, tc.env)
			if cfg.Sandbox != tc.on || cfg.SandboxWanted() != tc.on {
				t.Errorf("sandbox %v (mode %q, %d credentials), want %v", cfg.Sandbox, cfg.SandboxMode, cfg.Credentials(), tc.on)
			}
			warned := slices.ContainsFunc(cfg.Warnings, func(w string) bool { return strings.Contains(w, warning) })
			if warned != tc.warned {
				t.Errorf("warned %v, want %v: %q", warned, tc.warned, cfg.Warnings)
			}
		})
	}
}

// TestListsKeepBraces: a list in the environment is not split inside
// braces, and a path flag on the command line is one item however many
// commas it has.
func TestListsKeepBraces(t *testing.T) {
	cfg := mustParse(t, nil, map[string]string{"BORIS_DENY_DIRS": "*.{pem,key},secrets/, ,**/.env"})
	if strings.Join(cfg.DenyPatterns, "|") != "*.{pem,key}|secrets/|**/.env" {
		t.Fatalf("env deny list %q", cfg.DenyPatterns)
	}
	cfg = mustParse(t, []string{"--deny-dir", "*.{pem,key}", "--deny-dir", "a,b"}, nil)
	if strings.Join(cfg.DenyPatterns, "|") != "*.{pem,key}|a,b" {
		t.Fatalf("flag deny list %q", cfg.DenyPatterns)
	}
	cfg = mustParse(t, nil, map[string]string{"BORIS_DISABLE_TOOLS": "grep,find"})
	if !cfg.Disabled["grep"] || !cfg.Disabled["find"] {
		t.Fatalf("disabled %v", cfg.Disabled)
	}
	for in, want := range map[string]string{"a,b": "a|b", "{a,b},c": "{a,b}|c", "x{a,{b,c}},d": "x{a,{b,c}}|d", "}a,b": "}a|b", "": ""} {
		if got := strings.Join(SplitList(in), "|"); got != want {
			t.Fatalf("SplitList(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLSPFlags(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cfg, err := Parse(program, []string{"--lsp", "go=/opt/gopls -rpc.trace", "--lsp", `py="pyright-langserver" --stdio`, "--lsp", "rust=off", "--diagnostics-wait", "3s"}, env(nil), io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.LSPServers["go"]; len(got) != 2 || got[0] != "/opt/gopls" || got[1] != "-rpc.trace" {
		t.Errorf("go = %q", got)
	}
	if got := cfg.LSPServers["python"]; len(got) != 2 || got[0] != "pyright-langserver" {
		t.Errorf("python = %q", got)
	}
	if got, ok := cfg.LSPServers["rust"]; !ok || got != nil {
		t.Errorf("rust = %q, %v; want off", got, ok)
	}
	if cfg.LSPOff || !cfg.Diagnostics || cfg.DiagnosticsWait != 3*time.Second || cfg.LSPIdleTimeout != 10*time.Minute {
		t.Errorf("off=%v diagnostics=%v wait=%v idle=%v", cfg.LSPOff, cfg.Diagnostics, cfg.DiagnosticsWait, cfg.LSPIdleTimeout)
	}
	cfg, err = Parse(program, nil, env(map[string]string{"BORIS_LSP": "off", "BORIS_DIAGNOSTICS": "on"}), io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.LSPOff || cfg.Diagnostics {
		t.Errorf("BORIS_LSP=off: off=%v diagnostics=%v", cfg.LSPOff, cfg.Diagnostics)
	}
	cfg, err = Parse(program, nil, env(map[string]string{"BORIS_LSP": "c=clangd --background-index,go=gopls"}), io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.LSPServers) != 2 || cfg.LSPServers["c"][1] != "--background-index" {
		t.Errorf("BORIS_LSP list: %q", cfg.LSPServers)
	}
	for _, bad := range [][]string{
		{"--lsp", "cobol=cobol-ls"}, {"--lsp", "gopls"}, {"--lsp", "go="}, {"--lsp", `go="unterminated`},
		{"--diagnostics", "maybe"}, {"--diagnostics-wait", "11s"}, {"--diagnostics-wait", "0"}, {"--lsp-idle-timeout", "0"},
	} {
		if _, err := Parse(program, bad, env(nil), io.Discard, io.Discard); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	cfg, err = Parse(program, []string{"--disable-tools", "LSP"}, env(nil), io.Discard, io.Discard)
	if err != nil || !cfg.Disabled["lsp"] {
		t.Errorf("--disable-tools LSP: err=%v disabled=%v", err, cfg != nil && cfg.Disabled["lsp"])
	}
}

// program is boris's as the command line knows it: its tools' names come
// from their declarations.
var program = Program{Version: "1.2.3", Tools: catalog.Naming()}

// --isolation and its bounds: the values, the environment, and a clear
// error for a bad one.
func TestIsolationFlags(t *testing.T) {
	dir := t.TempDir()
	cfg, err := parse(t, []string{"--workdir", dir}, nil)
	if err != nil || cfg.Isolation.Worktree() || cfg.Isolation.MaxWorktrees != 20 || cfg.Isolation.MaxBytes != 20<<30 {
		t.Fatalf("defaults: %+v %v", cfg.Isolation, err)
	}
	cfg, err = parse(t, []string{"--workdir", dir, "--max-worktrees=3", "--worktree-max-bytes=1GB"}, map[string]string{"BORIS_ISOLATION": "Worktree"})
	if err != nil || !cfg.Isolation.Worktree() || cfg.Isolation.MaxWorktrees != 3 || cfg.Isolation.MaxBytes != 1<<30 {
		t.Fatalf("set: %+v %v", cfg.Isolation, err)
	}
	for _, arg := range []string{"--isolation=worktrees", "--max-worktrees=0", "--worktree-max-bytes=lots"} {
		flag, _, _ := strings.Cut(arg, "=")
		if _, err := parse(t, []string{"--workdir", dir, arg}, nil); err == nil || !strings.Contains(err.Error(), "invalid "+flag) {
			t.Errorf("%s: %v", arg, err)
		}
	}
}

// TestRulesFlag: --rules is repeatable, BORIS_RULES a comma-separated
// list; the paths come out absolute, each once.
func TestRulesFlag(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	cfg := mustParse(t, []string{"--rules", "a.rules", "--rules", "/etc/b.json", "--rules", "a.rules"}, nil)
	if want := []string{filepath.Join(wd, "a.rules"), "/etc/b.json"}; !slices.Equal(cfg.Rules, want) {
		t.Errorf("flags: %v, want %v", cfg.Rules, want)
	}
	cfg = mustParse(t, nil, map[string]string{"BORIS_RULES": "/x.rules,/y.json"})
	if want := []string{"/x.rules", "/y.json"}; !slices.Equal(cfg.Rules, want) {
		t.Errorf("env: %v, want %v", cfg.Rules, want)
	}
	if cfg := mustParse(t, nil, nil); len(cfg.Rules) != 0 {
		t.Errorf("default: %v", cfg.Rules)
	}
}
