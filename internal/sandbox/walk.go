package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/clawde/clawd/internal/support/safetext"
)

// Path limits. Every path argument is checked against them before any file
// system access (Rel), so no tool spends time on a path the kernel would
// refuse anyway or that only exists to make resolution slow.
const (
	// MaxPathBytes is the longest path argument accepted, in bytes as
	// given (absolute arguments include the workspace root): Linux's
	// PATH_MAX, the most any single system call takes.
	MaxPathBytes = 4096
	// MaxNameBytes is the longest component (file or directory name):
	// NAME_MAX of Linux and the common file systems.
	MaxNameBytes = 255
	// MaxDepth is the most components a path may have after "." and ".."
	// are resolved lexically (also where symlinks lead). No real project
	// nests a tenth as deep; the cap keeps resolution cheap and bounded.
	MaxDepth = 1024
	// maxWalkSteps bounds the components Check and Resolve visit in all,
	// the argument's and those of every followed symlink target, so a few
	// symlinks with long ".."-laden targets cannot multiply the work.
	maxWalkSteps = 4 * MaxDepth
	// maxSymlinkHops bounds symlink resolution like the kernel's ELOOP
	// limit.
	maxSymlinkHops = 40
	// cancelCheckSteps is how many components the walk visits between
	// checks of its context.
	cancelCheckSteps = 64
)

// checkLimits refuses a path argument over MaxPathBytes, with a component
// over MaxNameBytes, or deeper than MaxDepth once cleaned.
func checkLimits(p string) error {
	if len(p) > MaxPathBytes {
		return &InvalidPathError{Path: p, Reason: fmt.Sprintf("it is %d bytes long; the limit is %d bytes (PATH_MAX)", len(p), MaxPathBytes)}
	}
	depth := 0
	for rest := p; rest != ""; {
		name := rest
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			name, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if len(name) > MaxNameBytes {
			return &InvalidPathError{Path: p, Reason: fmt.Sprintf("the component %q is %d bytes long; the limit is %d bytes per name (NAME_MAX)", clipPath(name), len(name), MaxNameBytes)}
		}
		switch name {
		case "", ".":
		case "..":
			if depth > 0 {
				depth--
			}
		default:
			if depth++; depth > MaxDepth {
				return &InvalidPathError{Path: p, Reason: fmt.Sprintf("it is more than %d directories deep; the limit is %d components", MaxDepth, MaxDepth)}
			}
		}
	}
	return nil
}

// Check resolves a path argument through the file system the way the kernel
// would, following symlinks that stay inside the root, and returns a
// *Violation if the argument or any symlink on its way leads outside. Missing
// components are fine (a file may be about to be created). It returns the
// clean root-relative path of the argument (not of its resolution).
//
// The walk opens one name per component (linear in the path's length),
// refuses arguments over the limits above with an *InvalidPathError, and
// returns ctx's error if ctx ends while it runs.
func (w *Workspace) Check(ctx context.Context, p string) (string, error) {
	rel, _, err := w.walk(ctx, p)
	return rel, err
}

// Resolve is Check that returns the resolution instead: the root-relative
// slash path with every symlink replaced by its (in-root) target, missing
// trailing components kept as given. Tools use it for the canonical path they
// report, never to decide what to open: by the time the caller uses the
// answer a component may have been swapped, so the operation itself must
// still go through Root.
func (w *Workspace) Resolve(ctx context.Context, p string) (string, error) {
	_, resolved, err := w.walk(ctx, p)
	return resolved, err
}

// walk is the shared resolver of Check and Resolve. It stands in one
// directory at a time (a cursor of open handles), so each component costs
// one lstat and at most one open relative to its parent, never a lookup
// of the whole prefix from the root.
func (w *Workspace) walk(ctx context.Context, p string) (rel, resolvedPath string, err error) {
	rel, err = w.Rel(p)
	if err != nil {
		return "", "", err
	}
	if rel == "." {
		return rel, rel, nil
	}
	r := &resolver{w: w, p: p, c: cursor{root: w.Root}, pending: splitRel(rel)}
	defer r.c.close()
	reverse(r.pending)
	for len(r.pending) > 0 {
		if r.steps++; r.steps > maxWalkSteps {
			return "", "", &InvalidPathError{Path: p, Reason: fmt.Sprintf("resolving it through its symlinks visits more than %d components", maxWalkSteps)}
		}
		if r.steps%cancelCheckSteps == 0 {
			if err := ctx.Err(); err != nil {
				return "", "", err
			}
		}
		name := r.pending[len(r.pending)-1]
		r.pending = r.pending[:len(r.pending)-1]
		stop := false
		switch name {
		case ".", "":
			continue
		case "..":
			err = r.parent()
		default:
			stop, err = r.enter(name)
		}
		if err != nil {
			return "", "", err
		}
		if stop {
			break
		}
	}
	out, err := r.result()
	if err != nil {
		return "", "", err
	}
	return rel, out, nil
}

