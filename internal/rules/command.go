package rules

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxDepth bounds how deep inner scripts (bash -c, eval) are followed; a
// script nested deeper cannot be judged and is treated as unknowable.
const maxDepth = 8

// Command judges a whole shell command line before it runs: every simple
// command in it (lists, pipelines, subshells, $(…), backticks, the bodies
// of if, for, while, case and functions, the inner scripts of bash -c and
// of eval with literal words), with quotes, assignments and redirections
// removed as the shell would and common wrappers seen through. The
// strictest part decides. A part whose program cannot be known before it
// runs — a variable or substitution in command position, eval of words
// that are not literal, a shell reading its script from stdin — or a
// command line that does not parse is Ask while any rule asks or forbids,
// with the reason.
func (r *Rules) Command(script string) Verdict {
	if r.Empty() {
		return Verdict{Part: script}
	}
	v := r.parts(commandParts(script, 0))
	if v.Part == "" {
		v.Part = script
	}
	return v
}

// Argv judges a program's argv before it runs (Codex's shell tool gives
// one), with what it is known to run: the command a wrapper runs, the
// inner script of bash -lc.
func (r *Rules) Argv(argv []string) Verdict {
	if r.Empty() || len(argv) == 0 {
		return Verdict{}
	}
	c := cand{argv: make([]word, len(argv))}
	for i, a := range argv {
		c.argv[i] = word{s: a, known: true}
	}
	return r.parts(expand(c, 0))
}

// parts is the strictest verdict on a command's parts.
func (r *Rules) parts(parts []part) Verdict {
	var best Verdict
	first := true
	restrictive := r.Restrictive()
	for _, p := range parts {
		var v Verdict
		if p.unknown != "" {
			if !restrictive {
				continue
			}
			v = Verdict{Decision: Ask, Part: p.c.quoted(), Reason: p.unknown}
		} else {
			v = r.judge(p.c)
		}
		if first || v.stricter(best) {
			best, first = v, false
		}
	}
	return best
}

// part is one command a command line runs, or one it cannot know.
type part struct {
	c cand
	// unknown, when set, says why what this part runs cannot be known.
	unknown string
}

// commandParts finds every command of a script, and the commands its
// wrappers and inner scripts run.
func commandParts(script string, depth int) []part {
	if depth > maxDepth {
		return []part{{c: cand{argv: []word{{s: script}}}, unknown: "its shell scripts nest too deep to be judged before it runs"}}
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		return []part{{c: cand{argv: []word{{s: script}}}, unknown: fmt.Sprintf("it does not parse as a shell command (%v), so what it runs cannot be known", err)}}
	}
	var parts []part
	syntax.Walk(f, func(n syntax.Node) bool {
		ce, ok := n.(*syntax.CallExpr)
		if !ok || len(ce.Args) == 0 {
			return true
		}
		c := cand{argv: make([]word, len(ce.Args))}
		for i, w := range ce.Args {
			c.argv[i] = wordOf(w, script)
		}
		parts = append(parts, expand(c, depth)...)
		return true
	})
	return parts
}

