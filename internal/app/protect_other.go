//go:build !linux

package app

// protectProcess does nothing outside Linux, which alone has the
// non-dumpable flag; SECURITY.md says the guarantee is Linux's.
func protectProcess() error { return nil }