// resolver is the state of one walk: where it stands (c), the components
// still to walk in reverse order (the next one last, so a symlink's target
// is pushed in O(its length)), and its counters.
type resolver struct {
	w           *Workspace
	p           string // the argument, for errors
	c           cursor
	pending     []string
	hops, steps int
}

func (r *resolver) violation(reason string) error { return &Violation{Path: r.p, Reason: reason} }

// result is the resolution: the directories walked and what is left, as
// given (missing components, or what follows a file).
func (r *resolver) result() (string, error) {
	all := make([]string, 0, len(r.c.names)+len(r.pending))
	all = append(all, r.c.names...)
	for i := len(r.pending) - 1; i >= 0; i-- {
		all = append(all, r.pending[i])
	}
	out := path.Clean(strings.Join(all, "/"))
	if out == ".." || strings.HasPrefix(out, "../") {
		// Only a symlink target with ".." after a missing component
		// gets here; the kernel would fail at the missing component,
		// but a resolution above the root is never a valid answer.
		return "", r.violation("a symlink on the path leads above the workspace root")
	}
	return out, nil
}

// parent handles a ".." (only symlink targets have them: Rel cleaned the
// argument), together with the ".." that follow it.
func (r *resolver) parent() error {
	n := 1
	for len(r.pending) > 0 && r.pending[len(r.pending)-1] == ".." {
		r.pending = r.pending[:len(r.pending)-1]
		n++
	}
	if n > len(r.c.names) {
		return r.violation("a symlink on the path leads above the workspace root")
	}
	if err := r.c.up(n); err != nil {
		if IsEscape(err) {
			return r.violation("resolves outside the workspace root")
		}
		return err
	}
	return nil
}

// enter handles the component name of the current directory: it enters a
// directory, follows a symlink (pushing its target), or reports stop when
// the walk ends here (name is missing, a file, the last directory, or
// cannot be opened; name is then pushed back for the result).
func (r *resolver) enter(name string) (stop bool, err error) {
	fi, err := r.c.dir().Lstat(name)
	if err != nil {
		if IsEscape(err) {
			return false, r.violation("resolves outside the workspace root")
		}
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			// The rest does not exist yet: nothing to follow.
			r.pending = append(r.pending, name)
			return true, nil
		}
		return false, err
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		if !fi.IsDir() || !morePending(r.pending) {
			// A file (the kernel would stop at any component after it)
			// or the last directory: nothing to open.
			r.pending = append(r.pending, name)
			return true, nil
		}
		if len(r.c.names) >= MaxDepth {
			return false, &InvalidPathError{Path: r.p, Reason: fmt.Sprintf("it resolves more than %d directories deep; the limit is %d components", MaxDepth, MaxDepth)}
		}
		if err := r.c.down(name); err != nil {
			if IsEscape(err) {
				return false, r.violation("resolves outside the workspace root")
			}
			// Vanished or unreadable since the lstat: the tool's own
			// operation reports it.
			r.pending = append(r.pending, name)
			return true, nil
		}
		return false, nil
	}
	if r.hops++; r.hops > maxSymlinkHops {
		return false, r.violation("too many levels of symbolic links")
	}
	target, err := r.c.dir().Readlink(name)
	if err != nil {
		return false, err
	}
	if filepath.IsAbs(target) {
		// os.Root never follows an absolute symlink target, even one
		// that names a path inside the root, so neither does the check:
		// it must refuse exactly what the operation will refuse.
		cur := shownNames(joinNames(r.c.names, name))
		reason := "symlink " + cur + " points outside the workspace root"
		if _, inside := under(r.w.Dir, filepath.Clean(target)); inside {
			reason = "symlink " + cur + " has an absolute target; only relative symlinks are followed inside the workspace"
		}
		return false, r.violation(reason)
	}
	t := splitRel(filepath.ToSlash(target))
	reverse(t)
	r.pending = append(r.pending, t...)
	return false, nil
}

