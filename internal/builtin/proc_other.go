//go:build !linux

package builtin

import "os"

// fdPath is unavailable without /proc; callers fall back to resolving the
// path through the workspace (sandbox.Workspace.Resolve).
func fdPath(f *os.File) (string, bool) { return "", false }

// childDirOf is unavailable without /proc; the bash tool falls back to the
// resolved host path, which leaves a window between the check and the
// child's chdir (documented in docs/tools.md).
func childDirOf(f *os.File) (string, bool) { return "", false }
