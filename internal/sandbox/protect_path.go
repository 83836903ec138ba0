package sandbox

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

// Access says how a tool uses its path arguments, for CheckState.
type Access uint8

const (
	// AccessNone: naming clawd's state is fine (list_dir lists names; bash
	// is not confined anyway).
	AccessNone Access = iota
	// AccessRead: the object read must not be clawd's state.
	AccessRead
	// AccessWrite: the name written must not be, or lead into, clawd's
	// state, and must not hold a protected object now.
	AccessWrite
)

// CheckState is the chain's early answer to a path argument that reaches
// clawd's own state: a *Violation naming why, or nil. It resolves the path
// by name through the Root (following symlinks inside it) and judges what
// it finds by identity, so the call is refused, and its Deny row is on
// record, before the tool starts. It is not the barrier: a name can change
// between this check and the tool's open, so each tool checks again what it
// actually opened. When ctx ends during the check, its error is returned
// (not a *Violation): the call is over anyway.
func (w *Workspace) CheckState(ctx context.Context, p string, a Access) error {
	g := w.Guard()
	if a == AccessNone || !g.Active() {
		return nil
	}
	rel, err := w.Rel(p)
	if err != nil {
		return nil // not a usable path: another check reports it
	}
	switch a {
	case AccessRead:
		if fi, err := w.Root.Stat(rel); err == nil {
			if why := g.ObjectWhy(fi); why != "" {
				return ProtectedViolation(p, why)
			}
		}
	case AccessWrite:
		if rel == "." {
			return nil
		}
		why, err := w.WriteWhy(ctx, path.Dir(rel), path.Base(rel))
		if err != nil {
			return err
		}
		if why != "" {
			return ProtectedViolation(p, why)
		}
		if fi, err := w.Root.Lstat(rel); err == nil {
			if why := g.ObjectWhy(fi); why != "" {
				return ProtectedViolation(p, why)
			}
		}
	}
	return nil
}

// WriteWhy returns why writing the name base in the root-relative
// directory dir would write clawd's state, or "" if it would not. dir may
// not exist yet (create_parents): it is judged at its deepest existing
// directory, by that directory's identity and the path still to be made
// below it, so the config directory that does not exist yet cannot be
// made either.
//
// dir is first resolved through its symlinks: MkdirAll follows a symlink
// inside the root even when its target does not exist yet, so the
// directories it makes are judged where the links lead, not by the links'
// names.
//
// The resolution is bounded like any path argument's and stops when ctx
// ends; then ctx's error is returned and nothing is judged, so a cancelled
// call is never judged by the lexical path alone.
func (w *Workspace) WriteWhy(ctx context.Context, dir, base string) (string, error) {
	g := w.Guard()
	if !g.Active() {
		return "", nil
	}
	if dir != "." && dir != "" {
		// An escape or a limit is the tools' to report; the lexical path
		// is judged then.
		r, err := w.Resolve(ctx, dir)
		if err == nil {
			dir = r
		} else if cerr := ctx.Err(); cerr != nil {
			return "", cerr
		}
	}
	var parts []string
	if dir != "." && dir != "" {
		parts = strings.Split(dir, "/")
	}
	n, fi, err := w.deepestDir(ctx, parts)
	switch {
	case err == errNotDir:
		return "", nil // not writable there at all; the tool says why
	case err != nil:
		if cerr := ctx.Err(); cerr != nil {
			return "", cerr
		}
		// Something other than a missing name (dir kept a symlink that
		// climbs above its own directory, Resolve having failed): by
		// path from the root, as the tool's MkdirAll will go.
		return w.writeWhyByPath(parts, base), nil
	}
	return g.CreateWhy(fi, append(slices.Clip(parts[n:]), base)), nil
}

// errNotDir: a component of the path exists and is not a directory.
var errNotDir = errors.New("not a directory")

// deepestDir walks parts down from the root, one name at a time from the
// directory handle before it, and returns how many of them name existing
// directories and the stat of the deepest (the root's for none). A
// missing name ends the walk; a name that is not a directory is
// errNotDir. Each step costs one stat and one open, where a Stat of every
// prefix from the root cost depth*depth/2 lookups.
func (w *Workspace) deepestDir(ctx context.Context, parts []string) (int, os.FileInfo, error) {
	cur := w.Root
	defer func() {
		if cur != w.Root {
			cur.Close()
		}
	}()
	fi, err := cur.Stat(".")
	if err != nil {
		return 0, nil, err
	}
	for n, name := range parts {
		if n%cancelCheckSteps == cancelCheckSteps-1 {
			if err := ctx.Err(); err != nil {
				return 0, nil, err
			}
		}
		st, err := cur.Stat(name) // follows a symlink, as MkdirAll does
		if errors.Is(err, fs.ErrNotExist) {
			return n, fi, nil
		}
		if err != nil {
			return 0, nil, err
		}
		if !st.IsDir() {
			return 0, nil, errNotDir
		}
		next, err := OpenDir(cur, name)
		if err != nil {
			return 0, nil, err
		}
		if cur != w.Root {
			cur.Close()
		}
		cur, fi = next, st
	}
	return len(parts), fi, nil
}

// writeWhyByPath is WriteWhy's judgement with the deepest existing
// directory found by a Stat of each prefix of parts from the root, deepest
// first.
func (w *Workspace) writeWhyByPath(parts []string, base string) string {
	g := w.Guard()
	for i := len(parts); i >= 0; i-- {
		existing := path.Join(parts[:i]...)
		if existing == "" {
			existing = "."
		}
		fi, err := w.Root.Stat(existing)
		if err != nil {
			continue
		}
		if !fi.IsDir() {
			return ""
		}
		return g.CreateWhy(fi, append(slices.Clip(parts[i:]), base))
	}
	return ""
}
