package mcp

import (
	"context"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawde/clawd/internal/jsonrpc"
)

// inlineGrace is how long a tools/call may run on the reader goroutine
// before another goroutine takes over reading. A cancellation, or a request
// sent while such a call runs, waits at most about twice this long to be read.
const inlineGrace = time.Millisecond

// watchIdleTicks is how many inlineGrace ticks without an inline call the
// watcher keeps looking at a stream; with no stream left it stops (it
// starts again with the next inline call), so an idle server does not wake
// every millisecond.
const watchIdleTicks = 100

// stream is the read loop of one Serve and the state it hands from
// goroutine to goroutine.
//
// A tools/call normally runs on a worker goroutine so the reader stays free
// for cancellations and more requests. But when the session is otherwise
// idle (no call running, no more input already read ahead by the
// connection, jsonrpc.ReadAhead: a client that sends one
// request and waits for its answer, as most do), the reader runs the call
// itself: handing it to another goroutine makes the Go scheduler wake a
// second thread, which on a 2-core machine cost more than the audited call
// itself (docs/benchmarks.md, "Authorization chain", has the figures; the audit
// writer commits a lone caller's row on the caller's goroutine for the same
// reason). So that such a call cannot hold up reading, the server's
// watcher (inlineWatch) checks every inlineGrace; when the call has run that
// long, a new goroutine continues the read loop, and the goroutine running
// the call leaves the loop when it is done.
type stream struct {
	s      *Session
	ctx    context.Context
	cancel context.CancelFunc
	conn   jsonrpc.Connection
	ahead  jsonrpc.ReadAhead // nil when conn does not read ahead

	wg     sync.WaitGroup // running calls and batches, inline ones included (enter)
	stopMu sync.Mutex     // orders enter with wait
	// stopped: wait has begun, nothing more enters. It is not ctx.Err():
	// at the input's end the session waits for its calls with ctx live (they
	// still answer), and serve may return on failed before outputFailed's
	// cancel has run.
	stopped bool
	workers callWorkers
	running atomic.Int32  // calls running beside the reader (a batch counts its messages)
	room    chan struct{} // release signals a reader waiting in reserve

	// listening counts this stream's subscriptions/listen from the reader's
	// check to their goroutine's end (maxStreamListeners). The server's
	// listener set (owner) cannot stand in: it holds only registered ones,
	// so refused or still-starting listens, each a goroutine writing an
	// answer, would go uncounted.
	listening atomic.Int32

	inline   atomic.Pointer[inlineCall] // the call the reader runs, if any
	seq      atomic.Uint64              // inline calls started
	watched  atomic.Bool                // the server's watcher looks at this stream
	ended    chan error                 // the loop's result when it ends on a goroutine that took over
	failed   chan struct{}              // closed when an answer written off the reader failed (outputFailed)
	failOnce sync.Once
}

// inlineCall is a call running on the reader goroutine; whoever first sets
// taken decides who reads next: the reader when the call ends (it keeps
// reading) or the watcher (a new goroutine reads).
type inlineCall struct {
	start time.Time
	taken atomic.Bool
}

func newStream(s *Session, ctx context.Context, cancel context.CancelFunc, conn jsonrpc.Connection) *stream {
	st := &stream{s: s, ctx: ctx, cancel: cancel, conn: conn, ended: make(chan error, 1), failed: make(chan struct{}),
		room: make(chan struct{}, 1)}
	st.ahead, _ = conn.(jsonrpc.ReadAhead)
	return st
}

// moreInput reports whether the connection already holds more input than
// it returned.
func (st *stream) moreInput() bool { return st.ahead != nil && st.ahead.Buffered() }

// write sends one message; it reports false when the output has failed.
func (st *stream) write(msg []byte) bool {
	if msg == nil {
		return true
	}
	return st.conn.Write(st.ctx, msg) == nil
}

// deliver writes an answer from a goroutine beside the reader; when the
// output has failed (the peer is gone, or left answers unread too long)
// the session ends.
func (st *stream) deliver(msg []byte) {
	if !st.write(msg) {
		st.outputFailed()
	}
}

