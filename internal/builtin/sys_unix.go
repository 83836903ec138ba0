//go:build unix

package builtin

import "syscall"

// oDirectory makes an open fail with ENOTDIR unless the path is a directory,
// so opening a named pipe in its place never blocks.
const oDirectory = syscall.O_DIRECTORY
