// Package peercred asks the kernel who is at the other end of a unix
// socket. The daemon uses it to refuse peers of another user; clawd's
// clients (connect, tools, call, health) use it the other way round, to
// refuse a socket that another user is listening on before sending it
// anything: a socket path in a directory others can write to (socket_path
// or --socket under /tmp, say) may be theirs while the daemon is stopped.
package peercred

import (
	"context"
	"fmt"
	"net"
	"os"
)

// euid is the uid a peer must have; tests change it to play another user.
var euid = os.Geteuid

// Dial connects to the unix socket at path and returns the connection only
// if the process listening on it runs as this process's effective uid,
// before a byte is written. Equality is strict, as on the daemon's side:
// a socket of root's is refused by a user's client too.
func Dial(ctx context.Context, path string) (*net.UnixConn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("%s: not a unix socket connection", path)
	}
	if err := CheckOwn(uc, path); err != nil {
		uc.Close()
		return nil, err
	}
	return uc, nil
}

// CheckOwn returns an error unless the peer of c (a connection to path)
// runs as this process's effective uid.
func CheckOwn(c *net.UnixConn, path string) error {
	uid, pid, err := Of(c)
	if err != nil {
		return fmt.Errorf("%s: cannot tell who listens on it (%v); not sending anything", path, err)
	}
	if want := euid(); uid != want {
		return &OtherUserError{Path: path, UID: uid, PID: pid, Want: want}
	}
	return nil
}

// OtherUserError reports a socket whose listener runs as another user.
type OtherUserError struct {
	Path     string
	UID, PID int
	Want     int
}

func (e *OtherUserError) Error() string {
	return fmt.Sprintf("%s is served by uid %d (pid %d), not by this user (uid %d); not sending anything there: stop that process or remove the socket, or choose a socket path in a directory only you can write to", e.Path, e.UID, e.PID, e.Want)
}
