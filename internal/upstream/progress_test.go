//go:build unix

package upstream

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/tools"
	"github.com/clawde/clawd/internal/upstream/identity"
)

// progressLog is one client's tools.Reporter: what reaches it is what its
// session would write under its own token.
type progressLog struct {
	wants bool
	mu    sync.Mutex
	got   []float64
	msgs  []string
}

func (r *progressLog) WantsProgress() bool     { return r.wants }
func (r *progressLog) Log(string, string, any) {}
func (r *progressLog) Progress(p, total float64, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, p)
	r.msgs = append(r.msgs, msg)
}

func (r *progressLog) snapshot() ([]float64, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]float64(nil), r.got...), append([]string(nil), r.msgs...)
}

func callWith(t *testing.T, reg *tools.Registry, rep tools.Reporter, args string) string {
	t.Helper()
	e, ok := reg.Lookup("fake__progress")
	if !ok {
		t.Fatalf("fake__progress not in the registry (have %v)", reg.Names())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := e.Tool.Call(tools.WithReporter(ctx, rep), jsontext.Value(args))
	if err != nil {
		t.Errorf("fake__progress: %v", err)
		return ""
	}
	return string(res.(*tools.CallResult).Content)
}

// Two calls in flight at once on one upstream, each from a client that
// asked for progress (as if both used the same progressToken: the token is
// theirs, and never reaches the upstream), each get only their own call's
// reports, increasing, and none of what the upstream sent under a token
// clawd did not hand out, backwards, or after the answer. The upstream saw
// a token of clawd's, a different one per call; a call whose client did
// not ask for progress sends none.
func TestProgressRewrittenAndRouted(t *testing.T) {
	m, reg := newTestManager(t, Options{})
	m.Apply(context.Background(), []ServerConfig{fake("fake", "-progress")})
	connected(t, m, "fake")

	a, b := &progressLog{wants: true}, &progressLog{wants: true}
	var ta, tb string
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); ta = callWith(t, reg, a, `{"tag":"A","n":6}`) }()
	go func() { defer wg.Done(); tb = callWith(t, reg, b, `{"tag":"B","n":6}`) }()
	wg.Wait()
	time.Sleep(150 * time.Millisecond) // the late reports have arrived by now

	for _, c := range []struct {
		tag, text string
		log       *progressLog
	}{{"A", ta, a}, {"B", tb, b}} {
		got, msgs := c.log.snapshot()
		if len(got) == 0 || got[len(got)-1] != 6 {
			t.Errorf("client %s got progress %v, want it to end with the last report before the answer (6)", c.tag, got)
		}
		for i, msg := range msgs {
			if !strings.HasPrefix(msg, c.tag+" ") || strings.Contains(msg, "forged") || strings.Contains(msg, "backwards") || strings.Contains(msg, "late") {
				t.Errorf("client %s got %q", c.tag, msg)
			}
			if i > 0 && got[i] <= got[i-1] {
				t.Errorf("client %s: progress %v after %v", c.tag, got[i], got[i-1])
			}
		}
		if !strings.Contains(c.text, `token=\"clawd-`) {
			t.Errorf("client %s: the upstream got %s, want a token of clawd's", c.tag, c.text)
		}
	}
	if ta == tb {
		t.Errorf("both calls reached the upstream with the same token: %s", ta)
	}

	none := &progressLog{wants: false}
	if text := callWith(t, reg, none, `{"tag":"C","n":2}`); !strings.Contains(text, `"token="`) {
		t.Errorf("a call without a progressToken sent the upstream one: %s", text)
	}
	if got, _ := none.snapshot(); len(got) != 0 {
		t.Errorf("a client that asked for no progress got %v", got)
	}
}

// A server in signed mode that quotes its arguments in a progress message
// does not hand the client the identity token: the report reaches it with
// the token masked.
func TestProgressMessageMasksIdentityToken(t *testing.T) {
	key := filepath.Join(t.TempDir(), "identity-ws.key")
	if _, _, err := identity.EnsureKey(key); err != nil {
		t.Fatal(err)
	}
	m, reg := newTestManager(t, Options{Identity: &identity.Forwarder{Issuer: identity.Issuer("ws"), KeyPath: key}})
	cfg := fake("fake", "-progress")
	cfg.Identity = identity.Config{Mode: identity.ModeSigned}
	m.Apply(context.Background(), []ServerConfig{cfg})
	connected(t, m, "fake")

	e, ok := reg.Lookup("fake__progress")
	if !ok {
		t.Fatalf("fake__progress not in the registry (have %v)", reg.Names())
	}
	log := &progressLog{wants: true}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ctx = tools.WithCaller(tools.WithReporter(ctx, log), "cc:ws")
	if _, err := e.Tool.Call(ctx, jsontext.Value(`{"tag":"A","n":3,"echo":true}`)); err != nil {
		t.Fatal(err)
	}
	_, msgs := log.snapshot()
	if len(msgs) == 0 {
		t.Fatal("no progress reached the client")
	}
	for _, msg := range msgs {
		// A JWT's header, base64url of `{"alg":"EdDSA"`, starts eyJ.
		if strings.Contains(msg, "eyJ") || !strings.Contains(msg, `"__mateclaw_token__":"****"`) {
			t.Errorf("progress message %q: want the arguments quoted with the token masked", msg)
		}
	}
}
