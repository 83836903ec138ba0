package upstream

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/support/lines"
	"github.com/clawde/clawd/internal/support/rawio"
)

// Reading a child's stdout. Whoever holds the connection's read turn
// reads: a direct call waiting for its answer takes the turn when it is
// free and reads until its answer comes, routing whatever else it reads on
// the way (other calls' answers, progress, the SDK's messages) as any
// reader does. The goroutine the kernel's answer wakes is then the call's
// own; when a reader goroutine read every answer and handed it to the
// waiting call, the Go scheduler woke a second thread on every proxied
// call, between the answer and clawd's reply (docs/benchmarks.md, "The
// call reads its own answer").
//
// The idle reader (readLoop) takes the turn when no direct call has started
// for idleAfter, or the SDK waits for an answer: it reads notifications,
// the server's requests, the SDK's answers and the end of the stream. A
// call that finds it reading cuts its read short (a read deadline in the
// past): the idle reader gives the turn up and waits until the connection
// is idle again. A read cut short loses nothing: what it had of a line
// stays in the connection's lines.Pending for the next reader.
//
// Reading by turn needs a stdout whose reads can be cut (an *os.File
// pipe the runtime polls, as proc gives on Unix); with any other (Windows'
// anonymous pipes), the idle reader reads everything and calls wait for it
// to hand them their answers.

// idleAfter is how long after the latest direct call started the idle
// reader takes the turn again. Calls closer together than this read their
// own answers without waking it; while it waits, a notification or a
// request of the server's waits at most this long to be read.
const idleAfter = 5 * time.Millisecond

// sdkEager is how long after the SDK writes a request the idle reader
// reads without waiting for the connection to be idle, so the SDK's
// answer is read as soon as it comes.
const sdkEager = time.Second

// errReadCut: a read of stdout was cut short by a deadline that was not
// watchExit's (another goroutine wanted the turn, or the reading call was
// cancelled). Nothing was lost; the read may be taken up again.
var errReadCut = errors.New("the read was cut short")

// stdoutReader is a connection's reading state; only the holder of its
// turn touches br and pending.
type stdoutReader struct {
	turn    chan struct{} // holds the token while nobody reads
	br      *bufio.Reader
	pending lines.Pending
	file    *os.File // stdout when its reads can be cut; else nil

	idleReading atomic.Bool  // the idle reader holds the turn
	awaiting    atomic.Int32 // direct calls in await: they read, the idle reader waits
	lastCall    atomic.Int64 // monotonic ns (since start) when the latest direct call started
	lastSDK     atomic.Int64 // the same for the SDK's latest request
	sdkWrote    chan struct{}
	start       time.Time

	deadlineMu sync.Mutex
	cutForGood bool // deadlineMu: watchExit cut stdout: every read ends

	doneOnce sync.Once
}

func newStdoutReader(stdout io.Reader) *stdoutReader {
	r := &stdoutReader{turn: make(chan struct{}, 1), sdkWrote: make(chan struct{}, 1), start: time.Now()}
	if f, ok := stdout.(*os.File); ok && f.SetReadDeadline(time.Time{}) == nil {
		r.file = f            // a pipe the runtime polls (not Windows' anonymous pipes)
		stdout = rawio.New(f) // reads that do not wake the runtime's monitor thread
	}
	r.br = bufio.NewReaderSize(stdout, 64<<10)
	r.turn <- struct{}{}
	return r
}

func (r *stdoutReader) now() int64 { return int64(time.Since(r.start)) }

// cut makes the read under way (and any later one) fail with errReadCut,
// unless stdout was cut for good.
func (r *stdoutReader) cut() {
	r.deadlineMu.Lock()
	defer r.deadlineMu.Unlock()
	if !r.cutForGood {
		r.file.SetReadDeadline(time.Unix(1, 0))
	}
}

// uncut takes a cut back, so the next read waits again.
func (r *stdoutReader) uncut() {
	r.deadlineMu.Lock()
	defer r.deadlineMu.Unlock()
	if !r.cutForGood {
		r.file.SetReadDeadline(time.Time{})
	}
}

// cutForEver ends every read of stdout, now and later (watchExit: the
// child exited and something else holds its stdout open).
func (r *stdoutReader) cutForEver() {
	r.deadlineMu.Lock()
	defer r.deadlineMu.Unlock()
	r.cutForGood = true
	if r.file != nil {
		r.file.SetReadDeadline(time.Now())
	}
}

func (r *stdoutReader) forGood() bool {
	r.deadlineMu.Lock()
	defer r.deadlineMu.Unlock()
	return r.cutForGood
}

