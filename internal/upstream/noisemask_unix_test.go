//go:build unix

package upstream

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// A stdout line a server prints that is no JSON-RPC is logged at debug
// level, masked by the values of every configured server: its own literal,
// and a variable another server references, which it inherited from
// clawd's environment.
func TestStdoutNoiseLogMasksEveryServersValues(t *testing.T) {
	const peer = "peer-value-abcdefgh"
	const lit = "literal-noise-value-xyz"
	t.Setenv("PEER_PAT", peer)
	var buf syncBuffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	m, _ := newTestManager(t, Options{Logger: logger})
	x := fake("x", "-banner-env", "LIT")
	x.Env = map[string]string{"PAT": "${PEER_PAT}", "LIT": lit}
	m.Apply(context.Background(), []ServerConfig{x, fake("y", "-banner-env", "PEER_PAT")})
	connected(t, m, "x")
	connected(t, m, "y")
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(buf.String(), "upstream stdout noise") < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	log := buf.String()
	if strings.Count(log, "upstream stdout noise") < 2 {
		t.Fatalf("the noise lines were not logged:\n%s", log)
	}
	for _, v := range []string{peer, lit} {
		if strings.Contains(log, v) {
			t.Errorf("the debug log shows %q:\n%s", v, log)
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A server's value in a noise line split by an invisible character (a
// zero-width space, which the log shows escaped) is masked too: the line
// is cleaned before it is masked, as the server's logs and errors are.
func TestStdoutNoiseLogMasksAValueSplitByAnInvisibleCharacter(t *testing.T) {
	const lit = "literal-noise-value-xyz"
	t.Setenv("SPLIT_NOISE", "literal-noise-\u200bvalue-xyz")
	var buf syncBuffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	m, _ := newTestManager(t, Options{Logger: logger})
	x := fake("x", "-banner-env", "SPLIT_NOISE")
	x.Env = map[string]string{"LIT": lit}
	m.Apply(context.Background(), []ServerConfig{x})
	connected(t, m, "x")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(buf.String(), "upstream stdout noise") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	log := buf.String()
	if !strings.Contains(log, "upstream stdout noise") {
		t.Fatalf("the noise line was not logged:\n%s", log)
	}
	if strings.Contains(strings.ReplaceAll(log, `\u200b`, ""), lit) {
		t.Errorf("the debug log shows %q split by a zero-width space:\n%s", lit, log)
	}
}
