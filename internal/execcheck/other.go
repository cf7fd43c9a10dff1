//go:build !linux

package execcheck

import (
	"context"
	"errors"
)

var errUnsupported = errors.New("checking every exec needs Linux (seccomp user notification)")

// Watcher is Linux's; elsewhere Attach fails.
type Watcher struct{}

// Command is Linux's.
type Command struct{}

// Attach fails: the check needs Linux.
func Attach(func(func()) error) (*Watcher, error) { return nil, errUnsupported }

// Install fails: the check needs Linux.
func Install() (int, error) { return -1, errUnsupported }

// Prepare fails: the check needs Linux.
func Prepare() error { return errUnsupported }

func (w *Watcher) SetFallback(Judge)                          {}
func (w *Watcher) Orphans() []Refusal                         { return nil }
func (w *Watcher) Counts() (int64, int64)                     { return 0, 0 }
func (w *Watcher) Track(int, context.Context, Judge) *Command { return &Command{} }
func (w *Watcher) Close()                                     {}
func (c *Command) Rejudge(context.Context, Judge)             {}
func (c *Command) Untrack()                                   {}
func (c *Command) Refused() ([]Refusal, int)                  { return nil, 0 }

func onMainThread() bool { return false }