// readOne reads one line of stdout and handles it; the caller holds the
// turn. It returns nil, errReadCut, or the error that ended the input
// (readDone is closed then). abort, when it closes, stops a wait for the
// SDK to take a message (handleLine).
func (c *stdioConn) readOne(abort <-chan struct{}) error {
	r := c.out
	line, tooLong, ends, err := r.pending.Next(r.br, maxLine, 256)
	if err != nil && err != io.EOF {
		if errors.Is(err, os.ErrDeadlineExceeded) && !r.forGood() {
			return errReadCut
		}
		line, tooLong, ends = r.pending.Flush(maxLine, 256)
	}
	if tooLong {
		c.noise("a stdout line over 16 MiB was discarded")
		c.discarded(ends)
	} else if len(line) > 0 {
		c.handleLine(line, abort)
	}
	if err == nil {
		return nil
	}
	if errors.Is(err, os.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded) {
		err = io.EOF
	}
	r.doneOnce.Do(func() {
		c.readErr = err
		close(c.readDone)
	})
	return err
}

// readLoop is the idle reader. A line that is not a JSON object or array
// (a banner, a log line a server printed to the wrong stream) is logged and
// skipped, as is a line too long or not JSON-RPC: a server's noise must
// not end its session. Only EOF or a read error does.
func (c *stdioConn) readLoop() {
	r := c.out
	var timer *time.Timer
	closing := false // once the connection closes, read on to the end of the stream
	for {
		if wait := c.untilIdle(); wait > 0 && !closing {
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			select {
			case <-timer.C:
			case <-r.sdkWrote:
			case <-c.closed:
				closing = true
			case <-c.readDone:
				return
			}
			continue
		}
		select {
		case <-r.turn:
		case <-c.readDone:
			return
		}
		r.idleReading.Store(true)
		err := c.readOne(nil)
		r.idleReading.Store(false)
		if err == errReadCut {
			r.uncut()
		}
		r.turn <- struct{}{}
		if err != nil && err != errReadCut {
			return
		}
	}
}

// untilIdle is how long the idle reader waits before it takes the turn.
func (c *stdioConn) untilIdle() time.Duration {
	r := c.out
	if r.file == nil {
		return 0 // calls never read: the idle reader reads everything
	}
	if r.awaiting.Load() > 0 {
		// The calls waiting read. Not calls.count: a call still writing
		// its request reads nothing, and a child that writes before it
		// reads its stdin would fill both pipes.
		return idleAfter
	}
	now := r.now()
	if last := r.lastSDK.Load(); last != 0 && now-last < int64(sdkEager) {
		return 0
	}
	last := r.lastCall.Load()
	if last == 0 {
		return 0
	}
	return max(0, time.Duration(last+int64(idleAfter)-now))
}

// sdkRequest notes that the SDK wrote a request: the idle reader reads at
// once, and eagerly for sdkEager.
func (c *stdioConn) sdkRequest() {
	c.out.lastSDK.Store(c.out.now())
	select {
	case c.out.sdkWrote <- struct{}{}:
	default:
	}
}

// callStarted notes a direct call's start and, when the idle reader is
// reading, cuts its read so that the call can take the turn.
func (c *stdioConn) callStarted() {
	r := c.out
	if r.file == nil {
		return
	}
	r.lastCall.Store(max(1, r.now()))
	if r.idleReading.Load() {
		r.cut()
	}
}

// await waits for a direct call's answer, reading it itself when the turn
// is free, until ctx or the connection ends. On ctx's end the child is
// sent notifications/cancelled for the request.
func (c *stdioConn) await(ctx context.Context, id string, call *directCall) (jsontext.Value, error) {
	c.out.awaiting.Add(1)
	defer c.out.awaiting.Add(-1)
	turn := c.out.turn
	if c.out.file == nil {
		turn = nil // never ready: the idle reader reads everything
	}
	ended := false // ctx ended (else the connection did)
	select {
	case <-call.done:
		return call.answer()
	case <-turn:
		err := c.readFor(ctx, call)
		c.out.turn <- struct{}{}
		if err == nil {
			return call.answer()
		}
		ended = err == errReadCut
	case <-ctx.Done():
		ended = true
	case <-c.readDone:
	case <-c.closed:
	}
	c.calls.forget(id)
	select {
	case <-call.done: // answered just before the end
		return call.answer()
	default:
	}
	if ended {
		go c.cancelled(id, context.Cause(ctx))
		return nil, ctx.Err()
	}
	return nil, errConnectionGone
}

// readFor reads with the turn held until call is answered (nil), ctx ends
// (errReadCut) or the input does (its error).
func (c *stdioConn) readFor(ctx context.Context, call *directCall) error {
	r := c.out
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, r.cut)
		defer stop()
	}
	for {
		select {
		case <-call.done:
			return nil
		default:
		}
		if ctx.Err() != nil {
			return errReadCut
		}
		err := c.readOne(ctx.Done())
		if err == errReadCut {
			// Cut by ctx's end, by a cut meant for the idle reader that
			// came late, or by ctx's cut of an earlier call: take it back
			// and look again.
			r.uncut()
			continue
		}
		if err != nil {
			return err
		}
	}
}
