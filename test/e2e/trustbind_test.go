package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/test/clawdtest"
)

// TestTrustBindStatuses: `clawd trust bind` checks every tool when it is
// saved. A tool of a connected server, of one that is offline (stale) and
// of a disabled one (unavailable) are bound; one of no server, one its
// server does not list, and one of a server that never listed its tools
// (orphan) are refused with the fix, and nothing is saved. Bindings
// survive `trust set`, and unbind removes them.
func TestTrustBindStatuses(t *testing.T) {
	e := clawdtest.NewEnv(t, clawdBin)
	e.MustRun("mcp", "add", "conn", "--stdio", "--", "true")
	e.MustRun("mcp", "add", "down", "--stdio", "--", "true")
	e.MustRun("mcp", "add", "off", "--stdio", "--disabled", "--", "true")
	e.MustRun("mcp", "add", "never", "--stdio", "--", "true")
	db, err := store.Open(e.DBFile(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, st := range map[string]string{"conn": store.StatusConnected, "down": store.StatusStale, "off": store.StatusDisabled} {
		s, err := db.MCPServerByName(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		// The daemon caches exposed names (SERVER__TOOL).
		if err := db.ReplaceServerTools(ctx, s.ID, []store.MCPTool{{Name: name + "__a"}, {Name: name + "__b"}}, time.Now()); err != nil {
			t.Fatal(err)
		}
		if err := db.RecordServerStatus(ctx, s.ID, store.ServerStatus{Status: st, ToolCount: -1}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	ws := "cc:" + e.WorkspaceID()
	out := e.MustRun("trust", "bind", ws, "conn__a", "down__b", "off__a", "never__*")
	for _, want := range []string{"created a row for " + ws + " from cc:*", "bound conn__a to " + ws + ": connected",
		"bound down__b to " + ws + ": stale", "bound off__a to " + ws + ": unavailable", "clawd mcp enable off", "bound never__* to " + ws + ": stale"} {
		if !strings.Contains(out, want) {
			t.Errorf("bind output lacks %q:\n%s", want, out)
		}
	}
	list := e.MustRun("trust", "list", "--json")
	if !strings.Contains(list, `"conn__a": "bind"`) || !strings.Contains(list, `"never__*": "bind"`) {
		t.Errorf("trust list --json: %s", list)
	}
	before := list
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"trust", "bind", ws, "conn__b", "nosuch__t"}, 1, "nosuch__t: orphan: no upstream server offers a tool nosuch__t"},
		{[]string{"trust", "bind", ws, "conn__zzz"}, 1, "server conn lists no tool conn__zzz (it has: conn__a, conn__b)"},
		{[]string{"trust", "bind", ws, "never__t"}, 1, "bind never__* instead"},
		{[]string{"trust", "bind", ws, "nosuch__*"}, 1, "no upstream server is named nosuch"},
		{[]string{"trust", "bind", ws, "Conn__*"}, 1, "did you mean conn?"},
		{[]string{"trust", "bind", ws, "read_file"}, 2, "bindings are for upstream tools"},
		{[]string{"trust", "bind", ws, "a b"}, 2, "a tool name is"},
		{[]string{"trust", "bind", ws, "conn*"}, 2, "the only pattern is SERVER__*"},
		{[]string{"trust", "bind", ws}, 2, "needs ENTITY and at least one TOOL"},
		{[]string{"trust", "bind", "robot:x", "conn__a"}, 2, "unknown kind"},
		{[]string{"trust", "bind", "device:phone", "conn__a"}, 1, "device:phone has no trust registry row"},
		{[]string{"trust", "unbind", ws, "conn__b"}, 1, "nothing was unbound: conn__b not bound to " + ws},
		{[]string{"trust", "unbind", "oc:" + e.WorkspaceID()}, 1, "no row of its own"},
	} {
		_, errs, code := e.Run(c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("clawd %q: exit %d, stderr %q; want exit %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
	if now := e.MustRun("trust", "list", "--json"); now != before {
		t.Errorf("a refused bind changed the registry:\n%s\nwas\n%s", now, before)
	}
	// trust set keeps the bindings it is not told about.
	e.MustRun("trust", "set", ws, "3", "--deny", "down__b")
	list = e.MustRun("trust", "list", "--json")
	if !strings.Contains(list, `"conn__a": "bind"`) || !strings.Contains(list, `"down__b": "deny"`) {
		t.Errorf("after trust set: %s", list)
	}
	if out := e.MustRun("trust", "list"); !strings.Contains(out, "BOUND") || !strings.Contains(out, "conn__a,never__*,off__a") {
		t.Errorf("trust list:\n%s", out)
	}
	if out := e.MustRun("trust", "unbind", ws, "conn__a"); !strings.Contains(out, "still bound: never__*, off__a") {
		t.Errorf("unbind one: %s", out)
	}
	if out := e.MustRun("trust", "unbind", ws); !strings.Contains(out, "has no bindings now") {
		t.Errorf("unbind all: %s", out)
	}
	if list = e.MustRun("trust", "list", "--json"); strings.Contains(list, `"bind"`) || !strings.Contains(list, `"down__b": "deny"`) {
		t.Errorf("after unbind: %s", list)
	}
}
