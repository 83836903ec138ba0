// Command chainbench measures audited tools/call over stdio: it spawns
// `clawd serve` on a temporary HOME (so the database is its own), sends N
// calls of a trivial tool (read_file of a 6-byte file) one after another,
// and reports calls/s, p50 and p99. In the same run it measures `ping`, a
// request that passes neither the chain nor the audit log, as the peer:
// the difference is what the chain, the audit commit and the handler add.
// It then reads the audit log to check that every call has its row and
// reports the chain's own decision latency (latency_us, steps 2-5).
//
//	go run ./bench/cmd/chainbench -n 20000
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

func run() error {
	bin := flag.String("clawd", "", "clawd binary (default: go build ./cmd/clawd into a temp dir)")
	n := flag.Int("n", 20000, "measured calls per phase")
	warmup := flag.Int("warmup", 1000, "unmeasured calls before each phase")
	flag.Parse()

	tmp, err := os.MkdirTemp("", "chainbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if *bin == "" {
		*bin = filepath.Join(tmp, "clawd")
		build := exec.Command("go", "build", "-o", *bin, "github.com/clawde/clawd/cmd/clawd")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building clawd: %w", err)
		}
	}
	cmd, c, home, err := spawn(*bin, tmp)
	if err != nil {
		return err
	}
	phases := []struct{ name, method, params string }{
		{"ping (no chain, peer)", "ping", ""},
		{"tools/call read_file (chain + audit + handler)", "tools/call", `{"name":"read_file","arguments":{"path":"tiny.txt"}}`},
	}
	fmt.Printf("%d sequential requests per phase after %d warm-up, one `clawd serve` over stdio\n\n", *n, *warmup)
	fmt.Println("| phase | calls/s | p50 | p99 | p99.9 |")
	fmt.Println("|---|---|---|---|---|")
	for _, ph := range phases {
		if err := measure(c, ph.name, ph.method, ph.params, *n, *warmup); err != nil {
			return err
		}
	}
	c.in.Close() // EOF: clawd answers what is running and exits
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("clawd serve: %w", err)
	}
	return checkAudit(filepath.Join(home, "data", "clawde", "clawd.db"), cmd.Process.Pid, *n+*warmup)
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

// measure runs one phase and prints its table row.
func measure(c *conn, name, method, params string, n, warmup int) error {
	lat := make([]time.Duration, 0, n)
	for i := 0; i < warmup; i++ {
		if _, err := c.roundTrip(method, params); err != nil {
			return err
		}
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		t0 := time.Now()
		resp, err := c.roundTrip(method, params)
		if err != nil {
			return err
		}
		if method == "tools/call" && !strings.Contains(resp, `"isError":false`) {
			return fmt.Errorf("tools/call failed: %s", resp)
		}
		lat = append(lat, time.Since(t0))
	}
	elapsed := time.Since(start)
	slices.Sort(lat)
	fmt.Printf("| %s | %.0f | %s | %s | %s |\n", name, float64(n)/elapsed.Seconds(),
		us(lat[len(lat)/2]), us(lat[len(lat)*99/100]), us(lat[len(lat)*999/1000]))
	return nil
}

// checkAudit verifies one row per call and reports the decision latency.
func checkAudit(dbFile string, pid, want int) error {
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
	outcomes := 0
	for _, r := range rows {
		dec = append(dec, r.LatencyUS)
		if r.Outcome != nil && *r.Outcome == "ok" {
			outcomes++
		}
	}
	slices.Sort(dec)
	fmt.Printf("\naudit log: %d rows for %d calls, %d with outcome ok; decision latency (steps 2-5, latency_us) p50 %d us, p99 %d us\n",
		len(rows), want, outcomes, dec[len(dec)/2], dec[len(dec)*99/100])
	if st, err := os.Stat(db.Path()); err == nil {
		fmt.Printf("database file: %d bytes, %.0f bytes per audit row\n", st.Size(), float64(st.Size())/float64(len(rows)))
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