// morePending reports whether a real name (not "." or "") is still to walk.
func morePending(pending []string) bool {
	for _, n := range pending {
		if n != "." && n != "" {
			return true
		}
	}
	return false
}

// shownNames is a path of names read from the disk (a symlink target's
// directories), as a violation's reason shows it: as it is when short and
// printable, else quoted with its control characters escaped and clipped,
// so a directory named with a line break or a terminal escape cannot forge
// a line of the -32005 message or the audit row, and a chain of long names
// does not make the reason kilobytes long.
func shownNames(s string) string {
	if len(s) <= 2*clipKeep+3 {
		printable := true
		for _, r := range s {
			if r == utf8.RuneError || !strconv.IsPrint(r) || safetext.Forbidden(r) {
				printable = false
				break
			}
		}
		if printable {
			return s
		}
	}
	return strconv.Quote(clipPath(s))
}

func joinNames(names []string, name string) string {
	if len(names) == 0 {
		return name
	}
	return strings.Join(names, "/") + "/" + name
}

func splitRel(r string) []string {
	if r == "." || r == "" {
		return nil
	}
	return strings.Split(r, "/")
}

func reverse(s []string) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// checkpointEvery is how far apart the cursor keeps directory handles open:
// going up reopens at most this many names, and a walk MaxDepth deep holds
// at most MaxDepth/checkpointEvery+1 descriptors.
const checkpointEvery = 16

// cursor is the directory a walk stands in: the names leading to it from
// the root, and open handles for some of them (every checkpointEvery-th and
// the current one). Each handle is opened from its parent's handle by one
// name, so moving down costs one open; moving up reopens from the nearest
// kept ancestor rather than from the root (a directory's ".." is never
// used: the directory may have moved).
type cursor struct {
	root  *os.Root
	names []string
	hs    []*os.Root // hs[i] is the handle of names[:i+1], or nil
}

func (c *cursor) dir() *os.Root {
	if len(c.hs) == 0 {
		return c.root
	}
	return c.hs[len(c.hs)-1]
}

func checkpoint(i int) bool { return (i+1)%checkpointEvery == 0 }

// OpenDir opens the directory name (one component or a relative path) of
// dir as a Root, and fails at once if it is anything but a directory.
// OpenRoot opens its last component without O_DIRECTORY, so a named pipe
// swapped in for a directory after it was lstat'ed would block the open
// until a writer came; with the trailing "/." name is an intermediate
// component, opened with O_DIRECTORY. Every tool that enters a directory
// it did not just create opens it this way.
func OpenDir(dir *os.Root, name string) (*os.Root, error) {
	return dir.OpenRoot(name + "/.")
}

// down enters the subdirectory name of the current directory.
func (c *cursor) down(name string) error {
	h, err := OpenDir(c.dir(), name)
	if err != nil {
		return err
	}
	if n := len(c.hs); n > 0 && !checkpoint(n-1) {
		c.hs[n-1].Close()
		c.hs[n-1] = nil
	}
	c.names = append(c.names, name)
	c.hs = append(c.hs, h)
	return nil
}

// up leaves n levels (n <= len(c.names)) and reopens the new current
// directory from the nearest kept ancestor.
func (c *cursor) up(n int) error {
	for ; n > 0; n-- {
		i := len(c.hs) - 1
		if c.hs[i] != nil {
			c.hs[i].Close()
		}
		c.hs, c.names = c.hs[:i], c.names[:i]
	}
	top := len(c.hs) - 1
	if top < 0 || c.hs[top] != nil {
		return nil
	}
	j := top - 1
	for j >= 0 && c.hs[j] == nil {
		j--
	}
	base := c.root
	if j >= 0 {
		base = c.hs[j]
	}
	cur := base
	for i := j + 1; i <= top; i++ {
		h, err := OpenDir(cur, c.names[i])
		if cur != base {
			cur.Close()
		}
		if err != nil {
			// Leave the cursor consistent for close: drop the levels
			// that have no handle.
			c.hs, c.names = c.hs[:j+1], c.names[:j+1]
			return err
		}
		cur = h
	}
	c.hs[top] = cur
	return nil
}

func (c *cursor) close() {
	for _, h := range c.hs {
		if h != nil {
			h.Close()
		}
	}
	c.hs, c.names = nil, nil
}
