// Command chainbench measures audited tools/call over stdio: it spawns
// `clawd serve` on a temporary HOME (so the database is its own), sends N
// calls of a trivial tool (read_file of a 6-byte file) one after another,
// and reports calls/s, p50 and p99. In the same run it measures `ping`, a
// request that passes neither the chain nor the audit log, as the peer:
// the difference is what the chain, the audit record and the handler add.
// It then reads the audit log to check that every call has its row and
// reports the chain's own decision latency (latency_us, steps 2-5).
//
// Given several binaries (-clawd old,new) and -rounds R, it runs each
// binary R times, alternating the order round by round, and prints
// medians: on a shared, noisy machine only numbers measured side by side
// in one run compare.
//
//	go run ./bench/cmd/chainbench -n 20000
//	go run ./bench/cmd/chainbench -clawd /tmp/old/clawd,/tmp/new/clawd -rounds 5
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/clawde/clawd/internal/store"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "chainbench:", err)
		os.Exit(1)
	}
}

var phases = []struct{ name, method, params string }{
	{"ping (no chain, peer)", "ping", ""},
	{"tools/call read_file (chain + audit + handler)", "tools/call", `{"name":"read_file","arguments":{"path":"tiny.txt"}}`},
}

// phaseResult is one phase of one run.
type phaseResult struct {
	perSec         float64
	p50, p99, p999 time.Duration
}

// runResult is one run of one binary: its phases and its audit log.
type runResult struct {
	phases            []phaseResult
	decP50, decP99    int64 // decision latency (latency_us)
	rows, bytesPerRow int
}

func run() error {
	bins := flag.String("clawd", "", "clawd binaries, comma-separated (default: go build ./cmd/clawd into a temp dir)")
	n := flag.Int("n", 20000, "measured calls per phase")
	warmup := flag.Int("warmup", 1000, "unmeasured calls before each phase")
	rounds := flag.Int("rounds", 1, "runs of each binary, interleaved")
	flag.Parse()

	tmp, err := os.MkdirTemp("", "chainbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var list []string
	if *bins == "" {
		bin := filepath.Join(tmp, "clawd")
		build := exec.Command("go", "build", "-o", bin, "github.com/clawde/clawd/cmd/clawd")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building clawd: %w", err)
		}
		list = []string{bin}
	} else {
		list = strings.Split(*bins, ",")
	}
	results := make(map[string][]runResult)
	for r := 0; r < *rounds; r++ {
		order := slices.Clone(list)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, bin := range order {
			res, err := runOnce(bin, tmp, *n, *warmup)
			if err != nil {
				return fmt.Errorf("%s: %w", bin, err)
			}
			if *rounds > 1 || len(list) > 1 {
				fmt.Fprintf(os.Stderr, "round %d %s: ping %.0f/s, tools/call %.0f/s p50 %s\n",
					r+1, bin, res.phases[0].perSec, res.phases[1].perSec, us(res.phases[1].p50))
			}
			results[bin] = append(results[bin], res)
		}
	}
	report(list, results, *n, *warmup, *rounds)
	return nil
}

// runOnce measures one binary on a fresh HOME and workspace.
func runOnce(bin, tmp string, n, warmup int) (runResult, error) {
	var res runResult
	dir, err := os.MkdirTemp(tmp, "run-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	cmd, c, home, err := spawn(bin, dir)
	if err != nil {
		return res, err
	}
	for _, ph := range phases {
		pr, err := measure(c, ph.method, ph.params, n, warmup)
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			return res, err
		}
		res.phases = append(res.phases, pr)
	}
	c.in.Close() // EOF: clawd answers what is running and exits
	if err := cmd.Wait(); err != nil {
		return res, fmt.Errorf("clawd serve: %w", err)
	}
	err = checkAudit(filepath.Join(home, "data", "clawde", "clawd.db"), cmd.Process.Pid, n+warmup, &res)
	return res, err
}

// report prints the medians of every binary's runs.
func report(list []string, results map[string][]runResult, n, warmup, rounds int) {
	fmt.Printf("%d sequential requests per phase after %d warm-up, one `clawd serve` over stdio per run", n, warmup)
	if rounds > 1 {
		fmt.Printf("; %d runs per binary, interleaved; medians (calls/s: min-max)", rounds)
	}
	fmt.Print("\n\n")
	multi := len(list) > 1
	if multi {
		fmt.Println("| binary | phase | calls/s | p50 | p99 | p99.9 |")
		fmt.Println("|---|---|---|---|---|---|")
	} else {
		fmt.Println("| phase | calls/s | p50 | p99 | p99.9 |")
		fmt.Println("|---|---|---|---|---|")
	}
	for _, bin := range list {
		runs := results[bin]
		for i, ph := range phases {
			pick := func(f func(phaseResult) float64) []float64 {
				var v []float64
				for _, r := range runs {
					v = append(v, f(r.phases[i]))
				}
				slices.Sort(v)
				return v
			}
			rate := pick(func(p phaseResult) float64 { return p.perSec })
			lat := func(f func(phaseResult) time.Duration) string {
				return us(time.Duration(median(pick(func(p phaseResult) float64 { return float64(f(p)) }))))
			}
			perSec := fmt.Sprintf("%.0f", median(rate))
			if len(rate) > 1 {
				perSec += fmt.Sprintf(" (%.0f-%.0f)", rate[0], rate[len(rate)-1])
			}
			row := fmt.Sprintf("%s | %s | %s | %s | %s |", ph.name, perSec,
				lat(func(p phaseResult) time.Duration { return p.p50 }),
				lat(func(p phaseResult) time.Duration { return p.p99 }),
				lat(func(p phaseResult) time.Duration { return p.p999 }))
			if multi {
				fmt.Printf("| %s | %s\n", bin, row)
			} else {
				fmt.Printf("| %s\n", row)
			}
		}
	}
	fmt.Println()
	for _, bin := range list {
		runs := results[bin]
		var d50, d99, bpr []float64
		for _, r := range runs {
			d50 = append(d50, float64(r.decP50))
			d99 = append(d99, float64(r.decP99))
			bpr = append(bpr, float64(r.bytesPerRow))
		}
		slices.Sort(d50)
		slices.Sort(d99)
		slices.Sort(bpr)
		fmt.Printf("audit log (%s): one row per call with outcome ok in every run (%d rows); decision latency (steps 2-5, latency_us) p50 %.0f us, p99 %.0f us; %.0f bytes per row\n",
			bin, runs[0].rows, median(d50), median(d99), median(bpr))
	}
}

