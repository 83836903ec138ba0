package clawdtest

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// ReadTimeout is a Client's default bound on every read: a server that does
// not answer fails the test after this long instead of hanging it.
const ReadTimeout = 15 * time.Second

// ErrTimeout is what ReadLine returns when no line came in time.
var ErrTimeout = errors.New("clawdtest: no line within the timeout")

// Client is a JSON-RPC client speaking NDJSON (one message a line) over
// any writer and reader: a `clawd serve` child's stdin and stdout, a unix
// socket, or pipes to a server in process.
//
// A goroutine reads whole lines (up to 64 MiB each) as they come, so every
// read below is bounded by ReadTimeout. Writes are serialized, so
// goroutines may send at once. Request and its wrappers return the
// response with the id they sent; notifications (and requests from the
// server) that arrive meanwhile are kept for WaitNotification; any other
// response fails the test. RecvLine and ReadLine return the next raw line
// whatever it is, for tests that look at exact bytes.
type Client struct {
	// Timeout bounds each RecvLine, Call, Request and its wrappers
	// (ReadTimeout unless set).
	Timeout time.Duration

	t      testing.TB
	mu     sync.Mutex // serializes writes
	w      io.Writer
	closer io.Closer
	lines  chan []byte
	notes  []Response
	id     int
}

// NewClient starts reading lines from r; messages go to w.
func NewClient(t testing.TB, w io.Writer, r io.Reader) *Client {
	c := &Client{Timeout: ReadTimeout, t: t, w: w, lines: make(chan []byte, 1024)}
	go func() {
		defer close(c.lines)
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 64<<20 {
				return
			}
			if len(line) > 0 && line[len(line)-1] == '\n' {
				c.lines <- line[:len(line)-1]
			}
			if err != nil {
				return
			}
		}
	}()
	return c
}

// DialUnix connects a Client to a unix socket; the test's cleanup closes
// the connection.
func DialUnix(t testing.TB, path string) *Client {
	t.Helper()
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("connect() to %s: %v", path, err)
	}
	t.Cleanup(func() { conn.Close() })
	c := NewClient(t, conn, conn)
	c.closer = conn
	return c
}

// Close closes a dialed connection (a no-op for other clients).
func (c *Client) Close() {
	if c.closer != nil {
		c.closer.Close()
	}
}

// WriteRaw writes b exactly as given (no newline added) and returns the
// write's error: the path for malformed bytes, and for writers that may
// fail on purpose (a killed child).
func (c *Client) WriteRaw(b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.w.Write(b)
	return err
}

// SendLine writes line and a newline, failing the test if the write fails.
func (c *Client) SendLine(line string) {
	c.t.Helper()
	if err := c.WriteRaw([]byte(line + "\n")); err != nil {
		c.t.Fatalf("writing to clawd: %v", err)
	}
}

// Send writes v as one JSON line (map members sorted by name).
func (c *Client) Send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		c.t.Fatal(err)
	}
	c.SendLine(string(b))
}

// Notify sends a notification (params may be nil).
func (c *Client) Notify(method string, params any) {
	c.t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	c.Send(msg)
}

// Cancel sends notifications/cancelled for a request id.
func (c *Client) Cancel(id any) {
	c.t.Helper()
	c.Notify("notifications/cancelled", map[string]any{"requestId": id})
}

// ReadLine returns the next line (without its newline) within timeout;
// io.EOF once the server closed its output, ErrTimeout if none came.
func (c *Client) ReadLine(timeout time.Duration) ([]byte, error) {
	select {
	case l, ok := <-c.lines:
		if !ok {
			return nil, io.EOF
		}
		return l, nil
	case <-time.After(timeout):
		return nil, ErrTimeout
	}
}

// RecvLine returns the next line, failing the test if the server closed
// its output or sent nothing within Timeout.
func (c *Client) RecvLine() string {
	c.t.Helper()
	l, err := c.ReadLine(c.Timeout)
	switch err {
	case io.EOF:
		c.t.Fatal("clawd closed its output")
	case ErrTimeout:
		c.t.Fatalf("no line from clawd within %v", c.Timeout)
	}
	return string(l)
}

// Call sends line and returns the next line, raw: for exchanges whose
// exact bytes the test checks.
func (c *Client) Call(line string) string {
	c.t.Helper()
	c.SendLine(line)
	return c.RecvLine()
}

// Request sends a request with the next numeric id (1, 2, ...; see LastID)
// and returns its response.
func (c *Client) Request(method string, params any) Response {
	c.t.Helper()
	c.id++
	msg := map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	c.Send(msg)
	return c.Await(strconv.Itoa(c.id))
}

// LastID is the id of the last request Request sent.
func (c *Client) LastID() int { return c.id }

