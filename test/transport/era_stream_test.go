//go:build linux || darwin

package transport_e2e

import (
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/clawde/clawd/test/clawdtest"
)

// streamKinds are the line transports: stdio (clawd spawned by the test)
// and the unix socket (a daemon, dialled directly). The revision's stdio
// page says its framing and rules apply unchanged to such sockets.
//
// open also returns the clawd process, which a test sends SIGHUP after it
// changed the config (see reconfigure).
var streamKinds = []struct {
	name string
	open func(t *testing.T, e *env) (*clawdtest.Client, *os.Process)
}{
	{"stdio", func(t *testing.T, e *env) (*clawdtest.Client, *os.Process) {
		p := e.Stdio()
		return p.Client, p.Cmd.Process
	}},
	{"unix", func(t *testing.T, e *env) (*clawdtest.Client, *os.Process) {
		d, st := e.Daemon("unix_socket")
		return clawdtest.DialUnix(t, st.Socket), d.Cmd.Process
	}},
}

// reconfigure writes the config and has clawd re-read it at once (SIGHUP)
// rather than waiting for its file poll.
func reconfigure(t *testing.T, e *env, p *os.Process, config string) {
	t.Helper()
	e.WriteConfig(config)
	if err := p.Signal(syscall.SIGHUP); err != nil {
		t.Fatalf("SIGHUP: %v", err)
	}
}

// TestEraStreamDiscoverThenInitialize is what a dual-era client does on
// one connection (stdio page, Backward Compatibility): server/discover
// first, then, having chosen the legacy protocol, initialize. Both must
// succeed, the legacy session must work, and a 2026-07-28 request on the
// same connection is still served statelessly by its own claim.
func TestEraStreamDiscoverThenInitialize(t *testing.T) {
	for _, k := range streamKinds {
		t.Run(k.name, func(t *testing.T) {
			c, _ := k.open(t, newEnv(t))
			checkDiscover(t, result(t, c.Request("server/discover", params26(nil))))

			init := result(t, c.Request("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
				"clientInfo": map[string]any{"name": "raw-wire", "version": "1"}}))
			if init["protocolVersion"] != "2025-11-25" {
				t.Fatalf("initialize after discover: protocolVersion %v, want 2025-11-25", init["protocolVersion"])
			}
			c.Notify("notifications/initialized", nil)
			if names := c.ToolNames(); !slices.Contains(names, "read_file") {
				t.Errorf("legacy tools/list after discover: %v", names)
			}
			res := result(t, c.Request("tools/list", params26(nil)))
			if res["resultType"] != "complete" || !slices.Contains(toolNames26(t, res), "read_file") {
				t.Errorf("2026-07-28 tools/list on the legacy connection: %v", res)
			}
		})
	}
}

// TestEraStreamVersionAndMeta: an unsupported claimed version is -32022
// with data.supported and data.requested (versioning page); a claim
// missing the required clientCapabilities is -32602 (basic/index, _meta);
// the methods the revision removed (changelog: initialize's handshake,
// ping, logging/setLevel, resources/subscribe and unsubscribe) are -32601
// when a request claims 2026-07-28. The connection goes on afterwards.
func TestEraStreamVersionAndMeta(t *testing.T) {
	for _, k := range streamKinds {
		t.Run(k.name, func(t *testing.T) {
			c, _ := k.open(t, newEnv(t))
			old := params26(nil)
			old["_meta"].(map[string]any)["io.modelcontextprotocol/protocolVersion"] = "1900-01-01"
			checkUnsupported(t, c.Request("tools/list", old).Raw, "1900-01-01")
			checkUnsupported(t, c.Request("server/discover", old).Raw, "1900-01-01")

			noCaps := params26(nil)
			delete(noCaps["_meta"].(map[string]any), "io.modelcontextprotocol/clientCapabilities")
			if code, _, _ := errOf(t, c.Request("tools/list", noCaps).Raw); code != -32602 {
				t.Errorf("a claim without clientCapabilities: code %d, want -32602", code)
			}

			for _, m := range []struct {
				method string
				params map[string]any
			}{
				{"initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
					"clientInfo": map[string]any{"name": "raw-wire", "version": "1"}}},
				{"ping", nil},
				{"logging/setLevel", map[string]any{"level": "info"}},
				{"resources/subscribe", map[string]any{"uri": "file:///a.txt"}},
				{"resources/unsubscribe", map[string]any{"uri": "file:///a.txt"}},
			} {
				if code, _, _ := errOf(t, c.Request(m.method, params26(m.params)).Raw); code != -32601 {
					t.Errorf("%s under 2026-07-28: code %d, want -32601 (removed by the revision)", m.method, code)
				}
			}
			if res := result(t, c.Request("tools/list", params26(nil))); res["resultType"] != "complete" {
				t.Errorf("tools/list after the refusals: %v", res)
			}
		})
	}
}

