//go:build !linux

package sandbox

import "errors"

// ruleset has nothing to hold where there is no Landlock.
type ruleset struct{}

func (ruleset) newDomain() (*Domain, error) { return nil, errors.New("this system has no Landlock") }
func (ruleset) release()                    {}

// ABI reports that Landlock is Linux-only.
func ABI() (int, error) { return 0, errors.New("this system has no Landlock: it is a Linux feature") }

// New fails: there is no Landlock outside Linux.
func New(Config) (*Sandbox, error) {
	_, err := ABI()
	return nil, errors.New("--sandbox on: " + err.Error())
}

func newDomainWith(Config) (*Domain, error) {
	_, err := ABI()
	return nil, err
}
