package clawdtest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a testing.TB whose Fatal ends only the calling goroutine,
// so a test can watch a helper fail.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	failed []string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatal(args ...any) {
	r.mu.Lock()
	r.failed = append(r.failed, fmt.Sprint(args...))
	r.mu.Unlock()
	runtime.Goexit()
}
func (r *recorder) Fatalf(format string, args ...any) { r.Fatal(fmt.Sprintf(format, args...)) }

// fails runs f on its own goroutine and returns what it failed with ("" if
// it returned normally).
func (r *recorder) fails(f func()) string {
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	<-done
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.failed) == 0 {
		return ""
	}
	return r.failed[len(r.failed)-1]
}

// pipeServer is the far end of a Client: what the client wrote, line by
// line, and a writer for the answers.
func pipeServer(t testing.TB) (c *Client, got *bufio.Reader, answer io.Writer) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c = NewClient(t, inW, outR)
	return c, bufio.NewReader(inR), outW
}

// Request returns its own response, keeps a notification that came first
// for WaitNotification, and numbers requests 1, 2, ...
func TestClientRequestKeepsNotifications(t *testing.T) {
	c, got, answer := pipeServer(t)
	go func() {
		line, _ := got.ReadString('\n')
		if line != `{"id":1,"jsonrpc":"2.0","method":"tools/list"}`+"\n" {
			t.Errorf("sent %q", line)
		}
		io.WriteString(answer, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`+"\n")
		io.WriteString(answer, `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"read_file"},{"name":"bash"}]}}`+"\n")
	}()
	if names := c.ToolNames(); !slices.Equal(names, []string{"read_file", "bash"}) || c.LastID() != 1 {
		t.Fatalf("ToolNames %v, id %d", names, c.LastID())
	}
	if !c.WaitNotification("notifications/tools/list_changed", time.Second) {
		t.Error("the notification that came before the response was lost")
	}
	if c.WaitNotification("notifications/tools/list_changed", 50*time.Millisecond) {
		t.Error("a notification was delivered twice")
	}
}

// A server that never answers fails the test within Timeout instead of
// hanging it; so does one that answers another id.
func TestClientReadsAreBounded(t *testing.T) {
	rec := &recorder{TB: t}
	c, got, answer := pipeServer(rec)
	go io.Copy(io.Discard, got)
	c.Timeout = 100 * time.Millisecond
	start := time.Now()
	msg := rec.fails(func() { c.Request("ping", nil) })
	if !strings.Contains(msg, "no response to 1 within 100ms") {
		t.Errorf("a silent server: failure %q", msg)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("the silent server held the test %v", el)
	}
	if msg := rec.fails(func() { c.RecvLine() }); !strings.Contains(msg, "no line from clawd within 100ms") {
		t.Errorf("RecvLine on a silent server: failure %q", msg)
	}
	go io.WriteString(answer, `{"jsonrpc":"2.0","id":7,"result":{}}`+"\n")
	if msg := rec.fails(func() { c.Request("ping", nil) }); !strings.Contains(msg, "unexpected message") {
		t.Errorf("a response to another id: failure %q", msg)
	}
}

// WriteRaw sends exactly the bytes given; Call returns the answer's line
// unparsed; error.data that is not an object does not break decoding.
func TestClientRawBytes(t *testing.T) {
	c, got, answer := pipeServer(t)
	go func() {
		b := make([]byte, 9)
		io.ReadFull(got, b)
		if string(b) != "{not json" {
			t.Errorf("server read %q", b)
		}
		got.ReadString('\n')
		io.WriteString(answer, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error","data":"x"}}`+"\n")
	}()
	if err := c.WriteRaw([]byte("{not json")); err != nil {
		t.Fatal(err)
	}
	line := c.Call("")
	if line != `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error","data":"x"}}` {
		t.Fatalf("Call returned %q", line)
	}
	if code, msg, data := Decode(t, line).Err(); code != -32700 || msg != "parse error" || data != nil {
		t.Errorf("Err() = %d %q %v", code, msg, data)
	}
}

func TestEnvironExtraReplaces(t *testing.T) {
	e := &Env{Home: "/h", Runtime: "/r", Extra: []string{"PATH=/bin", "FOO=1"}}
	vars := e.Environ()
	if !slices.Contains(vars, "PATH=/bin") || !slices.Contains(vars, "FOO=1") || !slices.Contains(vars, "HOME=/h") || !slices.Contains(vars, "XDG_RUNTIME_DIR=/r") {
		t.Errorf("Environ() = %v", vars)
	}
	n := 0
	for _, kv := range vars {
		if strings.HasPrefix(kv, "PATH=") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d PATH entries in %v", n, vars)
	}
}

func TestReadTxtar(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.txtar")
	os.WriteFile(p, []byte("a comment\n-- one --\nline 1\n-- not a marker\n--  two  --\nno newline"), 0o600)
	comment, files := ReadTxtar(t, p)
	if string(comment) != "a comment\n" || len(files) != 2 {
		t.Fatalf("comment %q, files %+v", comment, files)
	}
	if files[0].Name != "one" || string(files[0].Data) != "line 1\n-- not a marker\n" {
		t.Errorf("first file %+v", files[0])
	}
	if files[1].Name != "two" || string(files[1].Data) != "no newline\n" {
		t.Errorf("second file %+v", files[1])
	}
}
