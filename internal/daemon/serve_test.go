package daemon

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/mcp"
	"github.com/clawde/clawd/internal/transport"
)

func newTestDaemon(t *testing.T, configTOML string) *Daemon {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(home, "run"))
	cfgFile := ""
	if configTOML != "" {
		cfgFile = filepath.Join(home, "c.toml")
		if err := os.WriteFile(cfgFile, []byte(configTOML), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d, err := New(Options{Workspace: t.TempDir(), ConfigFile: cfgFile})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// evalChain is an Authorizer that reports a policy evaluation latency, as
// the chain does once it measures one.
type evalChain struct {
	chain.Authorizer
	d time.Duration
}

func (e evalChain) LastEval() time.Duration { return e.d }

func TestHealth(t *testing.T) {
	d := newTestDaemon(t, "")
	total := len(d.Server.Registry.All())
	h := d.Health()
	if h.Status != "ok" || h.PID != os.Getpid() || h.MCPVersion != mcp.NewestVersion() || h.ActiveTools != total {
		t.Errorf("health = %+v, want ok, pid %d, %s, %d tools", h, os.Getpid(), mcp.NewestVersion(), total)
	}
	if h.UptimeS < 0 || h.UptimeS > 5 {
		t.Errorf("uptime_s = %d for a daemon just started", h.UptimeS)
	}
	if _, ok := d.Server.Chain.(interface{ LastEval() time.Duration }); !ok && h.LastPolicyEvalMS != -1 {
		t.Errorf("last_policy_eval_ms = %d from a chain that does not measure it", h.LastPolicyEvalMS)
	}
	d.Started = time.Now().Add(-90 * time.Second)
	if got := d.Health().UptimeS; got != 90 {
		t.Errorf("uptime_s = %d, want 90", got)
	}
	d.Server.Chain = evalChain{Authorizer: d.Server.Chain, d: 3700 * time.Microsecond}
	if got := d.Health().LastPolicyEvalMS; got != 3 {
		t.Errorf("last_policy_eval_ms = %d, want 3 (from the chain's LastEval)", got)
	}
}

func TestHealthCountsOnlyEnabledTools(t *testing.T) {
	d := newTestDaemon(t, "[tools]\nread_file = false\n")
	total := len(d.Server.Registry.All())
	if got := d.Health().ActiveTools; got != total-1 {
		t.Errorf("active_tools = %d with read_file disabled, want %d", got, total-1)
	}
}

func TestHealthMethod(t *testing.T) {
	d := newTestDaemon(t, "")
	d.RegisterHealth()
	h, ok := d.Server.Extensions[HealthMethod]
	if !ok {
		t.Fatal("clawd/health is not registered")
	}
	res, rerr := h(context.Background(), nil, nil)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if _, ok := res.(transport.Health); !ok {
		t.Errorf("clawd/health returns %T, want transport.Health", res)
	}
	s := d.Server.NewSession(d.StdioCaller("local"), mcp.SessionOptions{})
	defer s.Close()
	handle := func(body string) []byte {
		m, perr := jsonrpc.Parse([]byte(body))
		if perr != nil {
			t.Fatalf("%s: %v", body, perr)
		}
		out, err := s.Handle(context.Background(), &m)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return out
	}
	handle(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	out := handle(`{"jsonrpc":"2.0","id":2,"method":"clawd/health"}`)
	msg, perr := jsonrpc.Parse(out)
	if perr != nil || !msg.IsResponse {
		t.Fatalf("clawd/health answered %s", out)
	}
	if want := `"status":"ok"`; !strings.Contains(string(out), want) {
		t.Errorf("clawd/health answered %s, want %s", out, want)
	}
}
