package proc

import "sync"

// Ring keeps the last Size bytes written to it: a bounded place for a
// child's stderr, which may write any amount for as long as it runs. It is
// safe for concurrent use. Memory is Size bytes, allocated on the first
// write; older bytes are overwritten, and Dropped counts them. The kept
// tail may begin in the middle of a line or of a UTF-8 character.
type Ring struct {
	mu    sync.Mutex
	size  int
	buf   []byte
	start int   // index of the oldest byte once full
	total int64 // bytes ever written
}

// NewRing returns a ring that keeps the last size bytes; size must be at
// least 1 (a smaller size is taken as 1).
func NewRing(size int) *Ring {
	return &Ring{size: max(size, 1)}
}

// Write keeps the tail of what was written; it never fails and never
// blocks for longer than a copy of at most Size bytes.
func (r *Ring) Write(p []byte) (int, error) {
	n := len(p)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total += int64(n)
	if len(p) >= r.size {
		// Only the last size bytes of p can survive.
		r.buf = append(r.buf[:0], p[len(p)-r.size:]...)
		r.start = 0
		return n, nil
	}
	if room := r.size - len(r.buf); room > 0 {
		k := min(room, len(p))
		r.buf = append(r.buf, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 { // full: overwrite from the oldest byte on
		k := copy(r.buf[r.start:], p)
		p = p[k:]
		r.start = (r.start + k) % r.size
	}
	return n, nil
}

// Bytes returns a copy of the kept bytes, oldest first.
func (r *Ring) Bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]byte, 0, len(r.buf))
	out = append(out, r.buf[r.start:]...)
	return append(out, r.buf[:r.start]...)
}

// String is Bytes as a string.
func (r *Ring) String() string { return string(r.Bytes()) }

// Total is how many bytes were ever written.
func (r *Ring) Total() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// Dropped is how many written bytes were overwritten.
func (r *Ring) Dropped() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total - int64(len(r.buf))
}
