//go:build unix

package upstream

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// connectScript connects to `sh -c script`, a child that speaks whatever
// the script writes; what clawd notes of its output (noise) goes to
// stderr.
func connectScript(t *testing.T, script string, stderr *syncBuffer) *stdioConn {
	t.Helper()
	return connectCommand(t, stderr, "/bin/sh", "-c", script)
}

// A call that reads its own answer and is cancelled while half of a line
// is in the pipe gives its turn up without losing that half: the next
// reader reads the line whole (here the cancelled call's late answer,
// dropped), and the call after it gets its own answer. Cut at the wrong
// place, the rest of the line would be read as a line of its own (noise
// here; a message, had the server meant it) and the framing lost.
func TestCancelledReaderKeepsHalfALine(t *testing.T) {
	t.Parallel()
	var noise syncBuffer
	c := connectScript(t, `read -r first
printf '%s' '{"jsonrpc":"2.0","id":"clawd-call-1","result":{"content":[{"type":"text","text":"'
sleep 1
printf '%s\n' 'late"}]}}'
while read -r line; do
  case "$line" in
  *'"clawd-call-2"'*) printf '%s\n' '{"jsonrpc":"2.0","id":"clawd-call-2","result":{"content":[{"type":"text","text":"second"}]}}' ;;
  esac
done`, &noise)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel) // the first half is in the pipe by then
	start := time.Now()
	_, err := c.callTool(ctx, "t", nil, nil, "", nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("first call: %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 900*time.Millisecond {
		t.Errorf("the cancelled call returned after %v, with the rest of the line (1 s)", took)
	}
	res, err := c.callTool(context.Background(), "t", nil, nil, "", nil)
	if err != nil {
		t.Fatalf("second call: %v", err)
	}
	if !strings.Contains(string(res), `"second"`) {
		t.Fatalf("second call answered %s", res)
	}
	select {
	case <-c.readDone:
		t.Fatalf("the connection ended: %v", c.readErr)
	default:
	}
	if n := noise.String(); n != "" {
		t.Errorf("the child's output was not read as whole lines:\n%s", n)
	}
}

// An idle reader blocked on a child that says nothing gives its turn up to
// a call, which then reads its own answer; once the connection is idle
// again, the idle reader reads what the child sends unasked (a
// notification), and a call after that still gets its answer.
func TestIdleReaderGivesWay(t *testing.T) {
	t.Parallel()
	c := connectScript(t, `while read -r line; do
  case "$line" in
  *'"clawd-call-'*) id=${line#*'"id":"'}; id=${id%%'"'*}
     printf '%s\n' '{"jsonrpc":"2.0","id":"'"$id"'","result":{"content":[]}}'
     sleep 0.2
     printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"'"$id"'"}}' ;;
  esac
done`, nil)
	time.Sleep(50 * time.Millisecond) // the idle reader waits in a read by now
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if _, err := c.callTool(ctx, "t", nil, nil, "", nil); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		// The notification comes 200 ms after the answer, with no call
		// waiting: only the idle reader can read it.
		m, err := c.Read(ctx)
		cancel()
		if err != nil {
			t.Fatalf("the notification after call %d: %v", i, err)
		}
		if r, ok := m.(*jsonrpc.Request); !ok || r.Method != "notifications/message" {
			t.Fatalf("after call %d the SDK got %#v", i, m)
		}
	}
}

// A reader whose call has ended does not wait for the SDK to take a
// message it read (a notification read on the way to its answer): the
// message is handed over by a goroutine of its own, in time.
func TestHandleLineAbortHandsOver(t *testing.T) {
	c := &stdioConn{logger: slog.New(slog.DiscardHandler), incoming: make(chan jsonrpc.Message), closed: make(chan struct{})}
	abort := make(chan struct{})
	close(abort)
	done := make(chan struct{})
	go func() {
		c.handleLine([]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`), abort)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("handleLine waited for the SDK after its reader's call ended")
	}
	select {
	case m := <-c.incoming:
		if r, ok := m.(*jsonrpc.Request); !ok || r.Method != "notifications/message" {
			t.Fatalf("the SDK got %#v", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the message was lost")
	}
}

// A stdout whose reads cannot be cut (an io.Pipe here; Windows' anonymous
// pipes) is read by the idle reader alone, and a call gets its answer from
// it; a call cancelled meanwhile returns at once, having never been stuck
// in a read it could not leave.
func TestUncuttableStdoutReadByIdleReader(t *testing.T) {
	// A pipe of blocking descriptors: an *os.File the runtime does not poll,
	// as Windows' anonymous pipes are; its reads cannot be cut either.
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	blocking := os.NewFile(uintptr(fds[0]), "blocking")
	defer blocking.Close()
	defer syscall.Close(fds[1])
	if newStdoutReader(blocking).file != nil {
		t.Fatal("a pipe whose reads cannot be cut was taken for one that can be")
	}

	pr, pw := io.Pipe()
	c := &stdioConn{logger: slog.New(slog.DiscardHandler), incoming: make(chan jsonrpc.Message), closed: make(chan struct{}), readDone: make(chan struct{})}
	c.out = newStdoutReader(pr)
	if c.out.file != nil {
		t.Fatal("an io.Pipe was taken for a file whose reads can be cut")
	}
	go c.readLoop()
	t.Cleanup(func() { pw.Close() })

	id, call := c.calls.register(nil)
	c.callStarted()
	go pw.Write([]byte(`{"jsonrpc":"2.0","id":"` + id + `","result":{"content":[]}}` + "\n"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if res, err := c.await(ctx, id, call); err != nil || !strings.Contains(string(res), "content") {
		t.Fatalf("await = %s, %v; want the answer the idle reader read", res, err)
	}

	id, call = c.calls.register(nil)
	cctx, ccancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, ccancel)
	done := make(chan error, 1)
	go func() { _, err := c.await(cctx, id, call); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled await: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled call stayed waiting")
	}
}

// A call still writing its request reads nothing yet, so the idle reader
// keeps reading meanwhile: a child that writes a lot before it reads its
// stdin (here 8 MB of noise lines), with clawd's request larger than the
// stdin pipe, would otherwise block on its stdout while clawd blocks on
// its stdin, until the call's deadline.
func TestIdleReaderReadsWhileACallWrites(t *testing.T) {
	t.Parallel()
	c := connectScript(t, `head -c 8000000 /dev/zero | tr '\0' x | fold -w 1000; echo
read -r line
printf '%s\n' '{"jsonrpc":"2.0","id":"clawd-call-1","result":{"content":[]}}'
cat >/dev/null`, nil)
	args := []byte(`{"a":"` + strings.Repeat("y", 256<<10) + `"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if _, err := c.callTool(ctx, "t", args, nil, "", nil); err != nil {
		t.Fatalf("the call failed after %v: %v", time.Since(start), err)
	}
}
