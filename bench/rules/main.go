// Command rules measures what the command rules (--rules) cost a command
// before it runs: the check itself (parsing the command line as a shell
// does, seeing through wrappers and inner scripts, judging every part
// against the rules), per command, and a whole bash tool call through boris
// with the rules against the same call without them, next to a plain spawn
// of `bash -c true` — all in the same rounds, interleaved, so the ratios
// compare like with like on a loaded machine.
//
//	go run ./bench/rules [-n 200]
//
// The rules are a realistic team file: a dozen Codex prefix rules and a
// Claude Code settings file with allow, ask and deny lists.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/bench/internal/kit"
	"github.com/boris-mcp/boris/internal/rules"
)

const codexRules = `
prefix_rule(pattern = ["git", "push"], decision = "forbidden", justification = "pushing is for humans")
prefix_rule(pattern = ["git", ["reset", "clean"]], decision = "prompt", justification = "discards work")
prefix_rule(pattern = [["curl", "wget"]], decision = "forbidden", justification = "no network fetches")
prefix_rule(pattern = ["rm", ["-rf", "-fr", "-r"]], decision = "prompt", justification = "deletes trees")
prefix_rule(pattern = ["sudo"], decision = "forbidden", justification = "no root")
prefix_rule(pattern = ["docker"], decision = "prompt", justification = "containers")
prefix_rule(pattern = ["kubectl", "delete"], decision = "forbidden", justification = "cluster")
prefix_rule(pattern = ["npm", ["test", "run"]], decision = "allow")
prefix_rule(pattern = ["go", ["test", "build", "vet"]], decision = "allow")
prefix_rule(pattern = ["make"], decision = "allow")
prefix_rule(pattern = ["git", ["status", "diff", "log"]], decision = "allow")
prefix_rule(pattern = ["ls"], decision = "allow")
`

const claudeRules = `{"permissions": {
  "allow": ["Bash(npm run *)", "Bash(go test:*)", "Bash(ls *)", "Read"],
  "ask": ["Bash(git commit *)", "Bash(docker *)"],
  "deny": ["Bash(git push:*)", "Bash(curl *)", "Read(./.env)", "Edit(//etc/**)"]
}}`

// commands are what agents run, from one word to a long pipeline.
var commands = []string{
	"ls -la",
	"go test ./... 2>&1 | tail -20",
	"cd sub && make test && git status --short",
	`for f in $(git ls-files '*.go'); do gofmt -l "$f"; done | sort | uniq -c`,
	`bash -lc 'npm ci && npm run build && npm test -- --coverage'`,
	`find . -name '*.tmp' -exec rm -f {} \; ; timeout 30 env CI=1 nice -n 5 make check`,
}

func main() {
	n := flag.Int("n", 200, "rounds")
	flag.Parse()
	dir, bin := kit.Build("boris-bench-rules")
	defer os.RemoveAll(dir)
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		log.Fatal(err)
	}
	cx := filepath.Join(dir, "team.rules")
	cl := filepath.Join(dir, "settings.json")
	must(os.WriteFile(cx, []byte(codexRules), 0o644))
	must(os.WriteFile(cl, []byte(claudeRules), 0o644))
	r, err := rules.LoadIn([]string{cx, cl}, ws)
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	plain, pcmd := kit.Stdio(ctx, bin, "--workdir="+ws, "--checkpoints=off")
	defer pcmd.Process.Kill()
	ruled, rcmd := kit.Stdio(ctx, bin, "--workdir="+ws, "--checkpoints=off", "--rules="+cx, "--rules="+cl)
	defer rcmd.Process.Kill()

	check := make([][]time.Duration, len(commands))
	var spawn, callPlain, callRuled []time.Duration
	const callCmd = "true"
	for round := 0; round < *n; round++ {
		for i, c := range commands {
			t0 := time.Now()
			v := r.Command(c)
			check[i] = append(check[i], time.Since(t0))
			if v.Decision == rules.Forbid {
				log.Fatalf("%q is forbidden: %+v", c, v)
			}
		}
		t0 := time.Now()
		if err := exec.Command("bash", "-c", "true").Run(); err != nil {
			log.Fatal(err)
		}
		spawn = append(spawn, time.Since(t0))
		// Alternate which server goes first, so neither always gets the
		// warmer machine.
		first, second := plain, ruled
		if round%2 == 1 {
			first, second = ruled, plain
		}
		d1 := timeCall(ctx, first, callCmd)
		d2 := timeCall(ctx, second, callCmd)
		if first == plain {
			callPlain, callRuled = append(callPlain, d1), append(callRuled, d2)
		} else {
			callRuled, callPlain = append(callRuled, d1), append(callPlain, d2)
		}
	}

	fmt.Printf("boris command rules: %d rounds; medians (p90)\n\n", *n)
	fmt.Printf("%-90s %14s\n", "the check before a command runs (parse + judge, in process)", "per command")
	for i, c := range commands {
		fmt.Printf("  %-88s %6s (%s)\n", trunc(c, 88), round(kit.Pct(check[i], 50)), round(kit.Pct(check[i], 90)))
	}
	fmt.Println()
	fmt.Printf("%-90s %6s (%s)\n", "plain spawn of bash -c true", round(kit.Pct(spawn, 50)), round(kit.Pct(spawn, 90)))
	fmt.Printf("%-90s %6s (%s)\n", "bash tool call `true` through boris, no rules", round(kit.Pct(callPlain, 50)), round(kit.Pct(callPlain, 90)))
	fmt.Printf("%-90s %6s (%s)\n", "bash tool call `true` through boris, with the rules", round(kit.Pct(callRuled, 50)), round(kit.Pct(callRuled, 90)))
	ratio := float64(kit.Pct(callRuled, 50)) / float64(kit.Pct(callPlain, 50))
	fmt.Printf("\nwith rules / without, median call: %.3f\n", ratio)
}

func timeCall(ctx context.Context, cs *mcp.ClientSession, cmd string) time.Duration {
	t0 := time.Now()
	kit.Call(ctx, cs, "bash", map[string]any{"command": cmd})
	return time.Since(t0)
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

func round(d time.Duration) time.Duration {
	switch {
	case d < time.Microsecond:
		return d
	case d < time.Millisecond:
		return d.Round(100 * time.Nanosecond)
	}
	return d.Round(10 * time.Microsecond)
}
