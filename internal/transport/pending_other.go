//go:build !linux && !darwin

package transport

import "net"

// inputPending cannot look into the socket here; the socket server does
// not run on these systems (no peer credentials).
func inputPending(c net.Conn) bool { return false }
