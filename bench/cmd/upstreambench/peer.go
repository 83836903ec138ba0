//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// peer is an MCP server on the other end of a child's stdio, spoken to in
// raw NDJSON so the client adds as little as it can, and the same way to
// clawd and to an upstream called directly.
type peer struct {
	name   string
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	id     int
	buf    bytes.Buffer
	stderr *tail
}

var (
	peersMu sync.Mutex
	peers   []*peer
)

// startPeer starts argv with env in dir; its stderr is kept (the last
// 8 KiB) for error messages.
func startPeer(name string, env []string, dir string, argv ...string) (*peer, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &peer{name: name, cmd: cmd, stderr: &tail{}}
	cmd.Stderr = p.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	p.in, p.out = in, bufio.NewReaderSize(out, 1<<20)
	peersMu.Lock()
	peers = append(peers, p)
	peersMu.Unlock()
	return p, nil
}

// request sends one request and returns its result, skipping
// notifications and the server's own requests on the way.
func (p *peer) request(method string, params any) (json.RawMessage, error) {
	p.id++
	id := strconv.Itoa(p.id)
	p.buf.Reset()
	p.buf.WriteString(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":`)
	b, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	p.buf.Write(b)
	p.buf.WriteString("}\n")
	if _, err := p.in.Write(p.buf.Bytes()); err != nil {
		return nil, fmt.Errorf("%s: write: %v; stderr: %s", p.name, err, p.stderr)
	}
	for {
		line, err := p.out.ReadSlice('\n')
		if err != nil {
			return nil, fmt.Errorf("%s: read: %v; stderr: %s", p.name, err, p.stderr)
		}
		// Cheap check before decoding: the response carries our id.
		if !bytes.Contains(line, []byte(`"id":`+id)) {
			continue
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil || m.Method != "" || string(m.ID) != id {
			continue
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s: %s", p.name, method, m.Error)
		}
		return m.Result, nil
	}
}

func (p *peer) notify(method string) error {
	_, err := io.WriteString(p.in, `{"jsonrpc":"2.0","method":"`+method+`"}`+"\n")
	return err
}

// initialize does the 2025-11-25 handshake.
func (p *peer) initialize() error {
	_, err := p.request("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "upstreambench", "version": "1"}})
	if err != nil {
		return err
	}
	return p.notify("notifications/initialized")
}

// call runs tools/call and fails on a tool error.
func (p *peer) call(tool string, args json.RawMessage) error {
	res, err := p.request("tools/call", map[string]any{"name": tool, "arguments": args})
	if err != nil {
		return err
	}
	if bytes.Contains(res, []byte(`"isError":true`)) {
		return fmt.Errorf("%s: %s: tool error %s", p.name, tool, res)
	}
	return nil
}

// listNames lists every page of tools/list and returns the tool names.
func (p *peer) listNames() ([]string, error) {
	var names []string
	cursor := ""
	for page := 0; page < 100; page++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		res, err := p.request("tools/list", params)
		if err != nil {
			return nil, err
		}
		var r struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &r); err != nil {
			return nil, err
		}
		for _, t := range r.Tools {
			names = append(names, t.Name)
		}
		if r.NextCursor == "" {
			return names, nil
		}
		cursor = r.NextCursor
	}
	return nil, fmt.Errorf("%s: tools/list has more than 100 pages", p.name)
}

// close ends the child: stdin closed, then its process group killed.
func (p *peer) close() {
	p.in.Close()
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// killAll ends every child started (the watchdog's last resort).
func killAll() {
	peersMu.Lock()
	defer peersMu.Unlock()
	for _, p := range peers {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// tail keeps the last 8 KiB written to it.
type tail struct {
	mu sync.Mutex
	b  []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 8192 {
		t.b = t.b[len(t.b)-8192:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// atExit runs before fatalf exits (os.Exit skips deferred calls).
var atExit []func()

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "upstreambench: "+format+"\n", args...)
	killAll()
	for _, f := range atExit {
		f()
	}
	os.Exit(1)
}
