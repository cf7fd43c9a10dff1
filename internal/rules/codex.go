package rules

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// codexPolicy is the rules of every Codex `.rules` file loaded: prefix
// rules by their program, in the order written, and the host executables
// (the absolute paths a program name may be run by).
type codexPolicy struct {
	rules     []*prefixRule
	byProgram map[string][]*prefixRule
	// hosts are host_executable's paths by name; a later definition
	// replaces an earlier one, as in Codex.
	hosts map[string][]string
}

// prefixRule is one program's prefix rule: prefix_rule with a list of
// alternative programs is one rule per program, as in Codex.
type prefixRule struct {
	first         string
	rest          [][]string // each token: its alternatives
	decision      Decision
	justification string
	where         string // file:line
}

// codexName is the decision's name in Codex's files and output.
func codexName(d Decision) string {
	switch d {
	case Ask:
		return "prompt"
	case Forbid:
		return "forbidden"
	}
	return "allow"
}

func newCodexPolicy() *codexPolicy {
	return &codexPolicy{byProgram: map[string][]*prefixRule{}, hosts: map[string][]string{}}
}

func (p *codexPolicy) restrictive() bool {
	for _, r := range p.rules {
		if r.decision > Allow {
			return true
		}
	}
	return false
}

func (p *codexPolicy) add(r *prefixRule) {
	p.rules = append(p.rules, r)
	p.byProgram[r.first] = append(p.byProgram[r.first], r)
}

// pattern renders the rule as written, for answers.
func (r *prefixRule) pattern() string {
	var toks []string
	toks = append(toks, fmt.Sprintf("%q", r.first))
	for _, alts := range r.rest {
		if len(alts) == 1 {
			toks = append(toks, fmt.Sprintf("%q", alts[0]))
			continue
		}
		q := make([]string, len(alts))
		for i, a := range alts {
			q[i] = fmt.Sprintf("%q", a)
		}
		toks = append(toks, "["+strings.Join(q, ", ")+"]")
	}
	return fmt.Sprintf("prefix_rule([%s], decision=%q)", strings.Join(toks, ", "), codexName(r.decision))
}

// matchWords matches the rule's tokens after the program against the
// candidate's words after its program.
func (r *prefixRule) matchWords(c cand) match {
	m := sureMatch
	for i, alts := range r.rest {
		j := i + 1
		if j >= len(c.argv) {
			if c.open {
				return maybeMatch
			}
			return noMatch
		}
		w := c.argv[j]
		ok := false
		for _, a := range alts {
			if w.known && a == w.s || !w.known && w.could(a) {
				ok = true
				break
			}
		}
		if ok && !w.known {
			m = maybeMatch
		}
		if !ok {
			return noMatch
		}
	}
	return m
}

// pendingExamples are one prefix_rule call's match and not_match
// examples, checked once its file is read (host_executable may follow).
type pendingExamples struct {
	rules           []*prefixRule
	match, notMatch [][]string
	where           string
}

