//go:build !(linux || darwin || freebsd || netbsd || dragonfly)

package rawio

import "os"

// Raw system calls are made only where the syscall package makes them:
// OpenBSD's syscall.RawSyscall answers ENOSYS to every call (its kernel
// takes system calls from libc alone), and illumos, Solaris and AIX have no
// system call numbers in it. Here reads and writes are os.File's.

// File is an *os.File; on this system its reads and writes are os.File's.
type File struct{ *os.File }

// New wraps f.
func New(f *os.File) *File { return &File{File: f} }

// WriteNow writes nothing here: every write takes the caller's bounded
// path.
func (f *File) WriteNow(p []byte) (int, error) { return 0, nil }

// Append is f.Write.
func Append(f *os.File, p []byte) (int, error) { return f.Write(p) }
