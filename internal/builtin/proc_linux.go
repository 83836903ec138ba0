package builtin

import (
	"os"
	"strconv"
	"sync"
)

// procFdWorks reports whether /proc/self/fd is usable, which the fd-based
// working directory and path lookups below need (it is missing in some
// minimal containers and chroots without /proc).
var procFdWorks = sync.OnceValue(func() bool {
	st, err := os.Stat("/proc/self/fd")
	return err == nil && st.IsDir()
})

// fdPath returns the host path the kernel currently has for the open file f
// (a directory opened through the workspace Root), or ok=false when it cannot
// be read. It names exactly the directory the handle refers to, so a path
// reported to the caller matches where a write happened even if a component
// was swapped after the open.
func fdPath(f *os.File) (string, bool) {
	if !procFdWorks() {
		return "", false
	}
	p, err := os.Readlink("/proc/self/fd/" + strconv.FormatUint(uint64(f.Fd()), 10))
	if err != nil || len(p) == 0 || p[0] != '/' {
		return "", false // e.g. "... (deleted)" is still absolute; anonymous inodes are not
	}
	return p, true
}

// childDirOf returns a path the child process can chdir to that names the
// directory f refers to, without resolving any workspace path again.
//
// Go's fork/exec runs chdir(Dir) in the child after fork and before exec; at
// that point the child still holds every descriptor of the parent (close-on-
// exec ones close only at exec), so /proc/self/fd/N in the child is the very
// directory the parent opened through os.Root. This closes the race between
// "check working_dir is inside the root" and "chdir into it": there is no
// second lookup by name that a symlink swapped in between could redirect.
func childDirOf(f *os.File) (string, bool) {
	if !procFdWorks() {
		return "", false
	}
	return "/proc/self/fd/" + strconv.FormatUint(uint64(f.Fd()), 10), true
}