// Await returns the response whose id is the JSON text id (`7`, `"r7"`),
// keeping notifications that arrive first. It fails the test on any other
// response, on a line that is not JSON, on EOF and after Timeout.
func (c *Client) Await(id string) Response {
	c.t.Helper()
	deadline := time.Now().Add(c.Timeout)
	for {
		line, err := c.ReadLine(time.Until(deadline))
		if err == io.EOF {
			c.t.Fatalf("clawd closed its output while waiting for response %s", id)
		} else if err != nil {
			c.t.Fatalf("no response to %s within %v", id, c.Timeout)
		}
		r := Decode(c.t, string(line))
		if r.Method != "" {
			c.notes = append(c.notes, r)
			continue
		}
		if string(r.ID) == id {
			return r
		}
		c.t.Fatalf("unexpected message %s while waiting for %s", line, id)
	}
}

// NextNotification is WaitNotification that also returns the message.
func (c *Client) NextNotification(method string, within time.Duration) (Response, bool) {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for {
		for i, n := range c.notes {
			if n.Method == method {
				c.notes = append(c.notes[:i], c.notes[i+1:]...)
				return n, true
			}
		}
		line, err := c.ReadLine(time.Until(deadline))
		if err != nil {
			return Response{}, false
		}
		r := Decode(c.t, string(line))
		if r.Method == "" {
			c.t.Fatalf("unexpected response %s while waiting for %s", line, method)
		}
		c.notes = append(c.notes, r)
	}
}

// WaitNotification waits up to within for a message with the method
// (already received ones count) and consumes it. It reports false on
// timeout or EOF and fails the test on a response nobody waits for.
func (c *Client) WaitNotification(method string, within time.Duration) bool {
	c.t.Helper()
	_, ok := c.NextNotification(method, within)
	return ok
}

// Initialize performs the handshake (protocol 2025-06-18) as clientName:
// initialize, which must succeed, then notifications/initialized. It
// returns initialize's response.
func (c *Client) Initialize(clientName string) Response {
	c.t.Helper()
	r := c.Request("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": clientName, "version": "1"},
	})
	if r.Result == nil {
		c.t.Fatalf("initialize: %s", r.Raw)
	}
	c.Notify("notifications/initialized", nil)
	return r
}

// CallTool sends tools/call and returns the response.
func (c *Client) CallTool(name string, args any) Response {
	c.t.Helper()
	return c.Request("tools/call", map[string]any{"name": name, "arguments": args})
}

// ToolNames is tools/list's tool names.
func (c *Client) ToolNames() []string {
	c.t.Helper()
	r := c.Request("tools/list", nil)
	var out []string
	if r.Result != nil {
		for _, tl := range r.Result.Tools {
			out = append(out, tl.Name)
		}
	}
	return out
}

// Response is one decoded message from the server, with its line in Raw.
// Result holds the members of tools/call and tools/list results; other
// results are read from Raw.
type Response struct {
	ID     jsontext.Value `json:"id"`
	Method string         `json:"method"` // set on notifications and server requests
	Result *Result        `json:"result"`
	Error  *Error         `json:"error"`
	Raw    string         `json:"-"`
}

// Result is the part of a result the tests read.
type Result struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent map[string]any `json:"structuredContent"`
	IsError           *bool          `json:"isError"`
	Tools             []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// Error is a JSON-RPC error object. Data is error.data when that is an
// object (nil otherwise); RawData is error.data as sent.
type Error struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	RawData jsontext.Value `json:"data"`
	Data    map[string]any `json:"-"`
}

// String is the raw line, so failure messages show what clawd sent.
func (r Response) String() string { return r.Raw }

// Err is the error's code, message and data (code 0 if there is none).
func (r Response) Err() (int, string, map[string]any) {
	if r.Error == nil {
		return 0, "", nil
	}
	return r.Error.Code, r.Error.Message, r.Error.Data
}

// ToolOK reports whether r is a tool result with isError false.
func (r Response) ToolOK() bool {
	return r.Result != nil && r.Result.IsError != nil && !*r.Result.IsError
}

// ToolFailed reports whether r is a tool result with isError true.
func (r Response) ToolFailed() bool {
	return r.Result != nil && r.Result.IsError != nil && *r.Result.IsError
}

// Decode parses one message, failing the test if it is not a JSON object.
func Decode(t testing.TB, line string) Response {
	t.Helper()
	var r Response
	if err := json.Unmarshal([]byte(line), &r, json.RejectUnknownMembers(false)); err != nil {
		t.Fatalf("message from clawd %.300s: %v", line, err)
	}
	r.Raw = line
	if r.Error != nil && len(r.Error.RawData) > 0 && r.Error.RawData.Kind() == '{' {
		if err := json.Unmarshal(r.Error.RawData, &r.Error.Data); err != nil {
			t.Fatalf("error.data in %.300s: %v", line, err)
		}
	}
	return r
}
