package daemon

import (
	"errors"
	"testing"
)

// TestEgressStateUpdate: which origins a look at the egress allowlist
// reports as changed, so recheckEgress reconnects exactly the servers whose
// entry was removed, added or flipped, and reads the server table only
// then (a trust or credential edit moves the same change counter).
func TestEgressStateUpdate(t *testing.T) {
	const a, b, c = "https://a.example:443", "https://b.example:443", "https://c.example:443"
	var e egressState
	if e.update(map[string]bool{a: false, b: false}, nil) != nil {
		t.Error("the first look reported changes: it has nothing to compare with")
	}
	if e.update(map[string]bool{a: false, b: false}, nil) != nil {
		t.Error("an unchanged list reported changes")
	}
	changed := e.update(map[string]bool{a: true, c: false}, nil) // a flipped, b removed, c added
	if changed == nil {
		t.Fatal("a changed list reported nothing")
	}
	for origin, want := range map[string]bool{a: true, b: true, c: true, "https://d.example:443": false} {
		if changed(origin) != want {
			t.Errorf("changed(%s) = %v, want %v", origin, !want, want)
		}
	}
	// A failed read keeps the baseline: the next success compares with it.
	if e.update(nil, errors.New("disk I/O error")) != nil {
		t.Error("a failed read reported changes")
	}
	if changed := e.update(map[string]bool{a: true}, nil); changed == nil || !changed(c) || changed(a) {
		t.Error("after a failed read, the removal of c was not seen against the old baseline")
	}

	// Every look failed until now: no baseline, so every origin may have
	// changed.
	var f egressState
	f.update(nil, errors.New("locked"))
	if changed := f.update(map[string]bool{a: false}, nil); changed == nil || !changed(a) || !changed(b) {
		t.Error("a first success after failed looks must reconnect every remote server")
	}
}
