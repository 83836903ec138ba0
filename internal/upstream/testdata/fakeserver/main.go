// Command fakeserver is a misbehaving stdio MCP server for the upstream
// package's tests. It speaks raw newline-delimited JSON-RPC (not through an
// SDK) so each test can make it do exactly the wrong thing it needs.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

var (
	hangInit       = flag.Bool("hang-init", false, "never answer initialize")
	exitOnDiscover = flag.Bool("exit-on-discover", false, "exit on server/discover, like a legacy server")
	banner         = flag.Bool("banner", false, "print non-JSON lines on stdout")
	grandchild     = flag.String("grandchild", "", "start `sleep 1000` (holding stdout) and write its pid to this file")
	crashAfter     = flag.Int("crash-after", 0, "exit after this many tools/call requests")
	pageSize       = flag.Int("page-size", 0, "tools per tools/list page (0: all)")
	repeatCursor   = flag.Bool("repeat-cursor", false, "always answer tools/list with the same next cursor")
	stderrFlood    = flag.Int("stderr-flood", 0, "write this many bytes to stderr at start")
	printEnv       = flag.String("print-env", "", "write NAME=value of this variable to stderr at start")
	cancelFile     = flag.String("cancel-file", "", "append the id of every cancelled slow call here")
	pidFile        = flag.String("pid-file", "", "write our pid here")
	nTools         = flag.Int("tools", 0, "extra tools t0..tN-1")
	dumpEnv        = flag.Bool("dump-env", false, "write the whole environment to stderr at start and offer a tool `environ` that returns it (secret-leak tests)")
)

var (
	outMu   sync.Mutex
	out     = bufio.NewWriter(os.Stdout)
	toolsMu sync.Mutex
	names   = []string{"echo", "image", "slow", "change", "big", "env", "Upper.Case!"}
	slowMu  sync.Mutex
	slow    = map[string]chan struct{}{}
	calls   int
)

func send(v any) {
	b, _ := json.Marshal(v)
	outMu.Lock()
	defer outMu.Unlock()
	if *banner {
		out.WriteString("log: about to answer\n")
	}
	out.Write(b)
	out.WriteByte('\n')
	out.Flush()
}

func result(id json.RawMessage, res any) {
	send(map[string]any{"jsonrpc": "2.0", "id": id, "result": res})
}

func main() {
	flag.Parse()
	for i := 0; i < *nTools; i++ {
		names = append(names, "t"+strconv.Itoa(i))
	}
	if *pidFile != "" {
		os.WriteFile(*pidFile, []byte(strconv.Itoa(os.Getpid())), 0o600)
	}
	if *banner {
		fmt.Println("Welcome to fakeserver 1.0 -- starting up")
		fmt.Println("")
	}
	if *dumpEnv {
		names = append(names, "environ")
		for _, kv := range os.Environ() {
			fmt.Fprintln(os.Stderr, kv)
		}
	}
	if *printEnv != "" {
		fmt.Fprintf(os.Stderr, "%s=%s\n", *printEnv, os.Getenv(*printEnv))
	}
	if *stderrFlood > 0 {
		line := strings.Repeat("x", 99) + "\n"
		for n := 0; n < *stderrFlood; n += len(line) {
			os.Stderr.WriteString(line)
		}
		fmt.Fprintln(os.Stderr, "the end: API_KEY=sk-abcdefghijklmnop0123456789")
	}
	if *grandchild != "" {
		cmd := exec.Command("sleep", "1000")
		cmd.Stdout = os.Stdout
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.WriteFile(*grandchild, []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			continue
		}
		handle(req.ID, req.Method, req.Params)
	}
}

func handle(id json.RawMessage, method string, params json.RawMessage) {
	switch method {
	case "server/discover":
		if *exitOnDiscover {
			fmt.Fprintln(os.Stderr, "unknown method server/discover, exiting")
			os.Exit(3)
		}
		send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32601, "message": "method not found"}})
	case "initialize":
		if *hangInit {
			return
		}
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(params, &p)
		result(id, map[string]any{"protocolVersion": p.ProtocolVersion,
			"capabilities": map[string]any{"tools": map[string]any{"listChanged": true}},
			"serverInfo":   map[string]any{"name": "fake", "version": "1.0"}})
	case "ping":
		result(id, map[string]any{})
	case "tools/list":
		listTools(id, params)
	case "tools/call":
		callTool(id, params)
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		json.Unmarshal(params, &p)
		slowMu.Lock()
		ch := slow[string(p.RequestID)]
		delete(slow, string(p.RequestID))
		slowMu.Unlock()
		if ch != nil {
			close(ch)
		}
	}
}

func listTools(id, params json.RawMessage) {
	var p struct {
		Cursor string `json:"cursor"`
	}
	json.Unmarshal(params, &p)
	toolsMu.Lock()
	all := append([]string(nil), names...)
	toolsMu.Unlock()
	start, _ := strconv.Atoi(p.Cursor)
	end := len(all)
	if *pageSize > 0 {
		end = min(start+*pageSize, len(all))
	}
	var ts []any
	for _, n := range all[min(start, len(all)):end] {
		ts = append(ts, map[string]any{"name": n, "description": "the " + n + " tool",
			"inputSchema": json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}},"required":[]}`)})
	}
	res := map[string]any{"tools": ts}
	if *repeatCursor {
		res["nextCursor"] = "again"
	} else if end < len(all) {
		res["nextCursor"] = strconv.Itoa(end)
	}
	result(id, res)
}

// imageResult is returned byte for byte: an image, an item of a type no SDK
// knows, structuredContent, isError and _meta.
const imageResult = `{"content":[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png","annotations":{"priority":0.5}},{"type":"x-future","payload":{"a":[1,2,3]}}],"structuredContent":{"w":1,"h":1},"isError":true,"_meta":{"fake/trace":"abc"}}`

func callTool(id, params json.RawMessage) {
	calls++
	if *crashAfter > 0 && calls > *crashAfter {
		fmt.Fprintln(os.Stderr, "crashing as asked")
		os.Exit(2)
	}
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	json.Unmarshal(params, &p)
	text := func(s string) map[string]any {
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
	}
	switch p.Name {
	case "echo":
		result(id, text(string(p.Arguments)))
	case "image":
		outMu.Lock()
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, imageResult)
		out.Flush()
		outMu.Unlock()
	case "slow":
		ch := make(chan struct{})
		slowMu.Lock()
		slow[string(id)] = ch
		slowMu.Unlock()
		go func() {
			select {
			case <-ch:
				if *cancelFile != "" {
					f, _ := os.OpenFile(*cancelFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
					fmt.Fprintf(f, "%s\n", id)
					f.Close()
				}
			case <-time.After(60 * time.Second):
				result(id, text("slow done"))
			}
		}()
	case "change":
		toolsMu.Lock()
		names = append(names, "added"+strconv.Itoa(len(names)))
		toolsMu.Unlock()
		result(id, text("changed"))
		send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
	case "big":
		result(id, text(strings.Repeat("b", 1<<20)))
	case "environ":
		result(id, text(strings.Join(os.Environ(), "\n")))
	case "env":
		var a struct {
			X string `json:"x"`
		}
		json.Unmarshal(p.Arguments, &a)
		result(id, text(os.Getenv(a.X)))
	default:
		send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32602, "message": "unknown tool " + p.Name}})
	}
}
