package jsonrpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

var bg = context.Background()

// TestStreamFraming: the stream drops CR line ends and blank lines, reads a
// last line without a newline, and then reports io.EOF.
func TestStreamFraming(t *testing.T) {
	in := "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\r\n\n  \r\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"c\"}"
	s := NewStream(strings.NewReader(in), io.Discard, 1024)
	for _, want := range []string{"a", "b", "c"} {
		m, err := s.Read(bg)
		if err != nil || m.Method != want {
			t.Fatalf("Read = %+v, %v; want method %s", m, err, want)
		}
	}
	if _, err := s.Read(bg); err != io.EOF {
		t.Fatalf("Read at the end = %v, want io.EOF", err)
	}
	if _, err := s.Read(bg); err != io.EOF {
		t.Fatalf("Read after the end = %v, want io.EOF again", err)
	}
}

// TestStreamOversizeAndParseErrors: a line over the limit (longer than the
// read buffer too) and a line that is not JSON are each reported as a
// *ParseError the reader answers, and the next line is read normally.
func TestStreamOversizeAndParseErrors(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":9,"method":"x","params":{"p":"` + strings.Repeat("a", 200<<10) + `"}}`
	in := long + "\nnot json\n" + `{"jsonrpc":"2.0","id":"ok","method":"ping"}` + "\n" + long
	s := NewStream(strings.NewReader(in), io.Discard, 100<<10)
	_, err := s.Read(bg)
	var perr *ParseError
	if !errors.As(err, &perr) || perr.Err.Code != CodeInvalidRequest || !perr.ID.IsZero() || !perr.TooLarge ||
		!strings.Contains(perr.Err.Message, "102400-byte limit (max_message_bytes)") {
		t.Fatalf("oversized line: %v, want -32600 naming the limit with id null", err)
	}
	_, err = s.Read(bg)
	if !errors.As(err, &perr) || perr.Err.Code != CodeParseError || perr.TooLarge {
		t.Fatalf("not JSON: %v, want -32700", err)
	}
	m, err := s.Read(bg)
	if err != nil || m.ID.Raw() != `"ok"` {
		t.Fatalf("line after the errors: %+v, %v", m, err)
	}
	// An oversized last line without a newline: reported, then EOF.
	if _, err := s.Read(bg); !errors.As(err, &perr) || perr.Err.Code != CodeInvalidRequest {
		t.Fatalf("oversized last line: %v", err)
	}
	if _, err := s.Read(bg); err != io.EOF {
		t.Fatalf("after it: %v, want io.EOF", err)
	}
}

// TestStreamExactLimit: a message of exactly max bytes passes (with LF or
// CRLF), one byte more does not.
func TestStreamExactLimit(t *testing.T) {
	msg := func(n int) string {
		head := `{"jsonrpc":"2.0","id":1,"method":"`
		return head + strings.Repeat("m", n-len(head)-2) + `"}`
	}
	for _, end := range []string{"\n", "\r\n"} {
		s := NewStream(strings.NewReader(msg(1024)+end+msg(1025)+end), io.Discard, 1024)
		if _, err := s.Read(bg); err != nil {
			t.Errorf("%q: a message of exactly the limit: %v", end, err)
		}
		var perr *ParseError
		if _, err := s.Read(bg); !errors.As(err, &perr) {
			t.Errorf("%q: one byte over the limit: %v, want a *ParseError", end, err)
		}
	}
}

// TestStreamBatch: a JSON array is read as one message with Batch set.
func TestStreamBatch(t *testing.T) {
	s := NewStream(strings.NewReader(`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]`+"\n"), io.Discard, 1024)
	m, err := s.Read(bg)
	if err != nil || m.Batch == nil || len(m.Batch.Items) != 2 || m.Batch.Items[1].Msg.Method != "b" {
		t.Fatalf("Read = %+v, %v; want a batch of 2", m, err)
	}
}

