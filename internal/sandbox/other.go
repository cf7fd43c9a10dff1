//go:build !linux

package sandbox

import "errors"

// ABI reports that Landlock is Linux-only.
func ABI() (int, error) { return 0, errors.New("this system has no Landlock: it is a Linux feature") }

// New fails: there is no Landlock outside Linux.
func New(Config) (*Sandbox, error) {
	_, err := ABI()
	return nil, errors.New("--sandbox on: " + err.Error())
}
