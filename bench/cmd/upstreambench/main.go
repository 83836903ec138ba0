//go:build unix

// Command upstreambench measures clawd as a gateway to upstream MCP servers
// over stdio, in an isolated HOME it creates and removes:
//
//   - overhead: tools/call of server-everything's echo through clawd
//     (everything__echo) against the same server called directly, both
//     started once and called alternately in one run; p50/p90/p99 of each
//     and the difference.
//   - list: tools/list latency with N upstreams (the fake server) connected,
//     then with one of them blackholed (SIGSTOP: it still holds its pipes
//     but answers nothing), plus a call to another upstream meanwhile.
//   - spawn: clawd start -> every one of N upstreams connected and its
//     tools listed to a client, over several runs; -hang K makes K of them
//     accept and never answer initialize.
//   - floor: server-everything's echo called directly, through a proxy that
//     only copies lines (this program with -copy-proxy), through a proxy
//     built plainly on the official Go SDK (this program with -sdk-proxy)
//     and, with -clawd, through clawd: each side once per iteration, the
//     order rotated every iteration; p50/p90/p99 of each and what each adds
//     to the direct call. It needs only -everything (and -clawd for clawd).
//     With -clawd-b, a second clawd build joins the rotation instead of the
//     go-sdk proxy: two builds compared call by call in one run, so drift
//     of the machine (which moves a whole run by tens of microseconds on a
//     shared VM) falls on both alike. With -pause, every call comes after
//     that long with nothing to do, as an agent's calls do.
//
// It speaks raw NDJSON (2025-11-25 initialize) so the client adds as little
// as it can. bench/upstream.sh builds everything and runs them all.
//
//	upstreambench -mode overhead -clawd ./clawd -everything .../server-everything/dist/index.js -n 5000
//	upstreambench -mode list -clawd ./clawd -fake ./fakeserver -servers 30 -n 2000
//	upstreambench -mode spawn -clawd ./clawd -fake ./fakeserver -servers 30 -runs 10
//	upstreambench -mode floor -everything .../server-everything/dist/index.js [-clawd ./clawd] -n 5000
//	upstreambench -mode floor -everything .../dist/index.js -clawd ./before/clawd -clawd-b ./after/clawd -n 5000
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

type options struct {
	clawd, everything, fake string
	clawdB                  string // mode floor: a second clawd build, compared with -clawd
	n, warmup, runs         int
	servers, tools, hang    int
	block                   int
	pause                   time.Duration // mode floor: idle time before each call
}

