// Package sandbox confines file access to one workspace directory.
//
// The enforcement is os.Root: every file operation a tool performs goes
// through the workspace's *os.Root, which resolves each path component
// relative to an open directory handle and refuses symlinks and ".." that
// lead outside. Because the check and the operation are the same system
// calls, a symlink swapped in between cannot redirect an operation.
//
// The lexical and symlink-walking checks in this package (Rel, Check) exist to
// give a caller a precise error (-32005 with the offending path) before any
// work starts; they are never the only barrier.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/clawde/clawd/internal/support/safetext"
)

// Violation reports a path argument that resolves outside the workspace.
type Violation struct {
	Path   string // the path as the caller gave it
	Reason string // why it is outside, for the error message and audit
}

func (v *Violation) Error() string {
	return "sandbox_violation: " + v.Path + ": " + v.Reason
}

// InvalidPathError reports a path argument that is not a usable path at all
// (empty where one is required, or containing a NUL byte).
type InvalidPathError struct {
	Path   string
	Reason string
}

func (e *InvalidPathError) Error() string {
	return fmt.Sprintf("invalid path %q: %s", clipPath(e.Path), e.Reason)
}

// clipPath shortens a path for an error message: an over-long argument is
// named by its start and end, not echoed back whole.
func clipPath(p string) string {
	if len(p) <= 2*clipKeep+3 {
		return p
	}
	return p[:clipKeep] + "..." + p[len(p)-clipKeep:]
}

// clipKeep is how many bytes of each end clipPath keeps.
const clipKeep = 60

// Workspace is an open workspace root.
type Workspace struct {
	// Dir is the canonical absolute path of the root (symlinks resolved).
	Dir string
	// given is the absolute path as configured, before resolving symlinks;
	// absolute path arguments may use either spelling.
	given string
	// Root is the handle every file operation must go through.
	Root *os.Root
	// guard, when set, keeps clawd's own state out of the tools' reach
	// (protect.go).
	guard atomic.Pointer[Guard]
}

// Open opens dir as a workspace. dir must be an existing directory.
func Open(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	canon, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, safetext.PathError("workspace", dir, err)
	}
	st, err := os.Stat(canon)
	if err != nil {
		return nil, safetext.PathError("workspace", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("workspace %s: not a directory", safetext.ShellWord(dir))
	}
	root, err := os.OpenRoot(canon)
	if err != nil {
		return nil, safetext.PathError("workspace", dir, err)
	}
	return &Workspace{Dir: canon, given: filepath.Clean(abs), Root: root}, nil
}

// Close releases the root handle.
func (w *Workspace) Close() error { return w.Root.Close() }

// Abs returns the absolute host path of a root-relative slash path.
func (w *Workspace) Abs(rel string) string {
	if rel == "." || rel == "" {
		return w.Dir
	}
	return filepath.Join(w.Dir, filepath.FromSlash(rel))
}

// Rel maps a path argument to a clean, slash-separated path relative to the
// root ("." for the root itself). Relative arguments are taken relative to
// the root; absolute ones must lie under it. ".." is resolved lexically, so
// a result never starts with "..": anything that would is a *Violation.
// An empty argument means the root.
func (w *Workspace) Rel(p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", &InvalidPathError{Path: p, Reason: "contains a NUL byte"}
	}
	if p == "" {
		return ".", nil
	}
	if err := checkLimits(p); err != nil {
		return "", err
	}
	if filepath.IsAbs(p) {
		c := filepath.Clean(p)
		for _, base := range [...]string{w.Dir, w.given} {
			if r, ok := under(base, c); ok {
				return r, nil
			}
		}
		return "", &Violation{Path: p, Reason: "absolute path outside the workspace root " + w.Dir}
	}
	c := path.Clean(filepath.ToSlash(p))
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", &Violation{Path: p, Reason: "relative path leaves the workspace root"}
	}
	return c, nil
}

// under reports whether c equals base or lies below it (by whole path
// components, so /ws_evil is not under /ws), and returns the relative path.
func under(base, c string) (string, bool) {
	if c == base {
		return ".", true
	}
	prefix := base
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if !strings.HasPrefix(c, prefix) {
		return "", false
	}
	return filepath.ToSlash(c[len(prefix):]), true
}

// IsEscape reports whether err is os.Root's refusal of a path that escapes
// the root (a symlink or ".." leading outside). The os package does not
// export that error, so it is recognised by its fixed text.
func IsEscape(err error) bool {
	for err != nil {
		if err.Error() == "path escapes from parent" {
			return true
		}
		err = errors.Unwrap(err)
	}
	return false
}

// AsViolation converts an os.Root escape error into a *Violation naming p;
// any other error is returned unchanged.
func AsViolation(p string, err error) error {
	if IsEscape(err) {
		return &Violation{Path: p, Reason: "resolves outside the workspace root (symlink)"}
	}
	return err
}
