package mcp

import (
	"context"
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
