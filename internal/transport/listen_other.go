//go:build !linux && !darwin

package transport

import (
	"fmt"
	"net"
	"runtime"
)

// UnixListener is not available on this OS.
type UnixListener struct{ net.Listener }

// Path is empty here.
func (l *UnixListener) Path() string { return "" }

// ListenUnix refuses: the unix socket transport authenticates peers by their
// kernel-reported uid, which clawd reads only on Linux and macOS.
func ListenUnix(path string) (*UnixListener, error) {
	return nil, fmt.Errorf("the unix_socket transport needs Linux or macOS (peer credentials); on %s use --transport tcp_loopback", runtime.GOOS)
}
