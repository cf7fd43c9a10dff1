package app

import "testing"

// The collector's soft limit is 256 MiB, or a quarter of a lower cgroup
// memory limit (commands share it).
func TestSoftLimit(t *testing.T) {
	for cgroup, want := range map[int64]int64{
		0:         256 << 20,
		4 << 30:   256 << 20,
		1 << 30:   256 << 20,
		512 << 20: 128 << 20,
		128 << 20: 32 << 20,
	} {
		if got := softLimit(cgroup); got != want {
			t.Errorf("softLimit(%d) = %d, want %d", cgroup, got, want)
		}
	}
}
