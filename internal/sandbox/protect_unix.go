//go:build unix

package sandbox

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/clawde/clawd/internal/support/fileutil"
)

// identity is a file's device and inode.
func identity(fi os.FileInfo) (fid, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fid{}, false
	}
	return fid{dev: uint64(st.Dev), ino: uint64(st.Ino)}, true
}

// dirState is what a watched directory is compared by: its identity (a
// directory replaced at the path is another inode) and its mtime and ctime
// (an entry added, removed or renamed changes both).
type dirState struct {
	ok           bool
	dev, ino     uint64
	mtime, ctime int64
}

// statDir stats p without allocating: it runs on every guarded tool call.
func statDir(p string) dirState {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return dirState{}
	}
	return dirState{ok: true, dev: uint64(st.Dev), ino: uint64(st.Ino),
		mtime: timespecNano(st.Mtim), ctime: timespecNano(st.Ctim)}
}

func timespecNano(t unix.Timespec) int64 { return t.Nano() }

// recent reports whether the directory changed within racyWindow of now (or
// claims a time in the future): a change within the same timestamp tick
// would then go unseen, so the snapshot must not be trusted yet.
func (d dirState) recent(now time.Time) bool {
	if !d.ok {
		return false
	}
	last := max(d.mtime, d.ctime)
	return now.UnixNano()-last < int64(racyWindow)
}

// GuardEnforced reports whether this system gives file identities, which
// the guard decides by.
const GuardEnforced = true

// ctimeOf is the inode change time, in nanoseconds.
func ctimeOf(fi os.FileInfo) (int64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return fileutil.StatChangeTime(st)
}

// unlinked reports whether the object has no directory entry left.
func unlinked(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 0
}
