//go:build unix

package fileutil

// MakePrivate does nothing on unix: clawd creates its files 0600 and its
// directories 0700, and the mode is what the kernel checks.
func MakePrivate(path string, dir bool) error { return nil }
