package dialect

import (
	"fmt"
	"slices"
	"strings"
)

// Naming is what --disable-tools accepts, derived from the tools'
// declarations (package tool): boris's names of the tools in a stable
// order, and the names the other dialects give them.
type Naming struct {
	Names   []string
	Aliases map[string][]string
}

// Disabled resolves --disable-tools names (aliases included) into the set
// of keys they turn off; an unknown name is an error listing the valid
// ones.
func (n Naming) Disabled(names []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, name := range names {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
		case slices.Contains(n.Names, name):
			out[name] = true
		case n.Aliases[name] != nil:
			for _, k := range n.Aliases[name] {
				out[k] = true
			}
		default:
			return nil, fmt.Errorf("unknown tool %q in --disable-tools: valid names are %s", name, strings.Join(n.Names, ", "))
		}
	}
	return out, nil
}