// expand is a candidate and everything it is known to run: the command a
// wrapper runs, the inner script of a shell or eval.
func expand(c cand, depth int) []part {
	if len(c.argv) == 0 {
		return nil
	}
	if !c.argv[0].known {
		return []part{{c: c, unknown: fmt.Sprintf("its program is %s, which is only known once it runs", c.argv[0].s)}}
	}
	out := []part{{c: c}}
	name := path.Base(c.argv[0].s)
	switch {
	case name == "eval":
		var b strings.Builder
		for i, w := range c.argv[1:] {
			if !w.known {
				return append(out, part{c: c, unknown: fmt.Sprintf("eval runs %s, which is only known once it runs", w.s)})
			}
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(w.s)
		}
		return append(out, commandParts(b.String(), depth+1)...)
	case isShell(name):
		script, ok, stdin := shellScript(c)
		switch {
		case stdin:
			return append(out, part{c: c, unknown: fmt.Sprintf("%s reads the commands it runs from its input, which is only known once it runs", name)})
		case !ok:
			return out
		case !script.known:
			return append(out, part{c: c, unknown: fmt.Sprintf("the script %s -c runs is %s, which is only known once it runs", name, script.s)})
		}
		return append(out, commandParts(script.s, depth+1)...)
	case name == "alias":
		for _, w := range c.argv[1:] {
			if _, v, ok := strings.Cut(w.s, "="); ok && w.known {
				out = append(out, commandParts(v, depth+1)...)
			}
		}
		return out
	case name == "su" || name == "script" || name == "flock" || name == "runuser":
		// Their -c (--command) value is a command line run by a shell.
		for i := 1; i < len(c.argv); i++ {
			a := c.argv[i]
			if !a.known {
				continue
			}
			var script word
			switch {
			case a.s == "--command" || len(a.s) > 1 && a.s[0] == '-' && a.s[1] != '-' && strings.HasSuffix(a.s, "c"):
				if i+1 >= len(c.argv) {
					continue
				}
				script = c.argv[i+1]
			case strings.HasPrefix(a.s, "--command="):
				script = word{s: strings.TrimPrefix(a.s, "--command="), known: true}
			default:
				continue
			}
			if !script.known {
				return append(out, part{c: c, unknown: fmt.Sprintf("the command %s -c runs is %s, which is only known once it runs", name, script.s)})
			}
			out = append(out, commandParts(script.s, depth+1)...)
		}
		if name == "flock" || name == "runuser" {
			if in, ok := unwrap(c); ok {
				out = append(out, expand(in, depth)...)
			}
		}
		return out
	case name == "git" && gitAliased(c):
		return append(out, part{c: c, unknown: "git -c alias.… makes a git command of another name, which is only known once it runs"})
	case name == "find":
		for _, in := range findExecs(c) {
			out = append(out, expand(in, depth)...)
		}
		return out
	}
	if in, ok := unwrap(c); ok {
		out = append(out, expand(in, depth)...)
	}
	return out
}

func isShell(name string) bool {
	switch name {
	case "bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "busybox":
		return true
	}
	return false
}

// shellScript finds the script a shell runs: the word after its options
// when one of them has c (bash -c, sh -ec, bash -lc). stdin is true when
// the shell reads its commands from its input (no script file, no -c, or
// -s).
func shellScript(c cand) (script word, ok, stdin bool) {
	args := c.argv[1:]
	if path.Base(c.argv[0].s) == "busybox" {
		if len(args) == 0 || !args[0].known || !isShell(args[0].s) || args[0].s == "busybox" {
			return word{}, false, false
		}
		args = args[1:]
	}
	hasC := false
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.known {
			return a, true, false
		}
		if a.s == "--" || a.s == "-" {
			i++
			break
		}
		if len(a.s) < 2 || (a.s[0] != '-' && a.s[0] != '+') {
			break
		}
		if a.s == "-o" || a.s == "+o" || a.s == "-O" || a.s == "+O" || a.s == "--rcfile" || a.s == "--init-file" {
			i++
			continue
		}
		if strings.HasPrefix(a.s, "--") {
			continue
		}
		if strings.ContainsRune(a.s[1:], 's') {
			return word{}, false, true
		}
		if strings.ContainsRune(a.s[1:], 'c') {
			hasC = true
		}
	}
	if hasC {
		if i < len(args) {
			return args[i], true, false
		}
		return word{}, false, false
	}
	if i >= len(args) {
		return word{}, false, !c.open
	}
	return word{}, false, false
}

// findExecs are the commands find's -exec, -execdir, -ok and -okdir run;
// the {} they are given is a path only known once find runs.
func findExecs(c cand) []cand {
	var out []cand
	for i := 1; i < len(c.argv); i++ {
		a := c.argv[i]
		if !a.known || (a.s != "-exec" && a.s != "-execdir" && a.s != "-ok" && a.s != "-okdir") {
			continue
		}
		var in cand
		for i++; i < len(c.argv); i++ {
			w := c.argv[i]
			if w.known && (w.s == ";" || w.s == "+") {
				break
			}
			if w.known && strings.Contains(w.s, "{}") {
				w = word{s: w.s}
			}
			in.argv = append(in.argv, w)
		}
		if len(in.argv) > 0 {
			out = append(out, in)
		}
	}
	return out
}

// wrapperOpts are the options of a wrapper that take a value as the next
// word, and whether its first operand is not the command (timeout's
// duration).
type wrapperSpec struct {
	valued  string // short options taking a value, e.g. "unCS"
	long    []string
	operand bool // one operand precedes the command
	assigns bool // NAME=value words may precede the command
}