func main() {
	var o options
	mode := flag.String("mode", "overhead", "overhead, list, spawn or floor (what a line-copying proxy, a go-sdk proxy and, with -clawd, clawd add; needs -everything)")
	proxy := flag.Bool("copy-proxy", false, "run as mode floor's line-copying proxy for the command given as arguments")
	sdk := flag.Bool("sdk-proxy", false, "run as mode floor's go-sdk proxy for the command given as arguments")
	flag.StringVar(&o.clawd, "clawd", "", "the clawd binary (optional in mode floor)")
	flag.StringVar(&o.clawdB, "clawd-b", "", "mode floor: a second clawd build, rotated in instead of the go-sdk proxy (needs -clawd)")
	flag.StringVar(&o.everything, "everything", "", "server-everything's dist/index.js (modes overhead and floor, or spawn with -upstream everything)")
	flag.StringVar(&o.fake, "fake", "", "the fake server binary (internal/upstream/testdata/fakeserver)")
	upstreamKind := flag.String("upstream", "fake", "what the N upstreams are in modes list and spawn: fake or everything")
	flag.IntVar(&o.n, "n", 5000, "timed requests (modes overhead, list, floor)")
	flag.IntVar(&o.warmup, "warmup", 500, "untimed requests first")
	flag.IntVar(&o.block, "block", 1, "mode overhead: calls in a row to one side before switching (1: alternate call by call, so each process sleeps between its calls; more: each side's calls come back to back)")
	flag.DurationVar(&o.pause, "pause", 0, "mode floor: sleep this long before each call, so every process has been idle that long when its call comes (as when an agent's calls are seconds apart)")
	flag.IntVar(&o.runs, "runs", 10, "daemon starts to time (mode spawn)")
	flag.IntVar(&o.servers, "servers", 30, "upstream servers (modes list, spawn)")
	flag.IntVar(&o.tools, "tools", 10, "extra tools per fake server (it has 7 of its own)")
	flag.IntVar(&o.hang, "hang", 0, "servers that never answer initialize (mode spawn, fake only)")
	limit := flag.Duration("limit", 10*time.Minute, "kill everything and fail after this long")
	asJSON := flag.Bool("json", false, "print JSON lines instead of text")
	flag.Parse()
	if *proxy {
		copyProxy(flag.Args())
		return
	}
	if *sdk {
		sdkProxy(flag.Args())
		return
	}
	if !slices.Contains([]string{"overhead", "list", "spawn", "floor"}, *mode) {
		usage("unknown -mode " + *mode + " (overhead, list, spawn or floor)")
	}
	if o.clawd == "" && (*mode != "floor" || o.clawdB != "") {
		usage("-clawd is required")
	}
	if *upstreamKind != "fake" && *upstreamKind != "everything" {
		usage("-upstream must be fake or everything")
	}
	if (*mode == "overhead" || *mode == "floor" || *upstreamKind == "everything") && o.everything == "" {
		usage("-everything (server-everything's dist/index.js) is required")
	}
	if (*mode == "list" || *mode == "spawn") && *upstreamKind == "fake" && o.fake == "" {
		usage("-fake (the fake server binary) is required")
	}
	if o.hang > 0 && *upstreamKind != "fake" {
		usage("-hang needs -upstream fake")
	}
	if o.servers < 2 || o.servers > 200 || o.hang >= o.servers {
		usage("-servers must be 2-200 and -hang fewer than -servers")
	}
	// The daemon resolves a relative command against its own directory,
	// not ours.
	for _, p := range []*string{&o.fake, &o.everything} {
		if *p != "" {
			abs, err := filepath.Abs(*p)
			if err != nil {
				usage(err.Error())
			}
			*p = abs
		}
	}
	time.AfterFunc(*limit, func() { fatalf("still running after -limit %v: killed", *limit) })
	if *mode == "floor" {
		for _, r := range benchFloor(o) {
			printResult(r, *asJSON)
		}
		return
	}

	w := newWorld(o.clawd)
	defer w.remove()
	var results []result
	switch *mode {
	case "overhead":
		results = benchOverhead(w, o)
	case "list":
		w.addUpstreams(o, *upstreamKind)
		results = benchList(w, o)
	case "spawn":
		w.addUpstreams(o, *upstreamKind)
		results = benchSpawn(w, o, *upstreamKind)
	}
	for _, r := range results {
		printResult(r, *asJSON)
	}
}

func printResult(r result, asJSON bool) {
	if asJSON {
		json.NewEncoder(os.Stdout).Encode(r)
	} else {
		fmt.Println(r)
	}
}

func usage(msg string) {
	fmt.Fprintln(os.Stderr, "upstreambench: "+msg+"\n"+
		"usage: upstreambench -mode overhead|list|spawn -clawd BIN [-everything JS] [-fake BIN] [flags]\n"+
		"       upstreambench -mode floor -everything JS [-clawd BIN] [flags]\n"+
		"(upstreambench -h lists the flags)")
	os.Exit(2)
}

// result is one measured series.
type result struct {
	Label string  `json:"label"`
	N     int     `json:"n"`
	P50us float64 `json:"p50_us"`
	P90us float64 `json:"p90_us"`
	P99us float64 `json:"p99_us"`
	MaxUs float64 `json:"max_us"`
	Note  string  `json:"note,omitempty"`
}

func (r result) String() string {
	s := fmt.Sprintf("%-52s n=%-6d p50 %9.1f us  p90 %9.1f us  p99 %9.1f us  max %9.1f us", r.Label, r.N, r.P50us, r.P90us, r.P99us, r.MaxUs)
	if r.Note != "" {
		s += "  (" + r.Note + ")"
	}
	return s
}

func summarize(label string, d []time.Duration) result {
	s := slices.Clone(d)
	slices.Sort(s)
	pct := func(p float64) float64 {
		if len(s) == 0 {
			return 0
		}
		return float64(s[min(len(s)-1, int(p*float64(len(s))))].Nanoseconds()) / 1e3
	}
	return result{Label: label, N: len(s), P50us: pct(0.50), P90us: pct(0.90), P99us: pct(0.99), MaxUs: pct(1)}
}