// TestEraStreamResults: every 2026-07-28 result carries resultType;
// tools/list carries ttlMs and cacheScope, private because the list
// depends on the caller's trust, in the same order every time (changelog,
// minor change 3); a tool call's result and a tool error's result carry
// resultType too.
func TestEraStreamResults(t *testing.T) {
	for _, k := range streamKinds {
		t.Run(k.name, func(t *testing.T) {
			c, _ := k.open(t, newEnv(t))
			first := result(t, c.Request("tools/list", params26(nil)))
			if first["resultType"] != "complete" {
				t.Errorf("tools/list resultType %v", first["resultType"])
			}
			checkCacheable(t, "tools/list", first)
			if first["cacheScope"] != "private" {
				t.Errorf("tools/list cacheScope %v, want private (the list depends on the caller's trust)", first["cacheScope"])
			}
			for i := 0; i < 3; i++ {
				again := result(t, c.Request("tools/list", params26(nil)))
				if a, b := toolNames26(t, first), toolNames26(t, again); !slices.Equal(a, b) {
					t.Fatalf("tools/list order changed between calls: %v then %v", a, b)
				}
			}
			ok := result(t, c.Request("tools/call", params26(map[string]any{"name": "read_file", "arguments": map[string]any{"path": "a.txt"}})))
			sc, _ := ok["structuredContent"].(map[string]any)
			if ok["resultType"] != "complete" || ok["isError"] != false || sc["content"] != "hello\n" {
				t.Errorf("read_file under 2026-07-28: %v", ok)
			}
			bad := c.Request("tools/call", params26(map[string]any{"name": "read_file", "arguments": map[string]any{"path": "missing.txt"}}))
			if bad.Result != nil {
				if res := result(t, bad); res["resultType"] != "complete" || res["isError"] != true {
					t.Errorf("read_file of a missing file under 2026-07-28: %s", bad.Raw)
				}
			}
		})
	}
}

