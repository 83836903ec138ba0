//go:build linux || darwin || freebsd || netbsd || dragonfly

package rawio

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// pipe returns a pipe whose ends are in the poller, as os.Pipe makes them.
func pipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// ends is how a case reads and writes: through os.File, or through File.
var ends = []struct {
	name string
	wrap func(*os.File) io.ReadWriter
}{
	{"os.File", func(f *os.File) io.ReadWriter { return f }},
	{"rawio.File", func(f *os.File) io.ReadWriter { return New(f) }},
}

// Every case runs through os.File and through File: a File must answer
// as os.File does, errors included (callers test them with errors.Is).
func TestFileAnswersAsOSFile(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, r, w *os.File, wrap func(*os.File) io.ReadWriter) error
		want error // nil: no error
	}{
		{"read what was written", func(t *testing.T, r, w *os.File, wrap func(*os.File) io.ReadWriter) error {
			if _, err := wrap(w).Write([]byte("line\n")); err != nil {
				return err
			}
			buf := make([]byte, 64)
			n, err := wrap(r).Read(buf)
			if err == nil && string(buf[:n]) != "line\n" {
				t.Errorf("read %q", buf[:n])
			}
			return err
		}, nil},
		{"read waits for a write", func(t *testing.T, r, w *os.File, wrap func(*os.File) io.ReadWriter) error {
			go func() { time.Sleep(20 * time.Millisecond); w.Write([]byte("late")) }()
			buf := make([]byte, 64)
			n, err := wrap(r).Read(buf)
			if err == nil && string(buf[:n]) != "late" {
				t.Errorf("read %q", buf[:n])
			}
			return err
		}, nil},
		{"read at the end", func(t *testing.T, r, w *os.File, wrap func(*os.File) io.ReadWriter) error {
			w.Close()
			_, err := wrap(r).Read(make([]byte, 8))
			return err
		}, io.EOF},
		{"read past its deadline", func(t *testing.T, r, w *os.File, wrap func(*os.File) io.ReadWriter) error {
			rw := wrap(r)
			r.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
			_, err := rw.Read(make([]byte, 8))
			return err
		}, os.ErrDeadlineExceeded},
		{"read of a closed file", func(t *testing.T, r, w *os.File, wrap func(*os.File) io.ReadWriter) error {
			rw := wrap(r)
			r.Close()
			_, err := rw.Read(make([]byte, 8))
			return err
		}, os.ErrClosed},
		{"read closed while waiting", func(t *testing.T, r, w *os.File, wrap func(*os.File) io.ReadWriter) error {
			rw := wrap(r)
			go func() { time.Sleep(20 * time.Millisecond); r.Close() }()
			_, err := rw.Read(make([]byte, 8))
			return err
		}, os.ErrClosed},
		{"write more than the pipe holds", func(t *testing.T, r, w *os.File, wrap func(*os.File) io.ReadWriter) error {
			big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
			got := make(chan []byte)
			go func() { b, _ := io.ReadAll(r); got <- b }()
			n, err := wrap(w).Write(big)
			w.Close()
			if b := <-got; err == nil && (n != len(big) || !bytes.Equal(b, big)) {
				t.Errorf("wrote %d of %d bytes, read %d back (equal: %v)", n, len(big), len(b), bytes.Equal(b, big))
			}
			return err
		}, nil},
		{"write into a full pipe past its deadline", func(t *testing.T, r, w *os.File, wrap func(*os.File) io.ReadWriter) error {
			rw := wrap(w)
			w.SetWriteDeadline(time.Now().Add(20 * time.Millisecond))
			n, err := rw.Write(make([]byte, 4<<20))
			if n >= 4<<20 { // 0 too when the deadline passed before the first write (a slow machine)
				t.Errorf("wrote all %d bytes into a pipe nobody reads", n)
			}
			return err
		}, os.ErrDeadlineExceeded},
		{"write with no reader", func(t *testing.T, r, w *os.File, wrap func(*os.File) io.ReadWriter) error {
			r.Close()
			_, err := wrap(w).Write([]byte("x"))
			return err
		}, syscall.EPIPE},
	}
	for _, c := range cases {
		for _, e := range ends {
			t.Run(c.name+"/"+e.name, func(t *testing.T) {
				r, w := pipe(t)
				err := c.run(t, r, w, e.wrap)
				if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
					t.Fatalf("error %v, want %v", err, c.want)
				}
				var pe *os.PathError
				if err != nil && err != io.EOF && !errors.As(err, &pe) {
					t.Errorf("error %T %v is not an *os.PathError, as os.File's are", err, err)
				}
			})
		}
	}
}

// A descriptor in blocking mode keeps os.File's reads and writes: a raw
// read would hold its processor until data came.
func TestNewLeavesBlockingDescriptorsAlone(t *testing.T) {
	r, w := pipe(t)
	if New(r).rc == nil || New(w).rc == nil {
		t.Fatal("a pipe from os.Pipe did not get raw reads and writes")
	}
	r.Fd() // puts the descriptor in blocking mode
	if New(r).rc != nil {
		t.Error("a blocking descriptor got raw reads")
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "regular"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if New(f).rc != nil {
		t.Error("a regular file got raw reads and writes")
	}
}

func TestWriteNow(t *testing.T) {
	r, w := pipe(t)
	rw := New(w)
	n, err := rw.WriteNow(make([]byte, 4<<20))
	if err != nil || n <= 0 || n >= 4<<20 {
		t.Fatalf("into an empty pipe: wrote %d, %v; want part of 4 MiB and no error", n, err)
	}
	if n, err := rw.WriteNow([]byte("x")); n != 0 || err != nil {
		t.Fatalf("into a full pipe: wrote %d, %v; want 0, nil", n, err)
	}
	w.SetWriteDeadline(time.Unix(1, 0))
	if _, err := rw.WriteNow([]byte("x")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("past the deadline: %v, want os.ErrDeadlineExceeded", err)
	}
	w.SetWriteDeadline(time.Time{})
	r.Close()
	if _, err := rw.WriteNow([]byte("x")); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("with no reader: %v, want EPIPE", err)
	}
	r2, w2 := pipe(t)
	w2.Fd() // blocking: WriteNow must not try
	if n, err := New(w2).WriteNow([]byte("x")); n != 0 || err != nil {
		t.Fatalf("a blocking descriptor: wrote %d, %v; want 0, nil", n, err)
	}
	_ = r2
}

func TestAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"one\n", "two\n"} {
		if n, err := Append(f, []byte(line)); n != len(line) || err != nil {
			t.Fatalf("Append(%q) = %d, %v", line, n, err)
		}
	}
	f.Close()
	if b, _ := os.ReadFile(path); string(b) != "one\ntwo\n" {
		t.Fatalf("file holds %q", b)
	}
	if _, err := Append(f, []byte("three\n")); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Append to a closed file: %v, want os.ErrClosed", err)
	}
}