// parse runs one `.rules` file, adding its rules.
func (p *codexPolicy) parse(file string, src []byte) error {
	var pending []pendingExamples
	var ruleErr error
	thread := &starlark.Thread{Name: file}
	where := func(th *starlark.Thread) string {
		pos := th.CallFrame(1).Pos
		return fmt.Sprintf("%s:%d", file, pos.Line)
	}
	fail := func(th *starlark.Thread, format string, args ...any) (starlark.Value, error) {
		ruleErr = fmt.Errorf("%s: %s", where(th), fmt.Sprintf(format, args...))
		return nil, ruleErr
	}
	prefixRuleFn := starlark.NewBuiltin("prefix_rule", func(th *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var pattern *starlark.List
		var decision, justification starlark.Value = starlark.None, starlark.None
		var matchEx, notMatchEx starlark.Value = starlark.None, starlark.None
		if err := starlark.UnpackArgs("prefix_rule", args, kwargs,
			"pattern", &pattern, "decision?", &decision, "match?", &matchEx, "not_match?", &notMatchEx, "justification?", &justification); err != nil {
			return fail(th, "%v", err)
		}
		d := Allow
		if decision != starlark.None {
			s, ok := starlark.AsString(decision)
			if !ok {
				return fail(th, "prefix_rule: decision must be a string, not %s", decision.Type())
			}
			switch s {
			case "allow":
			case "prompt":
				d = Ask
			case "forbidden":
				d = Forbid
			default:
				return fail(th, "prefix_rule: unknown decision %q (allow, prompt or forbidden)", s)
			}
		}
		just := ""
		if justification != starlark.None {
			s, ok := starlark.AsString(justification)
			if !ok {
				return fail(th, "prefix_rule: justification must be a string, not %s", justification.Type())
			}
			if strings.TrimSpace(s) == "" {
				return fail(th, "invalid rule: justification cannot be empty")
			}
			just = s
		}
		toks, err := patternTokens(pattern)
		if err != nil {
			return fail(th, "invalid pattern: %v", err)
		}
		mex, err := examples(matchEx)
		if err != nil {
			return fail(th, "invalid example: %v", err)
		}
		nex, err := examples(notMatchEx)
		if err != nil {
			return fail(th, "invalid example: %v", err)
		}
		at := where(th)
		var made []*prefixRule
		for _, head := range toks[0] {
			r := &prefixRule{first: head, rest: toks[1:], decision: d, justification: just, where: at}
			made = append(made, r)
			p.add(r)
		}
		pending = append(pending, pendingExamples{rules: made, match: mex, notMatch: nex, where: at})
		return starlark.None, nil
	})
	hostFn := starlark.NewBuiltin("host_executable", func(th *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var name string
		var paths *starlark.List
		if err := starlark.UnpackArgs("host_executable", args, kwargs, "name", &name, "paths", &paths); err != nil {
			return fail(th, "%v", err)
		}
		if name == "" {
			return fail(th, "invalid rule: host_executable name cannot be empty")
		}
		if strings.Contains(name, "/") || name == "." || name == ".." {
			return fail(th, "invalid rule: host_executable name must be a bare executable name (got %s)", name)
		}
		var out []string
		for i := 0; i < paths.Len(); i++ {
			s, ok := starlark.AsString(paths.Index(i))
			if !ok {
				return fail(th, "invalid rule: host_executable paths must be strings (got %s)", paths.Index(i).Type())
			}
			if !strings.HasPrefix(s, "/") {
				return fail(th, "invalid rule: host_executable paths must be absolute (got %s)", s)
			}
			if path.Base(s) != name {
				return fail(th, "invalid rule: host_executable path `%s` must have basename `%s`", s, name)
			}
			dup := false
			for _, o := range out {
				dup = dup || o == s
			}
			if !dup {
				out = append(out, s)
			}
		}
		p.hosts[name] = out
		return starlark.None, nil
	})
	// network_rule is Codex's rule on the hosts its sandboxed network
	// proxy lets through; boris has no such proxy. A file using it loads
	// (its arguments checked as Codex checks them) and the rule is
	// ignored: commands are judged by their prefix rules alone.
	networkFn := starlark.NewBuiltin("network_rule", func(th *starlark.Thread, fn *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var host, protocol, decision string
		var justification starlark.Value = starlark.None
		if err := starlark.UnpackArgs("network_rule", args, kwargs, "host", &host, "protocol", &protocol, "decision", &decision, "justification?", &justification); err != nil {
			return fail(th, "%v", err)
		}
		switch protocol {
		case "http", "https", "https_connect", "http-connect", "socks5_tcp", "socks5_udp":
		default:
			return fail(th, "invalid rule: network_rule protocol must be one of http, https, socks5_tcp, socks5_udp (got %s)", protocol)
		}
		switch decision {
		case "allow", "prompt", "forbidden", "deny":
		default:
			return fail(th, "network_rule: unknown decision %q (allow, prompt, forbidden or deny)", decision)
		}
		if h := strings.TrimSpace(host); h == "" || strings.Contains(h, "*") || strings.Contains(h, "/") {
			return fail(th, "invalid rule: network_rule host must be a specific hostname or IP literal (got %q)", host)
		}
		if s, ok := starlark.AsString(justification); ok && strings.TrimSpace(s) == "" {
			return fail(th, "invalid rule: justification cannot be empty")
		}
		return starlark.None, nil
	})
	predeclared := starlark.StringDict{"prefix_rule": prefixRuleFn, "host_executable": hostFn, "network_rule": networkFn}
	opts := &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true}
	if _, err := starlark.ExecFileOptions(opts, thread, file, src, predeclared); err != nil {
		if ruleErr != nil {
			return ruleErr
		}
		var ee *starlark.EvalError
		if errors.As(err, &ee) {
			for i := len(ee.CallStack) - 1; i >= 0; i-- {
				if pos := ee.CallStack[i].Pos; pos.Line > 0 && pos.Filename() == file {
					return fmt.Errorf("%s:%d: %s", file, pos.Line, ee.Msg)
				}
			}
		}
		// Syntax and resolve errors already say file:line:col.
		return err
	}
	for _, pe := range pending {
		if err := p.checkExamples(pe); err != nil {
			return err
		}
	}
	return nil
}

// checkExamples checks a prefix_rule call's examples against the rules of
// that call alone, absolute programs resolved through host executables.
func (p *codexPolicy) checkExamples(pe pendingExamples) error {
	only := newCodexPolicy()
	for _, r := range pe.rules {
		only.add(r)
	}
	only.hosts = p.hosts
	rule := pe.rules[0].pattern()
	for _, ex := range pe.notMatch {
		if len(only.matches(ex, true)) > 0 {
			return fmt.Errorf("%s: %s: the not_match example %s matches it", pe.where, rule, joinQuoted(ex))
		}
	}
	for _, ex := range pe.match {
		if len(only.matches(ex, true)) == 0 {
			return fmt.Errorf("%s: %s: the match example %s does not match it", pe.where, rule, joinQuoted(ex))
		}
	}
	return nil
}

