//go:build linux

package e2e

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// nobodyUID is the user a test plays the other local user as.
const nobodyUID = 65534

// listenAsOtherUser binds a unix socket at path while this process's
// effective uid is another user's, so the kernel records that user as the
// listener (what SO_PEERCRED tells a client), and records every byte any
// connection sends it. Only root can switch uids: the test is skipped
// otherwise.
func listenAsOtherUser(t *testing.T, path string) (received func() []byte) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root, to listen as another user")
	}
	if err := syscall.Setresuid(-1, nobodyUID, -1); err != nil {
		t.Skipf("setresuid: %v", err)
	}
	ln, err := net.Listen("unix", path)
	if err := syscall.Setresuid(-1, 0, -1); err != nil {
		t.Fatalf("setresuid back to root: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	var got bytes.Buffer
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					mu.Lock()
					got.Write(buf[:n])
					mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return func() []byte {
		mu.Lock()
		defer mu.Unlock()
		return bytes.Clone(got.Bytes())
	}
}

// Another local user who listens first on a socket path in a directory
// everyone may write to (socket_path or --socket under /tmp) gets nothing
// from clawd's clients: connect does not present the per-client
// credential to it, and neither connect nor call sends it the host's
// messages.
func TestClientsRefuseAnotherUsersSocket(t *testing.T) {
	e := newEnv(t)
	shared, err := os.MkdirTemp("", "shared")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	if err := os.Chmod(shared, 0o1777); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(shared, "clawd.sock")
	received := listenAsOtherUser(t, sock)

	if _, stderr, code := e.Run("token", "issue", "--client", "cc"); code != 0 {
		t.Fatalf("token issue: %d %s", code, stderr)
	}
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"
	_, stderr, code := e.RunStdin(ping, "connect", "--client", "cc", "--socket", sock)
	if code != 1 || !strings.Contains(stderr, "uid 65534") {
		t.Errorf("connect --client cc to another user's socket: exit %d, %q; want exit 1 naming uid 65534", code, stderr)
	}
	_, stderr, code = e.RunStdin(ping, "connect", "--socket", sock)
	if code != 1 || !strings.Contains(stderr, "uid 65534") {
		t.Errorf("connect to another user's socket: exit %d, %q; want exit 1 naming uid 65534", code, stderr)
	}
	_, stderr, code = e.Run("call", "read_file", "--params", `{"path":"secret-name"}`, "--socket", sock)
	if code != 1 || !strings.Contains(stderr, "uid 65534") {
		t.Errorf("call on another user's socket: exit %d, %q; want exit 1 naming uid 65534", code, stderr)
	}
	time.Sleep(100 * time.Millisecond)
	if got := received(); len(got) != 0 {
		t.Errorf("another user's socket received %q", got)
	}
}
