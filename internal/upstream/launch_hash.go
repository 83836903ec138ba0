package upstream

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"

	"github.com/clawde/clawd/internal/support/fileutil"
)

// Hashing what a launch pins: the executable through the descriptor the
// spawn runs (openHashed, unchangedSince) and the script by path, before
// the spawn and again once the server has initialized (recheckScript).
// A script is read by the interpreter by its path, not through a
// descriptor clawd hands over, so a swap between the check and the read
// is caught only while it stays in place.

// FileHasher computes files' SHA-256 (lowercase hex): by path, and
// through an open descriptor (never by its name). The daemon passes
// chain.HashCache, which remembers a hash per file version, so a 100 MB
// node binary is read once, not at every spawn.
type FileHasher interface {
	Sum(path string) (string, error)
	SumFile(f *os.File) (string, error)
}

// plainHasher reads the whole file every time.
type plainHasher struct{}

func (plainHasher) Sum(path string) (string, error) {
	f, err := fileutil.OpenNoWait(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return plainHasher{}.SumFile(f)
}

func (plainHasher) SumFile(f *os.File) (string, error) {
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", f.Name())
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, 1<<62)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashPath(p string) (string, error) { return plainHasher{}.Sum(p) }

func (m *Manager) hasher() FileHasher {
	if m.opts.Hasher != nil {
		return m.opts.Hasher
	}
	return plainHasher{}
}

// openHashed opens the executable read-only and hashes the open
// descriptor: the descriptor is what the spawn executes
// (proc.Cmd.ExecFile), so the hash is of the file that runs.
//
// before is the descriptor's state before it was hashed: a spawn compares
// it after the exec (unchangedSince) to catch a write into the same file
// in between, which executing the descriptor does not prevent.
func openHashed(h FileHasher, path string) (f *os.File, sum string, before os.FileInfo, err error) {
	f, err = fileutil.OpenNoWait(path)
	if err != nil {
		return nil, "", nil, fmt.Errorf("cannot open the executable %s to check it: %v", path, err)
	}
	if before, err = f.Stat(); err == nil {
		sum, err = h.SumFile(f)
	}
	if err != nil {
		f.Close()
		return nil, "", nil, fmt.Errorf("cannot read the executable %s to check it: %v", path, err)
	}
	return f, sum, before, nil
}

// unchangedSince reports whether the open file f still holds what was
// hashed as sum: it has the size and modification time it had in before
// and, where the platform has one, the same change time, which any write
// moves even when the writer resets the modification time. A change time
// that moved alone may be harmless metadata (a chmod, a hard link, the
// file unlinked or renamed over: the swap executing the descriptor
// defeats) or such a write followed by a link or rename to hide it, so
// then the descriptor is hashed again (h) and must still give sum. Within
// one tick of the file system's clock (Linux: a few ms) a write can go
// unseen.
func unchangedSince(f *os.File, before os.FileInfo, h FileHasher, sum string) bool {
	now, err := f.Stat()
	if err != nil {
		return false
	}
	if now.Size() != before.Size() || !now.ModTime().Equal(before.ModTime()) {
		return false
	}
	// Where the change time is not read, both are 0: size and mtime decide.
	bt, _ := fileutil.ChangeTime(before)
	if nt, _ := fileutil.ChangeTime(now); bt == nt {
		return true
	}
	got, err := h.SumFile(f)
	return err == nil && got == sum
}

// recheckScript hashes an interpreter's script again once the server has
// initialized, by which time the interpreter has read it. The script is
// checked before the spawn and then read by the interpreter by path, so a
// file swapped in between would run; this finds a swap that is still in
// place after initialize and ends the server. It cannot undo what the
// swapped script did while it started, and a swap put back before this
// check is not seen (docs/upstreams.md).
func recheckScript(l Launch) error {
	if l.Script == "" {
		return nil
	}
	sum, err := hashPath(l.Script)
	if err != nil {
		return fmt.Errorf("supply_chain_unverified: the script %s could not be read again after the server started (%v); the server was stopped", l.Script, err)
	}
	if sum != l.ScriptSHA256 {
		return fmt.Errorf("supply_chain_unverified: the script %s changed while the server started (sha256 %s, checked %s); the server was stopped", l.Script, sum, l.ScriptSHA256)
	}
	return nil
}
