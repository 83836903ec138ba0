//go:build unix

package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/clawde/clawd/internal/tools"
)

// rawHTTPServer is a Streamable HTTP MCP server written by hand, so its
// answers are exactly the bytes below: tools/call of "sse" answers as an
// SSE stream (a comment, a notification, then the result; CRLF line
// ends), of "json" as a JSON body. Both carry imageResult, with
// an item of a type no SDK knows.
func rawHTTPServer(t *testing.T) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "no GET stream", http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name            string `json:"name"`
				ProtocolVersion string `json:"protocolVersion"`
				Meta            struct {
					ProgressToken json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		json.Unmarshal(body, &req)
		answer := func(result string) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
		}
		switch req.Method {
		case "initialize":
			w.Header().Set("Mcp-Session-Id", "s1")
			answer(`{"protocolVersion":"` + req.Params.ProtocolVersion + `","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`)
		case "tools/list":
			answer(`{"tools":[{"name":"prog","inputSchema":{"type":"object"}},{"name":"sse","inputSchema":{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"number"}}}},{"name":"json","inputSchema":{"type":"object"}}]}`)
		case "tools/call":
			if req.Params.Name == "json" {
				answer(imageResultRaw)
				return
			}
			if req.Params.Name == "prog" {
				// Progress under a made-up token, under ours, the answer,
				// then more under ours: only 1 and 2 may reach the client.
				w.Header().Set("Content-Type", "text/event-stream")
				note := func(tok json.RawMessage, n int) {
					fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%s,\"progress\":%d,\"message\":\"step %d\"}}\n\n", tok, n, n)
				}
				note(json.RawMessage(`"clawd-forged-1"`), 1)
				note(req.Params.Meta.ProgressToken, 1)
				note(req.Params.Meta.ProgressToken, 2)
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%q}]}}\n\n", req.ID, string(req.Params.Meta.ProgressToken))
				note(req.Params.Meta.ProgressToken, 3)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			resp := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, imageResultRaw)
			fmt.Fprintf(w, ": hello\r\n\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\r\n\r\n")
			fmt.Fprintf(w, "event: message\r\ndata: %s\r\n\r\n", resp)
		default:
			if len(req.ID) == 0 {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			http.Error(w, "unknown", http.StatusBadRequest)
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

// The same bytes the stdio fake returns for its image tool.
const imageResultRaw = `{"content":[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png","annotations":{"priority":0.5}},{"type":"x-future","payload":{"a":[1,2,3]}}],"structuredContent":{"w":1,"h":1},"isError":true,"_meta":{"fake/trace":"abc"}}`

// Results of a Streamable HTTP upstream pass through as the server sent
// them, from a JSON body and from an SSE stream alike: a content type the
// go-sdk does not know, member order, structuredContent, isError and _meta.
// Tool schemas keep their bytes too.
func TestHTTPResultsByteForByte(t *testing.T) {
	t.Parallel()
	ts := rawHTTPServer(t)
	m, reg := newTestManager(t, Options{})
	m.Apply(context.Background(), []ServerConfig{httpCfg("raw", ts.URL)})
	st := connected(t, m, "raw")
	for _, ti := range st.Tools {
		if ti.Original == "sse" && string(ti.InputSchema) != `{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"number"}}}` {
			t.Errorf("schema %s, want the server's bytes", ti.InputSchema)
		}
	}
	want := map[string]string{
		"content":           `[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png","annotations":{"priority":0.5}},{"type":"x-future","payload":{"a":[1,2,3]}}]`,
		"structuredContent": `{"w":1,"h":1}`,
		"_meta":             `{"fake/trace":"abc"}`,
	}
	for _, tool := range []string{"raw__sse", "raw__json"} {
		res, err := call(t, reg, tool, `{}`)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		r := res.(*tools.CallResult)
		for k, got := range map[string]jsontext.Value{"content": r.Content, "structuredContent": r.StructuredContent, "_meta": r.Meta} {
			if string(got) != want[k] {
				t.Errorf("%s: %s = %s, want byte for byte %s", tool, k, got, want[k])
			}
		}
		if !r.IsError {
			t.Errorf("%s: isError was lost", tool)
		}
	}
}

// The SSE parser finds the response whatever the chunking.
func TestCaptureBodyChunks(t *testing.T) {
	// A notification, then the response over two data lines (joined with a
	// newline, JSON whitespace), ended by CR CR.
	stream := "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"n\"}\r\n\r\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\ndata: \"result\":{\"ok\":true}}\r\r"
	id, _ := jsonrpc.MakeID(float64(1)) // as the SDK decodes a number
	for size := 1; size <= len(stream); size++ {
		s := &slot{}
		b := &captureBody{ReadCloser: io.NopCloser(strings.NewReader(stream)), id: id, slot: s, sse: true}
		buf := make([]byte, size)
		var out []byte
		for {
			n, err := b.Read(buf)
			out = append(out, buf[:n]...)
			if err != nil {
				break
			}
		}
		if string(out) != stream {
			t.Fatalf("chunk %d: the body was changed", size)
		}
		if got := string(s.get()); got != "{\"ok\":true}" {
			t.Fatalf("chunk %d: captured %q", size, got)
		}
	}
}

// Progress from a Streamable HTTP upstream: asked for under clawd's token,
// forwarded while the call runs, and what the server sends after its
// answer (on the same stream) is dropped.
func TestHTTPProgressEndsWithTheAnswer(t *testing.T) {
	t.Parallel()
	ts := rawHTTPServer(t)
	m, reg := newTestManager(t, Options{})
	m.Apply(context.Background(), []ServerConfig{httpCfg("raw", ts.URL)})
	connected(t, m, "raw")
	e, ok := reg.Lookup("raw__prog")
	if !ok {
		t.Fatalf("raw__prog not listed: %v", reg.Names())
	}
	for range 5 {
		log := &progressLog{wants: true}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := e.Tool.Call(tools.WithReporter(ctx, log), jsontext.Value(`{}`))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if text := string(res.(*tools.CallResult).Content); !strings.Contains(text, `\"clawd-`) {
			t.Errorf("the upstream got %s, want a token of clawd's", text)
		}
		time.Sleep(50 * time.Millisecond)
		got, _ := log.snapshot()
		if len(got) == 0 || slices.Contains(got, 3) || got[len(got)-1] > 2 {
			t.Errorf("progress %v: want 1 and 2 (or the newest of them), nothing after the answer", got)
		}
	}
}

// smallReads hands out at most n bytes per Read, as a network connection
// a server trickles into does.
type smallReads struct {
	r io.Reader
	n int
}

func (s *smallReads) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), s.n)]) }

