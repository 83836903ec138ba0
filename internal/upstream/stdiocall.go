package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawde/clawd/internal/support/lines"
	"github.com/clawde/clawd/internal/upstream/identity"
)

// Direct tools/call on a stdio connection. A proxied call is the one
// request clawd sends most, and going through the go-sdk client cost more
// CPU than everything else clawd does for it: the SDK encodes a request
// object, hands every message read from the child from the reader to its
// own goroutine and on to the caller's (two thread wake-ups), decodes the
// result into typed content and clawd then parses the raw copy again
// (docs/benchmarks.md, "Upstream servers"). So clawd writes tools/call
// itself, with an id of its own on the connection it already owns, and the
// call reads the answer's raw line itself (stdioread.go). The
// session's other traffic (initialize, tools/list, pings, the server's own
// requests and notifications) still goes through the SDK.
//
// The ids are strings ("clawd-call-N"); the SDK's are numbers, so neither
// can answer the other's request. An answer to an id nobody waits for any
// more (the call was cancelled or timed out) is dropped here, never handed
// to the SDK, which knows nothing of it.

// directIDPrefix starts the id of every request clawd writes itself.
const directIDPrefix = "clawd-call-"

// directCalls is a connection's table of tools/call requests waiting for
// their answers.
type directCalls struct {
	mu      sync.Mutex
	next    uint64
	waiting map[string]*directCall
	count   atomic.Int32 // len(waiting), read by the reader without mu
}

// directCall is one request written by clawd. Its fields are set by the
// reader before done is closed.
type directCall struct {
	route  *progressRoute // closed when the answer is read; may be nil
	done   chan struct{}
	result jsontext.Value // the response's result, or
	err    *jsonrpc.Error // its error
}

// answer is what the call was answered with.
func (c *directCall) answer() (jsontext.Value, error) {
	if c.err != nil {
		return nil, c.err
	}
	return c.result, nil
}

// register makes a new call waiting under a fresh id.
func (d *directCalls) register(route *progressRoute) (string, *directCall) {
	c := &directCall{route: route, done: make(chan struct{})}
	d.mu.Lock()
	d.next++
	id := directIDPrefix + strconv.FormatUint(d.next, 10)
	if d.waiting == nil {
		d.waiting = map[string]*directCall{}
	}
	d.waiting[id] = c
	d.count.Store(int32(len(d.waiting)))
	d.mu.Unlock()
	return id, c
}

// forget drops id's call (it returned without an answer).
func (d *directCalls) forget(id string) {
	d.mu.Lock()
	delete(d.waiting, id)
	d.count.Store(int32(len(d.waiting)))
	d.mu.Unlock()
}

// take removes and returns id's call, or nil.
func (d *directCalls) take(id string) *directCall {
	d.mu.Lock()
	c := d.waiting[id]
	if c != nil {
		delete(d.waiting, id)
		d.count.Store(int32(len(d.waiting)))
	}
	d.mu.Unlock()
	return c
}

// routeDirect handles msg (one JSON object read from the child) when it is
// clawd's own business, reporting whether it did:
//   - the answer to a direct call: handed to the waiting call, or dropped
//     when nobody waits for it any more;
//   - notifications/progress: delivered to the call's route, here, in the
//     order the child wrote it, so a report written before the answer is
//     forwarded before clawd answers. Every progress token on an upstream
//     session is clawd's (progress.go), so the SDK never needs one.
//
// Anything else (or a message this cannot read) is the SDK's.
func (c *stdioConn) routeDirect(msg []byte) bool {
	if c.calls.count.Load() == 0 && !c.progress.active() {
		return false // nothing of clawd's can be in flight: skip the parse
	}
	env, ok := scanEnvelope(msg)
	if !ok {
		return false // not plain enough to route here; the SDK decodes it
	}
	if len(env.method) > 0 {
		if len(env.id) == 0 && string(env.method) == `"notifications/progress"` {
			c.progress.deliverRaw(env.params)
			return true
		}
		return false
	}
	id, ok := directID(env.id)
	if !ok {
		return false
	}
	call := c.calls.take(id)
	if call == nil {
		return true // a late answer to a call that gave up
	}
	if len(env.err) > 0 && string(env.err) != "null" {
		call.err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server answered with a malformed error"}
		json.Unmarshal(env.err, call.err) // encoding/json: Data is a json.RawMessage
	} else {
		call.result = jsontext.Value(env.result)
	}
	if call.route != nil {
		call.route.close()
	}
	close(call.done)
	return true
}

