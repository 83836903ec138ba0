package upstream

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/tools"
)

// capResult counts content items only when the array could hold more than
// the limit; at the smallest possible encoding of limit+1 items the count
// (and the cap) still applies, and limit items pass untouched.
func TestCapResultItemLimitAtTheShortestArray(t *testing.T) {
	const limit = 5
	items := func(n int) jsontext.Value {
		return jsontext.Value("[" + strings.TrimSuffix(strings.Repeat("0,", n), ",") + "]")
	}
	over := &tools.CallResult{Content: items(limit + 1)}
	if len(over.Content) != 2*limit+3 {
		t.Fatalf("test setup: %d items take %d bytes, want %d", limit+1, len(over.Content), 2*limit+3)
	}
	got := capResult(over, 1<<20, limit)
	if got == over || !strings.Contains(string(got.Content), "over the limit") {
		t.Errorf("%d items with a limit of %d: not capped: %s", limit+1, limit, got.Content)
	}
	if n := countItems(got.Content); n != limit+1 {
		t.Errorf("capped content has %d items, want %d kept and the note", n, limit)
	}
	within := &tools.CallResult{Content: items(limit)}
	if got := capResult(within, 1<<20, limit); got != within {
		t.Errorf("%d items with a limit of %d were touched: %s", limit, limit, got.Content)
	}
	spaced := &tools.CallResult{Content: jsontext.Value("[ 0 , 0 , 0 , 0 , 0 , 0 ]")}
	if got := capResult(spaced, 1<<20, limit); got == spaced {
		t.Errorf("%d spaced items with a limit of %d: not capped", limit+1, limit)
	}
}

// A server's _meta counts against the result's limit like its content: one
// larger than half the limit is dropped (and the note says so), so a
// result never exceeds the limit by its _meta.
func TestCapResultBoundsMeta(t *testing.T) {
	const limit = 1000
	big := jsontext.Value(`{"x":"` + strings.Repeat("m", limit) + `"}`)
	r := &tools.CallResult{Content: jsontext.Value(`[{"type":"text","text":"hi"}]`), Meta: big}
	got := capResult(r, limit, 10)
	if len(got.Meta) != 0 || !strings.Contains(string(got.Content), "_meta was dropped") || !strings.Contains(string(got.Content), `"hi"`) {
		t.Errorf("a %d-byte _meta with a %d-byte limit: meta %d bytes, content %s", len(big), limit, len(got.Meta), got.Content)
	}
	small := &tools.CallResult{Content: jsontext.Value(`[{"type":"text","text":"hi"}]`), Meta: jsontext.Value(`{"k":1}`)}
	if got := capResult(small, limit, 10); got != small {
		t.Errorf("a result within the limit was touched: %+v", got)
	}
}
