// Package chain_test drives the authorization chain end to end: the real
// clawd binary over stdio (raw NDJSON, since the go-sdk client turns -32003
// and -32004 into ErrConnectionClosed), the real SQLite file, the real CLI.
// Where a test needs tools this build may not register yet (bash,
// write_file) or an external provider, it assembles the daemon in process
// and serves it through the same stdio transport over pipes.
package chain_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/test/clawdtest"
)

var clawdBin string

func TestMain(m *testing.M) { os.Exit(clawdtest.Main(m, &clawdBin)) }

// env is clawdtest's isolated user plus a directory outside the workspace
// (with a secret) that the workspace's symlink "out" leads to.
type env struct {
	*clawdtest.Env
	outside, wsID string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{Env: clawdtest.NewEnv(t, clawdBin)}
	e.outside = filepath.Join(e.Base, "outside")
	e.wsID = e.WorkspaceID()
	if err := os.Mkdir(e.outside, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(e.WS, "a.txt"), []byte("hello\n"), 0o644)
	os.WriteFile(filepath.Join(e.outside, "secret"), []byte("secret\n"), 0o644)
	os.Symlink(e.outside, filepath.Join(e.WS, "out"))
	return e
}

// auditRows reads the audit log rows written by one process.
func (e *env) auditRows(t *testing.T, pid int) []store.AuditRow {
	t.Helper()
	db, err := store.Open(e.DBFile(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryAudit(context.Background(), store.AuditFilter{PID: int64(pid)})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// rowFor finds the row of a request id.
func rowFor(rows []store.AuditRow, id string) (store.AuditRow, int) {
	var found store.AuditRow
	n := 0
	for _, r := range rows {
		if r.RequestID == id {
			found = r
			n++
		}
	}
	return found, n
}

// waitOutcome polls until the row of request id has its (asynchronous)
// outcome recorded.
func (e *env) waitOutcome(t *testing.T, pid int, id string) store.AuditRow {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		row, n := rowFor(e.auditRows(t, pid), id)
		if n == 1 && row.Outcome != nil {
			return row
		}
		if time.Now().After(deadline) {
			t.Fatalf("row of request %s: %d rows, outcome never recorded (%+v)", id, n, row)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
