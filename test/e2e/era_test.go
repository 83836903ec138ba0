package e2e

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawde/clawd/test/clawdtest"
)

// TestEraGoSDK drives clawd with the official go-sdk client over every
// transport in both protocol eras: the default client (which probes
// server/discover first) must speak 2026-07-28, the same client pinned to
// 2025-11-25 the legacy initialize handshake. In each cell it lists tools,
// calls read_file and gets notifications/tools/list_changed after a config
// change (through subscriptions/listen under 2026-07-28, on the session
// under 2025-11-25), and it checks on the recorded wire, not only in what
// the client reports, that the era really is the one negotiated.
// TestCancelKillsBash cancels a long bash call over the same table.
func TestEraGoSDK(t *testing.T) {
	for _, tr := range transports() {
		t.Run(tr.name, func(t *testing.T) {
			e := newEnv(t)
			e.Write("a.txt", "hello\n")
			wire := &clawdtest.Wire{}
			changed := make(chan struct{}, 16)
			opts := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				changed <- struct{}{}
			}}
			cs := tr.dial(t, e, dial{opts: opts, wire: wire})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()

			if !slices.Contains(toolNames(t, ctx, cs), "read_file") {
				t.Fatal("tools/list lacks read_file")
			}
			if sc, res := call(t, cs, "read_file", map[string]any{"path": "a.txt"}); res.IsError || sc["content"] != "hello\n" {
				t.Fatalf("read_file: %s %v", textOf(res), sc)
			}

			// A config change that hides read_file must reach the client.
			// Legacy HTTP has no channel for it: clawd answers the
			// standalone GET stream with 405 (docs/transports.md), so there
			// the change shows only in the next tools/list.
			e.WriteConfig("[tools]\nread_file = false\n")
			e.reload()
			notified := !(tr.kind == "http" && tr.era.want == "2025-11-25")
			if notified {
				select {
				case <-changed:
				case <-time.After(20 * time.Second):
					t.Fatal("no notifications/tools/list_changed within 20 s of a config change that hides read_file")
				}
			} else {
				deadline := time.Now().Add(20 * time.Second)
				for slices.Contains(toolNames(t, ctx, cs), "read_file") && time.Now().Before(deadline) {
					time.Sleep(100 * time.Millisecond)
				}
			}
			if slices.Contains(toolNames(t, ctx, cs), "read_file") {
				t.Error("after the change, tools/list still offers the switched-off read_file")
			}

			if tr.era.want == "2026-07-28" {
				assertModernWire(t, tr.kind, wire, cs)
			} else {
				assertLegacyWire(t, tr.kind, wire, cs, notified)
			}
		})
	}
}

