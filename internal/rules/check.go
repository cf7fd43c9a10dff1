package rules

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// CodexCheck evaluates argv against the Codex rules exactly as `codex
// execpolicy check` does and returns its JSON (compact, or indented with
// pretty): every matching prefix rule of argv's program, in the order
// written; with resolveHosts and no such rule, those of an absolute
// program's name where host_executable allows the path; and the strictest
// decision, left out when nothing matched. Claude Code settings files have
// no place in it: CodexCheck refuses rules that hold any.
func (r *Rules) CodexCheck(argv []string, resolveHosts, pretty bool) ([]byte, error) {
	if len(r.claude) > 0 {
		return nil, fmt.Errorf("policy check evaluates Codex .rules files; a Claude Code settings file was given")
	}
	type prefixMatch struct {
		MatchedPrefix   []string `json:"matchedPrefix"`
		Decision        string   `json:"decision"`
		ResolvedProgram string   `json:"resolvedProgram,omitempty"`
		Justification   string   `json:"justification,omitempty"`
	}
	type ruleMatchJSON struct {
		PrefixRuleMatch prefixMatch `json:"prefixRuleMatch"`
	}
	type output struct {
		MatchedRules []ruleMatchJSON `json:"matchedRules"`
		Decision     string          `json:"decision,omitempty"`
	}
	out := output{MatchedRules: []ruleMatchJSON{}}
	best := NoMatch
	for _, m := range r.codex.matches(argv, resolveHosts) {
		out.MatchedRules = append(out.MatchedRules, ruleMatchJSON{prefixMatch{
			MatchedPrefix: m.prefix, Decision: codexName(m.rule.decision),
			ResolvedProgram: m.resolved, Justification: m.rule.justification,
		}})
		best = max(best, m.rule.decision)
	}
	if best != NoMatch {
		out.Decision = codexName(best)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if pretty {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