// TestEraStreamSubscriptions (patterns/subscriptions): with no
// subscription a 2026-07-28 client gets no list_changed; after
// subscriptions/listen the first message of the subscription is the
// acknowledgement, tagged with the request id and naming only what clawd
// honours; with two subscriptions open a change reaches each, tagged with
// its own id; after the client cancels one, the next change reaches only
// the other, and no response ever comes for either.
func TestEraStreamSubscriptions(t *testing.T) {
	for _, k := range streamKinds {
		t.Run(k.name, func(t *testing.T) {
			e := newEnv(t)
			c, proc := k.open(t, e)
			checkDiscover(t, result(t, c.Request("server/discover", params26(nil))))

			// No subscription: a change is not announced, but it is applied.
			reconfigure(t, e, proc, "[tools]\nread_file = false\n")
			if n, ok := c.NextNotification("notifications/tools/list_changed", 3*time.Second); ok {
				t.Errorf("list_changed sent to a 2026-07-28 client that did not subscribe: %s", n.Raw)
			}
			waitTools(t, c, false)

			c.Send(map[string]any{"jsonrpc": "2.0", "id": "sub-1", "method": "subscriptions/listen", "params": params26(map[string]any{
				"notifications": map[string]any{"toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": []string{"file:///a.txt"}},
			})})
			ack, ok := c.NextNotification("notifications/subscriptions/acknowledged", 10*time.Second)
			if !ok {
				t.Fatal("no notifications/subscriptions/acknowledged")
			}
			if id := metaOf(t, ack.Raw, "io.modelcontextprotocol/subscriptionId"); id != `"sub-1"` {
				t.Errorf("acknowledgement tagged %s, want \"sub-1\": %s", id, ack.Raw)
			}
			params, _ := object(t, ack.Raw)["params"].(map[string]any)
			got, _ := params["notifications"].(map[string]any)
			if got["toolsListChanged"] != true {
				t.Errorf("acknowledged filter %v lacks toolsListChanged", got)
			}
			for _, unsupported := range []string{"promptsListChanged", "resourceSubscriptions"} {
				if _, ok := got[unsupported]; ok {
					t.Errorf("acknowledged filter names %s, which clawd cannot honour (no prompts, no resources): %s", unsupported, ack.Raw)
				}
			}

			// A second, concurrent subscription on the same connection.
			c.Send(map[string]any{"jsonrpc": "2.0", "id": "sub-2", "method": "subscriptions/listen", "params": params26(map[string]any{
				"notifications": map[string]any{"toolsListChanged": true},
			})})
			if ack, ok := c.NextNotification("notifications/subscriptions/acknowledged", 10*time.Second); !ok ||
				metaOf(t, ack.Raw, "io.modelcontextprotocol/subscriptionId") != `"sub-2"` {
				t.Fatalf("second subscription: acknowledgement %q, want one tagged \"sub-2\"", ack.Raw)
			}

			// A change reaches each subscription once, tagged with its id.
			reconfigure(t, e, proc, "[tools]\nread_file = true\n")
			if got := changeTags(t, c, 2); !slices.Equal(got, []string{`"sub-1"`, `"sub-2"`}) {
				t.Errorf("after a change, list_changed tagged %v, want one for \"sub-1\" and one for \"sub-2\"", got)
			}

			// The client ends sub-1 (stdio: notifications/cancelled). The
			// next change reaches sub-2 only: the positive control that the
			// change was announced at all.
			c.Cancel("sub-1")
			reconfigure(t, e, proc, "[tools]\nread_file = false\n")
			if got := changeTags(t, c, 1); !slices.Equal(got, []string{`"sub-2"`}) {
				t.Errorf("after cancelling sub-1, list_changed tagged %v, want only \"sub-2\"", got)
			}
			if n, ok := c.NextNotification("notifications/tools/list_changed", time.Second); ok {
				t.Errorf("list_changed after the subscription was cancelled: %s", n.Raw)
			}
			waitTools(t, c, false) // fails the test on any response to sub-1 or sub-2 meanwhile
		})
	}
}

// changeTags waits (20 s at most) for n list_changed notifications and
// returns their subscription ids, sorted.
func changeTags(t *testing.T, c *clawdtest.Client, n int) []string {
	t.Helper()
	var tags []string
	for range n {
		m, ok := c.NextNotification("notifications/tools/list_changed", 20*time.Second)
		if !ok {
			t.Fatalf("%d list_changed within 20 s of a config change, want %d", len(tags), n)
		}
		tags = append(tags, metaOf(t, m.Raw, "io.modelcontextprotocol/subscriptionId"))
	}
	slices.Sort(tags)
	return tags
}

