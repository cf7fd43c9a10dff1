package shapes

import "fmt"

// format prints an area with two decimals.
func format(v float64) string {
	return fmt.Sprintf("%.2f", v)
}
