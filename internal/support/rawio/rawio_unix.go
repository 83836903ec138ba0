//go:build linux || darwin || freebsd || netbsd || dragonfly

package rawio

import (
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// File is an *os.File whose Read and Write make raw system calls. Every
// other method (deadlines, SyscallConn, Close, Stat) is the os.File's.
type File struct {
	*os.File
	rc syscall.RawConn // nil: Read and Write are the os.File's
	// plain: the descriptor refused a read or write that cannot wait
	// (RWF_NOWAIT), so its raw calls rely on its non-blocking mode,
	// looked at before each (checkedRead).
	plain atomic.Bool
}

// New wraps f. Only a descriptor in the network poller and in non-blocking
// mode (a pipe or socket that os.NewFile or os.Pipe registered) gets raw
// reads and writes; any other's are os.File's, since a raw read of a
// blocking descriptor would hold a processor until data came. New clears
// f's read deadline.
func New(f *os.File) *File {
	w := &File{File: f}
	rc, err := f.SyscallConn()
	if err != nil || f.SetReadDeadline(time.Time{}) != nil { // only polled descriptors take deadlines
		return w
	}
	nonblock := false
	rc.Control(func(fd uintptr) {
		fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		nonblock = err == nil && fl&unix.O_NONBLOCK != 0
	})
	if nonblock {
		w.rc = rc
	}
	return w
}

// Read is os.File.Read with a raw read(2).
func (f *File) Read(p []byte) (int, error) {
	if f.rc == nil || len(p) == 0 {
		return f.File.Read(p)
	}
	var n int
	var errno syscall.Errno
	err := f.rc.Read(func(fd uintptr) bool {
		for {
			r, e := rawRead(fd, p, &f.plain)
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait in the poller
			}
			n, errno = int(r), e
			return true
		}
	})
	switch {
	case err != nil:
		return f.File.Read(p) // the poller's error, as os.File reports it
	case errno != 0:
		return 0, &os.PathError{Op: "read", Path: f.Name(), Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write is os.File.Write with raw write(2)s: it writes all of p, waiting
// in the poller while the pipe is full.
func (f *File) Write(p []byte) (int, error) {
	if f.rc == nil {
		return f.File.Write(p)
	}
	n, errno, err := writeRaw(f.rc, p, true, &f.plain)
	switch {
	case err != nil:
		m, err := f.File.Write(p[n:]) // the poller's error, as os.File reports it
		return n + m, err
	case errno != 0:
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: errno}
	}
	return n, nil
}

// WriteNow writes what of p the descriptor takes at once, without waiting
// for room, and reports how much that was: n < len(p) with a nil error
// means it is full (or, for a descriptor New did not make raw, that
// nothing was tried: the caller then writes with its own bounds). err is
// the poller's (a deadline already past, a closed file) or the write's.
func (f *File) WriteNow(p []byte) (n int, err error) {
	if f.rc == nil {
		return 0, nil
	}
	n, errno, err := writeRaw(f.rc, p, false, &f.plain)
	if err == nil && errno != 0 {
		err = os.NewSyscallError("write", errno)
	}
	return n, err
}

// writeRaw writes p with raw write(2)s through rc; with wait it waits in
// the poller while the descriptor is full, else it returns what was taken.
// plain is rawWrite's (nil: a regular file, written with write(2)).
func writeRaw(rc syscall.RawConn, p []byte, wait bool, plain *atomic.Bool) (n int, errno syscall.Errno, err error) {
	err = rc.Write(func(fd uintptr) bool {
		for n < len(p) {
			r, e := rawWrite(fd, p[n:], plain)
			switch e {
			case 0:
				n += int(r)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return !wait
			default:
				errno = e
				return true
			}
		}
		return true
	})
	return n, errno, err
}

// Append writes p to the regular file f with raw write(2)s, for a file
// LocalDisk accepts (the caller checks once, when it opens the file).
func Append(f *os.File, p []byte) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return f.Write(p)
	}
	n, errno, err := writeRaw(rc, p, false, nil)
	switch {
	case err != nil:
		m, err := f.Write(p[n:]) // closed: as os.File reports it
		return n + m, err
	case errno != 0:
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: errno}
	case n < len(p): // a regular file never says EAGAIN; if it did, wait as os.File would
		m, err := f.Write(p[n:])
		return n + m, err
	}
	return n, nil
}

// plainRead and plainWrite are read(2) and write(2) as raw system calls.
func plainRead(fd uintptr, p []byte) (int, syscall.Errno) {
	r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(r), e
}

func plainWrite(fd uintptr, p []byte) (int, syscall.Errno) {
	r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(r), e
}

// checkedRead and checkedWrite are read(2) and write(2) for a descriptor
// whose raw calls rely on its non-blocking mode alone (plain): New found
// it non-blocking, but something sharing it (the host that spawned clawd,
// clawd serve's own restore of stdin and stdout at its end) may switch it
// back, and a raw call would then wait in the kernel holding its processor
// and every stop-the-world pause. So the mode is looked at first, and a
// descriptor found blocking is read or written as os.File would, with a
// system call the scheduler knows of. A switch between the look and the
// call is not caught.
func checkedRead(fd uintptr, p []byte) (int, syscall.Errno) {
	if nonblocking(fd) {
		return plainRead(fd, p)
	}
	r, _, e := syscall.Syscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(r), e
}

func checkedWrite(fd uintptr, p []byte) (int, syscall.Errno) {
	if nonblocking(fd) {
		return plainWrite(fd, p)
	}
	r, _, e := syscall.Syscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(r), e
}

// nonblocking reports whether fd is in non-blocking mode, with a raw
// fcntl(2).
func nonblocking(fd uintptr) bool {
	fl, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
	return e == 0 && fl&syscall.O_NONBLOCK != 0
}
