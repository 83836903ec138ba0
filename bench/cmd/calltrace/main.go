// Command calltrace splits a proxied tools/call's time into the hops
// between processes and the work of each, from the system calls the three
// processes make, as `perf record -e syscalls:...` saw them. It answers
// what the added latency of bench/upstream.sh (through clawd minus direct)
// is made of: clawd's own work, the two extra process hops a proxy needs,
// or the upstream running slower behind clawd than when called directly.
//
// It reads `perf script -F comm,pid,tid,time,event,trace` output of the
// tracepoints syscalls:sys_enter_read, sys_exit_read and sys_enter_write,
// recorded while `upstreambench -mode overhead` runs (bench/calltrace.sh
// does all of it), and matches each call by the order of events:
//
//	client write -> clawd reads stdin       H1 (the hop into clawd)
//	clawd reads  -> clawd writes upstream   A  (clawd's work on the request)
//	             -> node reads, node writes, clawd reads the answer
//	clawd reads  -> clawd writes stdout     B  (clawd's work on the answer)
//	clawd writes -> client reads            H4 (the hop back)
//
// and the direct call's client -> node -> client the same way. Times are
// the tracepoints' (CLOCK_MONOTONIC, shared by the processes); the tracing
// itself slows every system call a little, so compare the segments with
// each other, not with upstreambench's figures.
//
// usage: calltrace -clawd PID -upstream PID -direct PID < perf-script-output
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

type event struct {
	us    float64 // time, microseconds
	comm  string
	pid   int
	write bool // a write's entry; else a read that returned data
	fd    int
}

var line = regexp.MustCompile(`^\s*(\S+)\s+(\d+)/(\d+)\s+([\d.]+):\s+syscalls:(\w+):\s*(.*)$`)
var fdArg = regexp.MustCompile(`fd: (0x[0-9a-f]+)`)

