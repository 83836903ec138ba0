//go:build unix

package store

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/clawde/clawd/internal/chain"
)

// An idle daemon's call reads the generation from the database only when
// something was committed since the last read, by any handle: the WAL
// index header tells. Each case commits (or not) and says whether the
// next stale lookup must query, and what it must find.
func TestIdleGenerationReadOnlyAfterACommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clawd.db")
	daemon := openTest(t, path)
	cli := openTest(t, path)
	ctx := context.Background()
	if daemon.wal == nil {
		t.Fatal("the WAL index was not opened")
	}
	level := func() int {
		e, _, err := daemon.Lookup("cc:ws")
		if err != nil {
			t.Fatal(err)
		}
		return e.Level
	}
	level()
	cases := []struct {
		name      string
		commit    func()
		wantQuery bool
		wantLevel int
	}{
		{"nothing committed", func() {}, false, 3},
		{"nothing committed, again", func() {}, false, 3},
		{"a trust change by another handle", func() {
			if err := cli.SetTrust(ctx, chain.TrustEntry{Entity: "cc:ws", Level: 1}); err != nil {
				t.Fatal(err)
			}
		}, true, 1},
		{"nothing committed after it", func() {}, false, 1},
		{"a plain SQL edit", func() {
			if _, err := raw(t, path).Exec(`UPDATE cd_trust_registry SET trust_level = 2 WHERE entity_id = 'cc:ws'`); err != nil {
				t.Fatal(err)
			}
		}, true, 2},
		{"an audit fold of the daemon's own", func() {
			w, err := daemon.Audit()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Record(auditRecord(1)); err != nil {
				t.Fatal(err)
			}
			if err := w.Sync(ctx); err != nil {
				t.Fatal(err)
			}
		}, false, 2},
	}
	for _, c := range cases {
		c.commit()
		stale(daemon)
		before := daemon.genReads.Load()
		got := level()
		queried := daemon.genReads.Load() > before
		if queried != c.wantQuery || got != c.wantLevel {
			t.Errorf("%s: queried the database %v (want %v), level %d (want %d)", c.name, queried, c.wantQuery, got, c.wantLevel)
		}
	}
}
