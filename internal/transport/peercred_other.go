//go:build !linux && !darwin

package transport

import (
	"errors"
	"net"
)

// peerCred is unavailable here, so every connection is refused.
func peerCred(*net.UnixConn) (uid, pid int, err error) {
	return -1, 0, errors.New("peer credentials are not supported on this OS")
}
