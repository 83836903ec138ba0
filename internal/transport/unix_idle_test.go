package transport

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawde/clawd/test/clawdtest"
)

// startUnixWith starts a UnixServer configured by configure on a fresh
// socket and returns the socket path and the log.
func startUnixWith(t *testing.T, configure func(u *UnixServer)) (string, *clawdtest.SyncBuffer) {
	t.Helper()
	path := filepath.Join(shortDir(t), "s.sock")
	ln, err := ListenUnix(path)
	if err != nil {
		t.Fatal(err)
	}
	logs := &clawdtest.SyncBuffer{}
	u := &UnixServer{Server: newTestMCPServer(newBlockTool()), Subject: "ws", Logger: newLogger(logs)}
	configure(u)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- u.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after cancel")
		}
		ln.Close()
	})
	return path, logs
}

const pingLine = `{"jsonrpc":"2.0","id":1,"method":"ping"}`

// TestUnixShedsSilentConnections: at the cap, a connection that has sent
// no line within the wait gives way to a new one, the oldest first; one
// that has sent a line never does; with nothing to shed the new one is
// closed. Both are counted in summary lines, not logged one by one.
func TestUnixShedsSilentConnections(t *testing.T) {
	const wait = time.Second
	path, logs := startUnixWith(t, func(u *UnixServer) {
		u.MaxConns, u.firstLineWait, u.connLogEvery = 3, wait, 20*time.Millisecond
	})
	dial := func() net.Conn {
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	silent1, silent1At := dial(), time.Now()
	time.Sleep(20 * time.Millisecond) // silent1 is the older
	silent2 := dial()
	legit := dialLines(t, path)
	legit.send(t, pingLine)
	legit.recv(t)

	// The silent ones are too young to shed: a new connection is closed.
	if !isClosed(dial(), 3*time.Second) && time.Since(silent1At) < wait {
		t.Fatalf("a connection over the cap was kept while no other could be shed:\n%s", logs)
	}
	time.Sleep(wait + 100*time.Millisecond)
	late := dialLines(t, path)
	late.send(t, pingLine)
	if got := late.recv(t); !strings.Contains(got, `"result"`) {
		t.Fatalf("the new client got %s", got)
	}
	if !isClosed(silent1, 3*time.Second) {
		t.Error("the oldest silent connection was not shed")
	}
	if isClosed(silent2, 100*time.Millisecond) {
		t.Error("a second silent connection was shed for one new one")
	}
	legit.send(t, pingLine)
	legit.recv(t)

	// 200 more connections, held open: each is refused, or takes the slot
	// of the silent one past the wait. All are counted, in a few lines.
	for range 200 {
		dial()
	}
	deadline := time.Now().Add(5 * time.Second)
	for logTotal(logs.String(), "refused")+logTotal(logs.String(), "shed_silent") < 202 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // a last summary line, if one is due
	log := logs.String()
	if got := logTotal(log, "refused") + logTotal(log, "shed_silent"); got != 202 {
		t.Errorf("the summary lines count %d refused or shed connections, want 202:\n%s", got, log)
	}
	if n := strings.Count(log, "too many open connections"); n > 10 {
		t.Errorf("%d log lines about refusals, want a few summary lines:\n%s", n, log)
	}
	legit.send(t, pingLine)
	legit.recv(t)
}

// TestUnixSparesUnreadMessage: a connection whose first line is waiting
// unread in the socket (its reader has not run yet) is not shed however
// old it is, and one whose line has been read is kept for good.
func TestUnixSparesUnreadMessage(t *testing.T) {
	path := filepath.Join(shortDir(t), "s.sock")
	ln, err := ListenUnix(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	u := &UnixServer{firstLineWait: 50 * time.Millisecond}
	table := u.connTable(2)
	accept := func() (*trackedConn, net.Conn, bool) {
		t.Helper()
		client, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { client.Close() })
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		tc, _, ok := table.admit(c)
		if !ok {
			c.Close()
		} else {
			t.Cleanup(func() { tc.Close() })
		}
		return tc, client, ok
	}
	sent, sentClient, _ := accept()
	if _, err := sentClient.Write([]byte(pingLine + "\n")); err != nil {
		t.Fatal(err)
	}
	_, silentClient, _ := accept()
	time.Sleep(100 * time.Millisecond) // both are past the wait; sent is older
	if _, _, ok := accept(); !ok {
		t.Fatal("no room made for a new connection")
	}
	if !isClosed(silentClient, time.Second) {
		t.Error("the silent connection was not shed")
	}
	if isClosed(sentClient, 100*time.Millisecond) {
		t.Fatal("the connection with a message waiting unread was shed")
	}
	// Its reader takes the line: the connection is kept for good, also
	// once nothing is waiting any more.
	buf := make([]byte, 512)
	if _, err := (lineWatch{sent}).Read(buf); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the third connection is past the wait
	if _, _, ok := accept(); !ok {
		t.Fatal("the silent third connection was not shed for a fourth")
	}
	if _, _, ok := accept(); ok {
		t.Fatal("a connection was admitted with only a kept and a young one open")
	}
	if isClosed(sentClient, 100*time.Millisecond) {
		t.Error("the connection that sent a line was shed")
	}
}

// TestUnixFloodOfSilentConnections: while 2,000 connections that never
// send a byte pile up, a client being served keeps its connection; once
// they have been silent for the wait, each new client that sends
// initialize at once takes the place of one of them and is served.
func TestUnixFloodOfSilentConnections(t *testing.T) {
	const idle, wait = 2000, 100 * time.Millisecond
	clawdtest.RaiseFDLimit(t, 2*idle+512)
	path, logs := startUnixWith(t, func(u *UnixServer) { u.firstLineWait, u.connLogEvery = wait, 10*time.Millisecond })
	first := dialLines(t, path)
	first.send(t, initBody)
	first.recv(t)
	var wg sync.WaitGroup
	wg.Go(func() { holdIdle(t, "unix", path, idle) })
	flooded := make(chan struct{})
	go func() { wg.Wait(); close(flooded) }()
	for pinged := 0; ; pinged++ {
		select {
		case <-flooded:
		default:
			first.send(t, pingLine)
			first.recv(t)
			continue
		}
		t.Logf("the served client pinged %d times during the flood", pinged)
		break
	}
	// Once the server has taken every one of them off its accept queue
	// (all but the 127 it holds were refused or shed), they grow old
	// enough to give way.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		log := logs.String()
		if logTotal(log, "refused")+logTotal(log, "shed_silent") >= idle-(DefaultMaxConns-1) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not take the connections:\n%s", log)
		}
	}
	time.Sleep(2 * wait)
	var lat []time.Duration
	for i := range 50 {
		start := time.Now()
		c := dialLines(t, path)
		c.send(t, initBody)
		if got := c.recv(t); !strings.Contains(got, `"protocolVersion"`) {
			t.Fatalf("client %d: %s", i, got)
		}
		lat = append(lat, time.Since(start))
	}
	first.send(t, pingLine)
	first.recv(t)
	t.Logf("connect+initialize with %d silent connections held: p99 %v", idle, p99(lat))
}