func toolNames(t *testing.T, ctx context.Context, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// assertModernWire: the session was stateless 2026-07-28 from the first
// message on. server/discover answered with a DiscoverResult, no
// initialize was sent, every request carried the revision in _meta,
// every result carried resultType, list_changed came on a
// subscriptions/listen stream (acknowledged, tagged with its id) and, over
// HTTP, every POST carried the version header and no session id was minted.
func assertModernWire(t *testing.T, kind string, wire *clawdtest.Wire, cs *mcp.ClientSession) {
	t.Helper()
	if sent := wire.Sent("initialize"); len(sent) > 0 {
		t.Errorf("the client fell back to initialize: %s", sent[0].Raw)
	}
	disc, ok := wire.ResponseTo("server/discover")
	if !ok || len(disc.Result) == 0 {
		t.Fatalf("server/discover got no result (response %q)", disc.Raw)
	}
	var dr struct {
		ResultType        string         `json:"resultType"`
		SupportedVersions []string       `json:"supportedVersions"`
		Capabilities      map[string]any `json:"capabilities"`
		TTLMs             *int64         `json:"ttlMs"`
		CacheScope        string         `json:"cacheScope"`
		Meta              struct {
			ServerInfo *struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"io.modelcontextprotocol/serverInfo"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(disc.Result, &dr, json.RejectUnknownMembers(false)); err != nil {
		t.Fatalf("server/discover result %s: %v", disc.Result, err)
	}
	if dr.ResultType != "complete" || !slices.Contains(dr.SupportedVersions, "2026-07-28") || dr.Capabilities["tools"] == nil ||
		dr.TTLMs == nil || *dr.TTLMs < 0 || (dr.CacheScope != "public" && dr.CacheScope != "private") ||
		dr.Meta.ServerInfo == nil || dr.Meta.ServerInfo.Name == "" {
		t.Errorf("server/discover result lacks what the schema requires (resultType complete, supportedVersions with 2026-07-28, capabilities.tools, ttlMs, cacheScope, _meta serverInfo): %s", disc.Result)
	}
	for _, m := range wire.Messages() {
		switch {
		case m.Sent && m.Method != "" && len(m.ID) > 0:
			meta, _ := m.Params["_meta"].(map[string]any)
			if meta["io.modelcontextprotocol/protocolVersion"] != "2026-07-28" {
				t.Errorf("request sent without the 2026-07-28 claim: %s", m.Raw)
			}
		case !m.Sent && m.Method == "" && len(m.Result) > 0:
			var r struct {
				ResultType string `json:"resultType"`
			}
			if json.Unmarshal(m.Result, &r, json.RejectUnknownMembers(false)) != nil || r.ResultType == "" {
				t.Errorf("2026-07-28 result without resultType: %s", m.Raw)
			}
		}
	}
	listens := wire.Sent("subscriptions/listen")
	if len(listens) != 1 {
		t.Fatalf("the client sent %d subscriptions/listen, want 1", len(listens))
	}
	subID := string(listens[0].ID)
	acks := wire.Received("notifications/subscriptions/acknowledged")
	if len(acks) == 0 || metaString(acks[0], "io.modelcontextprotocol/subscriptionId") != subID {
		t.Errorf("no acknowledgement tagged with subscription %s: %v", subID, acks)
	}
	changes := wire.Received("notifications/tools/list_changed")
	if len(changes) == 0 {
		t.Error("the wire shows no notifications/tools/list_changed")
	}
	for _, c := range changes {
		if metaString(c, "io.modelcontextprotocol/subscriptionId") != subID {
			t.Errorf("list_changed not tagged with subscription %s: %s", subID, c.Raw)
		}
	}
	if kind == "http" {
		if id := cs.ID(); id != "" {
			t.Errorf("the client holds session id %q under 2026-07-28", id)
		}
		for _, x := range wire.Exchanges() {
			if x.Method != http.MethodPost {
				continue
			}
			if v := x.Header.Get("MCP-Protocol-Version"); v != "2026-07-28" {
				t.Errorf("POST %s sent MCP-Protocol-Version %q", x.Body, v)
			}
			if id := x.RespHeader.Get("Mcp-Session-Id"); id != "" {
				t.Errorf("clawd minted session id %q under 2026-07-28 (answer to %s)", id, x.Body)
			}
		}
	}
}

// assertLegacyWire: the pinned client did the 2025-11-25 handshake and
// clawd agreed to 2025-11-25; list_changed (where notified) came unsolicited
// on the session, with no subscription; over HTTP a session id was minted.
func assertLegacyWire(t *testing.T, kind string, wire *clawdtest.Wire, cs *mcp.ClientSession, notified bool) {
	t.Helper()
	if sent := wire.Sent("server/discover"); len(sent) > 0 {
		t.Errorf("the client pinned to 2025-11-25 probed server/discover: %s", sent[0].Raw)
	}
	init, ok := wire.ResponseTo("initialize")
	var ir struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if !ok || json.Unmarshal(init.Result, &ir, json.RejectUnknownMembers(false)) != nil || ir.ProtocolVersion != "2025-11-25" {
		t.Fatalf("initialize answered %q, want a result with protocolVersion 2025-11-25", init.Raw)
	}
	if n := len(wire.Sent("subscriptions/listen")); n > 0 {
		t.Errorf("the legacy client sent %d subscriptions/listen", n)
	}
	changes := wire.Received("notifications/tools/list_changed")
	if notified && len(changes) == 0 {
		t.Error("the wire shows no notifications/tools/list_changed")
	}
	for _, c := range changes {
		if metaString(c, "io.modelcontextprotocol/subscriptionId") != "" {
			t.Errorf("legacy list_changed carries a subscription id: %s", c.Raw)
		}
	}
	if kind == "http" && cs.ID() == "" {
		t.Error("no Mcp-Session-Id under 2025-11-25 over HTTP")
	}
}

// metaString is params._meta[key] of m as JSON text ("" when absent), so
// numeric and string ids compare as they were sent.
func metaString(m clawdtest.WireMessage, key string) string {
	meta, _ := m.Params["_meta"].(map[string]any)
	v, ok := meta[key]
	if !ok {
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}
