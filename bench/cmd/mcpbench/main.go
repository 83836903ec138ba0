// Command mcpbench measures an MCP server over stdio: sequential tools/call
// round trips (calls/s and latency percentiles) or spawn -> initialize reply
// time. It speaks raw NDJSON so the client adds as little as possible, and
// it works with any stdio MCP server, which is how clawd is compared with the
// reference Node server in one run (bench/stdio.sh).
//
//	mcpbench -mode calls -n 20000 -tool read_file -args '{"path":"f"}' -- clawd serve
//	mcpbench -mode spawn -runs 20 -- node server.js /dir
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

func main() {
	mode := flag.String("mode", "calls", "calls: sequential tools/call round trips; spawn: start -> initialize reply")
	n := flag.Int("n", 20000, "calls to time (mode calls)")
	warmup := flag.Int("warmup", 500, "untimed calls first (mode calls)")
	runs := flag.Int("runs", 20, "spawns to time (mode spawn)")
	tool := flag.String("tool", "read_file", "tool to call")
	args := flag.String("args", "{}", "tool arguments (JSON object)")
	label := flag.String("label", "", "name printed with the result")
	asJSON := flag.Bool("json", false, "print one JSON object instead of text")
	flag.Parse()
	argv := flag.Args()
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "usage: mcpbench [flags] -- SERVER-COMMAND [ARGS...]")
		os.Exit(2)
	}
	if !json.Valid([]byte(*args)) {
		fmt.Fprintf(os.Stderr, "mcpbench: -args is not valid JSON: %s\n", *args)
		os.Exit(2)
	}
	if *label == "" {
		*label = strings.Join(argv, " ")
	}
	var res result
	var err error
	switch *mode {
	case "calls":
		res, err = benchCalls(argv, *tool, *args, *n, *warmup)
	case "spawn":
		res, err = benchSpawn(argv, *runs)
	default:
		fmt.Fprintf(os.Stderr, "mcpbench: unknown -mode %q (calls or spawn)\n", *mode)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcpbench: %s: %v\n", *label, err)
		os.Exit(1)
	}
	res.Label, res.Mode = *label, *mode
	if *asJSON {
		json.NewEncoder(os.Stdout).Encode(res)
		return
	}
	fmt.Println(res)
}

type result struct {
	Label     string  `json:"label"`
	Mode      string  `json:"mode"`
	N         int     `json:"n"`
	PerSecond float64 `json:"per_second,omitempty"`
	P50us     float64 `json:"p50_us"`
	P90us     float64 `json:"p90_us"`
	P99us     float64 `json:"p99_us"`
	MaxUs     float64 `json:"max_us"`
}

func (r result) String() string {
	if r.Mode == "spawn" {
		return fmt.Sprintf("%-40s spawn->initialize n=%d p50=%.1fms p90=%.1fms max=%.1fms", r.Label, r.N, r.P50us/1000, r.P90us/1000, r.MaxUs/1000)
	}
	return fmt.Sprintf("%-40s calls=%d %.0f calls/s p50=%.0fus p90=%.0fus p99=%.0fus max=%.0fus", r.Label, r.N, r.PerSecond, r.P50us, r.P90us, r.P99us, r.MaxUs)
}

func summarize(d []time.Duration, total time.Duration) result {
	slices.Sort(d)
	pct := func(p float64) float64 {
		i := int(p * float64(len(d)-1))
		return float64(d[i].Nanoseconds()) / 1000
	}
	r := result{N: len(d), P50us: pct(0.50), P90us: pct(0.90), P99us: pct(0.99), MaxUs: pct(1)}
	if total > 0 {
		r.PerSecond = float64(len(d)) / total.Seconds()
	}
	return r
}

// server is a spawned MCP server with line-oriented pipes.
type server struct {
	cmd *exec.Cmd
	in  *bufio.Writer
	inc io.Closer
	out *bufio.Reader
}

func start(argv []string) (*server, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &server{cmd: cmd, in: bufio.NewWriter(stdin), inc: stdin, out: bufio.NewReaderSize(stdout, 1<<20)}, nil
}

func (s *server) send(line string) error {
	if _, err := s.in.WriteString(line); err != nil {
		return err
	}
	if err := s.in.WriteByte('\n'); err != nil {
		return err
	}
	return s.in.Flush()
}

// recvID reads lines until the response with the given id (skipping
// notifications and log lines some servers send).
func (s *server) recvID(id string) ([]byte, error) {
	// The id may be followed by another member or end the object.
	want1, want2 := []byte(`"id":`+id+`,`), []byte(`"id":`+id+`}`)
	for {
		line, err := s.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("reading the response to id %s: %w", id, err)
		}
		if bytes.Contains(line, want1) || bytes.Contains(line, want2) {
			return line, nil
		}
	}
}

func (s *server) stop() {
	s.inc.Close()
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

const initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcpbench","version":"1"}}}`

func (s *server) initialize() error {
	if err := s.send(initLine); err != nil {
		return err
	}
	if _, err := s.recvID("0"); err != nil {
		return err
	}
	return s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func benchCalls(argv []string, tool, args string, n, warmup int) (result, error) {
	s, err := start(argv)
	if err != nil {
		return result{}, err
	}
	defer s.stop()
	if err := s.initialize(); err != nil {
		return result{}, err
	}
	lat := make([]time.Duration, 0, n)
	var begin time.Time
	for i := 1; i <= warmup+n; i++ {
		if i == warmup+1 {
			begin = time.Now()
		}
		id := fmt.Sprint(i)
		t0 := time.Now()
		if err := s.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`); err != nil {
			return result{}, err
		}
		line, err := s.recvID(id)
		if err != nil {
			return result{}, err
		}
		if i == 1 && (bytes.Contains(line, []byte(`"error"`)) || bytes.Contains(line, []byte(`"isError":true`))) {
			return result{}, fmt.Errorf("the call fails, so timing it would mean nothing: %.300s", bytes.TrimSpace(line))
		}
		if i > warmup {
			lat = append(lat, time.Since(t0))
		}
	}
	return summarize(lat, time.Since(begin)), nil
}

func benchSpawn(argv []string, runs int) (result, error) {
	lat := make([]time.Duration, 0, runs)
	for range runs {
		t0 := time.Now()
		s, err := start(argv)
		if err != nil {
			return result{}, err
		}
		if err := s.send(initLine); err != nil {
			return result{}, err
		}
		if _, err := s.recvID("0"); err != nil {
			return result{}, err
		}
		lat = append(lat, time.Since(t0))
		s.stop()
	}
	return summarize(lat, 0), nil
}
