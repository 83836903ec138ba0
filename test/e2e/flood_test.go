package e2e

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawde/clawd/test/clawdtest"
)

// TestStdioClientThatDoesNotRead: a client that sends many read_file calls
// of a 1 MiB file and does not read its stdout makes clawd hold at most
// the stream's bound of calls (32 by default) and their answers, not one
// per call sent: clawd stops reading its input meanwhile, and its memory
// stays far below what the calls' answers add up to. Once the client
// reads, every call is answered and the session goes on.
func TestStdioClientThatDoesNotRead(t *testing.T) {
	e := newEnv(t)
	e.Write("big.txt", strings.Repeat("0123456789abcdef\n", 1<<16)) // 1.1 MB
	cmd := e.Command("serve", "--client", "cc")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	cmd.Stdout = w
	stderr := &clawdtest.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("stderr:\n%s", stderr)
		}
	}()

	const calls = 400 // their answers add up to about 900 MB
	sent := make(chan error, 1)
	go func() {
		bw := bufio.NewWriter(stdin)
		fmt.Fprintln(bw, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`)
		fmt.Fprintln(bw, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		for i := 0; i < calls; i++ {
			fmt.Fprintf(bw, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"big.txt"}}}`+"\n", i)
		}
		sent <- bw.Flush()
	}()
	// Let clawd read what it will and run what it takes while nothing is
	// read; it stops reading once an answer cannot be written.
	time.Sleep(3 * time.Second)
	rss := residentKB(t, cmd.Process.Pid)
	const limitKB = 400 << 10
	if rss > limitKB {
		t.Fatalf("clawd holds %d MB with a client that does not read; want under %d MB", rss>>10, limitKB>>10)
	}
	t.Logf("resident while the client did not read: %d MB", rss>>10)

	br := bufio.NewReaderSize(stdout, 1<<20)
	results := 0
	for results < calls {
		stdout.SetReadDeadline(time.Now().Add(20 * time.Second))
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("after %d answers: %v", results, err)
		}
		switch {
		case strings.HasPrefix(line, `{"jsonrpc":"2.0","id":"init"`):
		case strings.Contains(line, `"result"`) && !strings.Contains(line, `"isError":true`):
			results++
		default:
			t.Fatalf("unexpected answer: %.300s", line)
		}
	}
	if err := <-sent; err != nil {
		t.Fatalf("sending the calls: %v", err)
	}
	// The session goes on.
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":"last","method":"ping"}`)
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, `"id":"last"`) {
		t.Fatalf("ping after the flood: %q, %v", line, err)
	}
}

// residentKB is a process's resident memory in KiB (Linux /proc; the test
// is skipped where there is none).
func residentKB(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skipf("no /proc status: %v", err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatalf("VmRSS %q: %v", v, err)
			}
			return n
		}
	}
	t.Fatal("no VmRSS in /proc status")
	return 0
}
