package util

// Reverse returns s reversed.
func Reverse(s string) string { return s }
