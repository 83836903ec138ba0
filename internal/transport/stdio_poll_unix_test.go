//go:build unix

package transport

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const stdoutHelperEnv = "CLAWD_STDOUT_TEST_HELPER"

// A re-executed test binary with stdoutHelperEnv set reports, on stderr,
// what pollableStdout made of its stdout, and exits.
func init() {
	if os.Getenv(stdoutHelperEnv) == "" {
		return
	}
	out, restore := pollableStdout()
	deadline := out.SetWriteDeadline(time.Time{}) == nil
	restore()
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, 1, syscall.F_GETFL, 0)
	fmt.Fprintf(os.Stderr, "deadline=%v nonblock-after-restore=%v errno=%d\n",
		deadline, flags&syscall.O_NONBLOCK != 0, errno)
	os.Exit(0)
}

// TestPollableStdout: stdout takes a write deadline (so a client that stops
// reading can be given up on) when it is a pipe of its own, not when
// stderr shares it (2>&1: stderr's blocking writes would fail whenever the
// pipe is full) and not when it is a regular file; restore leaves it in
// blocking mode for whoever shares it after clawd.
func TestPollableStdout(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, setup func(cmd *exec.Cmd) func() string) string {
		cmd := exec.Command(self, "-test.run=^$")
		cmd.Env = append(os.Environ(), stdoutHelperEnv+"=1")
		read := setup(cmd)
		if err := cmd.Run(); err != nil {
			t.Fatalf("helper: %v", err)
		}
		return read()
	}
	t.Run("own pipe", func(t *testing.T) {
		var stderr strings.Builder
		got := run(t, func(cmd *exec.Cmd) func() string {
			cmd.Stdout = &strings.Builder{} // exec gives it a pipe of its own
			cmd.Stderr = &stderr
			return stderr.String
		})
		if !strings.Contains(got, "deadline=true nonblock-after-restore=false") {
			t.Fatalf("stdout a pipe of its own: %s", got)
		}
	})
	t.Run("shared with stderr", func(t *testing.T) {
		var both strings.Builder
		got := run(t, func(cmd *exec.Cmd) func() string {
			cmd.Stdout, cmd.Stderr = &both, &both // one pipe for both
			return both.String
		})
		if !strings.Contains(got, "deadline=false nonblock-after-restore=false") {
			t.Fatalf("stdout shared with stderr: %s", got)
		}
	})
	// One socket for stdin, stdout and stderr (a host that hands clawd a
	// socket): stderr shares stdout, but stdin's switch makes the socket
	// non-blocking anyway, so stdout takes the deadline there.
	t.Run("one socket for all three", func(t *testing.T) {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		mine, theirs := os.NewFile(uintptr(fds[0]), "mine"), os.NewFile(uintptr(fds[1]), "theirs")
		defer mine.Close()
		got := run(t, func(cmd *exec.Cmd) func() string {
			cmd.Stdin, cmd.Stdout, cmd.Stderr = theirs, theirs, theirs
			return func() string {
				theirs.Close()
				b, _ := io.ReadAll(mine)
				return string(b)
			}
		})
		if !strings.Contains(got, "deadline=true nonblock-after-restore=false") {
			t.Fatalf("one socket for stdin, stdout and stderr: %s", got)
		}
	})
	t.Run("regular file", func(t *testing.T) {
		f, err := os.Create(filepath.Join(t.TempDir(), "out"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var stderr strings.Builder
		got := run(t, func(cmd *exec.Cmd) func() string {
			cmd.Stdout, cmd.Stderr = f, &stderr
			return stderr.String
		})
		if !strings.Contains(got, "deadline=false") {
			t.Fatalf("stdout a regular file: %s", got)
		}
	})
}
