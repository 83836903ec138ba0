//go:build !unix

package sandbox

import (
	"os"
	"time"
)

// identity: this system's os.FileInfo carries no device and inode, so the
// guard cannot tell objects apart and protects nothing; daemon.New warns
// when clawd's state lies inside the workspace there (docs/tools.md).
func identity(fi os.FileInfo) (fid, bool) { return fid{}, false }

type dirState struct {
	ok    bool
	mtime int64
}

func statDir(p string) dirState {
	fi, err := os.Stat(p)
	if err != nil {
		return dirState{}
	}
	return dirState{ok: true, mtime: fi.ModTime().UnixNano()}
}

func (d dirState) recent(now time.Time) bool {
	return d.ok && now.UnixNano()-d.mtime < int64(racyWindow)
}

// GuardEnforced reports whether this system gives file identities, which
// the guard decides by. It does not: nothing is protected by the guard.
const GuardEnforced = false

func ctimeOf(fi os.FileInfo) (int64, bool) { return 0, false }

func unlinked(fi os.FileInfo) bool { return false }