// waitTools polls 2026-07-28 tools/list until read_file is listed or not,
// as wanted (at most 20 s): proof that a config change was applied.
func waitTools(t *testing.T, c *clawdtest.Client, readFile bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		has := slices.Contains(toolNames26(t, result(t, c.Request("tools/list", params26(nil)))), "read_file")
		if has == readFile {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("read_file listed %v 20 s after the config change", has)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestEraStreamCancel (transports/stdio, Cancellation): the client cancels
// a long bash call with notifications/cancelled; the command's process
// group dies, and clawd "MUST NOT send any further messages for it".
func TestEraStreamCancel(t *testing.T) {
	for _, k := range streamKinds {
		t.Run(k.name, func(t *testing.T) {
			e := newEnv(t)
			c, _ := k.open(t, e)
			c.Send(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params26(map[string]any{
				"name": "bash", "arguments": map[string]any{"command": bashPIDs, "timeout_ms": 120000}})})
			sh, child := readPIDs(t, e.WS)
			c.Cancel(7)
			waitDead(t, "after notifications/cancelled", sh, child)
			// Give a late answer time to arrive, then check none did.
			time.Sleep(500 * time.Millisecond)
			if res := result(t, c.Request("tools/list", params26(nil))); res["resultType"] != "complete" {
				t.Errorf("tools/list after the cancel: %v", res)
			}
			// Request fails the test on any response other than its own,
			// so an answer to the cancelled id 7 has already failed it.
		})
	}
}

// TestEraProgress (patterns/progress) on stdio and the unix socket, under
// 2026-07-28 and after a legacy initialize: a bash call that carries a
// progressToken gets notifications/progress naming that token, with a
// progress value that increases, all before its answer and none after; a
// call without a token gets none.
func TestEraProgress(t *testing.T) {
	for _, k := range streamKinds {
		for _, era := range []string{v26, "2025-11-25"} {
			t.Run(k.name+"/"+era, func(t *testing.T) {
				c, _ := k.open(t, newEnv(t))
				params := func(token any, command string) map[string]any {
					p := map[string]any{"name": "bash", "arguments": map[string]any{"command": command, "timeout_ms": 60000}}
					meta := map[string]any{}
					if era == v26 {
						p = params26(p)
						meta = p["_meta"].(map[string]any)
					} else {
						p["_meta"] = meta
					}
					if token != nil {
						meta["progressToken"] = token
					}
					return p
				}
				if era != v26 {
					c.Initialize("raw-wire")
				}
				c.Send(map[string]any{"jsonrpc": "2.0", "id": "p1", "method": "tools/call", "params": params("tok-1", "sleep 2.3")})
				progress := progressUntilAnswer(t, c, `"p1"`)
				checkProgress(t, progress, `"tok-1"`)
				c.Send(map[string]any{"jsonrpc": "2.0", "id": "p2", "method": "tools/call", "params": params(nil, "sleep 1.3")})
				if got := progressUntilAnswer(t, c, `"p2"`); len(got) > 0 {
					t.Errorf("a call without a progressToken got progress: %v", got)
				}
			})
		}
	}
}

// progressUntilAnswer reads messages until the response with id (JSON
// text) and returns the progress notifications' params that came first;
// then it waits a second more and fails the test on any late progress.
func progressUntilAnswer(t *testing.T, c *clawdtest.Client, id string) []map[string]any {
	t.Helper()
	var got []map[string]any
	deadline := time.Now().Add(30 * time.Second)
	answered := false
	for !answered || time.Now().Before(deadline) {
		line, err := c.ReadLine(time.Until(deadline))
		if err != nil {
			if answered {
				return got
			}
			t.Fatalf("no answer to %s within 30 s: %v", id, err)
		}
		m := object(t, string(line))
		switch {
		case m["method"] == "notifications/progress":
			if answered {
				t.Errorf("progress after the answer to %s: %s", id, line)
			}
			p, _ := m["params"].(map[string]any)
			got = append(got, p)
		case m["method"] == nil && mustJSON(m["id"]) == id:
			answered = true
			if res, ok := m["result"].(map[string]any); !ok || res["isError"] != false {
				t.Fatalf("answer to %s: %s", id, line)
			}
			deadline = time.Now().Add(time.Second)
		default:
			t.Fatalf("unexpected message while waiting for %s: %s", id, line)
		}
	}
	return got
}

// checkProgress: at least one notification, each naming token (JSON
// text), progress strictly increasing.
func checkProgress(t *testing.T, progress []map[string]any, token string) {
	t.Helper()
	if len(progress) == 0 {
		t.Fatal("a 2.3 s bash call with a progressToken got no notifications/progress")
	}
	last := -1.0
	for _, p := range progress {
		v, ok := p["progress"].(float64)
		if mustJSON(p["progressToken"]) != token || !ok || v <= last {
			t.Errorf("progress %v: want token %s and a value above %v", p, token, last)
		}
		last = v
	}
}
