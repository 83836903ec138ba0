package rawio

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
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

// A descriptor that refused RWF_NOWAIT (a pipe before Linux 6.4, a
// terminal) is read and written with plain read(2) and write(2), which
// wait in blocking mode. Switched to blocking mode behind New's back (a
// host sharing it; clawd serve's own restore of stdin and stdout while a
// late answer is still written), such a call must not wait in the kernel
// holding its processor: it is made as os.File makes it. Here it waits
// (2 s) in a system call the scheduler knows of, so a garbage collection
// meanwhile completes.
func TestPlainCallsOnABlockingDescriptorLetTheWorldStop(t *testing.T) {
	r, w := pipe(t)
	raw := New(r)
	raw.plain.Store(true) // as a kernel without RWF_NOWAIT for pipes leaves it
	setBlocking(t, r)
	// The writer is another process: while the world is stopped, no
	// goroutine of this one could write.
	late := exec.Command("sh", "-c", "sleep 2; printf late")
	late.Stdout = w
	if err := late.Start(); err != nil {
		t.Fatal(err)
	}
	defer late.Wait()
	read := make(chan struct{})
	go func() { raw.Read(make([]byte, 8)); close(read) }()
	time.Sleep(100 * time.Millisecond) // the read is under way
	gc := make(chan time.Duration)
	go func() { start := time.Now(); runtime.GC(); gc <- time.Since(start) }()
	select {
	case d := <-gc:
		t.Logf("collection took %v while the read waited", d)
	case <-read:
		t.Fatal("the garbage collector waited for a read of a blocking descriptor to end: the read held its processor")
	}
	<-read
}
