//go:build !unix

package rawio

import "os"

// File is an *os.File; on this system its reads and writes are os.File's.
type File struct{ *os.File }

// New wraps f.
func New(f *os.File) *File { return &File{File: f} }

// WriteNow writes nothing here: a stdio upstream's pipes are not polled
// on this system, so every write takes the caller's bounded path.
func (f *File) WriteNow(p []byte) (int, error) { return 0, nil }

// Append is f.Write.
func Append(f *os.File, p []byte) (int, error) { return f.Write(p) }
