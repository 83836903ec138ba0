package mcp

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/sandbox"
	"github.com/clawde/clawd/internal/tools"
)

// testChain allows everything except the tools named in deny, refuses
// unknown tools like the real chain, runs allowed calls through the chain's
// own Execute (so outcomes are labelled as in clawd) and records outcomes.
type testChain struct {
	deny     map[string]*jsonrpc.Error
	hidden   map[string]bool
	mu       sync.Mutex
	outcomes []chain.Outcome
}

func (c *testChain) Run(ctx context.Context, call *chain.Call, next chain.Next) chain.Answer {
	if call.Invalid != nil {
		return chain.Answer{Kind: chain.AnswerError, Err: call.Invalid}
	}
	if call.Entry.Tool == nil {
		return chain.Answer{Kind: chain.AnswerError, Err: jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown tool: "+call.ToolName)}
	}
	if e := c.deny[call.ToolName]; e != nil {
		return chain.Answer{Kind: chain.AnswerError, Err: e}
	}
	a, o := chain.Execute(ctx, call, next, nil)
	c.mu.Lock()
	c.outcomes = append(c.outcomes, o)
	c.mu.Unlock()
	return a
}

func (c *testChain) VisibleOf(caller *chain.Caller, all []tools.Entry) []tools.Entry {
	var out []tools.Entry
	for _, e := range all {
		if !c.hidden[e.Tool.Spec().Name] {
			out = append(out, e)
		}
	}
	return out
}

func (c *testChain) lastOutcome() chain.Outcome {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.outcomes) == 0 {
		return chain.Outcome{}
	}
	return c.outcomes[len(c.outcomes)-1]
}

// funcTool is a tool whose Call is a function.
type funcTool struct {
	spec tools.Spec
	fn   func(ctx context.Context, args jsontext.Value) (any, error)
}

func (f *funcTool) Spec() *tools.Spec { return &f.spec }
func (f *funcTool) Call(ctx context.Context, args jsontext.Value) (any, error) {
	return f.fn(ctx, args)
}

func newFuncTool(name string, perm tools.Permission, fn func(ctx context.Context, args jsontext.Value) (any, error)) *funcTool {
	return &funcTool{
		spec: tools.Spec{Name: name, Description: name + " tool", Permission: perm,
			InputSchema: jsontext.Value(`{"type":"object"}`), OutputSchema: jsontext.Value(`{"type":"object"}`)},
		fn: fn,
	}
}

// harness runs a stream session over pipes.
type harness struct {
	t      *testing.T
	in     *io.PipeWriter
	lines  chan string // response lines, read continuously so the server never blocks
	done   chan error
	chain  *testChain
	cancel context.CancelFunc
}

// started receives the tag of each "block" call as it begins.
var started = make(chan string, 64)

func testServer(c *testChain, extra ...tools.Tool) *Server {
	list := []tools.Tool{
		newFuncTool("echo", tools.PermRead, func(ctx context.Context, args jsontext.Value) (any, error) {
			var a map[string]any
			if err := tools.DecodeArgs(args, &a); err != nil {
				return nil, err
			}
			return map[string]any{"args": a}, nil
		}),
		newFuncTool("fail", tools.PermRead, func(ctx context.Context, args jsontext.Value) (any, error) {
			return nil, tools.Errorf("file not found: x")
		}),
		newFuncTool("escape", tools.PermRead, func(ctx context.Context, args jsontext.Value) (any, error) {
			return nil, &sandbox.Violation{Path: "link/x", Reason: "symlink link points outside the workspace root"}
		}),
		newFuncTool("panic", tools.PermRead, func(ctx context.Context, args jsontext.Value) (any, error) {
			var m map[string]int
			m["boom"]++ // nil map write: a real runtime panic
			return nil, nil
		}),
		newFuncTool("block", tools.PermExecute, func(ctx context.Context, args jsontext.Value) (any, error) {
			var a struct {
				Tag string `json:"tag"`
			}
			tools.DecodeArgs(args, &a)
			started <- a.Tag
			<-ctx.Done()
			return nil, ctx.Err()
		}),
	}
	list = append(list, extra...)
	return &Server{
		Version:        "9.9.9",
		Registry:       tools.NewRegistry(&tools.StaticProvider{Name: "test", List: list}),
		Chain:          c,
		MaxConcurrency: 4,
		Extensions: map[string]MethodHandler{
			"clawd/echo": func(ctx context.Context, s *Session, params jsontext.Value) (any, *jsonrpc.Error) {
				return map[string]string{"client": s.ClientName()}, nil
			},
		},
	}
}

