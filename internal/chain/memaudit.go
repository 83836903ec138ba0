package chain

import (
	"maps"
	"slices"
	"sync"
)

// MemoryAudit is an in-memory AuditLog for tests, like MemoryTrust: the
// rows in the order recorded (row ids count from 1) and the outcome
// recorded for each. It never fails; the daemon uses the SQLite audit log
// (internal/store).
type MemoryAudit struct {
	mu       sync.Mutex
	rows     []AuditRecord
	outcomes map[int64]Outcome
}

// Record appends a copy of r; its id is its position from 1.
func (a *MemoryAudit) Record(r *AuditRecord) (int64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rows = append(a.rows, *r)
	return int64(len(a.rows)), nil
}

// RecordOutcome keeps o as row id's outcome.
func (a *MemoryAudit) RecordOutcome(id int64, o Outcome) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.outcomes == nil {
		a.outcomes = map[int64]Outcome{}
	}
	a.outcomes[id] = o
}

// Rows returns a copy of the rows recorded so far.
func (a *MemoryAudit) Rows() []AuditRecord {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.rows)
}

// Outcomes returns a copy of the outcomes recorded so far, by row id.
func (a *MemoryAudit) Outcomes() map[int64]Outcome {
	a.mu.Lock()
	defer a.mu.Unlock()
	return maps.Clone(a.outcomes)
}

// Last returns the newest row and its outcome's Result ("" while the call
// has none, or when there is no row).
func (a *MemoryAudit) Last() (AuditRecord, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.rows) == 0 {
		return AuditRecord{}, ""
	}
	return a.rows[len(a.rows)-1], a.outcomes[int64(len(a.rows))].Result
}