// outputFailed ends the session after a write failed off the reader: its
// calls are cancelled and the read is interrupted where the input allows
// (a socket, a pollable stdin); serve returns at once if the loop moved to
// another goroutine.
func (st *stream) outputFailed() {
	st.failOnce.Do(func() { close(st.failed) })
	st.cancel()
}

// serve runs the read loop on a goroutine of its own until the input ends
// or fails, also when the loop moves to another goroutine on the way, and
// returns its error; or ErrOutputClosed as soon as an answer written off
// the reader failed: the goroutine reading may then be blocked on an input
// that cannot be interrupted (a terminal), and the session is over
// regardless.
func (st *stream) serve() error {
	go st.resume()
	select {
	case err := <-st.ended:
		return err
	case <-st.failed:
		return ErrOutputClosed
	}
}

// loop reads and handles messages. handedOver reports that the goroutine
// lost the reader role while running an inline call; another goroutine runs
// the loop now.
func (st *stream) loop() (err error, handedOver bool) {
	for {
		if err := st.ctx.Err(); err != nil {
			return err, false
		}
		msg, rerr := st.conn.Read(st.ctx)
		if rerr == nil {
			if err := st.ctx.Err(); err != nil {
				return err, false // the session ended while the read waited
			}
			ok, over := st.handle(&msg)
			if over {
				return nil, true
			}
			if !ok {
				st.cancel()
				return ErrOutputClosed, false
			}
			continue
		}
		if perr, isParse := rerr.(*jsonrpc.ParseError); isParse {
			if !st.write(jsonrpc.AppendError(nil, perr.ID, perr.Err)) {
				st.cancel()
				return ErrOutputClosed, false
			}
			continue
		}
		if rerr == io.EOF {
			return nil, false // serve's caller waits for the running calls
		}
		if st.ctx.Err() != nil {
			return st.ctx.Err(), false
		}
		st.cancel()
		return rerr, false
	}
}

// resume runs the loop on a goroutine that took over reading.
func (st *stream) resume() {
	if err, over := st.loop(); !over {
		st.ended <- err
	}
}

// handle processes one message; ok is false when the output has failed.
func (st *stream) handle(msg *jsonrpc.Message) (ok, handedOver bool) {
	s := st.s
	if msg.Batch != nil {
		// A batch refused whole is answered at once: it runs nothing, so
		// it need not wait for room (a large one, for every call to end).
		if refused := s.batchRefusal(msg.Batch); refused != nil {
			return st.write(refused), false
		}
		// A batch with nothing in it that runs long (pings, cancels and
		// other notifications) is answered on the reader, as each of its
		// messages alone would be, without waiting for room: a batch of
		// cancels must not wait for the very calls it cancels.
		answers, long := st.batchLoad(msg.Batch)
		if long == 0 {
			return st.write(s.handleBatch(st.ctx, msg.Batch)), false
		}
		// Otherwise every message answered counts, not only its calls:
		// they run at once and the one answer holds all their answers.
		n := int32(answers)
		if !st.reserve(n) {
			return true, false // the session ended while waiting
		}
		if !st.enter() {
			st.release(n)
			return true, false
		}
		go func() {
			defer st.wg.Done()
			defer st.release(n)
			st.deliver(s.handleBatch(st.ctx, msg.Batch))
		}()
		return true, false
	}
	if msg.Method == "subscriptions/listen" && !msg.IsNotification() && !msg.IsResponse {
		if _, claimed := ClaimedVersion(msg); claimed {
			// A subscription runs until cancelled or the input ends; it is
			// not counted as running, so calls may still run inline. One
			// connection may hold only a few of the server's maxListeners,
			// so it cannot take them all from the daemon's other clients.
			if st.listening.Load() >= maxStreamListeners {
				return st.write(jsonrpc.AppendError(nil, msg.ID, jsonrpc.NewError(jsonrpc.CodeInternalError,
					"internal error: too many open subscriptions on this connection ("+strconv.Itoa(maxStreamListeners)+"); cancel one first"))), false
			}
			if !st.enter() {
				return true, false
			}
			st.listening.Add(1)
			cctx, done, _ := s.calls.register(st.ctx, msg.ID.Key())
			go func() {
				defer st.wg.Done()
				defer st.listening.Add(-1)
				defer done()
				st.deliver(s.srv.serveStateless(cctx, s.stateless(), msg))
			}()
			return true, false
		}
	}
	if !st.runsLong(msg) {
		return st.write(s.handleMessage(st.ctx, msg)), false
	}
	// A tools/call, or an extension request, which may take as long
	// (clawd/api waits for an upstream server's timeouts): it runs like a
	// call, beside the reader once it outlasts inlineGrace, and a cancel
	// finds it in the in-flight table.
	inline := st.running.Load() == 0 && !st.moreInput()
	if !inline && !st.reserve(1) {
		return true, false // the session ended while waiting
	}
	if !st.enter() {
		if !inline {
			st.release(1)
		}
		return true, false
	}
	// Register before the call starts, so a cancel read next always finds
	// it.
	cctx, done, cancelled := s.calls.register(st.ctx, msg.ID.Key())
	if inline {
		return st.runInline(cctx, msg, cancelled, done)
	}
	// msg is safe to keep: the loop declares a new one for every read.
	st.workers.run(func() {
		defer st.wg.Done()
		defer st.release(1)
		defer done()
		st.deliver(st.answer(cctx, msg, cancelled))
	})
	return true, false
}

