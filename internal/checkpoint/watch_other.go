//go:build !linux

package checkpoint

import "errors"

// newWatcher fails where there is no inotify: every scan is a full one.
func newWatcher() (watcher, error) { return nil, errors.New("no inotify on this system") }
