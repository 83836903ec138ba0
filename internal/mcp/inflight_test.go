package mcp

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestInflightAmbiguousCancel(t *testing.T) {
	r := newInflight(true)
	ctx1, done1, _ := r.register(context.Background(), "n:1")
	ctx2, done2, _ := r.register(context.Background(), "n:1")
	defer done1()
	defer done2()
	if r.cancel("n:1") {
		t.Error("cancel matched two active calls and reported success")
	}
	if ctx1.Err() != nil || ctx2.Err() != nil {
		t.Error("an ambiguous cancel cancelled a call")
	}
}

func TestInflightPendingExpiresAndIsCapped(t *testing.T) {
	r := newInflight(true)
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	r.cancel("n:1")
	now = now.Add(3 * time.Second)
	r.cancel("n:1") // repeating does not extend the lifetime
	now = now.Add(2500 * time.Millisecond)
	if _, done, cancelled := r.register(context.Background(), "n:1"); cancelled {
		t.Error("a pending cancel outlived 5 s")
	} else {
		done()
	}
	for i := range 3 * maxTracked {
		r.cancel("n:" + string(rune('a'+i%26)) + time.Duration(i).String())
	}
	r.mu.Lock()
	n := len(r.pending.at)
	r.mu.Unlock()
	if n > maxTracked {
		t.Errorf("pending holds %d entries, cap is %d", n, maxTracked)
	}
	// Without holdPending (streams) an early cancel is not kept.
	s := newInflight(false)
	s.cancel("n:5")
	if _, done, cancelled := s.register(context.Background(), "n:5"); cancelled {
		t.Error("a stream session held a cancel for a future call")
	} else {
		done()
	}
}

// TestInflightHeldKeysAreSmall: what outlives a request (held cancels,
// recently completed ids) costs a bounded size per entry whatever the id's
// length: an HTTP client sending cancels for 4 MB ids held 2 GB within
// seconds when each key was kept whole. A long id still matches.
func TestInflightHeldKeysAreSmall(t *testing.T) {
	r := newInflight(true)
	long := func(i int) string { return "s:" + strings.Repeat("x", 1<<16) + strconv.Itoa(i) }
	for i := range maxTracked {
		r.cancel(long(i))
		_, done, _ := r.register(context.Background(), long(-i-1))
		done()
	}
	r.mu.Lock()
	held := 0
	for k := range r.pending.at {
		held += len(k)
	}
	for k := range r.recent.at {
		held += len(k)
	}
	for _, e := range r.pending.order {
		held += len(e.key)
	}
	for _, e := range r.recent.order {
		held += len(e.key)
	}
	r.mu.Unlock()
	if held > 4*maxTracked*maxHeldKey {
		t.Errorf("held keys take %d bytes for %d long ids", held, 2*maxTracked)
	}
	if _, done, cancelled := r.register(context.Background(), long(3)); !cancelled {
		t.Error("a held cancel for a long id did not cancel its call")
	} else {
		done()
	}
	if r.cancel(long(-5)); func() bool { _, done, c := r.register(context.Background(), long(-5)); done(); return c }() {
		t.Error("a late cancel for a long id that just completed was held")
	}
}
