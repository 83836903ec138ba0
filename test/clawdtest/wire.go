package clawdtest

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Wire records what a real client (the go-sdk) and clawd said to each
// other, so a test can assert what was negotiated on the wire rather than
// what the client reports: a client that silently fell back to the
// legacy handshake still "works", and only the messages show it.
//
// Over a stream (stdio, `clawd connect`) it is the Writer of the go-sdk's
// LoggingTransport (see Stream); over HTTP it is the RoundTripper of the
// client's http.Client (see HTTPClient), which also keeps each exchange's
// status and MCP headers. Messages are kept in order, sent and received
// alike; SSE events count as received messages, one per `data:` line.
type Wire struct {
	mu        sync.Mutex
	partial   []byte
	msgs      []WireMessage
	exchanges []*Exchange
}

// WireMessage is one JSON-RPC message and its direction.
type WireMessage struct {
	Sent bool // client to clawd
	Raw  string
	// The decoded envelope: Method is empty on responses; Result and Error
	// are raw JSON (empty when absent).
	Method string
	ID     jsontext.Value
	Params map[string]any
	Result jsontext.Value
	Error  jsontext.Value
}

// Exchange is one HTTP POST/GET/DELETE to the MCP endpoint.
type Exchange struct {
	Method     string      // HTTP method
	Header     http.Header // request headers as sent
	Body       string      // request body
	Status     int
	RespHeader http.Header
}

// Stream wraps t (a CommandTransport) so that every message is recorded.
func (w *Wire) Stream(t mcp.Transport) mcp.Transport {
	return &mcp.LoggingTransport{Transport: t, Writer: w}
}

// Write takes the LoggingTransport's lines ("write: {...}", "read: {...}").
func (w *Wire) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(w.partial[:i])
		w.partial = w.partial[i+1:]
		if s, ok := strings.CutPrefix(line, "write: "); ok {
			w.addLocked(true, s)
		} else if s, ok := strings.CutPrefix(line, "read: "); ok {
			w.addLocked(false, s)
		}
	}
}

func (w *Wire) addLocked(sent bool, raw string) {
	m := WireMessage{Sent: sent, Raw: raw}
	var env struct {
		Method string         `json:"method"`
		ID     jsontext.Value `json:"id"`
		Params map[string]any `json:"params"`
		Result jsontext.Value `json:"result"`
		Error  jsontext.Value `json:"error"`
	}
	if json.Unmarshal([]byte(raw), &env, json.RejectUnknownMembers(false)) == nil {
		m.Method, m.ID, m.Params, m.Result, m.Error = env.Method, env.ID, env.Params, env.Result, env.Error
	}
	w.msgs = append(w.msgs, m)
}

// Messages is a copy of what was recorded so far.
func (w *Wire) Messages() []WireMessage {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]WireMessage(nil), w.msgs...)
}

// Exchanges is a copy of the HTTP exchanges so far (none over a stream).
func (w *Wire) Exchanges() []Exchange {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Exchange, len(w.exchanges))
	for i, x := range w.exchanges {
		out[i] = *x
	}
	return out
}

// Sent is the messages the client sent with method.
func (w *Wire) Sent(method string) []WireMessage {
	var out []WireMessage
	for _, m := range w.Messages() {
		if m.Sent && m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// ResponseTo is clawd's response to the first request the client sent
// with method, if one arrived.
func (w *Wire) ResponseTo(method string) (WireMessage, bool) {
	msgs := w.Messages()
	for _, req := range msgs {
		if !req.Sent || req.Method != method || len(req.ID) == 0 {
			continue
		}
		for _, m := range msgs {
			if !m.Sent && m.Method == "" && string(m.ID) == string(req.ID) {
				return m, true
			}
		}
		return WireMessage{}, false
	}
	return WireMessage{}, false
}

// Received is the messages from clawd with method (notifications).
func (w *Wire) Received(method string) []WireMessage {
	var out []WireMessage
	for _, m := range w.Messages() {
		if !m.Sent && m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// HTTPClient is an http.Client that adds "Authorization: Bearer token"
// (as BearerClient does) and records every exchange and message.
func (w *Wire) HTTPClient(token string) *http.Client {
	return &http.Client{Transport: &wireRT{w: w, token: token}}
}

type wireRT struct {
	w     *Wire
	token string
}

func (rt *wireRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+rt.token)
	x := &Exchange{Method: r.Method, Header: r.Header.Clone()}
	x.Header.Del("Authorization")
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		x.Body = string(b)
		r.Body = io.NopCloser(bytes.NewReader(b))
		r.ContentLength = int64(len(b))
	}
	rt.w.mu.Lock()
	rt.w.exchanges = append(rt.w.exchanges, x)
	if x.Body != "" {
		rt.w.addLocked(true, strings.TrimSpace(x.Body))
	}
	rt.w.mu.Unlock()
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	rt.w.mu.Lock()
	x.Status, x.RespHeader = resp.StatusCode, resp.Header.Clone()
	rt.w.mu.Unlock()
	sse := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	resp.Body = &wireBody{ReadCloser: resp.Body, w: rt.w, sse: sse}
	return resp, nil
}

// wireBody records a response body as the client reads it: each SSE
// `data:` line as it completes, a JSON body once it has been read to the
// end (or closed).
type wireBody struct {
	io.ReadCloser
	w    *Wire
	sse  bool
	buf  []byte
	done bool
}

func (b *wireBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.buf = append(b.buf, p[:n]...)
	if b.sse {
		for {
			i := bytes.IndexByte(b.buf, '\n')
			if i < 0 {
				break
			}
			line := strings.TrimRight(string(b.buf[:i]), "\r")
			b.buf = b.buf[i+1:]
			if s, ok := strings.CutPrefix(line, "data:"); ok && strings.TrimSpace(s) != "" {
				b.w.mu.Lock()
				b.w.addLocked(false, strings.TrimSpace(s))
				b.w.mu.Unlock()
			}
		}
	} else if err == io.EOF {
		b.flush()
	}
	return n, err
}

func (b *wireBody) Close() error {
	if !b.sse {
		b.flush()
	}
	return b.ReadCloser.Close()
}

func (b *wireBody) flush() {
	if b.done {
		return
	}
	b.done = true
	if s := strings.TrimSpace(string(b.buf)); strings.HasPrefix(s, "{") {
		b.w.mu.Lock()
		b.w.addLocked(false, s)
		b.w.mu.Unlock()
	}
}