var wrappers = map[string]wrapperSpec{
	"env":     {valued: "uCS", long: []string{"--unset", "--chdir", "--split-string"}, assigns: true},
	"command": {},
	"builtin": {},
	"exec":    {valued: "a"},
	"nice":    {valued: "n", long: []string{"--adjustment"}},
	"nohup":   {},
	"setsid":  {},
	"time":    {valued: "fo", long: []string{"--format", "--output"}},
	"timeout": {valued: "sk", long: []string{"--signal", "--kill-after"}, operand: true},
	"stdbuf":  {valued: "ioe", long: []string{"--input", "--output", "--error"}},
	"ionice":  {valued: "cnp", long: []string{"--class", "--classdata", "--pid"}},
	"xargs":   {valued: "aEdeIiLlnPs", long: []string{"--arg-file", "--delimiter", "--eof", "--replace", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"}},
	"sudo":    {valued: "CDghpRrTUu", long: []string{"--close-from", "--chdir", "--group", "--host", "--prompt", "--chroot", "--role", "--type", "--command-timeout", "--other-user", "--user"}, assigns: true},
	"doas":    {valued: "uC"},
	"watch":   {valued: "n", long: []string{"--interval"}},
	"flock":   {valued: "wEc", long: []string{"--timeout", "--conflict-exit-code", "--command"}, operand: true},
	"strace":  {valued: "abeEIoOpPsSuX"},
	"ltrace":  {valued: "aeEoOpsuAlLnx"},
	"taskset": {operand: true},
	"chroot":  {long: []string{"--userspec", "--groups"}, operand: true},
	"unshare": {valued: "S", long: []string{"--setuid", "--setgid", "--wd", "--root"}},
	"runuser": {valued: "ugl", long: []string{"--user", "--group"}},
	"chrt":    {operand: true},
	"git":     {}, // git's global options: see unwrapGit
}

// unwrap is the command a wrapper runs (env, command, exec, nice, nohup,
// timeout, xargs, sudo, …; git's global options), with its options and
// assignments removed.
func unwrap(c cand) (cand, bool) {
	name := path.Base(c.argv[0].s)
	spec, ok := wrappers[name]
	if !ok {
		return cand{}, false
	}
	if name == "git" {
		return unwrapGit(c)
	}
	if name == "command" {
		// command -v and -V name a program without running it.
		for _, a := range c.argv[1:] {
			if !a.known || !strings.HasPrefix(a.s, "-") || a.s == "--" {
				break
			}
			if strings.ContainsAny(a.s, "vV") {
				return cand{}, false
			}
		}
	}
	args := c.argv[1:]
	i := 0
	operand := spec.operand
	var split []word
	for ; i < len(args); i++ {
		a := args[i]
		if !a.known {
			break
		}
		s := a.s
		if s == "--" {
			i++
			break
		}
		if strings.HasPrefix(s, "--") {
			name, _, hasVal := strings.Cut(s, "=")
			if !hasVal && contains(spec.long, name) {
				i++
				if name == "--split-string" && i < len(args) {
					split = splitKnown(args[i])
				}
			} else if hasVal && name == "--split-string" {
				split = splitKnown(word{s: strings.TrimPrefix(s, "--split-string="), known: true})
			}
			continue
		}
		if len(s) > 1 && s[0] == '-' && !(name == "nice" && isNumber(s[1:])) {
			// A cluster of short options; the first that takes a value
			// takes the rest of the word or the next word.
			for j := 1; j < len(s); j++ {
				if strings.IndexByte(spec.valued, s[j]) >= 0 {
					envS := name == "env" && s[j] == 'S'
					switch val := s[j+1:]; {
					case val != "":
						if envS {
							split = splitKnown(word{s: val, known: true})
						}
					case i+1 < len(args):
						i++
						if envS {
							split = splitKnown(args[i])
						}
					}
					break
				}
			}
			continue
		}
		if name == "nice" && len(s) > 1 && s[0] == '-' {
			continue
		}
		if spec.assigns && isAssign(s) {
			continue
		}
		if operand {
			operand = false
			continue
		}
		break
	}
	in := cand{open: c.open || name == "xargs"}
	in.argv = append(in.argv, split...)
	in.argv = append(in.argv, args[i:]...)
	if len(in.argv) == 0 {
		return cand{}, false
	}
	return in, true
}

// gitAliased reports whether a git command defines an alias in its global
// options (git -c alias.p=push p).
func gitAliased(c cand) bool {
	for i := 1; i < len(c.argv); i++ {
		a := c.argv[i]
		if !a.known || !strings.HasPrefix(a.s, "-") {
			return false
		}
		v := a.s
		switch {
		case a.s == "-c" || a.s == "--config-env":
			if i+1 < len(c.argv) {
				i++
				v = c.argv[i].s
			}
		case strings.HasPrefix(a.s, "--config-env="):
			v = strings.TrimPrefix(a.s, "--config-env=")
		case strings.HasPrefix(a.s, "-c"):
			v = a.s[2:]
		}
		if strings.HasPrefix(strings.ToLower(v), "alias.") {
			return true
		}
	}
	return false
}

// unwrapGit is git's command without its global options (git -C dir
// push, git -c k=v push, git --git-dir=x push), so that a rule on
// `git push` sees it.
func unwrapGit(c cand) (cand, bool) {
	args := c.argv[1:]
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.known || !strings.HasPrefix(a.s, "-") {
			break
		}
		switch a.s {
		case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--super-prefix", "--config-env", "--list-cmds", "--attr-source":
			if !strings.Contains(a.s, "=") {
				i++
			}
		}
	}
	if i == 0 || i >= len(args) {
		return cand{}, false
	}
	return cand{argv: append([]word{c.argv[0]}, args[i:]...), open: c.open}, true
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isAssign(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// splitKnown splits env -S's string into words (unknown when it is not
// literal, or does not split).
func splitKnown(w word) []word {
	if !w.known {
		return []word{w}
	}
	argv, err := splitWords(w.s)
	if err != nil {
		return []word{{s: w.s}}
	}
	out := make([]word, len(argv))
	for i, a := range argv {
		out[i] = word{s: a, known: true}
	}
	return out
}

// splitWords splits a string into words as a shell would, without
// expanding anything: quotes and backslashes removed. A string with
// anything a shell would expand, or more than one command, is an error.
func splitWords(s string) ([]string, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), "")
	if err != nil {
		return nil, err
	}
	if len(f.Stmts) == 0 {
		return nil, nil
	}
	if len(f.Stmts) > 1 {
		return nil, fmt.Errorf("more than one command")
	}
	ce, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Assigns) > 0 || len(f.Stmts[0].Redirs) > 0 {
		return nil, fmt.Errorf("not a simple command")
	}
	var out []string
	for _, w := range ce.Args {
		ww := wordOf(w, s)
		if !ww.known {
			return nil, fmt.Errorf("%s is not literal", ww.s)
		}
		out = append(out, ww.s)
	}
	return out, nil
}

