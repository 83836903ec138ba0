//go:build unix

package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/tools"
)

// stdioSession returns the live session of a connected stdio server.
func stdioSession(t *testing.T, m *Manager, name string) *session {
	t.Helper()
	m.mu.Lock()
	s := m.servers[name]
	m.mu.Unlock()
	sess, _, why := s.current()
	if sess == nil || sess.stdio == nil {
		t.Fatalf("server %s has no stdio session: %s", name, why)
	}
	return sess
}

// Answers are routed by id, not by order: calls made at once on one
// connection each get their own answer while another call waits, a
// cancelled call's late answer is dropped without disturbing the session,
// and no waiting entry is left behind.
func TestDirectCallsRoutedByID(t *testing.T) {
	t.Parallel()
	m, reg := newTestManager(t, Options{})
	m.Apply(context.Background(), []ServerConfig{fake("d", "-progress")})
	st := connected(t, m, "d")
	sess := stdioSession(t, m, "d")

	slowCtx, cancelSlow := context.WithCancel(context.Background())
	slowDone := make(chan error, 1)
	e, _ := reg.Lookup("d__slow")
	go func() {
		_, err := e.Tool.Call(slowCtx, jsontext.Value(`{}`))
		slowDone <- err
	}()

	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				want := fmt.Sprintf(`{"x":"g%d-%d"}`, g, i)
				res, err := call(t, reg, "d__echo", want)
				if err != nil {
					errs <- err
					return
				}
				if got := resultText(t, res); got != want {
					errs <- fmt.Errorf("echo %s answered %s", want, got)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	select {
	case err := <-slowDone:
		t.Fatalf("the slow call returned while it should still wait: %v", err)
	default:
	}
	cancelSlow()
	select {
	case err := <-slowDone:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled slow call: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled call did not return")
	}

	// progress answers after about 80 ms; give up at 10 ms, so its answer
	// comes to an id nobody waits for.
	p, _ := reg.Lookup("d__progress")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	_, err := p.Tool.Call(ctx, jsontext.Value(`{"tag":"late","n":5}`))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the call given up: %v, want context.DeadlineExceeded", err)
	}
	time.Sleep(300 * time.Millisecond) // the late answer arrives
	if got := callText(t, reg, "d__echo", `{"x":"after"}`); !strings.Contains(got, `{\"x\":\"after\"}`) {
		t.Errorf("echo after a late answer: %s", got)
	}
	if now := connected(t, m, "d"); now.PID != st.PID {
		t.Errorf("the session was restarted (pid %d -> %d) by a late answer", st.PID, now.PID)
	}
	if n := sess.stdio.calls.count.Load(); n != 0 {
		t.Errorf("%d direct calls still registered after every call returned", n)
	}
}

// resultText is the text of a result's one content item.
func resultText(t *testing.T, res any) string {
	t.Helper()
	r, ok := res.(*tools.CallResult)
	if !ok {
		t.Fatalf("result %T, want *tools.CallResult", res)
	}
	var content []struct {
		Text string `json:"text"`
	}
	if err := jsonv2.Unmarshal(r.Content, &content); err != nil || len(content) != 1 {
		t.Fatalf("content %s: %v", r.Content, err)
	}
	return content[0].Text
}

// A JSON-RPC error answer becomes a tool error naming the server, the
// tool, the server's message and its code; the session goes on.
func TestDirectCallErrorAnswer(t *testing.T) {
	t.Parallel()
	m, reg := newTestManager(t, Options{})
	m.Apply(context.Background(), []ServerConfig{fake("e")})
	connected(t, m, "e")
	m.mu.Lock()
	srv := m.servers["e"]
	m.mu.Unlock()
	_, err := srv.call(context.Background(), "no-such-tool", "", jsontext.Value(`{}`))
	if err == nil || !strings.Contains(err.Error(), "upstream server e refused no-such-tool: unknown tool no-such-tool (JSON-RPC error -32602)") {
		t.Fatalf("error answer: %v", err)
	}
	callText(t, reg, "e__echo", `{}`)

	// A server may make its error as long as a line; the tool error keeps
	// maxErrorText bytes of it, in valid UTF-8, and says it cut the rest.
	_, err = srv.call(context.Background(), "unlisted-big-error", "", jsontext.Value(`{}`))
	if err == nil {
		t.Fatal("the error answer was not an error")
	}
	msg := err.Error()
	if len(msg) > maxErrorText+200 || !strings.Contains(msg, "more bytes cut") || !utf8.ValidString(msg) {
		t.Errorf("a 1 MiB error message became %d bytes (valid UTF-8: %v): %.200s…%s", len(msg), utf8.ValidString(msg), msg, msg[max(0, len(msg)-100):])
	}
}

