//go:build unix

package upstream

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawde/clawd/internal/tools"
)

// A server's error text is cleaned of invisible characters for the
// caller; its secret values must be masked in what the caller then reads,
// not only in the text before cleaning, where a zero-width space inside
// the value hides it from the masker and cleaning then joins it again.
func TestServerErrorMaskedAfterCleaning(t *testing.T) {
	t.Parallel()
	const secret = "hunter2 is my password"
	cfg := fake("masky", "-echo-params")
	cfg.Env = map[string]string{"API_KEY": secret}
	m, reg := newTestManager(t, Options{})
	m.Apply(context.Background(), []ServerConfig{cfg})
	connected(t, m, "masky")
	split := "hunter2 is my\u200b password"
	_, err := call(t, reg, "masky__echo", `{"x":"fail","y":"`+split+`"}`)
	if err == nil {
		t.Fatal("the call did not fail")
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("the server's secret reached the caller: %v", err)
	}
	if !strings.Contains(err.Error(), "invalid params") {
		t.Errorf("not the server's error: %v", err)
	}
}

// The same for a progress message and the signed identity token it must
// not carry: cleaning would join a token split by a zero-width space.
func TestProgressMessageMaskedAfterCleaning(t *testing.T) {
	const token = "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJjYzp3cyJ9.c2ln"
	log := &progressLog{wants: true}
	r := newProgressRoutes()
	tok, _, stop := r.open(tools.WithReporter(context.Background(), log), token)
	r.deliver(&mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1,
		Message: "echo: eyJhbGciOiJFZERTQSJ9.eyJzdWIi\u200bOiJjYzp3cyJ9.c2ln"})
	stop()
	_, msgs := log.snapshot()
	if len(msgs) != 1 {
		t.Fatalf("reports: %q, want one", msgs)
	}
	if strings.Contains(msgs[0], token) {
		t.Errorf("the identity token reached the client: %q", msgs[0])
	}
}