// wordOf is a word after quote removal, or its source text when the shell
// would expand it into something only known when it runs: a parameter,
// a substitution, arithmetic, an unquoted glob or brace expression.
func wordOf(w *syntax.Word, src string) word {
	var b strings.Builder
	known, glob := true, false
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			s, ok := unescape(p.Value)
			if !ok {
				glob = true
			}
			b.WriteString(s)
		case *syntax.SglQuoted:
			if p.Dollar && strings.Contains(p.Value, `\`) {
				known = false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					known = false
					continue
				}
				b.WriteString(unescapeDouble(lit.Value))
			}
		default:
			known = false
		}
	}
	if known && glob {
		return word{s: b.String(), glob: true}
	}
	if !known {
		start, end := int(w.Pos().Offset()), int(w.End().Offset())
		if start >= 0 && end <= len(src) && start <= end {
			return word{s: src[start:end]}
		}
		return word{s: "?"}
	}
	return word{s: b.String(), known: true}
}

// unescape removes an unquoted literal's backslashes; ok is false when the
// literal holds a glob or brace expression the shell would expand.
func unescape(s string) (string, bool) {
	var b strings.Builder
	ok := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		switch c {
		case '*', '?':
			ok = false
		case '[':
			if strings.IndexByte(s[i+1:], ']') >= 0 {
				ok = false
			}
		case '{':
			if j := strings.IndexByte(s[i:], '}'); j > 0 && (strings.Contains(s[i:i+j], ",") || strings.Contains(s[i:i+j], "..")) {
				ok = false
			}
		}
		b.WriteByte(c)
	}
	return b.String(), ok
}

// unescapeDouble removes the backslashes a double-quoted string drops.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