// parse reads perf script lines into the writes and the reads that
// returned data (a read's fd comes from its entry on the same thread).
func parse(r io.Reader) ([]event, error) {
	var out []event
	readFD := map[string]int{} // tid -> fd of its read in progress
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil || m[1] == "perf" {
			continue
		}
		pid, _ := strconv.Atoi(m[2])
		ts, _ := strconv.ParseFloat(m[4], 64)
		e := event{us: ts * 1e6, comm: m[1], pid: pid}
		switch m[5] {
		case "sys_enter_read":
			if f := fdArg.FindStringSubmatch(m[6]); f != nil {
				fd, _ := strconv.ParseInt(f[1], 0, 64)
				readFD[m[3]] = int(fd)
			}
			continue
		case "sys_exit_read":
			n, err := strconv.ParseInt(strings.TrimSpace(m[6]), 0, 64)
			if err != nil || n <= 0 {
				continue // EAGAIN and EOF carry nothing to follow
			}
			e.fd = readFD[m[3]]
		case "sys_enter_write":
			f := fdArg.FindStringSubmatch(m[6])
			if f == nil {
				continue
			}
			fd, _ := strconv.ParseInt(f[1], 0, 64)
			e.write, e.fd = true, int(fd)
		default:
			continue
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// mostCommon is the fd that most often holds the event just before (or,
// with after, just after) each event of want.
func mostCommon(evs []event, want func(event) bool, of func(event) bool, after bool) int {
	count := map[int]int{}
	for i, e := range evs {
		if !want(e) {
			continue
		}
		for k := 1; k <= 8; k++ {
			j := i - k
			if after {
				j = i + k
			}
			if j < 0 || j >= len(evs) {
				break
			}
			if of(evs[j]) {
				count[evs[j].fd]++
				break
			}
		}
	}
	best, n := -1, 0
	for fd, c := range count {
		if c > n {
			best, n = fd, c
		}
	}
	return best
}

type segments map[string][]float64

func (s segments) add(name string, v float64) { s[name] = append(s[name], v) }

func main() {
	clawd := flag.Int("clawd", 0, "clawd's pid")
	up := flag.Int("upstream", 0, "the pid of the upstream server clawd runs")
	direct := flag.Int("direct", 0, "the pid of the server the client calls directly")
	flag.Parse()
	if *clawd == 0 || *up == 0 || *direct == 0 {
		fmt.Fprintln(os.Stderr, "usage: calltrace -clawd PID -upstream PID -direct PID < perf-script-output")
		os.Exit(2)
	}
	evs, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "calltrace:", err)
		os.Exit(1)
	}
	isClawd := func(e event) bool { return e.pid == *clawd }
	isUp := func(e event) bool { return e.pid == *up }
	// clawd's pipe to the upstream: the fd of clawd's last write before
	// each upstream read; its pipe from it, of clawd's first read after
	// each upstream write.
	upIn := mostCommon(evs, func(e event) bool { return isUp(e) && !e.write }, func(e event) bool { return isClawd(e) && e.write }, false)
	upOut := mostCommon(evs, func(e event) bool { return isUp(e) && e.write }, func(e event) bool { return isClawd(e) && !e.write }, true)
	client := func(e event) bool { return !isClawd(e) && e.pid != *up && e.pid != *direct }

	seg := segments{}
	var t [6]float64
	step, lastClient := 0, -1.0
	for _, e := range evs {
		if client(e) && e.write {
			lastClient = e.us
		}
		switch {
		case isClawd(e) && !e.write && e.fd == 0 && lastClient >= 0:
			t[0], t[1], step = lastClient, e.us, 2
		case step == 2 && isClawd(e) && e.write && e.fd == upIn:
			t[2], step = e.us, 3
		case step == 3 && isClawd(e) && !e.write && e.fd == upOut:
			t[3], step = e.us, 4
		case step == 4 && isClawd(e) && e.write && e.fd == 1:
			t[4], step = e.us, 5
		case step == 5 && client(e) && !e.write:
			seg.add("H1  client writes -> clawd reads it", t[1]-t[0])
			seg.add("A   clawd reads -> writes to the upstream", t[2]-t[1])
			seg.add("U   upstream round trip, seen by clawd", t[3]-t[2])
			seg.add("B   clawd reads the answer -> writes it", t[4]-t[3])
			seg.add("H4  clawd writes -> client reads it", e.us-t[4])
			seg.add("    through clawd, client write -> read", e.us-t[0])
			step = 0
		}
	}
	// The upstream's own part, behind clawd and called directly.
	side := func(server int, from func(event) bool, prefix string) {
		step, start := 0, 0.0
		var in, work float64
		for _, e := range evs {
			switch {
			case from(e) && e.write:
				start, step = e.us, 1
			case step == 1 && e.pid == server && !e.write:
				in, step = e.us, 2
			case step == 2 && e.pid == server && e.write:
				work, step = e.us, 3
			case step == 3 && from(e) && !e.write:
				seg.add(prefix+" hop to the server", in-start)
				seg.add(prefix+" server reads -> writes", work-in)
				seg.add(prefix+" hop back", e.us-work)
				if prefix == "direct:" {
					seg.add("    direct, client write -> read", e.us-start)
				}
				step = 0
			}
		}
	}
	side(*up, isClawd, "behind clawd:")
	side(*direct, client, "direct:")

	names := []string{
		"H1  client writes -> clawd reads it", "A   clawd reads -> writes to the upstream",
		"U   upstream round trip, seen by clawd", "B   clawd reads the answer -> writes it",
		"H4  clawd writes -> client reads it", "    through clawd, client write -> read",
		"behind clawd: hop to the server", "behind clawd: server reads -> writes", "behind clawd: hop back",
		"direct: hop to the server", "direct: server reads -> writes", "direct: hop back",
		"    direct, client write -> read",
	}
	fmt.Printf("%-46s %6s %7s %7s %7s\n", "segment (us)", "n", "p10", "p50", "p90")
	for _, k := range names {
		v := slices.Clone(seg[k])
		if len(v) == 0 {
			fmt.Printf("%-46s %6d\n", k, 0)
			continue
		}
		slices.Sort(v)
		q := func(p float64) float64 { return v[int(p*float64(len(v)-1))] }
		fmt.Printf("%-46s %6d %7.1f %7.1f %7.1f\n", k, len(v), q(0.1), q(0.5), q(0.9))
	}
}
