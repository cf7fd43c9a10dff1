package config

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func parse(t *testing.T, args []string, env map[string]string) (*Config, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	return Parse(args, func(k string) string { return env[k] }, "1.2.3", &out, &errOut)
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
		cfg.SessionIdleTimeout != 10*time.Minute || cfg.LogLevel != slog.LevelInfo || cfg.LogFormat != "text" || cfg.Token != "" {
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
	if !cfg.Disabled["bash"] || !cfg.Disabled["grep"] || cfg.ToolEnabled("task_output") || cfg.ToolEnabled("bash") || !cfg.ToolEnabled("view") {
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
	if cfg.ToolEnabled("find") {
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
		{[]string{"--disable-tools=nonexistent"}, nil, []string{"nonexistent", "bash, task_output, view, str_replace, create_file, grep, find"}},
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
	if cfg.ToolEnabled("bash") || cfg.BackgroundTaskTimeout != 30*time.Second || len(cfg.Warnings) != 2 {
		t.Fatalf("aliases: %+v", cfg)
	}
	cfg = mustParse(t, nil, map[string]string{"BORIS_NO_BASH": "true", "BORIS_BG_TIMEOUT": "5"})
	if cfg.ToolEnabled("bash") || cfg.BackgroundTaskTimeout != 5*time.Second {
		t.Fatalf("env aliases: %+v", cfg)
	}
	cfg = mustParse(t, []string{"--generate-token"}, nil)
	if !cfg.TokenGenerated || len(cfg.Token) != 64 {
		t.Fatalf("token %q", cfg.Token)
	}
	cfg = mustParse(t, []string{"--transport=stdio", "--token=abc"}, nil)
	if cfg.Token != "" {
		t.Fatal("a token applies to stdio")
	}
}

func TestVersionAndHelp(t *testing.T) {
	var out bytes.Buffer
	_, err := Parse([]string{"--version"}, func(string) string { return "" }, "1.2.3", &out, &out)
	if !errors.Is(err, ErrExit) || out.String() != "boris 1.2.3\n" {
		t.Fatalf("%v %q", err, out.String())
	}
	out.Reset()
	_, err = Parse([]string{"--help"}, func(string) string { return "" }, "1.2.3", &out, &out)
	if !errors.Is(err, ErrExit) || !strings.Contains(out.String(), "$BORIS_ALLOW_DIRS") {
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