// world is an isolated user: HOME and the XDG directories under one
// temporary directory, and a workspace.
type world struct {
	clawd, dir, ws string
	env            []string
}

func newWorld(clawd string) *world {
	abs, err := filepath.Abs(clawd)
	if err != nil {
		fatalf("%v", err)
	}
	dir, err := os.MkdirTemp("", "upstreambench-")
	if err != nil {
		fatalf("%v", err)
	}
	dir, _ = filepath.EvalSymlinks(dir)
	w := &world{clawd: abs, dir: dir, ws: filepath.Join(dir, "ws")}
	atExit = append(atExit, w.remove)
	home := filepath.Join(dir, "home")
	for _, d := range []string{w.ws, filepath.Join(home, "run")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			fatalf("%v", err)
		}
	}
	w.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"), "XDG_RUNTIME_DIR=" + filepath.Join(home, "run")}
	// The Go runtime's knobs pass through, so a run can compare settings.
	for _, k := range []string{"GOMAXPROCS", "GOGC", "GODEBUG"} {
		if v, ok := os.LookupEnv(k); ok {
			w.env = append(w.env, k+"="+v)
		}
	}
	w.run("init")
	return w
}

func (w *world) remove() { os.RemoveAll(w.dir) }

// run runs a clawd command that must succeed.
func (w *world) run(args ...string) string {
	cmd := exec.Command(w.clawd, args...)
	cmd.Env, cmd.Dir = w.env, w.ws
	out, err := cmd.CombinedOutput()
	if err != nil {
		fatalf("clawd %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// serve starts `clawd serve` over stdio and initializes a session.
func (w *world) serve() *peer {
	p, err := startPeer("clawd", w.env, w.ws, w.clawd, "serve", "--client", "cc", "--workspace", w.ws)
	if err != nil {
		fatalf("%v", err)
	}
	if err := p.initialize(); err != nil {
		fatalf("%v", err)
	}
	return p
}

// allow approves what server runs (its executable and, for node, the
// script), as a user does with `clawd mcp allow NAME`.
func (w *world) allow(server string) {
	w.run("mcp", "allow", server, "--yes")
}

// approveTools approves the tool definitions of the first n servers
// (`clawd mcp approve`), retrying until a daemon has seen each server's
// tools; approvals persist, so later daemons offer them at once.
func (w *world) approveTools(names []string, within time.Duration) {
	deadline := time.Now().Add(within)
	for _, name := range names {
		for {
			cmd := exec.Command(w.clawd, "mcp", "approve", name, "--yes")
			cmd.Env, cmd.Dir = w.env, w.ws
			out, err := cmd.CombinedOutput()
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				fatalf("clawd mcp approve %s: %v\n%s", name, err, out)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// serverNames are the names of the first n upstreams.
func serverNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = serverName(i)
	}
	return names
}

// serverName is the i-th of the N upstreams.
func serverName(i int) string { return fmt.Sprintf("up%02d", i+1) }

// addUpstreams configures o.servers upstreams (the first o.hang of them
// never answer initialize) and allowlists their executable.
func (w *world) addUpstreams(o options, kind string) {
	for i := range o.servers {
		name := serverName(i)
		if kind == "everything" {
			w.run("mcp", "add", name, "--stdio", "--", "node", o.everything, "stdio")
			w.allow(name)
			continue
		}
		args := []string{"mcp", "add", name, "--stdio", "--", o.fake, "-tools", fmt.Sprint(o.tools),
			"-pid-file", filepath.Join(w.dir, name+".pid")}
		if i < o.hang {
			args = append(args, "-hang-init")
		}
		w.run(args...)
		w.allow(name)
	}
}

// waitReady polls tools/list (2 ms apart) until every upstream from
// first to o.servers-1 has tools listed, and returns the tool count.
func waitReady(p *peer, o options, first int, within time.Duration) int {
	deadline := time.Now().Add(within)
	for {
		names, err := p.listNames()
		if err != nil {
			fatalf("%v", err)
		}
		ready := 0
		for i := first; i < o.servers; i++ {
			prefix := serverName(i) + "__"
			if slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, prefix) }) {
				ready++
			}
		}
		if ready == o.servers-first {
			return len(names)
		}
		if time.Now().After(deadline) {
			fatalf("only %d of %d upstreams had tools listed after %v; clawd's stderr: %s", ready, o.servers-first, within, p.stderr)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
