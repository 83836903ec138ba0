package proc

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// The ring keeps exactly the last N bytes of a stream far longer than N,
// whatever the sizes of the writes (smaller than, equal to, larger than N,
// across the wrap point), and counts what it dropped.
func TestRingKeepsTail(t *testing.T) {
	for _, size := range []int{1, 7, 64, 4096} {
		r := NewRing(size)
		var all bytes.Buffer
		rng := rand.New(rand.NewPCG(1, uint64(size)))
		for all.Len() < 100*size+3 {
			n := rng.IntN(2*size + 2)
			chunk := make([]byte, n)
			for i := range chunk {
				chunk[i] = byte(rng.IntN(256))
			}
			if k, err := r.Write(chunk); k != n || err != nil {
				t.Fatalf("Write = %d, %v", k, err)
			}
			all.Write(chunk)
			want := all.Bytes()[max(0, all.Len()-size):]
			if got := r.Bytes(); !bytes.Equal(got, want) {
				t.Fatalf("size %d after %d bytes: kept %d bytes that are not the tail", size, all.Len(), len(got))
			}
		}
		if r.Total() != int64(all.Len()) || r.Dropped() != int64(all.Len()-size) {
			t.Errorf("size %d: Total %d Dropped %d, want %d and %d", size, r.Total(), r.Dropped(), all.Len(), all.Len()-size)
		}
	}
	if r := NewRing(0); r.size != 1 {
		t.Errorf("NewRing(0) keeps %d bytes, want 1", r.size)
	}
}

// Concurrent writers and readers (run with -race): every write lands whole
// in the count, memory stays at N, and each line that survives is intact
// apart from the first (the tail may start mid-line).
func TestRingConcurrent(t *testing.T) {
	const size = 1000
	r := NewRing(size)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				r.Write([]byte(fmt.Sprintf("writer %d line %04d\n", w, i)))
				if i%100 == 0 {
					_ = r.Bytes()
				}
			}
		}()
	}
	wg.Wait()
	got := r.Bytes()
	if len(got) != size || cap(r.buf) > 2*size {
		t.Errorf("kept %d bytes (buffer cap %d), want %d", len(got), cap(r.buf), size)
	}
	if want := int64(8 * 2000 * len("writer 0 line 0000\n")); r.Total() != want {
		t.Errorf("Total %d, want %d", r.Total(), want)
	}
	lines := bytes.Split(got, []byte("\n"))
	for _, l := range lines[1 : len(lines)-1] {
		var w, i int
		if n, err := fmt.Sscanf(string(l), "writer %d line %04d", &w, &i); n != 2 || err != nil {
			t.Errorf("torn line %q", l)
		}
	}
}
