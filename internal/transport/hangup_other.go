//go:build !unix

package transport

// peerGone is not known on Windows: an anonymous pipe cannot be polled, and
// there is no socket transport. A session there runs its calls on after its
// input ends, to their timeout.
func peerGone(fd uintptr) bool { return false }
