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
