package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
)

// auditConn is the audit writer's SQLite connection. It is opened from
// the driver directly, outside database/sql's pool, and its statements
// (BEGIN IMMEDIATE and COMMIT included) are prepared once and run through
// the driver's own interfaces. A commit runs five or more statements; going
// through database/sql added per statement a pool lookup, locks, argument
// conversion and, for BEGIN/COMMIT sent as text, a prepare and finalize
// each time. The connection is used by one goroutine at a time (the
// Writer's leader), so the pool has nothing to offer here.
type auditConn struct {
	conn driver.Conn

	begin, commit, rollback driver.StmtExecContext
	ins, upd                driver.StmtExecContext
	setFolded, dropJournal  driver.StmtExecContext
	gen, folded             driver.StmtQueryContext

	stmts []driver.Stmt // every prepared statement, closed by close
	dest  []driver.Value
}

const (
	sqlInsert = `INSERT INTO cd_policy_audit_log
		(timestamp, entity_id, tool_id, trust_level, result, reason, latency_ms, latency_us, step, transport, request_id, pid,
		 client_claim, credential_id, args_sha256, args_summary, server)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// A sandbox violation found while the handler ran turns the decision
	// into a Deny by the sandbox step (Writer.update).
	sqlUpdate = `UPDATE cd_policy_audit_log
		SET outcome = ?1, outcome_detail = ?2, duration_ms = ?3,
			result = CASE WHEN ?4 THEN 'Deny' ELSE result END,
			step = CASE WHEN ?4 THEN 'sandbox' ELSE step END,
			reason = CASE WHEN ?4 THEN ?5 ELSE reason END
		WHERE id = ?6`
	sqlGeneration = `SELECT n FROM cd_generation WHERE id = 1`
	// How far a decision journal is folded (internal/store/journal.go).
	sqlFolded      = `SELECT folded FROM cd_audit_journal WHERE name = ?`
	sqlSetFolded   = `INSERT INTO cd_audit_journal (name, folded) VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE SET folded = ?2`
	sqlDropJournal = `DELETE FROM cd_audit_journal WHERE name = ?`
)

// openAuditConn opens a connection with dsn through drv and prepares the
// writer's statements on it.
func openAuditConn(drv driver.Driver, dsn string, pragmas ...string) (*auditConn, error) {
	conn, err := drv.Open(dsn)
	if err != nil {
		return nil, err
	}
	a := &auditConn{conn: conn, dest: make([]driver.Value, 1)}
	for _, p := range pragmas {
		if err := a.execText(p); err != nil {
			conn.Close()
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	execs := []struct {
		dst *driver.StmtExecContext
		sql string
	}{
		{&a.begin, `BEGIN IMMEDIATE`},
		{&a.commit, `COMMIT`},
		{&a.rollback, `ROLLBACK`},
		{&a.ins, sqlInsert},
		{&a.upd, sqlUpdate},
		{&a.setFolded, sqlSetFolded},
		{&a.dropJournal, sqlDropJournal},
	}
	for _, e := range execs {
		s, err := a.prepare(e.sql)
		if err != nil {
			a.close()
			return nil, err
		}
		x, ok := s.(driver.StmtExecContext)
		if !ok {
			a.close()
			return nil, fmt.Errorf("sqlite driver statement %T cannot execute with a context", s)
		}
		*e.dst = x
	}
	queries := []struct {
		dst *driver.StmtQueryContext
		sql string
	}{
		{&a.gen, sqlGeneration},
		{&a.folded, sqlFolded},
	}
	for _, e := range queries {
		s, err := a.prepare(e.sql)
		if err != nil {
			a.close()
			return nil, err
		}
		q, ok := s.(driver.StmtQueryContext)
		if !ok {
			a.close()
			return nil, fmt.Errorf("sqlite driver statement %T cannot query with a context", s)
		}
		*e.dst = q
	}
	return a, nil
}

func (a *auditConn) prepare(query string) (driver.Stmt, error) {
	s, err := a.conn.Prepare(query)
	if err != nil {
		return nil, err
	}
	a.stmts = append(a.stmts, s)
	return s, nil
}

// execText runs one statement given as text (setup only).
func (a *auditConn) execText(query string) error {
	s, err := a.conn.Prepare(query)
	if err != nil {
		return err
	}
	defer s.Close()
	x, ok := s.(driver.StmtExecContext)
	if !ok {
		return fmt.Errorf("sqlite driver statement %T cannot execute with a context", s)
	}
	_, err = x.ExecContext(context.Background(), nil)
	return err
}

// exec runs a prepared statement. The background context matters: with a
// cancellable one the driver would start a goroutine per statement to
// interrupt it.
func exec(s driver.StmtExecContext, args []driver.NamedValue) (driver.Result, error) {
	return s.ExecContext(context.Background(), args)
}

// generation reads the registry's change counter.
func (a *auditConn) generation() (int64, error) {
	n, ok, err := a.queryInt(a.gen, nil)
	if err == nil && !ok {
		err = errors.New("cd_generation has no row")
	}
	return n, err
}

// foldedTo reads how far the journal name is folded: 0 when it has no row.
func (a *auditConn) foldedTo(name string, buf []driver.NamedValue) (int64, error) {
	n, _, err := a.queryInt(a.folded, args(buf, name))
	return n, err
}

// queryInt runs a query for one integer; ok is false when it has no row.
func (a *auditConn) queryInt(q driver.StmtQueryContext, argv []driver.NamedValue) (n int64, ok bool, err error) {
	rows, err := q.QueryContext(context.Background(), argv)
	if err != nil {
		return 0, false, err
	}
	err = rows.Next(a.dest)
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err == io.EOF {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	n, ok = a.dest[0].(int64)
	if !ok {
		return 0, false, fmt.Errorf("query result is %T, not an integer", a.dest[0])
	}
	return n, true, nil
}

func (a *auditConn) close() error {
	var errs []error
	for _, s := range a.stmts {
		errs = append(errs, s.Close())
	}
	errs = append(errs, a.conn.Close())
	return errors.Join(errs...)
}

// args fills buf with vs as positional driver arguments.
func args(buf []driver.NamedValue, vs ...driver.Value) []driver.NamedValue {
	buf = buf[:0]
	for i, v := range vs {
		buf = append(buf, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	return buf
}
