//go:build !linux && !darwin

package transport

import (
	"errors"
	"net"
)

// peerCred is unavailable outside Linux and macOS, so every connection
// would be refused; ListenUnix refuses first (and clawd serve before it,
// config.CheckTransport), naming tcp_loopback.
func peerCred(*net.UnixConn) (uid, pid int, err error) {
	return -1, 0, errors.New("peer credentials are not supported on this OS")
}
