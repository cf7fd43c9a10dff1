//go:build !linux

package hostenv

// readOnly is false where boris does not look (a read-only root is a
// container's, and containers are Linux's).
func readOnly(string) bool { return false }
