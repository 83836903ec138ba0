package rawio

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// setBlocking switches f's descriptor to blocking mode behind the poller's
// back, as another process sharing it could.
func setBlocking(t *testing.T, f *os.File) {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	rc.Control(func(fd uintptr) { err = syscall.SetNonblock(int(fd), false) })
	if err != nil {
		t.Fatal(err)
	}
}

// A descriptor switched to blocking mode after New must not make a raw
// read or write wait in the kernel: that would hold its processor, and every
// stop-the-world pause, until the other end moved. If one did wait, the
// other end moves after 2 s and the answer shows it.
func TestRawCallsDoNotWaitOnABlockingDescriptor(t *testing.T) {
	r, w := pipe(t)
	raw := New(r)
	setBlocking(t, r)
	r.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	go func() { time.Sleep(2 * time.Second); w.Write([]byte("late")) }()
	if n, err := raw.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read of an empty pipe in blocking mode: %d bytes, %v; want the deadline's error", n, err)
	}

	r2, w2 := pipe(t)
	rawW := New(w2)
	setBlocking(t, w2)
	go func() { time.Sleep(2 * time.Second); r2.Close() }()
	big := make([]byte, 4<<20)
	if n, err := rawW.WriteNow(big); err != nil || n >= len(big) {
		t.Fatalf("WriteNow into a pipe in blocking mode: %d bytes, %v; want part of it at once", n, err)
	}
	if n, err := rawW.WriteNow(big); n != 0 || err != nil {
		t.Fatalf("WriteNow into a full pipe in blocking mode: %d bytes, %v; want 0, nil", n, err)
	}
}
