package jsonrpc

import (
	"bytes"
	"runtime"
	"testing"
)

// A batch of a million tiny members (3 MB, under max_message_bytes) is
// refused for its size by the session, but parsing it whole first cost
// about 220 MB of allocations, 75 times the line: a client could make
// every connection's reader hold that much. Only the members a batch may
// carry are parsed; the rest are counted.
func TestParseBatchOfMillionsAllocatesLittle(t *testing.T) {
	const n = 1_000_000
	line := append(bytes.Repeat([]byte("[],"), n-1), "[]"...)
	line = append(append([]byte{'['}, line...), ']')
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m, perr := ParseAny(line)
	runtime.ReadMemStats(&after)
	if perr != nil || m.Batch == nil {
		t.Fatalf("ParseAny: %v %+v", perr, m)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 4*uint64(len(line)) {
		t.Errorf("parsing a %d-byte batch of %d members allocated %d bytes", len(line), n, got)
	}
	if m.Batch.Len != n || len(m.Batch.Items) > MaxBatchItems {
		t.Errorf("Len %d, %d items parsed; want %d counted and at most %d parsed", m.Batch.Len, len(m.Batch.Items), n, MaxBatchItems)
	}
}
