package config

import "fmt"

// Transports per OS (docs/platforms.md): stdio is the default everywhere
// (Default sets it whatever the OS); the unix socket needs the kernel's
// peer credentials, which clawd reads on Linux (SO_PEERCRED) and macOS
// (LOCAL_PEERCRED); loopback TCP with a bearer token works everywhere and
// is the daemon transport on Windows.

// unixSocketOS lists the systems whose peer credentials clawd reads.
var unixSocketOS = map[string]bool{"linux": true, "darwin": true}

// CheckTransport reports whether transport tr can be served on goos (a
// runtime.GOOS value), with an error that names the one to use instead. It
// is checked when clawd serve starts, so a config that asks for unix_socket
// on Windows fails at once with that message rather than inside the
// listener.
func CheckTransport(tr, goos string) error {
	switch tr {
	case TransportStdio, TransportTCPLoopback:
		return nil
	case TransportUnixSocket:
		if unixSocketOS[goos] {
			return nil
		}
		return fmt.Errorf("transport %q is not available on %s: it authenticates clients by the kernel's peer credentials, which clawd reads only on Linux and macOS; use --transport %s (or transport = %q in the config) for a daemon, or %s", tr, goos, TransportTCPLoopback, TransportTCPLoopback, TransportStdio)
	}
	return fmt.Errorf("transport %q: must be one of stdio, unix_socket, tcp_loopback", tr)
}
