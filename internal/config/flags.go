package config

import (
	"fmt"
	"io"

	"github.com/alecthomas/kong"
)

// FlagDoc is what the reference page says about one command-line flag:
// its name, its environment variable, its default and its help, as the
// kong model declares them.
type FlagDoc struct {
	Name        string // without the leading dashes
	Env         string // "" for a flag without a variable
	Default     string // "" when the flag has none
	Placeholder string // the value's name where the flag declares one, e.g. DIR
	Help        string
	// Repeatable flags take several values: the flag given again, or a
	// comma-separated variable.
	Repeatable bool
	Bool       bool
	// Group is the heading --help lists the flag under.
	Group string
}

// Flags describes every flag Parse accepts, in declaration order, leaving
// out --help and the hidden, deprecated spellings: the source of the
// generated flag reference, so that it cannot drift from the parser.
func Flags(p Program) ([]FlagDoc, error) {
	var c cli
	parser, err := kong.New(&c, p.vars(), groups, kong.Name("boris"), kong.Writers(io.Discard, io.Discard))
	if err != nil {
		return nil, fmt.Errorf("build command line: %w", err)
	}
	var out []FlagDoc
	for _, f := range parser.Model.Flags {
		if f.Hidden || f.Name == "help" {
			continue
		}
		out = append(out, FlagDoc{
			Name:        f.Name,
			Env:         f.Tag.Get("envvar"),
			Default:     f.Default,
			Placeholder: f.PlaceHolder,
			Help:        f.Help,
			Repeatable:  f.IsSlice(),
			Bool:        f.IsBool(),
			Group:       groupTitle(f),
		})
	}
	return out, nil
}

func groupTitle(f *kong.Flag) string {
	if f.Group == nil {
		return ""
	}
	return f.Group.Title
}
