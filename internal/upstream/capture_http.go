package upstream

import (
	"bytes"
	"io"
	"mime"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Raw results from Streamable HTTP upstreams. The go-sdk's HTTP connection
// cannot be wrapped like the stdio one (the SDK asserts an unexported
// interface on it), but it sends each request as a POST with the caller's
// context and reads that POST's answer (a JSON body, or an SSE stream of
// that request) on its own goroutine. So the HTTP client's transport looks
// at the answers of requests whose context carries a capture slot, and
// fills the slot with the raw result of the first JSON-RPC response it
// reads there, before handing those bytes on to the SDK: by the time the
// SDK has decoded the response, the raw copy is in the slot. The same
// moment closes the call's progress route (progress.go), as the stdio
// connection does.
//
// Limits: the legacy SSE transport answers every request on one long-lived
// stream, not tied to the request, so its results are still the SDK's
// encoding. An answer larger than maxCapture is not captured, and gets no
// further: the client refuses a JSON body past maxBody (http.go) and the
// SDK an event past 16 MiB.

// maxCapture bounds the bytes kept to find one raw result: the same
// budget as one stdio line (maxLine), so an HTTP upstream cannot make
// clawd hold more per call than a stdio one.
const maxCapture = maxLine

type captureRoundTripper struct {
	inner    http.RoundTripper
	progress *progressRoutes // the session's: reports delivered as read
}

func (t *captureRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.inner.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost {
		return resp, err
	}
	s, _ := req.Context().Value(captureKey{}).(*slot)
	rt, _ := req.Context().Value(routeKey{}).(*progressRoute)
	if (s == nil && rt == nil) || resp.Body == nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	id, ok := requestID(req)
	if !ok {
		return resp, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "application/json":
		resp.Body = &captureBody{ReadCloser: resp.Body, id: id, slot: s, route: rt, progress: t.progress}
	case "text/event-stream":
		resp.Body = &captureBody{ReadCloser: resp.Body, id: id, slot: s, route: rt, progress: t.progress, sse: true}
	}
	return resp, err
}

// requestID is the id of the JSON-RPC request req posts.
func requestID(req *http.Request) (jsonrpc.ID, bool) {
	if req.GetBody == nil {
		return jsonrpc.ID{}, false
	}
	body, err := req.GetBody()
	if err != nil {
		return jsonrpc.ID{}, false
	}
	defer body.Close()
	b, err := io.ReadAll(body)
	if err != nil {
		return jsonrpc.ID{}, false
	}
	m, err := jsonrpc.DecodeMessage(b)
	if err != nil {
		return jsonrpc.ID{}, false
	}
	r, ok := m.(*jsonrpc.Request)
	if !ok || !r.IsCall() {
		return jsonrpc.ID{}, false
	}
	return r.ID, true
}

// captureBody passes the body through and parses it on the way.
type captureBody struct {
	io.ReadCloser
	id       jsonrpc.ID     // the request's: only its response is taken
	slot     *slot          // nil: no raw copy wanted
	route    *progressRoute // nil: no progress asked for; closed at the answer
	progress *progressRoutes
	sse      bool

	buf  []byte // JSON: the body so far; SSE: the current, unfinished line
	seen int    // SSE: how much of buf is known to hold no line end
	data []byte // SSE: the data lines of the current event
	done bool   // a result was captured, or capturing was given up
}

func (b *captureBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if !b.done {
		if b.sse {
			b.feedSSE(p[:n], err != nil)
		} else {
			b.buf = append(b.buf, p[:n]...)
			if err != nil {
				b.offer(b.buf)
				b.done, b.buf = true, nil
			}
		}
		if len(b.buf)+len(b.data) > maxCapture {
			b.done, b.buf, b.data = true, nil, nil
		}
	}
	return n, err
}

// feedSSE splits the stream into lines and events (LF, CR or CRLF end a
// line; an empty line ends an event) and offers each event's data.
func (b *captureBody) feedSSE(chunk []byte, last bool) {
	b.buf = append(b.buf, chunk...)
	for !b.done {
		// Only what came since the last look is searched: a line sent in
		// small pieces is scanned once, not once per piece.
		i := bytes.IndexAny(b.buf[b.seen:], "\r\n")
		if i < 0 {
			b.seen = len(b.buf)
			return
		}
		i += b.seen
		line := b.buf[:i]
		next := i + 1
		if b.buf[i] == '\r' && i+1 < len(b.buf) && b.buf[i+1] == '\n' {
			next++
		} else if b.buf[i] == '\r' && i+1 == len(b.buf) && !last {
			b.seen = i
			return // a CR at the end of what came: wait for a possible LF
		}
		switch {
		case len(line) == 0:
			if len(b.data) > 0 {
				b.offer(b.data)
				b.data = b.data[:0]
			}
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(line[5:], []byte(" "))
			if len(b.data) > 0 {
				b.data = append(b.data, '\n')
			}
			b.data = append(b.data, v...)
		}
		b.buf, b.seen = b.buf[next:], 0
	}
}

// offer fills the slot from msg if it is the JSON-RPC response to the
// request, with a result; that response ends capturing either way. A
// response to another request (a server that answers one call on the
// stream of another) is not this request's, whatever stream it came on:
// the SDK hands it to its own caller by id, and so does this.
func (b *captureBody) offer(msg []byte) {
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return
	}
	if req, ok := m.(*jsonrpc.Request); ok {
		if !req.IsCall() && req.Method == "notifications/progress" {
			b.progress.deliverRaw(req.Params)
		}
		return
	}
	resp, ok := m.(*jsonrpc.Response)
	if !ok || resp.ID != b.id {
		return
	}
	b.done = true
	if b.route != nil {
		b.route.close() // progress the upstream sends after its answer is dropped
	}
	if resp.Error == nil && b.slot != nil {
		b.slot.mu.Lock()
		b.slot.raw = append([]byte(nil), resp.Result...)
		b.slot.mu.Unlock()
	}
}