// discarded fails at once the direct call whose answer was a line too long
// to keep (ends are its first and last bytes, where serializers put the id:
// Go's and Python's first, the TypeScript SDK's last); otherwise the call
// would wait for its read timeout and then report a timeout, not why.
func (c *stdioConn) discarded(ends lines.Ends) {
	if c.calls.count.Load() == 0 {
		return
	}
	for _, b := range [][]byte{ends.Head, ends.Tail} {
		m := directIDInLine.FindSubmatch(b)
		if m == nil {
			continue
		}
		if call := c.calls.take(string(m[1])); call != nil {
			call.err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf(
				"the server's answer was over %d MiB, the most clawd reads as one message, so it was discarded", maxLine>>20)}
			if call.route != nil {
				call.route.close()
			}
			close(call.done)
			return
		}
	}
}

// directIDInLine finds a direct call's id in part of a message's text.
var directIDInLine = regexp.MustCompile(`"id"\s*:\s*"(` + directIDPrefix + `[0-9]+)"`)

// directID returns the id of a direct call from a response's raw id, or
// false when it is not one.
func directID(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	id := string(raw[1 : len(raw)-1])
	if bytes.IndexByte(raw, '\\') >= 0 {
		u, err := jsontext.AppendUnquote(nil, raw)
		if err != nil {
			return "", false
		}
		id = string(u)
	}
	if len(id) <= len(directIDPrefix) || id[:len(directIDPrefix)] != directIDPrefix {
		return "", false
	}
	return id, true
}

// errConnectionGone: the child closed its end (or exited) with a call
// waiting.
var errConnectionGone = errors.New("the server closed the connection before answering")

// callTool writes tools/call for name with args (a JSON object) and
// _meta (identity, progress token) and waits for the answer, ctx's end,
// or the connection's. On ctx's end the child is sent
// notifications/cancelled for the request. The answer's error, if it sent
// one, is returned as *jsonrpc.Error.
func (c *stdioConn) callTool(ctx context.Context, name string, args jsontext.Value, ident map[string]any, progressToken string, route *progressRoute) (jsontext.Value, error) {
	id, call := c.calls.register(route)
	line, err := toolsCallLine(id, name, args, ident, progressToken)
	if err != nil {
		c.calls.forget(id)
		return nil, err
	}
	if err := c.writeLine(ctx, line); err != nil {
		c.calls.forget(id)
		return nil, err
	}
	c.callStarted()
	return c.await(ctx, id, call)
}

// toolsCallLine builds the whole tools/call request line for id (a
// directIDPrefix and digits: nothing to escape), in one buffer: the
// arguments, which can be large, are copied once. args must be one
// valid JSON object (no name given twice, valid UTF-8); it is compacted, so
// a client's pretty-printed arguments cannot end the line early and smuggle
// a second message to the child.
func toolsCallLine(id, name string, args jsontext.Value, ident map[string]any, progressToken string) ([]byte, error) {
	if len(args) == 0 {
		args = jsontext.Value("{}")
	}
	if args[0] != '{' || bytes.ContainsAny(args, "\r\n") {
		args = args.Clone()
		if err := args.Compact(); err != nil {
			return nil, fmt.Errorf("the arguments are not valid JSON: %w", err)
		}
	}
	// Compact lets duplicate names and invalid UTF-8 through; IsValid does
	// not. Two parsers can read a duplicate name differently (the chain one
	// value, the server the other), so neither reaches a server.
	if !args.IsValid() {
		return nil, fmt.Errorf("the arguments are not valid JSON (a name given twice, or invalid UTF-8)")
	}
	if args.Kind() != '{' {
		return nil, fmt.Errorf("the arguments are not a JSON object")
	}
	b := make([]byte, 0, 160+len(id)+len(name)+len(args))
	b = append(b, `{"jsonrpc":"2.0","id":"`...)
	b = append(b, id...)
	b = append(b, `","method":"tools/call","params":{"name":`...)
	b, err := jsontext.AppendQuote(b, name)
	if err != nil {
		return nil, fmt.Errorf("tool name: %w", err)
	}
	b = append(b, `,"arguments":`...)
	b = append(b, args...)
	if ident != nil || progressToken != "" {
		meta := map[string]any{}
		if progressToken != "" {
			meta["progressToken"] = progressToken
		}
		if ident != nil {
			meta[identity.MetaKey] = ident
		}
		mb, err := jsonv2.Marshal(meta, jsonv2.Deterministic(true))
		if err != nil {
			return nil, fmt.Errorf("_meta: %w", err)
		}
		b = append(b, `,"_meta":`...)
		b = append(b, mb...)
	}
	return append(b, "}}\n"...), nil
}

