package store

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/support/netguard"
)

func seen(tool, exposed, hashChar, def string) SeenDefinition {
	return SeenDefinition{Tool: tool, Exposed: exposed, SHA256: strings.Repeat(hashChar, 64), Canonical: []byte(def)}
}

// The life of a pinned definition: new until approved, changed when the
// upstream lists another one (reported once), approved again when it
// comes back identical after being removed; approving raises the servers'
// change counter (a daemon applies it), the daemon's own records do not.
func TestToolDefinitionApproval(t *testing.T) {
	db := openTest(t, "")
	srv := mustInsert(t, db, NewStdioServer("up", "/bin/true", nil))
	at := time.Now()
	if _, err := db.ApproveTools(ctx, ApproveRequest{Server: "up", By: "local:cli"}, at); err == nil || !IsValidation(err) {
		t.Fatalf("approving before any tool was seen: %v, want a validation error", err)
	}
	a1 := seen("a", "up__a", "1", `{"name":"a"}`)
	b1 := seen("b", "up__b", "2", `{"name":"b"}`)
	g0 := mcpGen(t, db)
	states, changes, err := db.RecordToolDefinitions(ctx, "up", []SeenDefinition{a1, b1}, at)
	if err != nil {
		t.Fatal(err)
	}
	if states["a"] != DefinitionNew || states["b"] != DefinitionNew || len(changes) != 2 {
		t.Fatalf("first listing: states %v changes %v", states, changes)
	}
	if g := mcpGen(t, db); g != g0 {
		t.Errorf("recording what was seen raised the change counter (%d -> %d): the daemon would apply its own writes", g0, g)
	}
	if _, changes, _ = db.RecordToolDefinitions(ctx, "up", []SeenDefinition{a1, b1}, at); len(changes) != 0 {
		t.Errorf("the same listing again reported %v", changes)
	}
	got, err := db.ApproveTools(ctx, ApproveRequest{Server: "up", By: "local:cli"}, at)
	if err != nil || len(got) != 2 {
		t.Fatalf("approve all: %v %v", got, err)
	}
	if g := mcpGen(t, db); g == g0 {
		t.Error("approving did not raise the change counter: a running daemon would not notice")
	}
	states, _, _ = db.RecordToolDefinitions(ctx, "up", []SeenDefinition{a1, b1}, at)
	if states["a"] != DefinitionApproved || states["b"] != DefinitionApproved {
		t.Fatalf("after approve: %v", states)
	}
	// b changes.
	b2 := seen("b", "up__b", "3", `{"name":"b","description":"now evil"}`)
	states, changes, _ = db.RecordToolDefinitions(ctx, "up", []SeenDefinition{a1, b2}, at)
	if states["b"] != DefinitionChanged || len(changes) != 1 || changes[0].Approved != b1.SHA256 || changes[0].Now != b2.SHA256 {
		t.Fatalf("changed b: states %v changes %+v", states, changes)
	}
	list, _ := db.ToolApprovals(ctx, srv.ID)
	if len(list) != 2 || string(list[1].ApprovedDef) != `{"name":"b"}` || string(list[1].SeenDef) != string(b2.Canonical) {
		t.Fatalf("rows: %+v", list)
	}
	// A reviewed hash that is no longer the one seen is refused.
	if _, err := db.ApproveTools(ctx, ApproveRequest{Server: "up", Tool: "up__b", SHA256: b1.SHA256, By: "x"}, at); err == nil || !strings.Contains(err.Error(), "changed since you looked") {
		t.Fatalf("approve with a stale hash: %v", err)
	}
	if _, err := db.ApproveTools(ctx, ApproveRequest{Server: "up", Tool: "nope", By: "x"}, at); err == nil || !strings.Contains(err.Error(), "clawd mcp tools up") {
		t.Fatalf("approve an unknown tool: %v", err)
	}
	got, err = db.ApproveTools(ctx, ApproveRequest{Server: "up", Tool: "up__b", SHA256: b2.SHA256, By: "x"}, at)
	if err != nil || len(got) != 1 || got[0].Tool != "b" {
		t.Fatalf("approve b by its exposed name: %v %v", got, err)
	}
	// a is removed, then comes back identical: approved without asking;
	// coming back different: changed.
	if _, _, err := db.RecordToolDefinitions(ctx, "up", []SeenDefinition{b2}, at); err != nil {
		t.Fatal(err)
	}
	list, _ = db.ToolApprovals(ctx, srv.ID)
	if list[0].Present {
		t.Error("a removed tool is still present")
	}
	states, changes, _ = db.RecordToolDefinitions(ctx, "up", []SeenDefinition{a1, b2}, at)
	if states["a"] != DefinitionApproved || len(changes) != 0 {
		t.Fatalf("a back identical: %v %v", states, changes)
	}
	a2 := seen("a", "up__a", "4", `{"name":"a","annotations":{"destructiveHint":true}}`)
	db.RecordToolDefinitions(ctx, "up", []SeenDefinition{b2}, at)
	if states, _, _ = db.RecordToolDefinitions(ctx, "up", []SeenDefinition{a2, b2}, at); states["a"] != DefinitionChanged {
		t.Fatalf("a back changed: %v", states)
	}
	// Removing the server removes its approvals.
	if err := db.DeleteServer(ctx, srv.ID); err != nil {
		t.Fatal(err)
	}
	if list, _ = db.ToolApprovals(ctx, 0); len(list) != 0 {
		t.Fatalf("approvals outlived their server: %+v", list)
	}
}

