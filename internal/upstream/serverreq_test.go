//go:build unix

package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// A server's own requests get answers, never requests of clawd's. The
// go-sdk client treats completion/complete from the server as a call to
// make: it sends the same request back to the server and waits for that
// answer, with no deadline. A Streamable HTTP server that asks it many
// times and holds every one of those POSTs open made clawd hold a
// connection and goroutines per request, without bound (the bound on
// clawd's answers does not see a request), and the session could not
// close while one waited. clawd refuses every request of the server's but
// ping and roots/list (an empty list) as a method it does not have.
func TestServerRequestsGetAnswersNotRequests(t *testing.T) {
	t.Parallel()
	methods := []string{"completion/complete", "sampling/createMessage", "elicitation/create", "resources/list", "ping", "roots/list"}
	asks := len(methods) // at most 8: clawd drops answers past 8 in flight (maxAnswersInFlight)
	var mu sync.Mutex
	answered := map[string]string{} // the server's request id -> what clawd sent for it
	got := make(chan struct{}, 4*asks)
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		json.Unmarshal(body, &msg)
		answer := func(result string) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":`+result+`}`)
		}
		switch {
		case len(msg.ID) == 0:
			w.WriteHeader(http.StatusAccepted)
		case msg.Method == "":
			// An answer of clawd's to one of the server's requests.
			kind := "result " + string(msg.Result)
			if len(msg.Error) > 0 {
				kind = "error"
			}
			mu.Lock()
			answered[string(msg.ID)] = kind
			mu.Unlock()
			got <- struct{}{}
			w.WriteHeader(http.StatusAccepted)
		case msg.Method == "initialize":
			answer(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"asker","version":"1"}}`)
		case msg.Method == "tools/list":
			answer(`{"tools":[{"name":"get","inputSchema":{"type":"object"}}]}`)
		case msg.Method == "tools/call":
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range asks {
				m := methods[i%len(methods)]
				params := `{}`
				if m == "completion/complete" {
					params = `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"v"}}`
				}
				fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"s%d\",\"method\":%q,\"params\":%s}\n\n", i, m, params)
			}
			w.(http.Flusher).Flush()
			// Wait until clawd has sent something for every request (or
			// give up: the assertions below say what is missing).
			deadline := time.After(8 * time.Second) // within the read timeout (httpCfg)
			for n := 0; n < asks; n++ {
				select {
				case <-got:
				case <-deadline:
					n = asks
				}
			}
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":{"content":[{"type":"text","text":"fine"}]}}`)
		case msg.Method == "completion/complete":
			// clawd asking the server: held open, as an abusive server would.
			mu.Lock()
			answered["request "+string(msg.ID)] = msg.Method
			mu.Unlock()
			got <- struct{}{}
			w.Header().Set("Content-Type", "text/event-stream")
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-release:
			}
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"error":{"code":-32601,"message":"no"}}`)
		}
	}))
	t.Cleanup(ts.Close) // after the manager's Close (cleanups run last first)
	m, reg := newTestManager(t, Options{})
	// Before the manager's Close (cleanups run last first): the requests
	// clawd should never have sent are let go, so a failure ends.
	t.Cleanup(func() { close(release) })
	m.Apply(context.Background(), []ServerConfig{httpCfg("asker", ts.URL)})
	connected(t, m, "asker")
	if got := callText(t, reg, "asker__get", `{}`); !strings.Contains(got, "fine") {
		t.Fatalf("call: %s", got)
	}
	mu.Lock()
	defer mu.Unlock()
	for k, v := range answered {
		if strings.HasPrefix(k, "request ") {
			t.Errorf("clawd sent the server a request of its own (%s) when asked one", v)
		}
	}
	for i := range asks {
		want := "error"
		switch methods[i%len(methods)] {
		case "ping":
			want = "result {}"
		case "roots/list":
			want = `result {"roots":[]}` // clawd shares no roots
		}
		if kind := answered[fmt.Sprintf(`"s%d"`, i)]; kind != want {
			t.Errorf("the server's %s (s%d): clawd answered %q, want %q", methods[i%len(methods)], i, kind, want)
		}
	}
}

// The same on stdio: the server's completion/complete is answered with
// an error, not sent back to it (where it waited for an answer the server
// never gives, holding one of the 16 places of its requests for good);
// ping and roots/list are still answered.
func TestStdioServerRequestsGetAnswersNotRequests(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ method, want string }{
		{"completion/complete", "ask-1: error"},
		{"sampling/createMessage", "ask-1: error"},
		{"roots/list", "ask-1: result"},
		{"ping", "ask-1: result"},
	} {
		t.Run(strings.ReplaceAll(tc.method, "/", "_"), func(t *testing.T) {
			t.Parallel()
			m, _ := newTestManager(t, Options{})
			m.Apply(context.Background(), []ServerConfig{fake("asker", "-ask", tc.method)})
			connected(t, m, "asker")
			deadline := time.Now().Add(20 * time.Second) // a hang guard, not a timing bound
			for {
				logs := string(m.Logs("asker"))
				if strings.Contains(logs, "reflected: ") {
					t.Fatalf("clawd sent the server its own %s back:\n%s", tc.method, logs)
				}
				if strings.Contains(logs, "ask-1: ") {
					if !strings.Contains(logs, tc.want) {
						t.Errorf("%s: got\n%s\nwant %q", tc.method, logs, tc.want)
					}
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: no answer within 20 s:\n%s", tc.method, logs)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// clawd speaks 2025-11-25 to upstreams, where a tool result asks for
// nothing. A Streamable HTTP server that answers tools/call with the
// 2026-07-28 shape of a request for input (resultType input_required,
// inputRequests) does not get the call sent again: the go-sdk client's
// multi-round-trip middleware would fulfil the requests and send the same
// tools/call (arguments, identity token) up to ten times, once per audited
// call. The answer is a tool error; the tool ran once.
func TestHTTPInputRequiredResultIsNotRetried(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	calls := 0
	ts := abuseServer(t, func(w http.ResponseWriter, r *http.Request, method string, id json.RawMessage) bool {
		if method != "tools/call" {
			return false
		}
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		result := `{"resultType":"input_required","inputRequests":{"r1":{"method":"roots/list","params":{}}},"requestState":"s"}`
		if n > 1 {
			result = `{"content":[{"type":"text","text":"ran again"}]}`
		}
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":`+result+`}`)
		return true
	})
	m, reg := newTestManager(t, Options{})
	m.Apply(context.Background(), []ServerConfig{httpCfg("mrtr", ts.URL)})
	connected(t, m, "mrtr")
	res, err := call(t, reg, "mrtr__get", `{}`)
	mu.Lock()
	defer mu.Unlock()
	if calls != 1 {
		t.Errorf("the server got tools/call %d times for one call, want 1", calls)
	}
	if err == nil {
		t.Errorf("a result that asks for input was taken as the tool's: %v", res)
	}
}
