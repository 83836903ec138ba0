//go:build unix

package transport

import "golang.org/x/sys/unix"

// peerGone reports whether nobody is left at the other end of fd: a socket
// whose peer closed both directions (POLLHUP; a half-close, shutdown of its
// writing side, is not one), or a pipe whose every reader has closed
// (POLLERR). A terminal or a regular file never is.
func peerGone(fd uintptr) bool {
	p := []unix.PollFd{{Fd: int32(fd)}}
	n, err := unix.Poll(p, 0)
	return err == nil && n > 0 && p[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0
}
