package catalog

import (
	"slices"
	"testing"

	"github.com/boris-mcp/boris/internal/dialect"
)

// The tools each dialect serves, with the disabled ones and those the
// process cannot serve (no shell) left out.
func TestToolSets(t *testing.T) {
	without := func(names ...string) []string {
		all := []string{"bash", "task_output", "task_input", "task_kill", "view", "str_replace", "create_file", "apply_patch", "grep", "find"}
		return slices.DeleteFunc(all, func(n string) bool { return slices.Contains(names, n) })
	}
	tests := []struct {
		name string
		st   setup
		want []string
	}{
		{"default", setup{shell: "/bin/sh"}, without()},
		{"no shell: the file tools only", setup{}, without("bash", "task_output", "task_input", "task_kill")},
		{"bash disabled takes the task tools along", setup{shell: "/bin/sh", disabled: []string{"bash"}}, without("bash", "task_output", "task_input", "task_kill")},
		{"task_kill disabled", setup{shell: "/bin/sh", disabled: []string{"task_kill"}}, without("task_kill")},
		{"apply_patch disabled", setup{shell: "/bin/sh", disabled: []string{"apply_patch"}}, without("apply_patch")},
		{"compat", setup{shell: "/bin/sh", mode: dialect.Claude}, []string{"bash", "task_output", "task_input", "task_kill", "str_replace_editor", "apply_patch", "grep", "Glob"}},
		{"compat without create_file loses the editor", setup{shell: "/bin/sh", mode: dialect.Claude, disabled: []string{"create_file"}}, []string{"bash", "task_output", "task_input", "task_kill", "apply_patch", "grep", "Glob"}},
		{"openai", setup{shell: "/bin/sh", mode: dialect.Codex}, []string{"shell", "exec_command", "write_stdin", "apply_patch"}},
		{"openai without unified exec", setup{shell: "/bin/sh", mode: dialect.Codex, disabled: []string{"task_input"}}, []string{"shell", "apply_patch"}},
		{"openai without a shell", setup{mode: dialect.Codex}, []string{"apply_patch"}},
		{"openai with apply_patch disabled", setup{shell: "/bin/sh", mode: dialect.Codex, disabled: []string{"apply_patch"}}, []string{"shell", "exec_command", "write_stdin"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := newSet(t, tt.st).Names()
			if !slices.Equal(got, tt.want) {
				t.Fatalf("tools %v, want %v", got, tt.want)
			}
		})
	}
}
