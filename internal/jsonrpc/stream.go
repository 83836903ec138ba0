package jsonrpc

import (
	"bufio"
	"context"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawde/clawd/internal/support/lines"
)

// Stream is a Connection over newline-delimited JSON (stdio, the unix
// socket, and the MCP stdio transport of an upstream server): one message
// per line each way. It owns the framing: lines are read through a 64 KiB
// buffer, a trailing CR is dropped, blank lines are skipped, and a line
// longer than the limit is consumed without being kept and reported as a
// -32600 *ParseError. Writes go through a 64 KiB buffer flushed after every
// message, one line each.
//
// Close does not close r or w, which belong to the caller (stdin and stdout,
// or a socket the transport closes): it interrupts a blocked Read when r has
// SetReadDeadline (a socket, a pollable stdin) and makes later Reads return
// ErrClosed. Writes still go through after Close, so answers of calls that
// finish while a session winds down reach the peer; with LimitWriteStall,
// though, a write then waits at most closeWriteGrace for the peer to read,
// so a session cancelled under a peer that stopped reading ends in that
// time, not the full limit.
type Stream struct {
	r   io.Reader
	br  *bufio.Reader
	max int
	buf []byte
	// next is an error met while reading the message just returned (EOF
	// after a last line without a newline): the next Read returns it.
	next   error
	closed atomic.Bool

	wmu   sync.Mutex
	w     io.Writer
	bw    *bufio.Writer
	werr  error
	guard atomic.Pointer[stallGuard] // nil unless LimitWriteStall; read by Close, which must not wait for wmu
}

// NewStream returns a Stream reading r and writing w; a message longer than
// max bytes (not counting its line end) is refused.
func NewStream(r io.Reader, w io.Writer, max int) *Stream {
	return &Stream{r: r, br: bufio.NewReaderSize(r, 64<<10), max: max, w: w, bw: bufio.NewWriterSize(w, 64<<10)}
}

// LimitWriteStall makes a write that waits longer than d for the peer to
// read (for it to take the next 64 KiB of a message) fail, and every write
// after it (the session then ends; Stalled reports why). It needs a writer
// that takes a write deadline (a socket, a pipe in the network poller) and
// reports false otherwise. Call it before the first Write.
func (s *Stream) LimitWriteStall(d time.Duration) bool {
	dl, ok := s.w.(writeDeadliner)
	if !ok || d <= 0 || dl.SetWriteDeadline(time.Time{}) != nil {
		return false // an *os.File outside the poller says so here
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	g := newStallGuard(dl, d)
	s.guard.Store(g)
	s.bw = bufio.NewWriterSize(stallWriter{w: s.w, g: g}, 64<<10) // empty: every Write flushes
	return true
}

// Stalled reports whether a write failed because the peer stopped reading
// for longer than LimitWriteStall allowed.
func (s *Stream) Stalled() bool {
	g := s.guard.Load()
	return g != nil && g.tripped.Load()
}

// Read returns the next message; see Connection.Read. ctx is not watched
// (a read is interrupted by Close); it is there for the interface.
func (s *Stream) Read(_ context.Context) (Message, error) {
	for {
		if s.next != nil {
			return Message{}, s.next
		}
		if s.closed.Load() {
			return Message{}, ErrClosed
		}
		line, tooLong, err := lines.Read(s.br, s.max, s.buf[:0])
		s.buf = line
		if err != nil {
			if s.closed.Load() {
				err = ErrClosed
			}
			s.next = err
		}
		if tooLong {
			return Message{}, &ParseError{TooLarge: true, Err: NewError(CodeInvalidRequest,
				"invalid request: message exceeds the "+strconv.Itoa(s.max)+"-byte limit (max_message_bytes)")}
		}
		if isBlank(line) {
			continue
		}
		m, perr := ParseAny(line)
		if perr != nil {
			return m, perr
		}
		return m, nil
	}
}

// Buffered implements ReadAhead.
func (s *Stream) Buffered() bool { return s.br.Buffered() > 0 }

// Write writes msg and a newline and flushes.
func (s *Stream) Write(_ context.Context, msg []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.werr != nil {
		return s.werr
	}
	if _, err := s.bw.Write(msg); err != nil {
		s.werr = err
	} else if err := s.bw.WriteByte('\n'); err != nil {
		s.werr = err
	} else if err := s.bw.Flush(); err != nil {
		s.werr = err
	}
	return s.werr
}

// Close implements Connection.Close (see Stream).
func (s *Stream) Close() error {
	if s.closed.CompareAndSwap(false, true) {
		if d, ok := s.r.(interface{ SetReadDeadline(time.Time) error }); ok {
			d.SetReadDeadline(time.Now())
		}
		if g := s.guard.Load(); g != nil { // a Write may hold wmu, blocked
			g.shorten(closeWriteGrace)
		}
	}
	return nil
}

// closeWriteGrace is how long, after Close, a write may wait for the peer
// to read (LimitWriteStall): long enough for a peer that reads to take the
// answers of a session winding down, short enough that one that stopped
// reading does not hold the shutdown. A variable so tests can shorten it.
var closeWriteGrace = 5 * time.Second

// SessionID implements Connection: a stream has no session id.
func (s *Stream) SessionID() string { return "" }

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}
