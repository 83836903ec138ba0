//go:build unix

package upstream

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawde/clawd/internal/support/netguard"
	"github.com/clawde/clawd/internal/support/netguard/netguardtest"
)

// eventLog collects a manager's events.
type eventLog struct {
	mu  sync.Mutex
	evs []Event
}

func (l *eventLog) add(ev Event) {
	l.mu.Lock()
	l.evs = append(l.evs, ev)
	l.mu.Unlock()
}

func (l *eventLog) kinds(server string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.evs {
		if e.Server == server {
			out = append(out, e.Kind)
		}
	}
	return out
}

func (l *eventLog) last(server, kind string) (Event, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.evs) - 1; i >= 0; i-- {
		if l.evs[i].Server == server && l.evs[i].Kind == kind {
			return l.evs[i], true
		}
	}
	return Event{}, false
}

// countingMCP is an MCP server over Streamable HTTP on 127.0.0.1 that
// counts the requests it gets. It accepts any Host header (the SDK's own
// rebinding guard would refuse the test's made-up names).
func countingMCP(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return helloServer() },
		&mcp.StreamableHTTPOptions{DisableLocalhostProtection: true})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, &hits
}

// An origin VerifyOrigin refuses is never contacted: the server is
// unavailable with the refusal (and its fix) as last error, and the
// refusal is an event. Allowing it (a Refresh after the allowlist
// changed) connects.
func TestEgressRefusedBeforeConnecting(t *testing.T) {
	t.Parallel()
	ts, hits := countingMCP(t)
	var allowed atomic.Bool
	var log eventLog
	m, reg := newTestManager(t, Options{
		VerifyOrigin: func(server string, o netguard.Origin) (netguard.Policy, error) {
			if !allowed.Load() {
				return netguard.Policy{}, errors.New("origin " + o.String() + " is not on the egress allowlist; if you trust it: " + netguard.AllowCommand(o, false))
			}
			return netguard.Policy{Origin: o}, nil
		},
		OnEvent: log.add,
	})
	m.Apply(context.Background(), []ServerConfig{httpCfg("web", ts.URL+"/mcp")})
	st := waitFor(t, m, "web", 10*time.Second, "unavailable", func(s Status) bool { return s.State == StateUnavailable })
	o, _ := netguard.OriginOfURL(ts.URL)
	if !strings.Contains(st.LastError, "clawd egress allow "+o.String()) {
		t.Errorf("last error %q does not give the fix", st.LastError)
	}
	if hits.Load() != 0 {
		t.Fatalf("the refused origin got %d requests", hits.Load())
	}
	if ev, ok := log.last("web", EventEgressRefused); !ok || !strings.Contains(ev.Detail, "egress allowlist") {
		t.Errorf("no egress_refused event: %+v", log.kinds("web"))
	}
	if _, ok := reg.Lookup("web__hello"); ok {
		t.Error("a refused server's tool is in the registry")
	}
	allowed.Store(true)
	if err := m.Refresh(context.Background(), "web"); err != nil {
		t.Fatalf("Refresh after allowing: %v", err)
	}
	connected(t, m, "web")
	if ev, ok := log.last("web", EventConnect); !ok || !strings.Contains(ev.Detail, "http http://127.0.0.1:") {
		t.Errorf("connect event %+v", ev)
	}
}

