package clawdtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Wire parses the go-sdk LoggingTransport's lines even when a line comes
// in pieces, and ignores its other lines.
func TestWireStreamLines(t *testing.T) {
	w := &Wire{}
	for _, chunk := range []string{
		`write: {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"k":"v"}}}` + "\nread: {\"jsonrpc\":\"2.0\",",
		`"id":1,"result":{"resultType":"complete"}}` + "\nread error: EOF\n",
		`read: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` + "\n",
	} {
		w.Write([]byte(chunk))
	}
	msgs := w.Messages()
	if len(msgs) != 3 {
		t.Fatalf("%d messages, want 3: %+v", len(msgs), msgs)
	}
	if r, ok := w.ResponseTo("server/discover"); !ok || string(r.Result) != `{"resultType":"complete"}` {
		t.Errorf("ResponseTo(server/discover) = %+v, %v", r, ok)
	}
	if got := w.Sent("server/discover"); len(got) != 1 || got[0].Params["_meta"].(map[string]any)["k"] != "v" {
		t.Errorf("Sent: %+v", got)
	}
	if got := w.Received("notifications/tools/list_changed"); len(got) != 1 || got[0].Sent {
		t.Errorf("Received: %+v", got)
	}
}

// Over HTTP, Wire sends the bearer token, keeps it out of the record, and
// records a JSON answer once read and each SSE data line as it arrives.
func TestWireHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(rw, "no token", 403)
			return
		}
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"sse"`) {
			rw.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(rw, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n: keep-alive\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n")
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		rw.Header().Set("Mcp-Session-Id", "s1")
		io.WriteString(rw, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	defer srv.Close()
	w := &Wire{}
	c := w.HTTPClient("tok")
	for _, body := range []string{`{"jsonrpc":"2.0","id":1,"method":"json"}`, `{"jsonrpc":"2.0","id":2,"method":"sse"}`} {
		resp, err := c.Post(srv.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	var kinds []string
	for _, m := range w.Messages() {
		dir := "recv"
		if m.Sent {
			dir = "sent"
		}
		kinds = append(kinds, dir+":"+m.Method+":"+string(m.ID))
	}
	want := "sent:json:1 recv::1 sent:sse:2 recv:notifications/progress: recv::2"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("messages %q, want %q", got, want)
	}
	x := w.Exchanges()
	if len(x) != 2 || x[0].Status != 200 || x[0].RespHeader.Get("Mcp-Session-Id") != "s1" || x[0].Header.Get("Authorization") != "" {
		t.Errorf("exchanges %+v", x)
	}
}