func newHarness(t *testing.T, srv *Server) *harness {
	t.Helper()
	h, _ := streamHarness(t, srv)
	return h
}

func (h *harness) send(line string) {
	h.t.Helper()
	if _, err := io.WriteString(h.in, line+"\n"); err != nil {
		h.t.Fatalf("send: %v", err)
	}
}

// recv reads one response line (failing after 5 s).
func (h *harness) recv() string {
	h.t.Helper()
	select {
	case line := <-h.lines:
		if line == "" {
			h.t.Fatal("recv: stream closed")
		}
		if !jsontext.Value(strings.TrimSpace(line)).IsValid() {
			h.t.Fatalf("recv: not valid JSON: %s", line)
		}
		return strings.TrimSpace(line)
	case <-time.After(5 * time.Second):
		h.t.Fatal("recv: no response within 5s")
		return ""
	}
}

func (h *harness) initialize(version string) string {
	h.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"test-client","version":"1"}}}`)
	resp := h.recv()
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return resp
}

type response struct {
	ID     jsontext.Value `json:"id"`
	Result jsontext.Value `json:"result"`
	Error  *struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
}

func decode(t *testing.T, line string) response {
	t.Helper()
	var r response
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("decode %s: %v", line, err)
	}
	return r
}

func TestInitializeNegotiatesVersion(t *testing.T) {
	for _, tt := range []struct{ asked, want string }{
		{"2024-11-05", "2024-11-05"},
		{"2025-03-26", "2025-03-26"},
		{"2025-06-18", "2025-06-18"},
		{"2025-11-25", "2025-11-25"},
		{"2099-01-01", LatestVersion},
		{"garbage", LatestVersion},
	} {
		h := newHarness(t, testServer(&testChain{}))
		r := decode(t, h.initialize(tt.asked))
		var res struct {
			ProtocolVersion string                         `json:"protocolVersion"`
			ServerInfo      struct{ Name, Version string } `json:"serverInfo"`
			Capabilities    map[string]jsontext.Value      `json:"capabilities"`
		}
		if err := json.Unmarshal(r.Result, &res, json.MatchCaseInsensitiveNames(true)); err != nil {
			t.Fatalf("%s: %v", tt.asked, err)
		}
		if res.ProtocolVersion != tt.want {
			t.Errorf("asked %s: got %s, want %s", tt.asked, res.ProtocolVersion, tt.want)
		}
		if res.ServerInfo.Name != "clawde-mcp" || res.ServerInfo.Version != "9.9.9" {
			t.Errorf("serverInfo = %+v", res.ServerInfo)
		}
		if _, ok := res.Capabilities["tools"]; !ok {
			t.Errorf("capabilities lack tools: %v", res.Capabilities)
		}
	}
}

// Each case sends lines after initialize and checks the last response.
func TestStreamProtocol(t *testing.T) {
	tests := []struct {
		name     string
		lines    []string
		wantCode int    // 0: success expected
		wantIn   string // substring of the response checked: the last one, by id order of the lines
	}{
		{"ping", []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`}, 0, `"result":{}`},
		{"parse error then ping", []string{`{oops`, `{"jsonrpc":"2.0","id":2,"method":"ping"}`}, 0, `"id":2`},
		{"parse error has null id", []string{`{"jsonrpc":"2.0","id":3,`}, jsonrpc.CodeParseError, `"id":null`},
		{"invalid request keeps id", []string{`{"jsonrpc":"1.0","id":4,"method":"ping"}`}, jsonrpc.CodeInvalidRequest, `"id":4`},
		{"unknown method", []string{`{"jsonrpc":"2.0","id":5,"method":"nope/nope"}`}, jsonrpc.CodeMethodNotFound, `nope/nope`},
		{"server/discover needs _meta", []string{`{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{}}`}, jsonrpc.CodeInvalidParams, `io.modelcontextprotocol/protocolVersion`},
		{"notification then ping", []string{`{"jsonrpc":"2.0","method":"notifications/whatever"}`, `{"jsonrpc":"2.0","id":6,"method":"ping"}`}, 0, `"id":6`},
		{"stray response ignored", []string{`{"jsonrpc":"2.0","id":99,"result":{}}`, `{"jsonrpc":"2.0","id":7,"method":"ping"}`}, 0, `"id":7`},
		{"blank lines ignored", []string{``, `   `, `{"jsonrpc":"2.0","id":8,"method":"ping"}`}, 0, `"id":8`},
		{"CRLF line", []string{"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}\r"}, 0, `"id":9`},
		{"big id echoed", []string{`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`}, 0, `"id":123456789012345678901234567890`},
		{"string id echoed raw", []string{`{"jsonrpc":"2.0","id":"\u0041b","method":"ping"}`}, 0, `"id":"\u0041b"`},
		{"resources/list", []string{`{"jsonrpc":"2.0","id":10,"method":"resources/list"}`}, 0, `{"resources":[]}`},
		{"prompts/list", []string{`{"jsonrpc":"2.0","id":11,"method":"prompts/list"}`}, 0, `{"prompts":[]}`},
		{"setLevel", []string{`{"jsonrpc":"2.0","id":12,"method":"logging/setLevel","params":{"level":"debug"}}`}, 0, `"result":{}`},
		{"setLevel bad", []string{`{"jsonrpc":"2.0","id":13,"method":"logging/setLevel","params":{"level":"loud"}}`}, jsonrpc.CodeInvalidParams, `level`},
		{"second initialize", []string{`{"jsonrpc":"2.0","id":14,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`}, jsonrpc.CodeInvalidRequest, `already initialized`},
		{"batch rejected on 2025-06-18", []string{`[{"jsonrpc":"2.0","id":15,"method":"ping"}]`}, jsonrpc.CodeInvalidRequest, `batch`},
		{"duplicate name smuggling", []string{`{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"echo","name":"block"}}`}, jsonrpc.CodeInvalidRequest, `duplicate`},
		{"extension method", []string{`{"jsonrpc":"2.0","id":17,"method":"clawd/echo"}`}, 0, `"client":"test-client"`},
		{"tools/call ok", []string{`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"echo","arguments":{"a":1}}}`}, 0,
			`"result":{"content":[{"type":"text","text":"{\"args\":{\"a\":1}}"}],"structuredContent":{"args":{"a":1}},"isError":false}`},
		{"tools/call without arguments", []string{`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"echo"}}`}, 0, `"structuredContent":{"args":{}}`},
		{"tools/call tool error", []string{`{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"fail"}}`}, 0, `"isError":true`},
		{"tools/call unknown tool", []string{`{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"nope"}}`}, jsonrpc.CodeInvalidParams, `unknown tool: nope`},
		{"tools/call no name", []string{`{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{}}`}, jsonrpc.CodeInvalidParams, `name\" is required`},
		{"tools/call Name is not name", []string{`{"jsonrpc":"2.0","id":25,"method":"tools/call","params":{"Name":"echo"}}`}, jsonrpc.CodeInvalidParams, `name\" is required`},
		{"tools/call arguments not object", []string{`{"jsonrpc":"2.0","id":26,"method":"tools/call","params":{"name":"echo","arguments":[1]}}`}, jsonrpc.CodeInvalidParams, `arguments`},
		{"tools/call sandbox violation", []string{`{"jsonrpc":"2.0","id":27,"method":"tools/call","params":{"name":"escape"}}`}, chain.CodeSandboxViolation, `"message":"sandbox_violation: \"link/x\": symlink link points outside`},
		{"tools/call panic is contained", []string{`{"jsonrpc":"2.0","id":28,"method":"tools/call","params":{"name":"panic"}}`, `{"jsonrpc":"2.0","id":29,"method":"ping"}`}, 0, `"id":29`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, testServer(&testChain{}))
			h.initialize("2025-06-18")
			for _, l := range tt.lines {
				h.send(l)
			}
			// Every line but notifications, stray responses and blank lines
			// gets a response; tools/call answers may come in any order, so
			// the one checked is found by the id of the last line.
			want, expect := "", 0
			for _, l := range tt.lines {
				m, perr := jsonrpc.Parse([]byte(l))
				switch {
				case strings.TrimSpace(l) == "":
				case perr != nil:
					expect++
					want = perr.ID.Raw()
				case !m.IsResponse && !m.IsNotification():
					expect++
					want = m.ID.Raw()
				}
			}
			var line string
			for range expect {
				l := h.recv()
				if string(decode(t, l).ID) == want {
					line = l
				}
			}
			r := decode(t, line)
			switch {
			case tt.wantCode == 0 && r.Error != nil:
				t.Fatalf("got error %d %s", r.Error.Code, r.Error.Message)
			case tt.wantCode != 0 && (r.Error == nil || r.Error.Code != tt.wantCode):
				t.Fatalf("got %s, want error %d", line, tt.wantCode)
			}
			if !strings.Contains(line, tt.wantIn) {
				t.Errorf("response %s\ndoes not contain %s", line, tt.wantIn)
			}
		})
	}
}

