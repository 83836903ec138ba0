package daemon

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/upstream"
)

// A reader of the server's row (`clawd mcp list`, the REST API) never sees
// it connected with the tool count of the attempt before: the status and
// the tools are one write. Each round connects with a different number of
// tools, stamped by its connect time, between failures that keep the
// count; a reader polling the row checks every connected row it sees.
func TestRecordUpstreamStatusIsOneWrite(t *testing.T) {
	d := newTestDaemon(t, "")
	ctx := context.Background()
	if _, err := d.Store.InsertServer(ctx, store.NewStdioServer("ev", "/bin/true", nil)); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tools := func(round int) int { return round%7 + 1 }

	var stop atomic.Bool
	var wg sync.WaitGroup
	var bad atomic.Value
	var seen atomic.Int32
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			row, err := d.Store.MCPServerByName(ctx, "ev")
			if err != nil || row.LastStatus != store.StatusConnected {
				continue
			}
			at, err := time.Parse(time.RFC3339Nano, row.LastConnectedAt)
			if err != nil {
				bad.Store(fmt.Sprintf("last_connected_at %q: %v", row.LastConnectedAt, err))
				return
			}
			seen.Add(1)
			if round := int(at.Sub(base) / time.Second); row.ToolCount != tools(round) {
				bad.Store(fmt.Sprintf("round %d: connected with tool_count %d, want %d", round, row.ToolCount, tools(round)))
				return
			}
		}
	}()
	for round := 0; round < 300 && bad.Load() == nil; round++ {
		var list []upstream.ToolInfo
		for i := range tools(round) {
			list = append(list, upstream.ToolInfo{Exposed: fmt.Sprintf("ev__t%d", i), Original: fmt.Sprintf("t%d", i)})
		}
		d.recordUpstreamStatus(upstream.Status{Name: "ev", State: upstream.StateConnected,
			LastConnected: base.Add(time.Duration(round) * time.Second), Tools: list})
		d.recordUpstreamStatus(upstream.Status{Name: "ev", State: upstream.StateUnavailable, LastError: "gone"})
	}
	stop.Store(true)
	wg.Wait()
	if msg := bad.Load(); msg != nil {
		t.Fatal(msg)
	}
	if seen.Load() == 0 {
		t.Fatal("the reader never saw the server connected; the test checked nothing")
	}
	cached, err := d.Store.MCPTools(ctx, 0)
	if err != nil || len(cached) != tools(299) {
		t.Errorf("cache after the last round: %d tools (%v), want %d", len(cached), err, tools(299))
	}
}

// A tool list the cache refuses leaves no earlier list behind: the row
// says connected (it is), with no cached tools, tool_count 0 and a
// last_error that says why; the next good list fills both again.
func TestRecordUpstreamStatusRefusedToolList(t *testing.T) {
	d := newTestDaemon(t, "")
	ctx := context.Background()
	s, err := d.Store.InsertServer(ctx, store.NewStdioServer("ev", "/bin/true", nil))
	if err != nil {
		t.Fatal(err)
	}
	good := []upstream.ToolInfo{{Exposed: "ev__a", Original: "a"}, {Exposed: "ev__b", Original: "b"}, {Exposed: "ev__c", Original: "c"}}
	d.recordUpstreamStatus(upstream.Status{Name: "ev", State: upstream.StateConnected, LastConnected: time.Now(), Tools: good})
	check := func(status string, count int, errPart string) {
		t.Helper()
		row, err := d.Store.MCPServer(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		cached, err := d.Store.MCPTools(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if row.LastStatus != status || row.ToolCount != count || len(cached) != count || !strings.Contains(row.LastError, errPart) {
			t.Fatalf("row: status %s, tool_count %d, %d cached, last_error %q; want %s, %d, %q",
				row.LastStatus, row.ToolCount, len(cached), row.LastError, status, count, errPart)
		}
	}
	check(store.StatusConnected, 3, "")
	bad := []upstream.ToolInfo{{Exposed: "ev__x", Original: "x", InputSchema: jsontext.Value(`[1]`)}, {Exposed: "ev__y", Original: "y"}}
	d.recordUpstreamStatus(upstream.Status{Name: "ev", State: upstream.StateConnected, LastConnected: time.Now(), Tools: bad})
	check(store.StatusConnected, 0, "connected with 2 tools, but the tools cache refused the list")
	d.recordUpstreamStatus(upstream.Status{Name: "ev", State: upstream.StateConnected, LastConnected: time.Now(), Tools: good})
	check(store.StatusConnected, 3, "")
	if row, _ := d.Store.MCPServer(ctx, s.ID); row.LastError != "" {
		t.Errorf("a good list left last_error %q", row.LastError)
	}
}
