//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// benchOverhead calls echo on server-everything directly and through
// clawd, alternately (the order swapped every round, so neither side
// always runs on a cache the other warmed), and reports both and the
// difference of the percentiles.
func benchOverhead(w *world, o options) []result {
	clawd := w.serveEverything(o)
	defer clawd.close()
	direct, err := startPeer("server-everything", os.Environ(), w.ws, "node", o.everything, "stdio")
	if err != nil {
		fatalf("%v", err)
	}
	defer direct.close()
	if err := direct.initialize(); err != nil {
		fatalf("%v", err)
	}
	if err := os.WriteFile(filepath.Join(w.ws, "tiny.txt"), []byte("hello\n"), 0o644); err != nil {
		fatalf("%v", err)
	}
	args := json.RawMessage(`{"message":"hello"}`)
	viaClawd := func() error { return clawd.call("everything__echo", args) }
	viaDirect := func() error { return direct.call("echo", args) }
	// clawd's own trivial tool: the chain and audit floor every call
	// pays, upstream or not.
	builtin := func() error { return clawd.call("read_file", json.RawMessage(`{"path":"tiny.txt"}`)) }
	for i := 0; i < o.warmup; i++ {
		for _, f := range []func() error{viaClawd, viaDirect, builtin} {
			if err := f(); err != nil {
				fatalf("%v", err)
			}
		}
	}
	dc := make([]time.Duration, 0, o.n)
	dd := make([]time.Duration, 0, o.n)
	db := make([]time.Duration, 0, o.n/10)
	timed := func(f func() error, into *[]time.Duration) {
		start := time.Now()
		if err := f(); err != nil {
			fatalf("%v", err)
		}
		*into = append(*into, time.Since(start))
	}
	cpuClawd, cpuNode := cpuTime(clawd), cpuTime(direct)
	var cpuBuiltin time.Duration
	block := max(1, o.block)
	for i := 0; i < o.n; i += block {
		k := i / block
		first, firstInto, second, secondInto := viaDirect, &dd, viaClawd, &dc
		if k%2 == 1 {
			first, firstInto, second, secondInto = viaClawd, &dc, viaDirect, &dd
		}
		for j := i; j < min(i+block, o.n); j++ {
			timed(first, firstInto)
		}
		for j := i; j < min(i+block, o.n); j++ {
			timed(second, secondInto)
		}
		if k%10 == 5 {
			c := cpuTime(clawd)
			timed(builtin, &db)
			cpuBuiltin += cpuTime(clawd) - c
		}
	}
	cpuClawd, cpuNode = cpuTime(clawd)-cpuClawd-cpuBuiltin, cpuTime(direct)-cpuNode
	order := ""
	if block > 1 {
		order = fmt.Sprintf(" (blocks of %d calls)", block)
	}
	rd := summarize("server-everything echo, direct"+order, dd)
	// cpuNode is the direct server's alone: it answers the n direct calls
	// (the proxied ones go to clawd's own child, which is not measured).
	rd.Note = fmt.Sprintf("server-everything CPU %.0f us per call", float64(cpuNode.Microseconds())/float64(o.n))
	rc := summarize("server-everything echo, through clawd"+order, dc)
	rc.Note = fmt.Sprintf("clawd CPU %.0f us per call", float64(cpuClawd.Microseconds())/float64(o.n))
	rb := summarize("clawd's own read_file (tiny file), for reference"+order, db)
	rb.Note = fmt.Sprintf("clawd CPU %.0f us per call", float64(cpuBuiltin.Microseconds())/float64(max(1, len(db))))
	diff := result{Label: "added by clawd (percentile differences)" + order, N: o.n,
		P50us: rc.P50us - rd.P50us, P90us: rc.P90us - rd.P90us, P99us: rc.P99us - rd.P99us, MaxUs: rc.MaxUs - rd.MaxUs}
	return []result{rd, rc, diff, rb}
}