// median of sorted v.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// spawn starts `clawd serve` on a fresh HOME and workspace under tmp and
// initializes a session.
func spawn(bin, tmp string) (*exec.Cmd, *conn, string, error) {
	ws := filepath.Join(tmp, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		return nil, nil, "", err
	}
	if err := os.WriteFile(filepath.Join(ws, "tiny.txt"), []byte("hello\n"), 0o644); err != nil {
		return nil, nil, "", err
	}
	home := filepath.Join(tmp, "home")
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "HOME" && !strings.HasPrefix(k, "XDG_") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"))
	cmd := exec.Command(bin, "serve")
	cmd.Dir, cmd.Env, cmd.Stderr = ws, env, os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return nil, nil, "", err
	}
	c := &conn{in: stdin, w: bufio.NewWriter(stdin), r: bufio.NewReaderSize(stdout, 1<<20)}
	_, err := c.roundTrip("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"chainbench","version":"1"}}`)
	return cmd, c, home, err
}

// measure runs one phase.
func measure(c *conn, method, params string, n, warmup int) (phaseResult, error) {
	lat := make([]time.Duration, 0, n)
	for i := 0; i < warmup; i++ {
		if _, err := c.roundTrip(method, params); err != nil {
			return phaseResult{}, err
		}
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		t0 := time.Now()
		resp, err := c.roundTrip(method, params)
		if err != nil {
			return phaseResult{}, err
		}
		if method == "tools/call" && !strings.Contains(resp, `"isError":false`) {
			return phaseResult{}, fmt.Errorf("tools/call failed: %s", resp)
		}
		lat = append(lat, time.Since(t0))
	}
	elapsed := time.Since(start)
	slices.Sort(lat)
	return phaseResult{perSec: float64(n) / elapsed.Seconds(),
		p50: lat[len(lat)/2], p99: lat[len(lat)*99/100], p999: lat[len(lat)*999/1000]}, nil
}

// checkAudit verifies one row per call, each with outcome ok, and records
// the decision latency and the database size per row.
func checkAudit(dbFile string, pid, want int, res *runResult) error {
	db, err := store.Open(dbFile, store.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryAudit(context.Background(), store.AuditFilter{PID: int64(pid)})
	if err != nil {
		return err
	}
	if len(rows) != want {
		return fmt.Errorf("%d audit rows for %d calls", len(rows), want)
	}
	dec := make([]int64, 0, len(rows))
	for _, r := range rows {
		dec = append(dec, r.LatencyUS)
		if r.Outcome == nil || *r.Outcome != "ok" {
			return fmt.Errorf("audit row %d has outcome %v, want ok", r.ID, r.Outcome)
		}
	}
	slices.Sort(dec)
	res.rows = len(rows)
	res.decP50, res.decP99 = dec[len(dec)/2], dec[len(dec)*99/100]
	if st, err := os.Stat(db.Path()); err == nil {
		res.bytesPerRow = int(st.Size()) / len(rows)
	}
	return nil
}

func us(d time.Duration) string { return fmt.Sprintf("%.0f us", float64(d.Nanoseconds())/1e3) }

// conn is a minimal NDJSON client: one request, wait for its response.
type conn struct {
	in io.Closer
	w  *bufio.Writer
	r  *bufio.Reader
	id int
}

func (c *conn) roundTrip(method, params string) (string, error) {
	c.id++
	msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q`, c.id, method)
	if params != "" {
		msg += `,"params":` + params
	}
	msg += "}\n"
	if _, err := c.w.WriteString(msg); err != nil {
		return "", err
	}
	if err := c.w.Flush(); err != nil {
		return "", err
	}
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				return "", errors.New("clawd closed its output")
			}
			return "", err
		}
		var m struct {
			ID    *int            `json:"id"`
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal([]byte(line), &m) != nil || m.ID == nil {
			continue // a notification
		}
		if *m.ID != c.id {
			return "", fmt.Errorf("response to %d while waiting for %d", *m.ID, c.id)
		}
		if m.Error != nil {
			return "", fmt.Errorf("%s: %s", method, m.Error)
		}
		return line, nil
	}
}
