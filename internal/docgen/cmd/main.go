// Command cmd regenerates the generated reference pages (docs/flags.md,
// docs/tools.md) under the repository root given as its argument
// (default "."): `make docs` runs it.
package main

import (
	"fmt"
	"os"

	"github.com/boris-mcp/boris/internal/docgen"
)

func main() {
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := docgen.Write(dir); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}