// A name that resolves to 127.0.0.1 (a real listener) is refused by the
// dialer unless its origin was allowed with the private flag: the check is
// of the address dialled, not of the name. The listener sees nothing.
func TestEgressNameResolvingToLoopback(t *testing.T) {
	t.Parallel()
	ts, hits := countingMCP(t)
	port := strconv.Itoa(ts.Listener.Addr().(*net.TCPAddr).Port)
	var private atomic.Bool
	var log eventLog
	m, reg := newTestManager(t, Options{
		Resolver: netguardtest.Resolver(netip.MustParseAddr("127.0.0.1")),
		VerifyOrigin: func(server string, o netguard.Origin) (netguard.Policy, error) {
			return netguard.Policy{Origin: o, Private: private.Load()}, nil
		},
		OnEvent: log.add,
	})
	url := "http://mcp.rebind.example:" + port + "/mcp"
	m.Apply(context.Background(), []ServerConfig{httpCfg("rebind", url)})
	st := waitFor(t, m, "rebind", 10*time.Second, "unavailable", func(s Status) bool { return s.State == StateUnavailable })
	if !strings.Contains(st.LastError, "egress refused: 127.0.0.1 is a loopback address") ||
		!strings.Contains(st.LastError, "clawd egress allow --private http://mcp.rebind.example:"+port) {
		t.Errorf("last error %q", st.LastError)
	}
	if hits.Load() != 0 {
		t.Fatalf("the listener got %d requests through a refused name", hits.Load())
	}
	if _, ok := log.last("rebind", EventEgressRefused); !ok {
		t.Errorf("events %v, want egress_refused", log.kinds("rebind"))
	}
	private.Store(true)
	if err := m.Refresh(context.Background(), "rebind"); err != nil {
		t.Fatalf("Refresh with the private flag: %v", err)
	}
	connected(t, m, "rebind")
	if got := callText(t, reg, "rebind__hello", `{"name":"x"}`); !strings.Contains(got, "hello x") {
		t.Errorf("call: %s", got)
	}
}

// Without VerifyOrigin the default policy still holds: a name resolving to
// the metadata address is refused, with no retry loop (unavailable).
func TestEgressDefaultPolicyRefusesLinkLocal(t *testing.T) {
	t.Parallel()
	m, _ := newTestManager(t, Options{Resolver: netguardtest.Resolver(netip.MustParseAddr("169.254.169.254"))})
	m.Apply(context.Background(), []ServerConfig{httpCfg("meta", "http://metadata.example/mcp")})
	st := waitFor(t, m, "meta", 10*time.Second, "unavailable", func(s Status) bool { return s.State == StateUnavailable })
	if !strings.Contains(st.LastError, "169.254.169.254 is a link-local address") {
		t.Errorf("last error %q", st.LastError)
	}
	// A legacy IPv4 spelling in the URL is refused before anything.
	m.Apply(context.Background(), []ServerConfig{httpCfg("meta", "http://0xa9fea9fe/mcp")})
	st = waitFor(t, m, "meta", 10*time.Second, "unavailable with the legacy-form error", func(s Status) bool {
		return s.State == StateUnavailable && strings.Contains(s.LastError, "legacy form")
	})
	if !strings.Contains(st.LastError, "169.254.169.254") {
		t.Errorf("last error %q does not say which address it is", st.LastError)
	}
}

// A stdio server's life is on record: spawn (path, args, pid), connect,
// disconnect, and a refused executable is a refuse event.
func TestStdioEvents(t *testing.T) {
	t.Parallel()
	var log eventLog
	m, _ := newTestManager(t, Options{
		OnEvent: log.add,
		VerifyLaunch: func(server string, _ Launch) error {
			if server == "no" {
				return errors.New("not allowlisted")
			}
			return nil
		},
	})
	m.Apply(context.Background(), []ServerConfig{fake("ev", "-banner"), fake("no")})
	st := connected(t, m, "ev")
	waitFor(t, m, "no", 10*time.Second, "unavailable", func(s Status) bool { return s.State == StateUnavailable })
	sp, ok := log.last("ev", EventSpawn)
	if !ok || sp.Path != fakeBin || sp.PID <= 0 || len(sp.Args) != 1 || sp.Args[0] != "-banner" {
		t.Errorf("spawn event %+v (status pid %d)", sp, st.PID)
	}
	if c, ok := log.last("ev", EventConnect); !ok || !strings.Contains(c.Detail, "stdio pid "+strconv.Itoa(sp.PID)) {
		t.Errorf("connect event %+v", c)
	}
	if got := log.kinds("no"); len(got) != 1 || got[0] != EventRefuse {
		t.Errorf("refused server's events %v, want [refuse]", got)
	}
	m.Apply(context.Background(), nil)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if d, ok := log.last("ev", EventDisconnect); ok {
			if !strings.Contains(d.Detail, "stopped") {
				t.Errorf("disconnect detail %q", d.Detail)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no disconnect event: %v", log.kinds("ev"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := strings.Join(log.kinds("ev"), ","); got != "spawn,connect,disconnect" {
		t.Errorf("events %s, want spawn,connect,disconnect", got)
	}
}