// An answer over the 16 MiB line limit is discarded, and its call fails at
// once with a message saying so (found by the id among the line's first or
// last bytes, wherever the server's serializer put it), not at the read
// timeout; the session goes on.
func TestDirectCallAnswerTooLong(t *testing.T) {
	t.Parallel()
	m, reg := newTestManager(t, Options{})
	cfg := fake("huge")
	cfg.ReadTimeout = 60 * time.Second
	m.Apply(context.Background(), []ServerConfig{cfg})
	connected(t, m, "huge")
	m.mu.Lock()
	srv := m.servers["huge"]
	m.mu.Unlock()
	for _, where := range []string{"first", "last"} {
		start := time.Now()
		_, err := srv.call(context.Background(), "unlisted-huge", "", jsontext.Value(`{"x":"`+where+`"}`))
		if err == nil || !strings.Contains(err.Error(), "over 16 MiB") {
			t.Errorf("id %s: error %v, want one saying the answer was over 16 MiB", where, err)
		}
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("id %s: the call failed after %v, want well before its 60 s read timeout", where, took)
		}
	}
	callText(t, reg, "huge__echo", `{}`)
}

// The request line clawd writes is exactly one line of one JSON object,
// whatever the arguments look like: arguments a client pretty-printed (an
// HTTP client may) are compacted, so they cannot end the line and smuggle
// a second message to the server; anything but one JSON object is
// refused before a byte is written.
func TestToolsCallLine(t *testing.T) {
	ident := map[string]any{"entity": "cc:ws"}
	for _, tc := range []struct {
		name, tool, args string
		ident            map[string]any
		token            string
		wantParams       string // "" = refused
	}{
		{name: "plain", tool: "echo", args: `{"x":"a"}`, wantParams: `{"name":"echo","arguments":{"x":"a"}}`},
		{name: "empty args", tool: "echo", args: ``, wantParams: `{"name":"echo","arguments":{}}`},
		{name: "pretty", tool: "echo", args: "{\n \"x\" :\r\n \"a\\nb\"\n}",
			wantParams: `{"name":"echo","arguments":{"x":"a\nb"}}`},
		{name: "second message smuggled", tool: "echo",
			args: "{\"x\":1}\n{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"rm\"}}"},
		{name: "two values on one line", tool: "echo", args: `{"x":1} {"y":2}`},
		{name: "array", tool: "echo", args: `[1,2]`},
		{name: "truncated", tool: "echo", args: `{"x":`},
		// Duplicate names are read differently by different parsers (the
		// chain may have looked at one value, the server use the other).
		{name: "duplicate names", tool: "echo", args: `{"x":"a","x":"b"}`},
		{name: "duplicate names, pretty", tool: "echo", args: "{\n\"x\":\"a\",\n\"x\":\"b\"\n}"},
		{name: "invalid UTF-8", tool: "echo", args: "{\"x\":\"\xff\"}"},
		{name: "invalid UTF-8, pretty", tool: "echo", args: "{\n\"x\":\"\xff\"\n}"},
		{name: "leading space", tool: "echo", args: ` {"x":1}`, wantParams: `{"name":"echo","arguments":{"x":1}}`},
		{name: "odd tool name", tool: "a\"b\n\u2028c", args: `{}`, wantParams: `{"name":"a\"b\n\u2028c","arguments":{}}`},
		{name: "meta", tool: "echo", args: `{}`, ident: ident, token: "clawd-x-1",
			wantParams: `{"name":"echo","arguments":{},"_meta":{"clawd/identity":{"entity":"cc:ws"},"progressToken":"clawd-x-1"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line, err := toolsCallLine(directIDPrefix+"7", tc.tool, jsontext.Value(tc.args), tc.ident, tc.token)
			if tc.wantParams == "" {
				if err == nil {
					t.Fatalf("accepted: %q", line)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' || bytes.ContainsRune(line, '\r') {
				t.Fatalf("not one line: %q", line)
			}
			var req struct {
				JSONRPC string         `json:"jsonrpc"`
				ID      string         `json:"id"`
				Method  string         `json:"method"`
				Params  jsontext.Value `json:"params"`
			}
			if err := jsonv2.Unmarshal(line[:len(line)-1], &req, jsonv2.RejectUnknownMembers(true)); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			if req.JSONRPC != "2.0" || req.ID != directIDPrefix+"7" || req.Method != "tools/call" {
				t.Errorf("envelope %+v", req)
			}
			want := jsontext.Value(tc.wantParams)
			if err := want.Canonicalize(); err != nil {
				t.Fatal(err)
			}
			got := req.Params.Clone()
			if err := got.Canonicalize(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("params\n got %s\nwant %s", got, want)
			}
		})
	}
}

// connectNonReader connects to a child that never reads its stdin
// (sleep), so writes fill the pipe and block.
func connectNonReader(t *testing.T) *stdioConn {
	t.Helper()
	return connectCommand(t, nil, "/bin/sleep", "100")
}

// connectCommand connects to the child path args...; what clawd notes of
// its output goes to stderr (nil: nowhere). The connection is closed
// when the test ends.
func connectCommand(t *testing.T, stderr *syncBuffer, path string, args ...string) *stdioConn {
	t.Helper()
	tr := &stdioTransport{path: path, args: args, grace: time.Second, logger: slog.New(slog.DiscardHandler)}
	if stderr != nil {
		tr.stderr = stderr
	}
	mc, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := mc.(*stdioConn)
	t.Cleanup(func() { c.Close() })
	return c
}

// A write the child stops reading in the middle of (its pipe full, the
// call's deadline reached) leaves part of a line in the pipe. Nothing may
// be written after it, or the child would read the rest of one request
// glued to the next as one message: the connection fails every later
// write and closes.
func TestPartialWriteBreaksConnection(t *testing.T) {
	t.Parallel()
	c := connectNonReader(t)
	big := append(bytes.Repeat([]byte("x"), 4<<20), '\n') // far over any pipe buffer
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := c.writeLine(ctx, big); err == nil {
		t.Fatal("a 4 MiB write to a child that never reads succeeded")
	}
	if err := c.writeLine(context.Background(), []byte("{}\n")); err == nil {
		t.Fatal("a write after a partial one succeeded: it would continue the cut line")
	}
	select {
	case <-c.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the connection was not closed after a partial write")
	}
}

// A write with no deadline of its own (the SDK's) to a child that does not
// read fails after stdinWriteStall instead of holding the connection's
// writer forever, and the connection then closes (part of the line went
// out).
func TestWriteWithoutDeadlineIsBounded(t *testing.T) {
	t.Parallel()
	c := connectNonReader(t)
	c.writeStall = 300 * time.Millisecond
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- c.writeLine(context.Background(), append(bytes.Repeat([]byte("x"), 4<<20), '\n')) }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a 4 MiB write to a child that never reads succeeded")
		}
		if took := time.Since(start); took < c.writeStall {
			t.Errorf("the write failed after %v, before the stall bound", took)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a write without a deadline was still blocked after 10 s")
	}
	select {
	case <-c.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the connection was not closed after the cut write")
	}
}

// A write blocked on a child that does not read stops when its context is
// cancelled (a client's notifications/cancelled), not at its deadline.
func TestWriteStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	c := connectNonReader(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	done := make(chan error, 1)
	go func() { done <- c.writeLine(ctx, append(bytes.Repeat([]byte("x"), 4<<20), '\n')) }()
	time.Sleep(100 * time.Millisecond) // blocked on the full pipe by now
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a cancelled 4 MiB write to a child that never reads succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled write was still blocked after 10 s")
	}
}

// A call waiting to write behind another writer that is stuck on a full
// pipe without a deadline (the SDK answering the server, say) returns when
// its own context ends, not when the stuck write does.
func TestWriteWaitBoundedByContext(t *testing.T) {
	t.Parallel()
	c := connectNonReader(t)
	stuck := make(chan error, 1)
	go func() { stuck <- c.writeLine(context.Background(), append(bytes.Repeat([]byte("x"), 4<<20), '\n')) }()
	for deadline := time.Now().Add(10 * time.Second); len(c.writeSem) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first write never started")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.writeLine(ctx, []byte("{}\n")) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("write = %v, want its context's deadline", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a write waited past its context's end behind a stuck writer")
	}
	c.Close()
	select {
	case <-stuck:
	case <-time.After(10 * time.Second):
		t.Fatal("the stuck write did not end with the connection")
	}
}

// A write after one that was interrupted (its deadline moved to the past)
// goes out: the write that needs no wait fails on the old deadline before
// sending a byte, and the bounded write sets a fresh one.
func TestWriteAfterPastDeadline(t *testing.T) {
	t.Parallel()
	c := connectNonReader(t) // the pipe has room for a short line
	c.p.Stdin().(*os.File).SetWriteDeadline(time.Now().Add(-time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.writeLine(ctx, []byte("{}\n")); err != nil {
		t.Fatalf("write after a past deadline = %v, want it sent", err)
	}
	if c.writeBroken != nil {
		t.Fatalf("the connection is marked broken: %v", c.writeBroken)
	}
}
