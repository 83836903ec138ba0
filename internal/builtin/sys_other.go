//go:build !unix

package builtin

// oDirectory: no such flag here; opening a directory cannot block on these
// systems, and the callers check IsDir after the open.
const oDirectory = 0
