package app

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/boris-mcp/boris/internal/rules"
)

// policyUsage is `boris policy --help`.
const policyUsage = `Usage: boris policy check --rules FILE [--rules FILE ...] [--resolve-host-executables] [--pretty] [--] COMMAND...

Evaluate a command (its argv, one word per argument) against Codex .rules
files and print what ` + "`codex execpolicy check`" + ` prints for the same files and
command: the matching rules and the strictest decision, as JSON. A rules file
tested with Codex answers the same here.

  -r, --rules FILE                 a Codex .rules file (repeatable)
      --resolve-host-executables   match an absolute program path by its name,
                                   where host_executable() allows the path
      --pretty                     indent the JSON
`

// runPolicy is ` + "`boris policy check`" + `.
func runPolicy(args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" {
		_, err := io.WriteString(stdout, policyUsage)
		return err
	}
	if args[0] != "check" {
		return fmt.Errorf("policy: unknown command %q: the one command is check (boris policy check --rules FILE -- COMMAND...)", args[0])
	}
	var files, argv []string
	resolve, pretty := false, false
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "--":
			argv = rest[i+1:]
			i = len(rest)
		case a == "--help" || a == "-h":
			_, err := io.WriteString(stdout, policyUsage)
			return err
		case a == "-r" || a == "--rules":
			if i+1 >= len(rest) {
				return errors.New("policy check: --rules needs a file")
			}
			i++
			files = append(files, rest[i])
		case strings.HasPrefix(a, "--rules="):
			files = append(files, strings.TrimPrefix(a, "--rules="))
		case a == "--resolve-host-executables":
			resolve = true
		case a == "--pretty":
			pretty = true
		case strings.HasPrefix(a, "-") && len(argv) == 0:
			return fmt.Errorf("policy check: unknown option %q", a)
		default:
			argv = rest[i:]
			i = len(rest)
		}
	}
	if len(files) == 0 {
		return errors.New("policy check: give at least one --rules FILE")
	}
	if len(argv) == 0 {
		return errors.New("policy check: give the command to check after the options (boris policy check --rules FILE -- git push)")
	}
	r, err := rules.Load(files)
	if err != nil {
		return fmt.Errorf("policy check: %w", err)
	}
	out, err := r.CodexCheck(argv, resolve, pretty)
	if err != nil {
		return fmt.Errorf("policy check: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}
