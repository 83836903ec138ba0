//go:build unix

package transport

import (
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHealthAnswersUnreadAreBounded: /health requests the health lane
// leaves to net/http (here for their Connection header), pipelined by a
// client that never reads the answers, filled the socket and then blocked
// the handler's write for good: /health was the one answer without the
// per-response write deadline, so the connection and its goroutine stayed
// until the cap shed them. Now the write gives up after the deadline and
// the connection closes.
func TestHealthAnswersUnreadAreBounded(t *testing.T) {
	f := startHTTP(t, func(h *HTTPServer) { h.timeouts.write = 300 * time.Millisecond })
	// A small receive buffer, set before connecting (the window is agreed
	// then), so that the answers fill the socket after a few MB at most.
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		if err != nil {
			return err
		}
		return serr
	}}
	c, err := d.Dial("tcp", strings.TrimPrefix(f.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	f.waitConns(1)
	batch := []byte(strings.Repeat("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n", 100))
	go func() {
		for {
			c.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if _, err := c.Write(batch); err != nil {
				return // the server closed the connection
			}
		}
	}()
	for deadline := time.Now().Add(15 * time.Second); f.h.conns.len() != 0; {
		if time.Now().After(deadline) {
			t.Fatal("the connection of a client that reads no /health answer is still open 15 s on; the write deadline is 300 ms")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
