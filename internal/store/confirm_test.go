package store

import (
	"errors"
	"testing"
	"time"

	"github.com/clawde/clawd/internal/chain"
)

// changeLog is an audit log that keeps what it is given, or refuses.
type changeLog struct {
	refuse   error
	rows     []*chain.AuditRecord
	outcomes map[int64]chain.Outcome
}

func (l *changeLog) Record(r *chain.AuditRecord) (int64, error) {
	if l.refuse != nil {
		return 0, l.refuse
	}
	l.rows = append(l.rows, r)
	return int64(len(l.rows)), nil
}

func (l *changeLog) RecordOutcome(id int64, o chain.Outcome) {
	if l.outcomes == nil {
		l.outcomes = map[int64]chain.Outcome{}
	}
	l.outcomes[id] = o
}

func TestChangeRowRecordsRowThenOutcome(t *testing.T) {
	log := &changeLog{}
	by := ChangeActor{Entity: "local:cli", TrustLevel: chain.NoTrustLevel, Transport: "cli"}
	row := NewChangeRow(log, func(err error) string { return "<" + err.Error() + ">" })
	at := time.Unix(1700000000, 0)
	if err := row.Write(ChangeRecord(by, at, "mcp:fs", chain.ResultAllow, "add: stdio")); err != nil {
		t.Fatal(err)
	}
	want := chain.AuditRecord{Time: at, EntityID: "local:cli", ToolID: "mcp:fs", TrustLevel: chain.NoTrustLevel,
		Result: chain.ResultAllow, Reason: "add: stdio", Step: "upstream", Transport: "cli", AwaitsOutcome: true}
	if len(log.rows) != 1 || *log.rows[0] != want {
		t.Fatalf("rows = %+v, want %+v", log.rows, want)
	}
	row.Done(errors.New("disk full"))
	if o := log.outcomes[1]; o.Result != chain.OutcomeError || o.Detail != "not made: <disk full>" {
		t.Fatalf("outcome = %+v", o)
	}
}

func TestChangeRowUnwrittenGetsNoOutcome(t *testing.T) {
	log := &changeLog{refuse: errors.New("no space")}
	row := NewChangeRow(log, func(err error) string { return err.Error() })
	if err := row.Write(ChangeRecord(ChangeActor{}, time.Now(), "mcp:fs", chain.ResultAllow, "")); err == nil {
		t.Fatal("Write succeeded on a log that refuses")
	}
	row.Done(nil)
	if len(log.outcomes) != 0 {
		t.Fatalf("outcome recorded for a row never written: %+v", log.outcomes)
	}
}

func TestRunConfirmsStopsAtFirstErrorAndSkipsNil(t *testing.T) {
	var ran []int
	stop := errors.New("stop")
	err := RunConfirms([]func() error{
		func() error { ran = append(ran, 1); return nil },
		nil,
		func() error { ran = append(ran, 2); return stop },
		func() error { ran = append(ran, 3); return nil },
	})
	if !errors.Is(err, stop) || len(ran) != 2 {
		t.Fatalf("err = %v, ran = %v", err, ran)
	}
}
