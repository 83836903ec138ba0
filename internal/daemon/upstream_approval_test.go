package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/upstream"
)

// A server that lists many new or changed definitions at once (one that
// renames every tool at each listing, 1000 tools each time) makes a
// bounded number of rows per listing: the first maxChangeRows one by one,
// then one row that counts the rest and says where to see them. Each
// listing's new definitions are on record, in count if not by name.
func TestDefinitionChangeRowsBounded(t *testing.T) {
	d := newTestDaemon(t, "")
	if _, err := d.Store.InsertServer(context.Background(), store.NewStdioServer("ev", "/bin/true", nil)); err != nil {
		t.Fatal(err)
	}
	audit := &chain.MemoryAudit{}
	d.upstreamAudit = newUpstreamAuditor(audit, func(string, ...any) {})
	defs := func(round, n int) []upstream.ToolDefinition {
		out := make([]upstream.ToolDefinition, n)
		for i := range out {
			canon := fmt.Sprintf(`{"name":"t%d","description":"round %d"}`, i, round)
			sum := sha256.Sum256([]byte(canon))
			out[i] = upstream.ToolDefinition{Tool: fmt.Sprintf("t%d", i), Exposed: fmt.Sprintf("ev__t%d", i),
				SHA256: hex.EncodeToString(sum[:]), Canonical: []byte(canon)}
		}
		return out
	}
	for round := range 3 {
		if _, err := d.checkUpstreamTools("ev", defs(round, 1000)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.checkUpstreamTools("ev", defs(3, 5)); err != nil {
		t.Fatal(err)
	}
	d.upstreamAudit.close()
	rows := audit.Rows()
	if want := 3*(maxChangeRows+1) + 5; len(rows) != want {
		t.Fatalf("%d rows for three listings of 1000 new definitions and one of 5; want %d", len(rows), want)
	}
	for round := range 3 {
		sum := rows[round*(maxChangeRows+1)+maxChangeRows]
		if sum.ToolID != "mcp:ev" || sum.Result != chain.ResultDeny ||
			!strings.Contains(sum.Reason, fmt.Sprintf("%d more tools", 1000-maxChangeRows)) || !strings.Contains(sum.Reason, "clawd mcp diff ev") {
			t.Errorf("listing %d: summary row %+v", round, sum)
		}
	}
	for _, r := range rows[len(rows)-5:] {
		if !strings.HasPrefix(r.ToolID, "mcp:ev/t") || !strings.HasPrefix(r.Reason, "definition_changed: new tool, sha256 ") {
			t.Errorf("a listing of 5 changes: row %+v, want one per tool", r)
		}
	}
}