func TestBeforeInitialize(t *testing.T) {
	h := newHarness(t, testServer(&testChain{}))
	h.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if r := decode(t, h.recv()); r.Error != nil {
		t.Errorf("ping before initialize failed: %+v", r.Error)
	}
	for _, m := range []string{"tools/list", "tools/call", "resources/list"} {
		h.send(`{"jsonrpc":"2.0","id":2,"method":"` + m + `","params":{"name":"echo"}}`)
		r := decode(t, h.recv())
		if r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(r.Error.Message, "initialize") {
			t.Errorf("%s before initialize: %+v", m, r.Error)
		}
	}
	h.send(`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}`)
	if r := decode(t, h.recv()); r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("initialize without protocolVersion: %+v", r)
	}
	if !strings.Contains(h.initialize("2025-06-18"), `"protocolVersion":"2025-06-18"`) {
		t.Error("initialize after a failed one did not succeed")
	}
}

func TestOversizedLine(t *testing.T) {
	srv := testServer(&testChain{})
	srv.MaxMessageBytes = 2048
	h := newHarness(t, srv)
	h.initialize("2025-06-18")
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"x":"` + strings.Repeat("a", 100_000) + `"}}}`
	h.send(big)
	r := decode(t, h.recv())
	if r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(r.Error.Message, "2048") {
		t.Fatalf("oversized line: %+v", r.Error)
	}
	// Just under the cap still works, and the session goes on.
	ok := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"x":"` + strings.Repeat("b", 1900) + `"}}}`
	h.send(ok)
	if r := decode(t, h.recv()); r.Error != nil || string(r.ID) != "2" {
		t.Fatalf("line under the cap: %+v", r)
	}
}