// TestApproveReviewedAllOrNothing: reviewed definitions are approved in
// one transaction, each by the hash the user was shown; when one of them
// changed (or went away) since, none is approved.
func TestApproveReviewedAllOrNothing(t *testing.T) {
	db := openTest(t, "")
	srv := mustInsert(t, db, NewStdioServer("up", "/bin/true", nil))
	at := time.Now()
	a1, b1 := seen("a", "up__a", "1", `{"name":"a"}`), seen("b", "up__b", "2", `{"name":"b"}`)
	if _, _, err := db.RecordToolDefinitions(ctx, "up", []SeenDefinition{a1, b1}, at); err != nil {
		t.Fatal(err)
	}
	shown := []ReviewedDefinition{{Tool: "a", SHA256: a1.SHA256}, {Tool: "b", SHA256: b1.SHA256}}
	// b changes between the review and the answer.
	b2 := seen("b", "up__b", "3", `{"name":"b","description":"now evil"}`)
	if _, _, err := db.RecordToolDefinitions(ctx, "up", []SeenDefinition{a1, b2}, at); err != nil {
		t.Fatal(err)
	}
	got, err := db.ApproveTools(ctx, ApproveRequest{Server: "up", Reviewed: shown, By: "local:cli"}, at)
	if err == nil || !IsValidation(err) || !strings.Contains(err.Error(), "nothing was approved") || got != nil {
		t.Fatalf("approve with one definition changed: %v %v, want a validation error and nothing", got, err)
	}
	approved := func() (n int) {
		list, err := db.ToolApprovals(ctx, srv.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range list {
			if a.State() == DefinitionApproved {
				n++
			}
		}
		return n
	}
	if n := approved(); n != 0 {
		t.Fatalf("%d definitions approved after the refused approval, want 0 (a must not be approved alone)", n)
	}
	gone := []ReviewedDefinition{{Tool: "a", SHA256: a1.SHA256}, {Tool: "c", SHA256: b1.SHA256}}
	if _, err := db.ApproveTools(ctx, ApproveRequest{Server: "up", Reviewed: gone, By: "local:cli"}, at); err == nil || !strings.Contains(err.Error(), "no longer has the tool") {
		t.Fatalf("approve a tool that is gone: %v", err)
	}
	if _, err := db.ApproveTools(ctx, ApproveRequest{Server: "up", Tool: "a", Reviewed: shown[:1], By: "x"}, at); err == nil || !IsValidation(err) {
		t.Fatalf("Reviewed with Tool: %v, want a validation error", err)
	}
	shown[1].SHA256 = b2.SHA256     // reviewed again
	shown = append(shown, shown[0]) // a tool named twice is approved (and returned) once
	got, err = db.ApproveTools(ctx, ApproveRequest{Server: "up", Reviewed: shown, By: "local:cli"}, at)
	if err != nil || len(got) != 2 || approved() != 2 {
		t.Fatalf("approve as reviewed: %v %v (%d approved)", got, err, approved())
	}
}

// TestPendingApprovals: what `mcp approve` shows is what ApproveTools
// picks (every listed tool, or one by upstream then exposed name), less
// what is approved, with the same errors.
func TestPendingApprovals(t *testing.T) {
	db := openTest(t, "")
	mustInsert(t, db, NewStdioServer("up", "/bin/true", nil))
	at := time.Now()
	if _, err := db.PendingApprovals(ctx, "up", ""); err == nil || !strings.Contains(err.Error(), "has not seen the tools") {
		t.Fatalf("before any listing: %v", err)
	}
	a1, b1 := seen("a", "up__a", "1", `{"name":"a"}`), seen("b", "up__b", "2", `{"name":"b"}`)
	if _, _, err := db.RecordToolDefinitions(ctx, "up", []SeenDefinition{a1, b1}, at); err != nil {
		t.Fatal(err)
	}
	names := func(list []ToolApproval) (out []string) {
		for _, a := range list {
			out = append(out, a.Tool)
		}
		return out
	}
	if got, err := db.PendingApprovals(ctx, "up", ""); err != nil || strings.Join(names(got), ",") != "a,b" {
		t.Fatalf("all pending: %v %v", names(got), err)
	}
	if got, err := db.PendingApprovals(ctx, "up", "up__b"); err != nil || strings.Join(names(got), ",") != "b" {
		t.Fatalf("by exposed name: %v %v", names(got), err)
	}
	if _, err := db.ApproveTools(ctx, ApproveRequest{Server: "up", Tool: "a", By: "x"}, at); err != nil {
		t.Fatal(err)
	}
	if got, err := db.PendingApprovals(ctx, "up", ""); err != nil || strings.Join(names(got), ",") != "b" {
		t.Fatalf("after approving a: %v %v", names(got), err)
	}
	if _, err := db.PendingApprovals(ctx, "up", "nope"); err == nil || !strings.Contains(err.Error(), "clawd mcp tools up") {
		t.Fatalf("unknown tool: %v", err)
	}
}

// A consent's confirm (its audit row) runs inside the change's
// transaction when something changes, and its error rolls the change
// back: approvals, the allowlist and the egress list stay as they were.
func TestConsentConfirmRollsBack(t *testing.T) {
	db := openTest(t, "")
	mustInsert(t, db, NewStdioServer("up", "/bin/true", nil))
	at := time.Now()
	if _, _, err := db.RecordToolDefinitions(ctx, "up", []SeenDefinition{seen("a", "up__a", "1", `{"name":"a"}`)}, at); err != nil {
		t.Fatal(err)
	}
	refuse := errors.New("no audit row")
	calls := 0
	no := func() error { calls++; return refuse }
	if _, err := db.ApproveTools(ctx, ApproveRequest{Server: "up", By: "local:cli"}, at,
		func(got []ToolApproval) error { calls++; return refuse }); !errors.Is(err, refuse) {
		t.Fatalf("approve tools: %v", err)
	}
	if p, err := db.PendingApprovals(ctx, "up", ""); err != nil || len(p) != 1 {
		t.Fatalf("a refused approval was stored: %v %v", p, err)
	}
	sum := strings.Repeat("ab", 32)
	if _, err := db.Approve(ctx, "up", sum, nil, no); !errors.Is(err, refuse) {
		t.Fatalf("approve: %v", err)
	}
	if rows, _ := db.Allowlist(ctx); len(rows) != 0 {
		t.Fatalf("a refused allowlist entry was stored: %v", rows)
	}
	o, _ := netguard.ParseOrigin("https://api.example.com")
	if _, err := db.AllowEgress(ctx, o, false, no); !errors.Is(err, refuse) {
		t.Fatalf("allow egress: %v", err)
	}
	if rows, _ := db.EgressAllowlist(ctx); len(rows) != 0 {
		t.Fatalf("a refused egress entry was stored: %v", rows)
	}
	// Withdrawals: stored first without a confirm, then refused.
	if _, err := db.Approve(ctx, "up", sum, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AllowEgress(ctx, o, false); err != nil {
		t.Fatal(err)
	}
	if n, err := db.DisallowServer(ctx, "up", "", no); !errors.Is(err, refuse) || n != 0 {
		t.Fatalf("disallow: %d %v", n, err)
	}
	if removed, err := db.DisallowEgress(ctx, o, no); !errors.Is(err, refuse) || removed {
		t.Fatalf("disallow egress: %v %v", removed, err)
	}
	if a, _ := db.Allowlist(ctx); len(a) != 1 {
		t.Fatalf("a refused withdrawal removed the allowlist entry: %v", a)
	}
	if e, _ := db.EgressAllowlist(ctx); len(e) != 1 {
		t.Fatalf("a refused withdrawal removed the egress entry: %v", e)
	}
	// What changes nothing runs no confirm.
	calls = 0
	if changed, err := db.AllowEgress(ctx, o, false, no); err != nil || changed {
		t.Fatalf("allow egress again: %v %v", changed, err)
	}
	if n, err := db.DisallowServer(ctx, "other", "", no); err != nil || n != 0 {
		t.Fatalf("disallow of nothing: %d %v", n, err)
	}
	if calls != 0 {
		t.Errorf("%d confirms ran for changes that changed nothing", calls)
	}
}

// A server that lists new tool names at every listing (list_changed lets
// it list about once a second) must not grow the table without end, nor
// the read of it every listing makes: a tool that is gone and was never
// approved leaves nothing worth keeping. An approved one stays (it is
// offered again when it comes back identical).
func TestUnapprovedToolsThatGoAwayAreForgotten(t *testing.T) {
	db := openTest(t, "")
	srv := mustInsert(t, db, NewStdioServer("up", "/bin/true", nil))
	at := time.Now()
	keep := seen("keep", "up__keep", "1", `{"name":"keep"}`)
	if _, _, err := db.RecordToolDefinitions(ctx, "up", []SeenDefinition{keep}, at); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ApproveTools(ctx, ApproveRequest{Server: "up", By: "local:cli"}, at); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		name := fmt.Sprintf("t%d", i)
		if _, _, err := db.RecordToolDefinitions(ctx, "up", []SeenDefinition{seen(name, "up__"+name, "2", `{"name":"`+name+`"}`)}, at); err != nil {
			t.Fatal(err)
		}
	}
	list, err := db.ToolApprovals(ctx, srv.ID)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range list {
		names = append(names, a.Tool)
	}
	if len(list) != 2 || list[0].Tool != "keep" || list[0].Present || list[1].Tool != "t49" || !list[1].Present {
		t.Fatalf("after 50 listings of one new tool each: rows %v, want the approved keep (absent) and t49", names)
	}
}

// clawd's own hint names a tool by its exposed name (clawd mcp approve gh
// gh__create_issue). The upstream chooses its tools' names, so it can list
// a second tool whose own name is that exposed name: the approval must
// still be of the tool clawd named, not of the one the server slipped in.
func TestApproveByExposedNameIsNotHijacked(t *testing.T) {
	db := openTest(t, "")
	mustInsert(t, db, NewStdioServer("gh", "/bin/true", nil))
	at := time.Now()
	real1 := seen("create_issue", "gh__create_issue", "1", `{"name":"create_issue"}`)
	if _, _, err := db.RecordToolDefinitions(ctx, "gh", []SeenDefinition{real1}, at); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ApproveTools(ctx, ApproveRequest{Server: "gh", By: "local:cli"}, at); err != nil {
		t.Fatal(err)
	}
	real2 := seen("create_issue", "gh__create_issue", "2", `{"name":"create_issue","description":"now evil"}`)
	decoy := seen("gh__create_issue", "gh__gh__create_issue", "3", `{"name":"gh__create_issue"}`)
	if _, _, err := db.RecordToolDefinitions(ctx, "gh", []SeenDefinition{real2, decoy}, at); err != nil {
		t.Fatal(err)
	}
	got, err := db.ApproveTools(ctx, ApproveRequest{Server: "gh", Tool: "gh__create_issue", By: "local:cli"}, at)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Tool != "create_issue" || got[0].Exposed != "gh__create_issue" {
		t.Fatalf("approve gh__create_issue approved %+v, want the tool exposed under that name", got)
	}
	// The decoy is still reachable by its own exposed name.
	if got, err = db.ApproveTools(ctx, ApproveRequest{Server: "gh", Tool: "gh__gh__create_issue", By: "local:cli"}, at); err != nil || len(got) != 1 || got[0].Tool != "gh__create_issue" {
		t.Fatalf("approve by the decoy's exposed name: %+v %v", got, err)
	}
}