// serveEverything configures server-everything as upstream "everything",
// allows its command and approves its tools as a user would, starts
// `clawd serve` and waits until everything__echo is listed.
func (w *world) serveEverything(o options) *peer {
	w.run("mcp", "add", "everything", "--stdio", "--", "node", o.everything, "stdio")
	w.allow("everything")
	clawd := w.serve()
	w.approveTools([]string{"everything"}, 60*time.Second)
	deadline := time.Now().Add(60 * time.Second)
	for {
		names, err := clawd.listNames()
		if err != nil {
			fatalf("%v", err)
		}
		if slices.Contains(names, "everything__echo") {
			return clawd
		}
		if time.Now().After(deadline) {
			fatalf("everything__echo never listed: %v\n%s", names, w.run("mcp", "list"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// benchList starts clawd with o.servers fake upstreams, waits until all are
// listed, and times tools/list (every page) and a call to one upstream;
// then it stops one upstream (SIGSTOP: connected, pipes open, answers
// nothing) and times both again.
func benchList(w *world, o options) []result {
	clawd := w.serve()
	defer clawd.close()
	w.approveTools(serverNames(o.servers), 60*time.Second)
	tools := waitReady(clawd, o, 0, 60*time.Second)
	note := fmt.Sprintf("%d tools listed", tools)
	call := serverName(o.servers-1) + "__echo"
	measure := func(label string) []result {
		for i := 0; i < o.warmup; i++ {
			if _, err := clawd.listNames(); err != nil {
				fatalf("%v", err)
			}
		}
		var lists, calls []time.Duration
		cpu := cpuTime(clawd)
		for i := 0; i < o.n; i++ {
			start := time.Now()
			names, err := clawd.listNames()
			if err != nil {
				fatalf("%v", err)
			}
			lists = append(lists, time.Since(start))
			if len(names) != tools {
				fatalf("tools/list returned %d tools, want %d", len(names), tools)
			}
			if i%10 == 0 {
				start = time.Now()
				if err := clawd.call(call, json.RawMessage(`{"x":"y"}`)); err != nil {
					fatalf("%v", err)
				}
				calls = append(calls, time.Since(start))
			}
		}
		cpu = cpuTime(clawd) - cpu
		rl := summarize("tools/list, "+label, lists)
		rl.Note = fmt.Sprintf("%s; clawd CPU %.0f us per list and call", note, float64(cpu.Microseconds())/float64(len(lists)+len(calls)))
		return []result{rl, summarize(call+" call, "+label, calls)}
	}
	out := measure(fmt.Sprintf("%d upstreams connected", o.servers))
	pid := readPid(filepath.Join(w.dir, serverName(0)+".pid"))
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		fatalf("SIGSTOP %s (pid %d): %v", serverName(0), pid, err)
	}
	defer syscall.Kill(pid, syscall.SIGCONT)
	// The blackholed server gets a call too, so clawd has a request hanging
	// on it while the list is timed (it ends with the server's read
	// timeout, 60 s by default; its answer is skipped like a notification).
	hang := fmt.Sprintf(`{"jsonrpc":"2.0","id":"hanging","method":"tools/call","params":{"name":%q,"arguments":{}}}`+"\n", serverName(0)+"__echo")
	if _, err := clawd.in.Write([]byte(hang)); err != nil {
		fatalf("%v", err)
	}
	time.Sleep(200 * time.Millisecond)
	return append(out, measure(fmt.Sprintf("%s SIGSTOPped, a call to it pending", serverName(0)))...)
}

func readPid(path string) int {
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
				return pid
			}
		}
		if time.Now().After(deadline) {
			fatalf("no pid in %s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// benchSpawn starts clawd o.runs times and times start -> initialize
// reply and start -> every answering upstream's tools listed.
func benchSpawn(w *world, o options, kind string) []result {
	var inits, ready []time.Duration
	tools := 0
	// An untimed first start, for the daemon to see the tools and the user
	// to approve them: what a restart with approved tools costs is timed.
	first := w.serve()
	w.approveTools(serverNames(o.servers)[o.hang:], 120*time.Second)
	waitReady(first, o, o.hang, 120*time.Second)
	first.close()
	for r := 0; r < o.runs; r++ {
		start := time.Now()
		clawd, err := startPeer("clawd", w.env, w.ws, w.clawd, "serve", "--client", "cc", "--workspace", w.ws)
		if err != nil {
			fatalf("%v", err)
		}
		if err := clawd.initialize(); err != nil {
			fatalf("%v", err)
		}
		inits = append(inits, time.Since(start))
		tools = waitReady(clawd, o, o.hang, 120*time.Second)
		ready = append(ready, time.Since(start))
		clawd.close()
	}
	label := fmt.Sprintf("%d %s upstreams", o.servers, kind)
	if o.hang > 0 {
		label += fmt.Sprintf(" (%d never answer initialize)", o.hang)
	}
	ri := summarize("clawd start -> initialize reply, "+label, inits)
	rr := summarize("clawd start -> all answering upstreams listed, "+label, ready)
	rr.Note = fmt.Sprintf("%d tools listed", tools)
	return []result{ri, rr}
}

// cpuTime is the CPU time (user + system) p's process has used so far,
// from /proc (Linux; 0 elsewhere), at the kernel's clock-tick resolution.
func cpuTime(p *peer) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces: state is the first, utime the 12th, stime the 13th.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * (time.Second / clockTicks)
}

// clockTicks is USER_HZ, 100 on every Linux architecture Go supports.
const clockTicks = 100
