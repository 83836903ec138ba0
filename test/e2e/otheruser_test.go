//go:build linux

package e2e

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
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
	ln := listenAs(t, nobodyUID, "unix", path)
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

// listenAs listens on network/addr while this process's effective uid is
// uid, so the kernel records that user as the socket's owner (what
// SO_PEERCRED and /proc/net/tcp tell). Only root can switch uids: the test
// is skipped otherwise.
func listenAs(t *testing.T, uid int, network, addr string) net.Listener {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root, to listen as another user")
	}
	if err := syscall.Seteuid(uid); err != nil {
		t.Skipf("seteuid: %v", err)
	}
	ln, err := net.Listen(network, addr)
	if err := syscall.Seteuid(0); err != nil {
		t.Fatalf("seteuid back to root: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
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

// fakeDaemon serves HTTP on ln as another user's impostor of clawd: its
// /health claims pid, and it records the Authorization header of every
// other request.
func fakeDaemon(ln net.Listener, pid int) (auth func() []string) {
	var mu sync.Mutex
	var got []string
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"status":"ok","pid":%d,"uptime_s":1,"mcp_version":"2026-07-28","active_tools":6}`, pid)
			return
		}
		mu.Lock()
		got = append(got, r.Header.Get("Authorization"))
		mu.Unlock()
		w.WriteHeader(http.StatusForbidden)
	}))
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

// Another local user who takes the port of a daemon that died without
// cleaning up, and whose /health names the pid in the state file (which a
// process of ours may have been given since), is sent no token by the CLI
// and handed no credential by the headers helper; nor is one who answers
// on a port the user names with --port.
func TestClientsRefuseAnotherUsersPort(t *testing.T) {
	e := newEnv(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root, to listen as another user")
	}
	if _, stderr, code := e.Run("token", "issue", "--client", "cc"); code != 0 {
		t.Fatalf("token issue: %d %s", code, stderr)
	}
	d, st := e.Daemon("tcp_loopback", "--port", "0")
	d.Kill() // the state and token files stay
	auth := fakeDaemon(listenAs(t, nobodyUID, "tcp", st.Addr), os.Getpid())
	// The dead daemon's pid now belongs to a process of ours: this test.
	b, err := os.ReadFile(e.StateFile("tcp"))
	if err != nil {
		t.Fatal(err)
	}
	stale := strings.Replace(string(b), fmt.Sprintf(`"pid":%d`, st.PID), fmt.Sprintf(`"pid":%d`, os.Getpid()), 1)
	if err := os.WriteFile(e.StateFile("tcp"), []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}

	if _, stderr, code := e.Run("tools"); code != 1 {
		t.Errorf("tools with another user on the state file's port: exit %d, %q", code, stderr)
	}
	_, port, _ := net.SplitHostPort(st.Addr)
	cfg := filepath.Join(e.Home, "port.toml")
	os.WriteFile(cfg, []byte("port = "+port+"\n"), 0o600)
	if out, stderr, code := e.Run("token", "header", "--client", "cc", "--config", cfg); code != 1 || strings.Contains(out, "cdc1_") {
		t.Errorf("token header with another user on the entry's port: exit %d, out %q, err %q", code, out, stderr)
	}

	os.Remove(e.StateFile("tcp"))
	if _, stderr, code := e.Run("tools", "--port", port); code != 1 {
		t.Errorf("tools --port with another user on it: exit %d, %q", code, stderr)
	}
	if got := auth(); len(got) != 0 {
		t.Errorf("another user's listener received Authorization headers %q", got)
	}
}
