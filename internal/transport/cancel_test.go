package transport

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Cancellation across HTTP requests (docs/transports.md): the call and its
// notifications/cancelled arrive as separate POSTs, usually on separate
// connections, and are matched within the session of their Mcp-Session-Id.

func (f *httpFixture) callAsync(sid string, id any, tool string) chan []byte {
	out := make(chan []byte, 1)
	idJSON := fmt.Sprint(id)
	if s, ok := id.(string); ok {
		idJSON = fmt.Sprintf("%q", s)
	}
	go func() {
		_, body := f.do(req{body: fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":{"tag":%q}}}`, idJSON, tool, idJSON),
			headers: map[string]string{HeaderSessionID: sid}})
		out <- body
	}()
	return out
}

func (f *httpFixture) cancel(sid, idJSON string) {
	f.t.Helper()
	resp, body := f.do(req{body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + idJSON + `,"reason":"test"}}`,
		headers: map[string]string{HeaderSessionID: sid}})
	if resp.StatusCode != http.StatusAccepted {
		f.t.Fatalf("cancel: HTTP %d %s", resp.StatusCode, body)
	}
}

func waitBody(t *testing.T, ch chan []byte) string {
	t.Helper()
	select {
	case b := <-ch:
		return string(b)
	case <-time.After(5 * time.Second):
		t.Fatal("the call was not answered")
		return ""
	}
}

func stillRunning(t *testing.T, ch chan []byte) {
	t.Helper()
	select {
	case b := <-ch:
		t.Fatalf("the call ended: %s", b)
	case <-time.After(200 * time.Millisecond):
	}
}

func TestCancelOnAnotherRequest(t *testing.T) {
	f := startHTTP(t, nil)
	sid := f.initialize()
	ch := f.callAsync(sid, 1, "block")
	<-f.bt.started
	f.cancel(sid, "1")
	body := waitBody(t, ch)
	if !strings.Contains(body, `"isError":true`) || !strings.Contains(body, "cancelled") || !strings.Contains(body, `"id":1`) {
		t.Errorf("cancelled call answered %s, want an isError result \"cancelled\" (HTTP must answer every POST)", body)
	}
	if f.bt.cancelled.Load() != 1 {
		t.Error("the tool's context was not cancelled")
	}
}

func TestCancelBeforeCallIsHeld(t *testing.T) {
	f := startHTTP(t, nil)
	sid := f.initialize()
	// The cancel overtakes its call: it is held and consumed by the call.
	f.cancel(sid, `"late-call"`)
	body := waitBody(t, f.callAsync(sid, "late-call", "block"))
	if !strings.Contains(body, "cancelled") {
		t.Errorf("call after its cancel answered %s, want cancelled", body)
	}
	if n := f.bt.starts.Load(); n != 0 {
		t.Errorf("the tool ran %d times although its cancel had arrived first", n)
	}
	// Consumed: the next call with the same id runs normally.
	ch := f.callAsync(sid, "late-call", "block")
	<-f.bt.started
	stillRunning(t, ch)
	f.cancel(sid, `"late-call"`)
	waitBody(t, ch)
}

func TestCancelIDsMatchByValue(t *testing.T) {
	f := startHTTP(t, nil)
	sid := f.initialize()
	ch := f.callAsync(sid, 42, "block")
	<-f.bt.started
	f.cancel(sid, `"42"`) // a string is not the number 42
	stillRunning(t, ch)
	f.cancel(sid, `42.0`) // the same number, written differently
	if body := waitBody(t, ch); !strings.Contains(body, "cancelled") {
		t.Errorf("answered %s", body)
	}
}

func TestAmbiguousCancelCancelsNone(t *testing.T) {
	f := startHTTP(t, nil)
	sid := f.initialize()
	a := f.callAsync(sid, 9, "block")
	b := f.callAsync(sid, 9, "block")
	<-f.bt.started
	<-f.bt.started
	f.cancel(sid, "9")
	stillRunning(t, a)
	stillRunning(t, b)
	if n := f.bt.cancelled.Load(); n != 0 {
		t.Fatalf("%d calls cancelled by an ambiguous cancel, want 0", n)
	}
	// Ending the session cancels both.
	f.do(req{method: http.MethodDelete, headers: map[string]string{HeaderSessionID: sid}})
	waitBody(t, a)
	waitBody(t, b)
}

func TestCancelIsScopedToItsSession(t *testing.T) {
	f := startHTTP(t, nil)
	s1, s2 := f.initialize(), f.initialize()
	ch := f.callAsync(s1, 1, "block")
	<-f.bt.started
	f.cancel(s2, "1") // another client's cancel for the same id
	stillRunning(t, ch)
	f.cancel(s1, "1")
	waitBody(t, ch)
	// And s2's held cancel does not leak into s1: a new s1 call with id 1 runs.
	ch = f.callAsync(s1, 1, "block")
	<-f.bt.started
	stillRunning(t, ch)
	f.cancel(s1, "1")
	waitBody(t, ch)
}

func TestLateCancelDoesNotPoisonReuse(t *testing.T) {
	f := startHTTP(t, nil)
	sid := f.initialize()
	if body := waitBody(t, f.callAsync(sid, 5, "echo")); !strings.Contains(body, `"isError":false`) {
		t.Fatalf("echo: %s", body)
	}
	f.cancel(sid, "5") // arrives after the call completed
	ch := f.callAsync(sid, 5, "block")
	<-f.bt.started
	stillRunning(t, ch)
	f.cancel(sid, "5")
	waitBody(t, ch)
}

func TestClientDisconnectCancelsCall(t *testing.T) {
	f := startHTTP(t, nil)
	sid := f.initialize()
	ctx, cancel := context.WithCancel(context.Background())
	hr, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.base+PathMCP,
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block","arguments":{}}}`))
	hr.Header.Set("Authorization", "Bearer "+testToken)
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set(HeaderSessionID, sid)
	errc := make(chan error, 1)
	go func() {
		resp, err := f.hc.Do(hr)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-f.bt.started
	cancel() // the client gives up and closes the connection
	<-errc
	deadline := time.Now().Add(5 * time.Second)
	for f.bt.cancelled.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if f.bt.cancelled.Load() != 1 {
		t.Error("closing the connection did not cancel the running call")
	}
}

// A cancelled call is answered "cancelled", never with the result its tool
// returned anyway: cancelled by a notification, by DELETE of its session,
// or by the client closing the connection.
func TestCancelledCallNeverGetsResult(t *testing.T) {
	f := startHTTP(t, nil)
	sid := f.initialize()
	ch := f.callAsync(sid, "stubborn-1", "block")
	<-f.bt.started
	f.cancel(sid, `"stubborn-1"`)
	if body := waitBody(t, ch); strings.Contains(body, "stubborn_result") || !strings.Contains(body, "cancelled") {
		t.Errorf("cancelled call answered %s", body)
	}
	ch = f.callAsync(sid, "stubborn-2", "block")
	<-f.bt.started
	f.do(req{method: http.MethodDelete, headers: map[string]string{HeaderSessionID: sid}})
	if body := waitBody(t, ch); strings.Contains(body, "stubborn_result") {
		t.Errorf("call of a deleted session answered %s", body)
	}
}