func joinQuoted(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return "`" + strings.Join(q, " ") + "`"
}

func patternTokens(l *starlark.List) ([][]string, error) {
	if l.Len() == 0 {
		return nil, errors.New("pattern cannot be empty")
	}
	var toks [][]string
	for i := 0; i < l.Len(); i++ {
		v := l.Index(i)
		if s, ok := starlark.AsString(v); ok {
			toks = append(toks, []string{s})
			continue
		}
		alts, ok := v.(*starlark.List)
		if !ok {
			return nil, fmt.Errorf("pattern element must be a string or list of strings (got %s)", v.Type())
		}
		if alts.Len() == 0 {
			return nil, errors.New("pattern alternatives cannot be empty")
		}
		var a []string
		for j := 0; j < alts.Len(); j++ {
			s, ok := starlark.AsString(alts.Index(j))
			if !ok {
				return nil, fmt.Errorf("pattern alternative must be a string (got %s)", alts.Index(j).Type())
			}
			a = append(a, s)
		}
		toks = append(toks, a)
	}
	return toks, nil
}

// examples reads match or not_match: a list of argv lists or command
// strings (split as a shell splits words).
func examples(v starlark.Value) ([][]string, error) {
	if v == starlark.None {
		return nil, nil
	}
	l, ok := v.(*starlark.List)
	if !ok {
		return nil, fmt.Errorf("examples must be a list (got %s)", v.Type())
	}
	var out [][]string
	for i := 0; i < l.Len(); i++ {
		e := l.Index(i)
		if s, ok := starlark.AsString(e); ok {
			argv, err := splitWords(s)
			if err != nil {
				return nil, fmt.Errorf("example string has invalid shell syntax: %q", s)
			}
			if len(argv) == 0 {
				return nil, errors.New("example cannot be an empty string")
			}
			out = append(out, argv)
			continue
		}
		el, ok := e.(*starlark.List)
		if !ok {
			return nil, fmt.Errorf("example must be a string or list of strings (got %s)", e.Type())
		}
		if el.Len() == 0 {
			return nil, errors.New("example cannot be an empty list")
		}
		var argv []string
		for j := 0; j < el.Len(); j++ {
			s, ok := starlark.AsString(el.Index(j))
			if !ok {
				return nil, fmt.Errorf("example tokens must be strings (got %s)", el.Index(j).Type())
			}
			argv = append(argv, s)
		}
		out = append(out, argv)
	}
	return out, nil
}

// ruleMatch is one matched rule, as `codex execpolicy check` reports it.
type ruleMatch struct {
	rule     *prefixRule
	prefix   []string
	resolved string
}

// matches are the rules matching argv as Codex matches them: the rules of
// its first word exactly; failing those, with resolveHosts, the rules of
// an absolute program's name, when host_executable lists the path (or
// says nothing of the name).
func (p *codexPolicy) matches(argv []string, resolveHosts bool) []ruleMatch {
	if len(argv) == 0 {
		return nil
	}
	c := cand{argv: make([]word, len(argv))}
	for i, a := range argv {
		c.argv[i] = word{s: a, known: true}
	}
	var out []ruleMatch
	for _, r := range p.byProgram[argv[0]] {
		if r.matchWords(c) == sureMatch {
			out = append(out, ruleMatch{rule: r, prefix: append([]string{argv[0]}, argv[1:len(r.rest)+1]...)})
		}
	}
	if len(out) > 0 || !resolveHosts || !strings.HasPrefix(argv[0], "/") {
		return out
	}
	name := path.Base(argv[0])
	if paths, ok := p.hosts[name]; ok {
		listed := false
		for _, hp := range paths {
			listed = listed || hp == argv[0]
		}
		if !listed {
			return nil
		}
	}
	for _, r := range p.byProgram[name] {
		if r.matchWords(c) == sureMatch {
			out = append(out, ruleMatch{rule: r, prefix: append([]string{name}, argv[1:len(r.rest)+1]...), resolved: argv[0]})
		}
	}
	return out
}

// judge is every Codex rule's verdict on a candidate, for boris's own
// checks: its program's rules, and for a program given by a path the rules
// of its name that ask or forbid (whatever host_executable lists: a path
// must not step around a restriction, as Codex's restrictive basename
// matching holds).
func (p *codexPolicy) judge(c cand) []Verdict {
	if len(c.argv) == 0 || !c.argv[0].known {
		return nil
	}
	prog := c.argv[0].s
	var out []Verdict
	for _, r := range p.byProgram[prog] {
		if v := verdictOf(r.matchWords(c), r.decision, r.where, r.justification, r.pattern()); v.Decision != NoMatch {
			out = append(out, v)
		}
	}
	if base := path.Base(prog); base != prog && strings.Contains(prog, "/") {
		for _, r := range p.byProgram[base] {
			if r.decision == Allow {
				continue
			}
			if v := verdictOf(r.matchWords(c), r.decision, r.where, r.justification, r.pattern()); v.Decision != NoMatch {
				out = append(out, v)
			}
		}
	}
	return out
}