func TestToolsListShowsVisibleToolsWithSchemas(t *testing.T) {
	h := newHarness(t, testServer(&testChain{hidden: map[string]bool{"block": true}}))
	h.initialize("2025-06-18")
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	r := decode(t, h.recv())
	var res struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  jsontext.Value  `json:"inputSchema"`
			OutputSchema jsontext.Value  `json:"outputSchema"`
			Annotations  map[string]bool `json:"annotations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range res.Tools {
		names[tl.Name] = true
		if len(tl.InputSchema) == 0 || len(tl.OutputSchema) == 0 {
			t.Errorf("%s lacks a schema", tl.Name)
		}
	}
	if names["block"] {
		t.Error("a tool the chain hides is listed")
	}
	if !names["echo"] || !names["fail"] {
		t.Errorf("tools listed: %v", names)
	}
	for _, tl := range res.Tools {
		if tl.Name == "echo" && (!tl.Annotations["readOnlyHint"] || tl.Annotations["destructiveHint"]) {
			t.Errorf("read tool annotations = %v", tl.Annotations)
		}
	}
}

func TestChainDenialIsJSONRPCError(t *testing.T) {
	deny := &jsonrpc.Error{Code: chain.CodePolicyDenied, Message: "policy_denied", Data: map[string]any{"reason": "trust_level_too_low"}}
	h := newHarness(t, testServer(&testChain{deny: map[string]*jsonrpc.Error{"echo": deny}}))
	h.initialize("2025-06-18")
	h.send(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo"}}`)
	line := h.recv()
	if want := `{"jsonrpc":"2.0","id":"x","error":{"code":-32003,"message":"policy_denied","data":{"reason":"trust_level_too_low"}}}`; line != want {
		t.Errorf("got  %s\nwant %s", line, want)
	}
}

