package store

import (
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkGeneration is the cost of noticing a registry change: "query"
// reads the counter from SQLite (what every call would pay without the
// audit writer's published value), "fresh" is the call path on a busy
// daemon (the published value is under FreshFor old), "stale-unchanged"
// an idle daemon's next call when nothing was committed since (a look at
// the WAL index header, walindex.go).
func BenchmarkGeneration(b *testing.B) {
	db, err := Open(filepath.Join(b.TempDir(), "clawd.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	b.Run("query", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := db.Generation(); err != nil {
				b.Fatal(err)
			}
		}
	})
	g, _ := db.Generation()
	b.Run("fresh", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if i%64 == 0 {
				db.observe(g, time.Since(db.opened), walHeader{}, false) // as the writer does on each fold
			}
			if _, err := db.freshGeneration(); err != nil {
				b.Fatal(err)
			}
		}
	})
	// An idle daemon's next call: the last read is older than FreshFor,
	// and the WAL index header says nothing was committed since.
	db.freshGeneration()
	b.Run("stale-unchanged", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			stale(db)
			if _, err := db.freshGeneration(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// stale makes db's last generation read older than FreshFor, as an idle
// daemon's is when its next call comes.
func stale(db *DB) {
	st := *db.seen.Load()
	st.at -= 2 * FreshFor
	db.seen.Store(&st)
}