// TestStreamBuffered: Buffered reports input read ahead of the message
// returned, which is what lets a session run a lone call on its reader.
func TestStreamBuffered(t *testing.T) {
	pr, pw := io.Pipe()
	s := NewStream(pr, io.Discard, 1024)
	go pw.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"a"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"b"}` + "\n"))
	if _, err := s.Read(bg); err != nil {
		t.Fatal(err)
	}
	if !s.Buffered() {
		t.Error("Buffered = false with a second line already read")
	}
	if _, err := s.Read(bg); err != nil {
		t.Fatal(err)
	}
	if s.Buffered() {
		t.Error("Buffered = true with nothing more read")
	}
	pw.Close()
}

// TestStreamWrite: concurrent writes come out as whole lines, and a failed
// write fails every later one.
func TestStreamWrite(t *testing.T) {
	var out bytes.Buffer
	var mu sync.Mutex
	s := NewStream(strings.NewReader(""), lockedWriter{&out, &mu}, 1024)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Write(bg, []byte(fmt.Sprintf(`{"n":%d,"pad":"%s"}`, i, strings.Repeat("x", 3000))))
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 50 {
		t.Fatalf("%d lines, want 50", len(lines))
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, `{"n":`) || !strings.HasSuffix(l, `"}`) {
			t.Fatalf("a line is interleaved: %.60s...", l)
		}
	}

	fw := &failWriter{}
	s = NewStream(strings.NewReader(""), fw, 1024)
	if err := s.Write(bg, []byte(`{}`)); err == nil {
		t.Fatal("write to a failing writer succeeded")
	}
	fw.ok = true
	if err := s.Write(bg, []byte(`{}`)); err == nil {
		t.Error("a write after a failed one succeeded")
	}
}

// TestStreamCloseInterruptsRead: Close ends a Read blocked on a reader with
// read deadlines (a socket), and later Reads return ErrClosed.
func TestStreamCloseInterruptsRead(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	s := NewStream(a, io.Discard, 1024)
	done := make(chan error, 1)
	go func() { _, err := s.Read(bg); done <- err }()
	time.Sleep(20 * time.Millisecond)
	s.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("blocked Read after Close = %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not interrupt a blocked Read")
	}
	if _, err := s.Read(bg); !errors.Is(err, ErrClosed) {
		t.Errorf("Read after Close = %v, want ErrClosed", err)
	}
	if s.SessionID() != "" {
		t.Errorf("SessionID = %q, want none", s.SessionID())
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type failWriter struct{ ok bool }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.ok {
		return len(p), nil
	}
	return 0, errors.New("broken pipe")
}

var _ Connection = (*Stream)(nil)
var _ ReadAhead = (*Stream)(nil)

// socketPair returns both ends of a connected loopback TCP socket (real
// kernel buffers, and deadlines through the network poller).
func socketPair(t *testing.T) (a, b net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		acc <- c
	}()
	a, err = net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b = <-acc
	if b == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// TestStreamWriteStall: with LimitWriteStall, a write the peer does not read
