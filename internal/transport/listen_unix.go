//go:build linux || darwin

package transport

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/clawde/clawd/internal/support/fileutil"
)

// maxSocketPath is the longest unix socket path every supported OS accepts
// (sun_path is 104 bytes on macOS, 108 on Linux, including the NUL).
const maxSocketPath = 103

// UnixListener is a listening unix socket that holds the path's lock file.
type UnixListener struct {
	*net.UnixListener
	path string
	lock *os.File
	once sync.Once
	err  error
}

// ListenUnix binds the daemon's socket at path (docs/transports.md):
//
//   - an exclusive lock on "<path>.lock" is held for the daemon's lifetime,
//     so two daemons starting at once cannot both decide the socket is stale;
//   - a socket at path that accepts connections means another daemon runs:
//     ErrAlreadyRunning; one that refuses them is stale and replaced;
//   - anything else at path (a file, a symlink, a directory) is refused and
//     left alone: clawd never deletes what it did not create;
//   - the directory must be this user's or root's, and not writable by
//     others unless sticky (checkSocketDir);
//   - the socket is chmod'ed to 0600 right after bind. In the instant before,
//     the mode comes from the umask; peer-credential checks make that window
//     harmless, and a process-wide umask change would race other goroutines.
func ListenUnix(path string) (*UnixListener, error) {
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("socket path %s is %d bytes, longer than unix sockets allow (%d); set socket_path or --socket to a shorter path", path, len(path), maxSocketPath)
	}
	// Resolve the directory once: the lock, the socket and its chmod all go
	// to the directory checked, whatever a symlink on the way says later.
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("socket directory: %w", err)
	}
	if err := checkSocketDir(dir); err != nil {
		return nil, err
	}
	if path = filepath.Join(dir, filepath.Base(path)); len(path) > maxSocketPath {
		return nil, fmt.Errorf("socket path %s (symlinks resolved) is %d bytes, longer than unix sockets allow (%d); set socket_path or --socket to a shorter path", path, len(path), maxSocketPath)
	}
	// Something that is not a socket is refused before the lock file is
	// created next to it (--socket /etc/passwd must not leave an
	// /etc/passwd.lock, which shadow's tools take for a held lock); it is
	// checked again under the lock below.
	if fi, err := os.Lstat(path); err == nil && fi.Mode().Type() != fs.ModeSocket {
		return nil, notASocket(path, fi)
	}
	lock, err := lockFile(path + ".lock")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*UnixListener, error) {
		lock.Close()
		return nil, err
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fail(err)
	case fi.Mode().Type() == fs.ModeSocket:
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return fail(fmt.Errorf("%w: a process accepts connections on %s", ErrAlreadyRunning, path))
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fail(fmt.Errorf("removing the stale socket %s: %w", path, err))
		}
	default:
		return fail(notASocket(path, fi))
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return fail(fmt.Errorf("listening on %s: %w", path, err))
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return fail(fmt.Errorf("chmod 0600 %s: %w", path, err))
	}
	return &UnixListener{UnixListener: ln, path: path, lock: lock}, nil
}

// Path is the socket's path.
func (l *UnixListener) Path() string { return l.path }

// Close stops listening, removes the socket and releases the lock. The lock
// file is removed while still locked, so a daemon starting meanwhile either
// fails on the lock or creates a fresh lock file.
func (l *UnixListener) Close() error {
	l.once.Do(func() {
		l.err = l.UnixListener.Close() // also unlinks the socket
		os.Remove(l.path + ".lock")
		l.lock.Close()
	})
	return l.err
}

// lockFile opens (creating, never through a symlink) and exclusively locks
// path. A lock held by another process is ErrAlreadyRunning.
func lockFile(path string) (*os.File, error) {
	for attempt := 0; attempt < 5; attempt++ {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			if errors.Is(err, syscall.ELOOP) {
				return nil, fmt.Errorf("%s is a symlink; clawd will not follow it: remove it, or choose another socket path with socket_path or --socket", path)
			}
			return nil, fmt.Errorf("opening the lock file %s: %w", path, err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, fmt.Errorf("%w: another clawd holds %s", ErrAlreadyRunning, path)
			}
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		// The previous holder may have removed the file between our open
		// and our lock; then we locked an orphan and must retry.
		var a, b unix.Stat_t
		if unix.Fstat(int(f.Fd()), &a) == nil && unix.Lstat(path, &b) == nil && a.Dev == b.Dev && a.Ino == b.Ino {
			return f, nil
		}
		f.Close()
	}
	return nil, fmt.Errorf("could not lock %s: it keeps being replaced", path)
}

func notASocket(path string, fi fs.FileInfo) error {
	return fmt.Errorf("%s exists and is not a socket (%s); clawd will not replace it: move it away, or choose another path with socket_path or --socket", path, fileutil.Kind(fi.Mode()))
}

// checkSocketDir refuses a socket directory (symlinks resolved) whose
// entries another user could change, or that sits in a directory whose
// entries they could change: one owned by another user but root, or one
// everyone may write to without the sticky bit, checked from dir up to
// the root. There they could unlink the socket and bind their own (clawd's
// clients check who listens, so that denies service, no more), hold its
// lock file, or swap a symlink in for the socket between bind and chmod,
// which follows it and would narrow some file of this user's to 0600. A
// sticky directory (/tmp) lets only an entry's owner remove or rename it.
func checkSocketDir(dir string) error {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Lstat(d)
		if err != nil {
			return fmt.Errorf("socket directory: %w", err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("socket directory %s: %s is not a directory", dir, d)
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() && st.Uid != 0 {
			return fmt.Errorf("socket directory %s: %s belongs to uid %d, not to this user (uid %d): its owner could replace the socket; choose a directory of your own with socket_path or --socket", dir, d, st.Uid, os.Geteuid())
		}
		if fi.Mode().Perm()&0o002 != 0 && fi.Mode()&fs.ModeSticky == 0 {
			return fmt.Errorf("socket directory %s: %s has mode %v: other users can write to it and it is not sticky, so anyone could replace the socket; run 'chmod o-w %s' or 'chmod +t %s', or choose another directory with socket_path or --socket", dir, d, fi.Mode().Perm(), d, d)
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}
