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
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
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
	return fmt.Sprintf("invalid path %q: %s", e.Path, e.Reason)
}

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
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	st, err := os.Stat(canon)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("workspace %s: not a directory", dir)
	}
	root, err := os.OpenRoot(canon)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
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

// maxSymlinkHops bounds symlink resolution like the kernel's ELOOP limit.
const maxSymlinkHops = 40

// Check resolves a path argument through the file system the way the kernel
// would, following symlinks that stay inside the root, and returns a
// *Violation if the argument or any symlink on its way leads outside. Missing
// components are fine (a file may be about to be created). It returns the
// clean root-relative path of the argument (not of its resolution).
func (w *Workspace) Check(p string) (string, error) {
	rel, _, err := w.walk(p)
	return rel, err
}

// Resolve is Check that returns the resolution instead: the root-relative
// slash path with every symlink replaced by its (in-root) target, missing
// trailing components kept as given. Tools use it for the canonical path they
// report, never to decide what to open: by the time the caller uses the
// answer a component may have been swapped, so the operation itself must
// still go through Root.
func (w *Workspace) Resolve(p string) (string, error) {
	_, resolved, err := w.walk(p)
	return resolved, err
}

// walk is the shared resolver of Check and Resolve.
func (w *Workspace) walk(p string) (rel, resolvedPath string, err error) {
	rel, err = w.Rel(p)
	if err != nil {
		return "", "", err
	}
	if rel == "." {
		return rel, rel, nil
	}
	// resolved holds the components already resolved (root-relative, no
	// symlinks); pending holds the components still to walk.
	var resolved []string
	pending := strings.Split(rel, "/")
	hops := 0
	done := func() (string, string, error) {
		all := append(resolved, pending...)
		out := path.Clean(strings.Join(all, "/"))
		if out == ".." || strings.HasPrefix(out, "../") {
			// Only a symlink target with ".." after a missing component
			// gets here; the kernel would fail at the missing component,
			// but a resolution above the root is never a valid answer.
			return "", "", &Violation{Path: p, Reason: "a symlink on the path leads above the workspace root"}
		}
		return rel, out, nil
	}
	for len(pending) > 0 {
		name := pending[0]
		pending = pending[1:]
		switch name {
		case ".", "":
			continue
		case "..":
			if len(resolved) == 0 {
				return "", "", &Violation{Path: p, Reason: "a symlink on the path leads above the workspace root"}
			}
			resolved = resolved[:len(resolved)-1]
			continue
		}
		cur := strings.Join(append(resolved, name), "/")
		fi, err := w.Root.Lstat(cur)
		if err != nil {
			if IsEscape(err) {
				return "", "", &Violation{Path: p, Reason: "resolves outside the workspace root"}
			}
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				// The rest does not exist yet: nothing to follow.
				pending = append([]string{name}, pending...)
				return done()
			}
			return "", "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = append(resolved, name)
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return "", "", &Violation{Path: p, Reason: "too many levels of symbolic links"}
		}
		target, err := w.Root.Readlink(cur)
		if err != nil {
			return "", "", err
		}
		if filepath.IsAbs(target) {
			// os.Root never follows an absolute symlink target, even one
			// that names a path inside the root, so neither does the check:
			// it must refuse exactly what the operation will refuse.
			reason := "symlink " + cur + " points outside the workspace root"
			if _, inside := under(w.Dir, filepath.Clean(target)); inside {
				reason = "symlink " + cur + " has an absolute target; only relative symlinks are followed inside the workspace"
			}
			return "", "", &Violation{Path: p, Reason: reason}
		}
		pending = append(splitRel(filepath.ToSlash(target)), pending...)
	}
	return done()
}

func splitRel(r string) []string {
	if r == "." || r == "" {
		return nil
	}
	return strings.Split(r, "/")
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
