package transport

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/clawde/clawd/test/clawdtest"
)

// failingListener fails its first n Accepts with err, then accepts from the
// real listener.
type failingListener struct {
	net.Listener
	err   error
	fails atomic.Int64
}

func failFirst(n int64, err error) func(net.Listener) net.Listener {
	return func(ln net.Listener) net.Listener {
		f := &failingListener{Listener: ln, err: err}
		f.fails.Store(n)
		return f
	}
}

func (l *failingListener) Accept() (net.Conn, error) {
	if l.fails.Add(-1) >= 0 {
		return nil, l.err
	}
	return l.Listener.Accept()
}

// errTooManyFiles is what Accept returns when the process is out of file
// descriptors.
var errTooManyFiles = &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}

// TestServersOutliveTemporaryAcceptErrors: running out of descriptors for a
// moment does not stop a transport; it waits, retries, logs, and serves the
// next client.
func TestServersOutliveTemporaryAcceptErrors(t *testing.T) {
	t.Run("http", func(t *testing.T) {
		f := startHTTPOn(t, nil, failFirst(3, errTooManyFiles))
		resp, body := f.do(req{method: "GET", path: "/health"})
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"status":"ok"`) {
			t.Fatalf("GET /health after EMFILE: HTTP %d %s", resp.StatusCode, body)
		}
		if !strings.Contains(f.log.String(), "accept failed; retrying") {
			t.Errorf("the failed accepts were not logged:\n%s", f.log)
		}
	})
	t.Run("unix", func(t *testing.T) {
		f := startUnixOn(t, filepath.Join(shortDir(t), "clawd.ws.sock"), failFirst(3, errTooManyFiles))
		c := dialLines(t, f.path)
		c.send(t, initBody)
		if got := c.recv(t); !strings.Contains(got, `"protocolVersion"`) {
			t.Fatalf("initialize after EMFILE answered %s", got)
		}
		if !strings.Contains(f.log.String(), "accept failed; retrying") {
			t.Errorf("the failed accepts were not logged:\n%s", f.log)
		}
	})
}

// TestServersStopOnBrokenListener: an Accept error that cannot pass ends
// Serve with that error instead of retrying forever.
func TestServersStopOnBrokenListener(t *testing.T) {
	broken := errors.New("listener broken")
	serve := map[string]func(context.Context, net.Listener) error{
		"http": (&HTTPServer{Server: newTestMCPServer(newBlockTool()), Auth: staticAuth(testToken),
			Logger: newLogger(&clawdtest.SyncBuffer{})}).Serve,
		"unix": (&UnixServer{Server: newTestMCPServer(newBlockTool()),
			Logger: newLogger(&clawdtest.SyncBuffer{})}).Serve,
	}
	for name, serve := range serve {
		t.Run(name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			done := make(chan error, 1)
			go func() { done <- serve(context.Background(), failFirst(1<<40, broken)(ln)) }()
			select {
			case err := <-done:
				if !errors.Is(err, broken) {
					t.Fatalf("Serve returned %v, want %v", err, broken)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Serve kept retrying an error that cannot pass")
			}
		})
	}
}
