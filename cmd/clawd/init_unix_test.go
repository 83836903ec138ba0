//go:build unix

package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestInitForceKeepsWhatIsNotAFile: `clawd init --force --config PATH`
// replaces a config file, never a FIFO, a device or a directory found at
// PATH (or where its symlink leads): `--config /dev/null --force` run as
// root must not turn /dev/null into a regular file.
func TestInitForceKeepsWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	link := filepath.Join(dir, "link.toml")
	os.Symlink(fifo, link)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o700)
	for _, p := range []string{fifo, link, sub} {
		root := newRootCmd()
		root.SetArgs([]string{"init", "--force", "--config", p})
		root.SetOut(io.Discard)
		if code := reportError(io.Discard, root.Execute()); code != 1 {
			t.Errorf("init --force --config %s: exit %d, want 1", p, code)
		}
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v %v", st.Mode(), err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
}