// fails after about the limit (and every later one at once, Stalled
// reporting why); writes the peer reads, however many and however spread
// out, never trip it. Without the limit the same write is still blocked.
func TestStreamWriteStall(t *testing.T) {
	const limit = 200 * time.Millisecond
	big := bytes.Repeat([]byte("x"), 32<<20) // more than the socket buffers hold

	t.Run("peer reads", func(t *testing.T) {
		// A longer limit here: the peer's reading goroutine must not
		// count as stalled because a loaded machine (CI running every
		// package at once) left it unscheduled for a while.
		const limit = time.Second
		a, b := socketPair(t)
		s := NewStream(a, a, 1024)
		if !s.LimitWriteStall(limit) {
			t.Fatal("LimitWriteStall refused a socket")
		}
		go io.Copy(io.Discard, b)
		end := time.Now().Add(3 * limit)
		for n := 0; time.Now().Before(end); n++ {
			if err := s.Write(bg, big[:1000+n%5000]); err != nil {
				t.Fatalf("write %d: %v", n, err)
			}
			if n%50 == 0 {
				time.Sleep(limit / 3) // idle spells: the timer stops and re-arms
			}
		}
		if err := s.Write(bg, big); err != nil || s.Stalled() {
			t.Fatalf("large write the peer reads: %v (stalled %v)", err, s.Stalled())
		}
	})

	t.Run("peer stops reading", func(t *testing.T) {
		a, _ := socketPair(t)
		s := NewStream(a, a, 1024)
		s.LimitWriteStall(limit)
		// The upper bounds are hang guards, far above what a loaded
		// machine takes (the limit, then nothing): without the limit the
		// write would never end.
		write := func(b []byte, within time.Duration) (time.Duration, error) {
			t.Helper()
			start := time.Now()
			errc := make(chan error, 1)
			go func() { errc <- s.Write(bg, b) }()
			select {
			case err := <-errc:
				return time.Since(start), err
			case <-time.After(within):
				t.Fatalf("a write nobody reads still blocked after %v, with a limit of %v", within, limit)
				return 0, nil
			}
		}
		took, err := write(big, limit+20*time.Second)
		if err == nil || !s.Stalled() {
			t.Fatalf("write nobody reads: err %v, stalled %v; want a failure", err, s.Stalled())
		}
		if took < limit {
			t.Fatalf("write failed after %v, before the limit of %v", took, limit)
		}
		if took, err := write([]byte("{}"), 20*time.Second); err == nil || took > 5*time.Second {
			t.Fatalf("write after the stall: %v after %v, want an immediate failure", err, took)
		}
	})

	// Close shortens the wait of a write in progress, and of the writes
	// after it, to closeWriteGrace: a session cancelled under a peer that
	// stopped reading ends in that time, not the full limit.
	t.Run("closed while the peer does not read", func(t *testing.T) {
		defer func(g time.Duration) { closeWriteGrace = g }(closeWriteGrace)
		closeWriteGrace = limit
		a, _ := socketPair(t)
		s := NewStream(a, a, 1024)
		s.LimitWriteStall(time.Hour)
		errc := make(chan error, 1)
		start := time.Now()
		go func() { errc <- s.Write(bg, big) }()
		time.Sleep(limit) // the write is blocked by now
		s.Close()
		select {
		case err := <-errc:
			if err == nil || !s.Stalled() {
				t.Fatalf("write after Close: err %v, stalled %v; want a stall failure", err, s.Stalled())
			}
			if took := time.Since(start); took < limit {
				t.Fatalf("write failed after %v, before the grace", took)
			}
		case <-time.After(limit + 5*time.Second):
			t.Fatal("a write blocked on a peer that does not read outlived Close by far more than closeWriteGrace")
		}
	})

	// A peer that reads steadily, but slower than a large answer could go
	// out within the limit, keeps its session: the limit is on a wait for
	// it to read (64 KiB at a time), not on the whole answer.
	t.Run("peer reads slowly", func(t *testing.T) {
		const slowLimit = time.Second // ten times what 64 KiB takes, for a loaded machine
		a, b := net.Pipe()            // no buffer: each write waits for the reads
		t.Cleanup(func() { a.Close(); b.Close() })
		s := NewStream(a, a, 1024)
		if !s.LimitWriteStall(slowLimit) {
			t.Fatal("LimitWriteStall refused a net.Pipe")
		}
		go func() { // 16 KiB every 25 ms: 64 KiB in about 100 ms
			buf := make([]byte, 16<<10)
			for {
				if _, err := io.ReadFull(b, buf); err != nil {
					return
				}
				time.Sleep(25 * time.Millisecond)
			}
		}()
		msg := big[:2<<20] // about 3.2 s to go out, three times the limit
		start := time.Now()
		if err := s.Write(bg, msg); err != nil || s.Stalled() {
			t.Fatalf("2 MiB to a peer reading 16 KiB every 25 ms: %v after %v (stalled %v)", err, time.Since(start), s.Stalled())
		}
		if took := time.Since(start); took < slowLimit {
			t.Fatalf("the write took %v, less than the limit %v: the test proves nothing", took, slowLimit)
		}
	})

	t.Run("no limit", func(t *testing.T) {
		a, _ := socketPair(t)
		s := NewStream(a, a, 1024)
		done := make(chan error, 1)
		go func() { done <- s.Write(bg, big) }()
		select {
		case err := <-done:
			t.Fatalf("write nobody reads returned %v without a limit", err)
		case <-time.After(3 * limit):
		}
		a.Close() // ends the blocked write
		<-done
	})

	t.Run("writer without deadlines", func(t *testing.T) {
		s := NewStream(strings.NewReader(""), io.Discard, 1024)
		if s.LimitWriteStall(limit) {
			t.Fatal("LimitWriteStall accepted a writer that takes no deadline")
		}
	})
}
