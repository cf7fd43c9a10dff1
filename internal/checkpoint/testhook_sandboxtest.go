//go:build boris_sandboxtest

package checkpoint

import (
	"os"
	"time"
)

// In binaries built with -tags boris_sandboxtest (the repository's tests
// build boris that way), BORIS_CHECKPOINT_TEST_RENAME_PAUSE slows the
// second phase of a restore down by a pause after each file put in place,
// so a test can kill boris in the middle of it, and
// BORIS_CHECKPOINT_TEST_BASELINE_GATE names a file the start-up
// checkpoint waits for, so a test can make calls while it is being taken.
// Release builds do not contain this file.
func init() {
	if d, err := time.ParseDuration(os.Getenv("BORIS_CHECKPOINT_TEST_RENAME_PAUSE")); err == nil && d > 0 {
		afterRename = func() { time.Sleep(d) }
	}
	if gate := os.Getenv("BORIS_CHECKPOINT_TEST_BASELINE_GATE"); gate != "" {
		baselineGate = func(stopped func() bool) {
			for !stopped() {
				if _, err := os.Stat(gate); err == nil {
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
}
