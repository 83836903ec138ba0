package store

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/support/netguard"
)

func origin(t *testing.T, s string) netguard.Origin {
	t.Helper()
	o, err := netguard.ParseOrigin(s)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestEgressAllowlist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	cli, daemon := openTest(t, path), openTest(t, path)
	o := origin(t, "https://MCP.example.com")
	if _, ok, _ := daemon.EgressPolicy(o); ok {
		t.Fatal("allowed before allowlisting")
	}
	if changed, err := cli.AllowEgress(ctx, o, false); !changed || err != nil {
		t.Fatalf("AllowEgress = %v, %v", changed, err)
	}
	if changed, err := cli.AllowEgress(ctx, o, false); changed || err != nil {
		t.Fatalf("second AllowEgress = %v, %v; want false, nil", changed, err)
	}
	time.Sleep(FreshFor)
	p, ok, err := daemon.EgressPolicy(origin(t, "https://mcp.example.com:443/"))
	if !ok || err != nil || p.Private {
		t.Fatalf("EgressPolicy after allow = %+v, %v, %v", p, ok, err)
	}
	for _, other := range []string{"http://mcp.example.com:443", "https://mcp.example.com:8443", "https://example.com", "https://mcp.example.com.evil.test"} {
		if _, ok, _ := daemon.EgressPolicy(origin(t, other)); ok {
			t.Errorf("%s allowed by the entry for %s", other, o)
		}
	}
	// The private flag changes in place.
	if changed, err := cli.AllowEgress(ctx, o, true); !changed || err != nil {
		t.Fatalf("AllowEgress --private = %v, %v", changed, err)
	}
	time.Sleep(FreshFor)
	if p, ok, _ := daemon.EgressPolicy(o); !ok || !p.Private {
		t.Errorf("private flag not seen: %+v %v", p, ok)
	}
	list, err := daemon.EgressAllowlist(ctx)
	if err != nil || len(list) != 1 || list[0].Origin != "https://mcp.example.com:443" || !list[0].Private {
		t.Errorf("EgressAllowlist = %+v, %v", list, err)
	}
	// The daemon's recheck compares whole lists from the same snapshot;
	// what it gets is its own copy.
	got, err := daemon.EgressOrigins()
	if err != nil || len(got) != 1 || got["https://mcp.example.com:443"] != true {
		t.Errorf("EgressOrigins = %v, %v", got, err)
	}
	got["https://other.example:443"] = false
	if _, ok, _ := daemon.EgressPolicy(origin(t, "https://other.example")); ok {
		t.Error("writing EgressOrigins' map changed the snapshot")
	}
	if removed, err := cli.DisallowEgress(ctx, o); !removed || err != nil {
		t.Errorf("DisallowEgress = %v, %v", removed, err)
	}
	if removed, _ := cli.DisallowEgress(ctx, o); removed {
		t.Error("second DisallowEgress removed something")
	}
	time.Sleep(FreshFor)
	if _, ok, _ := daemon.EgressPolicy(o); ok {
		t.Error("still allowed after removal")
	}
	if got, err := daemon.EgressOrigins(); err != nil || len(got) != 0 {
		t.Errorf("EgressOrigins after removal = %v, %v", got, err)
	}
}

func TestEgressEntryChecks(t *testing.T) {
	db := openTest(t, "")
	for _, tc := range []struct {
		origin  string
		private bool
		err     string
	}{
		{"http://10.0.0.5:8080", false, "clawd egress allow --private http://10.0.0.5:8080"},
		{"http://169.254.169.254", false, "link-local"},
		{"http://[fd00::1]:80", false, "--private"},
		{"http://0.0.0.0:8080", true, "never connects"},
		{"http://[::]:8080", true, "never connects"},
		{"http://224.0.0.1:80", true, "never connects"},
	} {
		_, err := db.AllowEgress(ctx, origin(t, tc.origin), tc.private)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("AllowEgress(%s, private=%v) = %v, want an error with %q", tc.origin, tc.private, err, tc.err)
		}
	}
	for _, tc := range []struct {
		origin  string
		private bool
	}{{"http://127.0.0.1:8080", false}, {"http://localhost:8080", false}, {"http://10.0.0.5:8080", true}, {"https://mcp.example.com", false}} {
		if _, err := db.AllowEgress(ctx, origin(t, tc.origin), tc.private); err != nil {
			t.Errorf("AllowEgress(%s, %v): %v", tc.origin, tc.private, err)
		}
	}
	// The table refuses what the Go code would never write.
	r := raw(t, db.path)
	for _, bad := range []string{
		`INSERT INTO cd_egress_allowlist VALUES ('https', 'EXAMPLE.com', 443, 0, 'x')`,
		`INSERT INTO cd_egress_allowlist VALUES ('https', 'example.com.', 443, 0, 'x')`,
		`INSERT INTO cd_egress_allowlist VALUES ('ftp', 'example.com', 21, 0, 'x')`,
		`INSERT INTO cd_egress_allowlist VALUES ('https', 'example.com', 0, 0, 'x')`,
		`INSERT INTO cd_egress_allowlist VALUES ('https', 'exa mple.com', 443, 0, 'x')`,
		`INSERT INTO cd_egress_allowlist VALUES ('https', 'example.org', 443, 2, 'x')`,
	} {
		if _, err := r.Exec(bad); err == nil {
			t.Errorf("the table accepted %s", bad)
		}
	}
}

// The audit filter for one server: its events, its proxied calls under any
// exposed name, and nothing of a server whose name it is a prefix of.
func TestAuditServerFilter(t *testing.T) {
	db := openTest(t, "")
	w, err := db.Audit()
	if err != nil {
		t.Fatal(err)
	}
	rec := func(tool, server, reason string) {
		t.Helper()
		r := &chain.AuditRecord{EntityID: "clawd", ToolID: tool, Result: chain.ResultAllow, Reason: reason,
			Step: "upstream", Transport: "daemon", TrustLevel: chain.NoTrustLevel, Server: server}
		if _, err := w.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	rec("mcp:a", "", "spawn a")
	rec("mcp:a/read", "", "approve a/read")
	rec("a__read", "a", "call a")
	rec("a_1234abcd", "a", "hashed call a")    // a shortened exposed name
	rec("a__gone", "", "unknown tool of a")    // unknown tool, no server
	rec("mcp:a_b", "", "spawn a_b")            // "a" is a prefix of "a_b"
	rec("a_b__read", "a_b", "call a_b")        // and of its tools
	rec("mcp:ab", "", "spawn ab")              // LIKE's '_' would match this
	rec("mcp:a_/x", "", "event of a_ (sic)")   // not a valid name, still not a's
	rec("read_file", "", "built-in")           // built-in
	rec("x__a__read", "x", "call x of tool a") // another server's tool named a__read
	rows, err := db.QueryAudit(ctx, AuditFilter{Server: "A"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.Reason)
	}
	want := []string{"spawn a", "approve a/read", "call a", "hashed call a", "unknown tool of a"}
	if !slices.Equal(got, want) {
		t.Errorf("--server a selected %q, want %q", got, want)
	}
	rows, _ = db.QueryAudit(ctx, AuditFilter{Server: "a_b"})
	if len(rows) != 2 || rows[1].Server == nil || *rows[1].Server != "a_b" {
		t.Errorf("--server a_b: %+v", rows)
	}
}
