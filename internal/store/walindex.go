package store

import "bytes"

// The WAL index header. SQLite keeps a database in WAL mode with an index
// of the WAL beside it (the -shm file, "WAL-index format" in SQLite's file
// format documentation), whose first 96 bytes are two copies of a 48-byte
// header. Every commit by any connection of any process rewrites the
// header, raising its change counter (iChange) and its checksum, copy 2
// first and copy 1 after, which is how SQLite's own readers tell a stable
// header from one being written. So a header that reads exactly as it did
// before a generation read, both copies equal, means nothing was committed
// since, and that generation still holds: a daemon idle for longer than
// FreshFor decides its next call without a SQLite read transaction on the
// call's path (docs/benchmarks.md, "The generation read").

// walHeader is the first 96 bytes of the WAL index: both header copies.
type walHeader [96]byte

// stable reports whether h is an initialized header not being written:
// both copies equal, the isInit byte set.
func (h *walHeader) stable() bool {
	return bytes.Equal(h[:48], h[48:]) && h[12] != 0
}
