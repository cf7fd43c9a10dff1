//go:build linux && boris_sandboxtest

package sandbox

import (
	"os"
	"strconv"
)

// In binaries built with -tags boris_sandboxtest (the repository's tests
// build boris that way), BORIS_SANDBOX_TEST_ABI caps the Landlock ABI the
// probe reports, so a test can show the refusal on a kernel without
// Landlock (0) or with an old one. Release builds do not contain this file,
// and a cap can only lower the ABI, never grant what the kernel lacks.
func init() {
	if v, err := strconv.Atoi(os.Getenv("BORIS_SANDBOX_TEST_ABI")); err == nil && v >= 0 {
		abiCap = v
	}
}