func TestCancelStopsCallWithoutResponse(t *testing.T) {
	tc := &testChain{}
	h := newHarness(t, testServer(tc))
	h.initialize("2025-06-18")
	h.send(`{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"block","arguments":{"tag":"c1"}}}`)
	waitStarted(t, "c1")
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1","reason":"user"}}`)
	// A cancelled request gets no response; the next one is the ping's.
	h.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if r := decode(t, h.recv()); string(r.ID) != `"p"` {
		t.Fatalf("expected only the ping's response, got id %s", r.ID)
	}
	waitFor(t, func() bool { return tc.lastOutcome().Result == "cancelled" })
}

func TestCancelMatchesIDByValue(t *testing.T) {
	tc := &testChain{}
	h := newHarness(t, testServer(tc))
	h.initialize("2025-06-18")
	h.send(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"block","arguments":{"tag":"n42"}}}`)
	waitStarted(t, "n42")
	// "42" (a string) is not 42: nothing is cancelled.
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"42"}}`)
	time.Sleep(50 * time.Millisecond)
	if tc.lastOutcome().Result != "" {
		t.Fatal("a string id cancelled a numeric one")
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4.2e1}}`)
	waitFor(t, func() bool { return tc.lastOutcome().Result == "cancelled" })
}

func TestConcurrencyIsBounded(t *testing.T) {
	srv := testServer(&testChain{})
	srv.MaxConcurrency = 2
	h := newHarness(t, srv)
	h.initialize("2025-06-18")
	for _, tag := range []string{"a", "b", "c"} {
		h.send(`{"jsonrpc":"2.0","id":"` + tag + `","method":"tools/call","params":{"name":"block","arguments":{"tag":"` + tag + `"}}}`)
	}
	got := map[string]bool{<-started: true, <-started: true}
	select {
	case tag := <-started:
		t.Fatalf("third call %s started while two were running", tag)
	case <-time.After(100 * time.Millisecond):
	}
	// Cancelling one frees a slot for the third.
	var first string
	for tag := range got {
		first = tag
		break
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"` + first + `"}}`)
	waitStarted(t, "")
	// Other requests are not blocked by busy slots.
	h.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if r := decode(t, h.recv()); string(r.ID) != `"p"` {
		t.Fatalf("ping answered %s", r.ID)
	}
}