// writeLine writes one line to the child's stdin (every write to it, the
// SDK's and clawd's own, goes through here), bounded by ctx (its deadline
// and its cancellation) and by stdinWriteStall.
func (c *stdioConn) writeLine(ctx context.Context, line []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// Waiting for another writer is bounded by ctx too: one blocked on a
	// full pipe without a deadline (the SDK answering the server's ping)
	// must not hold a call past its read timeout or its cancellation.
	select {
	case c.writeSem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.closed:
		return mcp.ErrConnectionClosed
	case <-c.writesStopped:
		return mcp.ErrConnectionClosed
	}
	defer func() { <-c.writeSem }()
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	case <-c.writesStopped:
		return mcp.ErrConnectionClosed
	default:
	}
	if c.writeBroken != nil {
		return c.writeBroken
	}
	sent := 0
	if c.stdinNow != nil {
		// Most lines fit in the pipe at once; such a write needs neither
		// the deadline nor the watch on ctx below (a timer and a callback
		// per call). A deadline left past by an interrupted write fails
		// this attempt before anything is written: the bounded path then
		// sets a fresh one.
		n, err := c.stdinNow.WriteNow(line)
		if n == len(line) {
			return nil
		}
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			return c.brokenAfter(n, len(line), err)
		}
		sent, line = n, line[n:]
	}
	// A child that stops reading fills the pipe; a deadline keeps the
	// writer from blocking past the request's own bound, and a write with
	// no bound of its own (the SDK's: answering the server's ping, say)
	// from blocking past stdinWriteStall.
	if f, ok := c.p.Stdin().(*os.File); ok {
		dl, ok := ctx.Deadline()
		if stall := time.Now().Add(c.writeStall); !ok || dl.After(stall) {
			dl = stall
		}
		f.SetWriteDeadline(dl)
		select {
		case <-c.writesStopped:
			// stopWriting ran before the deadline above replaced its
			// own: the write would not be interrupted.
			return mcp.ErrConnectionClosed
		default:
		}
		if ctx.Done() != nil {
			// Cancellation (a client's notifications/cancelled) stops the
			// write too, not only the deadline.
			defer interruptWriteOnDone(ctx, f)()
		}
	}
	n, err := c.p.Stdin().Write(line)
	if err != nil {
		return c.brokenAfter(sent+n, sent+len(line), err)
	}
	return nil
}

// stopWriting makes every write to the child, waiting or under way, fail
// at once, and every later one: the session is closing, and nothing it
// would still send (answers to the server's requests) is worth waiting for
// a child that does not read. A write cut short leaves the framing broken
// (brokenAfter), which closes the connection; the session was closing.
func (c *stdioConn) stopWriting() {
	c.stopOnce.Do(func() {
		close(c.writesStopped)
		if f, ok := c.p.Stdin().(*os.File); ok {
			f.SetWriteDeadline(time.Now())
		}
	})
}

// brokenAfter returns err, the failure of a write that sent n of a line's
// size bytes. When part of the line is in the pipe, whatever is written
// next would continue it, and the child would read the two as one message
// (the rest of one line's arguments glued to the next request): the
// stream's framing is lost, so no more writes; the session ends and the
// supervisor reconnects. Called with writeSem held.
func (c *stdioConn) brokenAfter(n, size int, err error) error {
	if n == 0 {
		return err
	}
	c.writeBroken = fmt.Errorf("the connection to the server is broken: a write stopped after %d of %d bytes: %w", n, size, err)
	go c.Close()
	return c.writeBroken
}

// interruptWriteOnDone makes a write to f in progress fail when ctx is
// done (by moving f's write deadline to now) until the returned function
// runs. It must run before the next writer may set its own deadline:
// after it, a late callback changes nothing.
func interruptWriteOnDone(ctx context.Context, f *os.File) (stop func()) {
	var mu sync.Mutex
	over := false
	stopCB := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !over {
			f.SetWriteDeadline(time.Now())
		}
	})
	return func() {
		if !stopCB() {
			mu.Lock()
			over = true
			mu.Unlock()
		}
	}
}

// stdinWriteStall bounds any one write to a child's stdin: a child that
// has not taken a line in that long is not reading, and the write fails
// (ending the connection if part of the line went out). The same minute
// clawd gives its own clients (docs/transports.md).
const stdinWriteStall = time.Minute

// cancelWriteTimeout bounds the write of notifications/cancelled.
const cancelWriteTimeout = 5 * time.Second

// cancelled tells the child that clawd no longer waits for request id.
func (c *stdioConn) cancelled(id string, cause error) {
	reason := "the client cancelled the call"
	if errors.Is(cause, context.DeadlineExceeded) {
		reason = "clawd's read timeout for this server ran out"
	}
	line := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"` + id + `","reason":"` + reason + `"}}` + "\n"
	ctx, cancel := context.WithTimeout(context.Background(), cancelWriteTimeout)
	defer cancel()
	if err := c.writeLine(ctx, []byte(line)); err != nil {
		c.logger.Debug("upstream cancellation not sent", "id", id, "err", err)
	}
}
