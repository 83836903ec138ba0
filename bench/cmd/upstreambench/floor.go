//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// benchFloor measures what a proxy adds on this machine, against peers:
// server-everything's echo called directly, through copyProxy (this program
// again, copying lines both ways and renaming the tool, nothing else: the
// floor of one more pipe hop and its wake-ups), through sdkProxy (this
// program again, a gateway built plainly on the official Go SDK) and, when
// -clawd is given, through clawd with the same server as its upstream. Each
// side has its own server-everything, started once. Every iteration calls
// each side once, the order rotated by one each time, so every side goes
// first, second, ... equally often and none always runs on caches another
// warmed.
func benchFloor(o options) []result {
	self, err := os.Executable()
	if err != nil {
		fatalf("%v", err)
	}
	dir, err := os.MkdirTemp("", "upstreambench-floor")
	if err != nil {
		fatalf("%v", err)
	}
	defer os.RemoveAll(dir)
	type side struct {
		label, by, tool string
		what            string // the process whose CPU the note gives
		p               *peer
		d               []time.Duration
		cpu             time.Duration
	}
	start := func(label, by, what, tool string, argv ...string) *side {
		p, err := startPeer(label, os.Environ(), dir, argv...)
		if err != nil {
			fatalf("%v", err)
		}
		if err := p.initialize(); err != nil {
			fatalf("%v", err)
		}
		return &side{label: label, by: by, what: what, tool: tool, p: p, d: make([]time.Duration, 0, o.n)}
	}
	everything := []string{"node", o.everything, "stdio"}
	sides := []*side{
		start("direct", "", "server-everything", "echo", everything...),
		start("through a line-copying proxy", "the copying proxy", "proxy", "everything__echo", append([]string{self, "-copy-proxy"}, everything...)...),
	}
	if o.clawdB == "" {
		sides = append(sides, start("through a go-sdk proxy", "the go-sdk proxy", "proxy", "everything__echo", append([]string{self, "-sdk-proxy"}, everything...)...))
	}
	var worlds []*world
	defer func() { // after the sides close (deferred below)
		for _, w := range worlds {
			w.remove()
		}
	}()
	addClawd := func(bin, label, by string) {
		w := newWorld(bin)
		worlds = append(worlds, w)
		sides = append(sides, &side{label: label, by: by, what: "clawd", tool: "everything__echo",
			p: w.serveEverything(o), d: make([]time.Duration, 0, o.n)})
	}
	if o.clawd != "" {
		label, by := "through clawd", "clawd"
		if o.clawdB != "" {
			label, by = "through clawd A ("+o.clawd+")", "clawd A"
		}
		addClawd(o.clawd, label, by)
	}
	if o.clawdB != "" {
		addClawd(o.clawdB, "through clawd B ("+o.clawdB+")", "clawd B")
	}
	for _, s := range sides {
		defer s.p.close()
	}
	args := json.RawMessage(`{"message":"hello"}`)
	for i := 0; i < o.warmup; i++ {
		for _, s := range sides {
			if err := s.p.call(s.tool, args); err != nil {
				fatalf("%v", err)
			}
		}
	}
	for _, s := range sides {
		s.cpu = cpuTime(s.p)
	}
	for i := 0; i < o.n; i++ {
		for j := range sides {
			s := sides[(i+j)%len(sides)]
			if o.pause > 0 {
				time.Sleep(o.pause)
			}
			start := time.Now()
			if err := s.p.call(s.tool, args); err != nil {
				fatalf("%v", err)
			}
			s.d = append(s.d, time.Since(start))
		}
	}
	// The suffix keeps these rows apart from mode overhead's when
	// bench/upstream.sh groups both runs' rows by label.
	suffix := fmt.Sprintf(", rotation of %d", len(sides))
	var out, diffs []result
	for _, s := range sides {
		s.cpu = cpuTime(s.p) - s.cpu
		r := summarize("server-everything echo, "+s.label+suffix, s.d)
		r.Note = fmt.Sprintf("%s CPU %.0f us per call", s.what, float64(s.cpu.Microseconds())/float64(o.n))
		out = append(out, r)
		if s != sides[0] {
			base := out[0]
			diffs = append(diffs, result{Label: "added by " + s.by + " (percentile differences" + suffix + ")", N: o.n,
				P50us: r.P50us - base.P50us, P90us: r.P90us - base.P90us, P99us: r.P99us - base.P99us, MaxUs: r.MaxUs - base.MaxUs})
		}
	}
	return append(out, diffs...)
}

// copyProxy runs argv and copies lines between its own stdio and the
// child's, renaming everything__echo to echo on the way in: the least a
// proxy can do.
func copyProxy(argv []string) {
	if len(argv) == 0 {
		fatalf("-copy-proxy needs the upstream's command as arguments")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fatalf("%v", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fatalf("%v", err)
	}
	if err := cmd.Start(); err != nil {
		fatalf("%v", err)
	}
	go func() {
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadSlice('\n')
			if err != nil {
				os.Exit(0)
			}
			os.Stdout.Write(line)
		}
	}()
	r := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			return
		}
		in.Write(bytes.Replace(line, []byte(`"everything__echo"`), []byte(`"echo"`), 1))
	}
}
