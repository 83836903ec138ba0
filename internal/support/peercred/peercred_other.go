//go:build !linux && !darwin

package peercred

import (
	"errors"
	"net"
)

// Of is unavailable outside Linux and macOS, so every connection
// would be refused; ListenUnix refuses first (and clawd serve before it,
// config.CheckTransport), naming tcp_loopback.
func Of(*net.UnixConn) (uid, pid int, err error) {
	return -1, 0, errors.New("peer credentials are not supported on this OS")
}