// runsLong reports whether handle runs msg like a call, beside the reader
// once it outlasts inlineGrace: a tools/call or an extension request.
func (st *stream) runsLong(msg *jsonrpc.Message) bool {
	if msg.IsNotification() || msg.IsResponse {
		return false
	}
	return msg.Method == "tools/call" || st.s.srv.Extensions[msg.Method] != nil
}

// batchLoad counts a batch's messages that get an answer (requests, and
// members that did not parse) and those of them that may run long.
func (st *stream) batchLoad(b *jsonrpc.Batch) (answers, long int) {
	for i := range b.Items {
		it := &b.Items[i]
		switch {
		case it.Err != nil:
			answers++
		case it.Msg.IsNotification() || it.Msg.IsResponse:
		default:
			answers++
			if st.runsLong(&it.Msg) {
				long++
			}
		}
	}
	return answers, long
}

// answer is the answer to a request run like a call (handle), or nil when
// it must not be answered.
func (st *stream) answer(ctx context.Context, msg *jsonrpc.Message, cancelled bool) []byte {
	if msg.Method == "tools/call" {
		return st.s.callTool(ctx, msg, cancelled)
	}
	return st.s.extension(ctx, msg, cancelled)
}

// enter counts one more call, batch or subscription that the session's end
// waits for (wg), unless the session already waits (stream.wait): serve may
// return while the reader still reads (an input that cannot be
// interrupted), and a WaitGroup must not gain work while its Wait may be
// returning. It reports false then, and the message is dropped: the
// session is over.
func (st *stream) enter() bool {
	st.stopMu.Lock()
	defer st.stopMu.Unlock()
	if st.stopped {
		return false
	}
	st.wg.Add(1)
	return true
}

// wait lets nothing more enter and waits for what did.
func (st *stream) wait() {
	st.stopMu.Lock()
	st.stopped = true
	st.stopMu.Unlock()
	st.wg.Wait()
}

// reserve counts n more calls as running beside the reader, first
// waiting while that would pass the stream's bound (maxStreamCalls; a
// batch larger than the bound waits until it alone would be running). It
// reports false when the session ended while waiting. The reader reads
// nothing meanwhile: a client that keeps sending calls without reading the
// answers is held to the bound, and one that reads them is slowed to the
// pace its calls are answered at; a cancel sent behind such a call is read
// once room is made. Only the reader reserves; the watcher's hand-over of
// an inline call may add one more.
func (st *stream) reserve(n int32) bool {
	bound := st.s.srv.maxStreamCalls()
	need := min(n, bound)
	for st.running.Load()+need > bound {
		select {
		case <-st.room:
		case <-st.ctx.Done():
			return false
		}
	}
	st.running.Add(n)
	return true
}

