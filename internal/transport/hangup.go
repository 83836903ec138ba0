package transport

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/mcp"
)

// A stream session whose input ends keeps running its calls so that they
// still answer: a client may half-close (clawd connect does at its stdin's
// end) and wait for what it asked. A client that is gone altogether (its
// socket closed, or a stdio host that died and took clawd's stdout with
// it) reads no answer, and its calls, a bash command among them, would run
// on to their timeout. So once the input has ended, the session looks
// every hangupEvery at the output's descriptor and, when nobody is left at
// the other end, cancels the session: running calls are cancelled (their
// process groups killed, their rows cancelled).
var hangupEvery = 200 * time.Millisecond

// eofWatch is a session's input that closes eof at its first io.EOF. It
// keeps the input's read deadline, which jsonrpc.Stream uses to interrupt
// a blocked read.
type eofWatch struct {
	r    io.Reader
	once sync.Once
	eof  chan struct{}
}

func newEOFWatch(r io.Reader) *eofWatch { return &eofWatch{r: r, eof: make(chan struct{})} }

func (w *eofWatch) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if err == io.EOF {
		w.once.Do(func() { close(w.eof) })
	}
	return n, err
}

func (w *eofWatch) SetReadDeadline(t time.Time) error {
	if d, ok := w.r.(interface{ SetReadDeadline(time.Time) error }); ok {
		return d.SetReadDeadline(t)
	}
	return errNoDeadline
}

var errNoDeadline = syscall.ENOTSUP

// streamEnd is how a stream session (stdio, a unix socket connection)
// ended.
type streamEnd struct {
	err     error // what Serve returned
	stalled bool  // the client left an answer unread for the write stall
	gone    bool  // the input ended and nobody was left to read answers
}

// serveStream serves s over in and out as a stream session: answers that
// wait for the client longer than stall end it, and once in has ended, a
// client that is gone altogether (nobody left at out's other end) cancels
// the session's running calls (cancelOnHangup).
func serveStream(ctx context.Context, s *mcp.Session, in io.Reader, out io.Writer, limit int, stall time.Duration) streamEnd {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	input := newEOFWatch(in)
	var gone atomic.Bool
	go cancelOnHangup(ctx, cancel, input.eof, out, &gone)
	st := jsonrpc.NewStream(input, out, limit)
	st.LimitWriteStall(stall)
	err := s.Serve(ctx, st)
	return streamEnd{err: err, stalled: st.Stalled(), gone: gone.Load()}
}

// cancelOnHangup calls cancel, and sets gone, once the input has ended
// (eof) and nobody is left at out's other end (WatchHangup). It returns
// when ctx ends.
func cancelOnHangup(ctx context.Context, cancel context.CancelFunc, eof <-chan struct{}, out any, gone *atomic.Bool) {
	select {
	case <-ctx.Done():
		return
	case <-eof:
	}
	WatchHangup(ctx, out, func() {
		gone.Store(true)
		cancel()
	})
}

// WatchHangup calls hungUp once nobody is left at the other end of out (a
// socket its peer closed, a pipe without a reader; see peerGone), looking
// every hangupEvery until ctx ends. It returns at once for an out that is
// not a descriptor (a test's buffer), which is never checked.
func WatchHangup(ctx context.Context, out any, hungUp func()) {
	sc, ok := out.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	t := time.NewTicker(hangupEvery)
	defer t.Stop()
	for {
		gone := false
		if rc.Control(func(fd uintptr) { gone = peerGone(fd) }) != nil {
			return
		}
		if gone {
			hungUp()
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
