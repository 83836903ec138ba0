//go:build unix && !linux

package daemon

// closeRangeCloexec: macOS has no close_range, and the BSDs' is not wired
// up here, so the caller always lists the open descriptors (/dev/fd).
func closeRangeCloexec() bool { return false }