// release ends n calls reserved with reserve (or handed over by the
// watcher) and wakes a reader waiting for room.
func (st *stream) release(n int32) {
	st.running.Add(-n)
	select {
	case st.room <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// runInline runs a call on the reader goroutine under the watcher's eye.
func (st *stream) runInline(ctx context.Context, msg *jsonrpc.Message, cancelled bool, done func()) (ok, handedOver bool) {
	defer st.wg.Done()
	ic := &inlineCall{start: time.Now()}
	st.inline.Store(ic)
	st.seq.Add(1)
	st.watch()
	ok = st.write(st.answer(ctx, msg, cancelled))
	done()
	if ic.taken.CompareAndSwap(false, true) {
		st.inline.CompareAndSwap(ic, nil)
		return ok, false
	}
	// The watcher handed the loop to another goroutine meanwhile, and
	// counted this call as running on another goroutine than the reader.
	st.release(1)
	if !ok {
		st.outputFailed()
	}
	return ok, true
}

// watch makes sure the server's watcher looks at this stream.
func (st *stream) watch() {
	if st.watched.CompareAndSwap(false, true) {
		st.s.srv.inline.add(st)
	}
}

func (st *stream) inlineRunning() bool {
	ic := st.inline.Load()
	return ic != nil && !ic.taken.Load()
}

// inlineWatch is a server's watcher of inline calls: one goroutine for all
// sessions, so that many busy sessions do not each wake the process every
// inlineGrace. It runs while some stream has had an inline call within the
// last watchIdleTicks ticks.
type inlineWatch struct {
	mu      sync.Mutex
	streams map[*stream]*watchState
	running bool
}

// watchState is what the watcher remembers of a stream.
type watchState struct {
	seq  uint64 // st.seq at the last tick
	idle int    // ticks since an inline call started or ran
}

func (w *inlineWatch) add(st *stream) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.streams == nil {
		w.streams = make(map[*stream]*watchState)
	}
	w.streams[st] = &watchState{seq: st.seq.Load()}
	if !w.running {
		w.running = true
		go w.run()
	}
}

// run checks every inlineGrace: an inline call that has run that long
// hands its stream's read loop to a new goroutine. It ends when no stream
// is left to watch.
func (w *inlineWatch) run() {
	t := time.NewTicker(inlineGrace)
	defer t.Stop()
	for range t.C {
		if !w.tick() {
			return
		}
	}
}

// tick looks at every stream once; it reports whether any is left.
func (w *inlineWatch) tick() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for st, ws := range w.streams {
		ic := st.inline.Load()
		if ic != nil && time.Since(ic.start) >= inlineGrace {
			// The call now runs beside the reader, as a worker's would:
			// the next calls go to workers until it ends. It is counted
			// before the claim, so the call's own release (once claimed)
			// never finds the count at zero.
			st.running.Add(1)
			if ic.taken.CompareAndSwap(false, true) {
				go st.resume()
			} else {
				st.running.Add(-1) // the call ended first; its reader reads on
			}
		}
		if n := st.seq.Load(); n != ws.seq || st.inlineRunning() {
			ws.seq, ws.idle = n, 0
			continue
		}
		if ws.idle++; ws.idle < watchIdleTicks && st.ctx.Err() == nil {
			continue
		}
		// Forget the stream, unless an inline call started meanwhile and
		// its reader did not add the stream again itself (it publishes the
		// call before it checks watched).
		st.watched.Store(false)
		if st.ctx.Err() == nil && st.inlineRunning() && st.watched.CompareAndSwap(false, true) {
			ws.idle = 0
			continue
		}
		delete(w.streams, st)
	}
	if len(w.streams) == 0 {
		w.running = false
		return false
	}
	return true
}