// A server that sends a call's SSE stream as one long line in small pieces
// does not get clawd to scan what it has already scanned with every piece:
// an 8 MiB line in 4 KiB reads took 6 s of CPU (16 MiB, the most the
// capture holds, four times that), for each call.
//
// The test compares an 8 MiB line with a 1 MiB one rather than holding
// either to a wall-clock bound, so it says the same on a fast machine and a
// loaded one (see growthRatio). The line buffer is given its full size,
// touched, before the clock starts: growing it to 8 MiB takes fresh pages
// from the kernel, and on a virtual machine those page faults alone made
// the 8 MiB pass vary from 8 to 100 ms, more than the scan it is here to
// measure.
func TestCaptureBodyLongLineIsLinear(t *testing.T) {
	pass := func(size int) func() {
		body := append([]byte("data: "), strings.Repeat("x", size)...)
		line := append(make([]byte, 0, len(body)), body...)
		return func() {
			b := &captureBody{ReadCloser: io.NopCloser(&smallReads{bytes.NewReader(body), 4096}), slot: &slot{}, sse: true, buf: line[:0]}
			if n, _ := io.Copy(io.Discard, b); n != int64(len(body)) {
				t.Fatalf("read %d of %d bytes", n, len(body))
			}
		}
	}
	growthRatio(t, "passing a line through the capture", pass(1<<20), pass(8<<20), 8)
}