func TestEOFWaitsForRunningCalls(t *testing.T) {
	slow := newFuncTool("slow", tools.PermRead, func(ctx context.Context, args jsontext.Value) (any, error) {
		select {
		case <-time.After(100 * time.Millisecond):
			return map[string]bool{"done": true}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	h := newHarness(t, testServer(&testChain{}, slow))
	h.initialize("2025-06-18")
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`)
	h.in.Close() // a script that pipes requests and closes stdin
	if line := h.recv(); !strings.Contains(line, `"done":true`) {
		t.Fatalf("call did not answer after EOF: %s", line)
	}
	select {
	case err := <-h.done:
		h.done <- err
		if err != nil {
			t.Errorf("ServeStream = %v, want nil at EOF", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("session did not end after EOF")
	}
}

func TestBatchOnOldProtocol(t *testing.T) {
	h := newHarness(t, testServer(&testChain{}))
	h.initialize("2025-03-26")
	h.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}},{"bad":1}]`)
	line := h.recv()
	var items []response
	if err := json.Unmarshal([]byte(line), &items); err != nil {
		t.Fatalf("batch response %s: %v", line, err)
	}
	if len(items) != 3 {
		t.Fatalf("batch answered %d items, want 3 (the notification gets none): %s", len(items), line)
	}
	if items[2].Error == nil || items[2].Error.Code != jsonrpc.CodeInvalidRequest {
		t.Errorf("invalid element: %+v", items[2])
	}
	h.send(`[]`)
	if r := decode(t, h.recv()); r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidRequest {
		t.Errorf("empty batch: %+v", r)
	}
	h.send(`[{"jsonrpc":"2.0","method":"notifications/x"}]`)
	h.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	if r := decode(t, h.recv()); string(r.ID) != `"after"` {
		t.Errorf("an all-notification batch was answered: %s", r.ID)
	}
}

func TestOutputClosedEndsSession(t *testing.T) {
	srv := testServer(&testChain{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := srv.NewSession(&chain.Caller{AuthMethod: "spawn"}, SessionOptions{})
	done := make(chan error, 1)
	go func() { done <- s.serveStream(context.Background(), inR, outW, nil) }()
	outR.Close()
	go io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	select {
	case err := <-done:
		if !errors.Is(err, ErrOutputClosed) {
			t.Errorf("ServeStream = %v, want ErrOutputClosed", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("session kept running after its output closed")
	}
}

func TestNotifyToolsChanged(t *testing.T) {
	srv := testServer(&testChain{})
	h := newHarness(t, srv)
	h.initialize("2025-06-18")
	h.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	h.recv()
	srv.NotifyToolsChanged()
	if line := h.recv(); line != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
		t.Errorf("got %s", line)
	}
}

func TestHandleHTTPStyle(t *testing.T) {
	srv := testServer(&testChain{})
	s := srv.NewSession(&chain.Caller{AuthMethod: "bearer", Kind: "local", Subject: "ws"}, SessionOptions{HoldPendingCancels: true, ReplyToCancelled: true})
	defer s.Close()
	ctx := context.Background()
	if out := handleBody(s, ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"claude-code","version":"1"}}}`)); !strings.Contains(string(out), `"protocolVersion":"2025-06-18"`) {
		t.Fatalf("initialize: %s", out)
	}
	// The entity is the credential's; the client's name is only a claim.
	if c := s.Caller(); c.EntityID != "local:ws" || c.Claim != "claude-code" || c.ClaimKind != "cc" {
		t.Errorf("caller = %+v, want entity local:ws with claim claude-code (cc)", *c)
	}
	if out := handleBody(s, ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); out != nil {
		t.Errorf("notification answered: %s", out)
	}
	// A cancel that arrives before its call is held and consumed by it.
	handleBody(s, ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`))
	out := handleBody(s, ctx, []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"block","arguments":{"tag":"h7"}}}`))
	if !strings.Contains(string(out), `"isError":true`) || !strings.Contains(string(out), "cancelled") {
		t.Errorf("pre-cancelled call: %s", out)
	}
	// The hold is consumed: the same id runs normally next time.
	out = handleBody(s, ctx, []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}`))
	if !strings.Contains(string(out), `"isError":false`) {
		t.Errorf("id reuse after the held cancel: %s", out)
	}
	// A late cancel for the completed id must not poison the next reuse.
	handleBody(s, ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`))
	out = handleBody(s, ctx, []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}`))
	if !strings.Contains(string(out), `"isError":false`) {
		t.Errorf("late cancel poisoned id reuse: %s", out)
	}
}

func waitStarted(t *testing.T, want string) {
	t.Helper()
	select {
	case tag := <-started:
		if want != "" && tag != want {
			t.Fatalf("started %q, want %q", tag, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("call %q did not start", want)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestCallRacingInitializeSeesTheResolvedCaller: a tools/call handled while
// initialize runs (two POSTs of one session, or a call a stream client sent
// before initialize that waited for a slot) is either refused as sent before
// initialize or runs with the caller initialize resolved, never with one half
// written (run with -race: the race detector also reports the unsynchronized
// read).
func TestCallRacingInitializeSeesTheResolvedCaller(t *testing.T) {
	cc := &callerChain{testChain: &testChain{}}
	srv := testServer(cc.testChain)
	srv.Chain = cc
	for i := 0; i < 200; i++ {
		s := srv.NewSession(&chain.Caller{AuthMethod: "bearer", Kind: "local", Subject: "ws"}, SessionOptions{})
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			handleBody(s, context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"claude-code","version":"1"}}}`))
		}()
		var out []byte
		go func() {
			defer wg.Done()
			out = handleBody(s, context.Background(), []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`))
		}()
		wg.Wait()
		s.Close()
		if strings.Contains(string(out), "not initialized") {
			continue
		}
		if c := cc.last(); c.EntityID != "local:ws" || c.ClaimKind != "cc" {
			t.Fatalf("a call beside initialize ran as %+v (answer %s), want entity local:ws with claim kind cc", c, out)
		}
	}
}
