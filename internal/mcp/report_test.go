package mcp

import (
	"context"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/tools"
)

// A provider that relays progress from elsewhere (an upstream) asks for it
// only when the client did: a call with a log level but no progressToken
// has a reporter, yet wants no progress.
func TestReporterSaysWhetherProgressIsWanted(t *testing.T) {
	send := func([]byte) {}
	logOnly := newReporter(nil, "info", send)
	if tools.WantsProgress(tools.WithReporter(context.Background(), logOnly)) {
		t.Error("a log-only reporter says it wants progress")
	}
	withToken := newReporter(jsontext.Value(`"t1"`), "", send)
	if !tools.WantsProgress(tools.WithReporter(context.Background(), withToken)) {
		t.Error("a reporter with a progressToken says it wants no progress")
	}
	if tools.WantsProgress(context.Background()) {
		t.Error("a call without a reporter wants progress")
	}
}
