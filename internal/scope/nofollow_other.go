//go:build !linux

package scope

import "os"

// openNoSymlinks is only available on Linux; elsewhere every open takes the
// resolve-and-verify path.
func openNoSymlinks(string) (*os.File, error) { return nil, errUnsupported }
