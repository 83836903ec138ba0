//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"time"
)

// benchFloor measures what any proxy adds on this machine: server-everything's
// echo called directly and through copyProxy (this program again, copying
// lines both ways and renaming the tool, nothing else), alternating call by
// call as mode overhead does. It is the floor a gateway's proxied call is
// compared with: one more pipe hop and the wake-ups it costs.
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
	direct, err := startPeer("server-everything", os.Environ(), dir, "node", o.everything, "stdio")
	if err != nil {
		fatalf("%v", err)
	}
	defer direct.close()
	proxied, err := startPeer("copy proxy", os.Environ(), dir, self, "-copy-proxy", "node", o.everything, "stdio")
	if err != nil {
		fatalf("%v", err)
	}
	defer proxied.close()
	for _, p := range []*peer{direct, proxied} {
		if err := p.initialize(); err != nil {
			fatalf("%v", err)
		}
	}
	args := json.RawMessage(`{"message":"hello"}`)
	viaDirect := func() error { return direct.call("echo", args) }
	viaProxy := func() error { return proxied.call("everything__echo", args) }
	for i := 0; i < o.warmup; i++ {
		if err := viaDirect(); err != nil {
			fatalf("%v", err)
		}
		if err := viaProxy(); err != nil {
			fatalf("%v", err)
		}
	}
	dd := make([]time.Duration, 0, o.n)
	dp := make([]time.Duration, 0, o.n)
	for i := 0; i < o.n; i++ {
		first, firstInto, second, secondInto := viaDirect, &dd, viaProxy, &dp
		if i%2 == 1 {
			first, firstInto, second, secondInto = viaProxy, &dp, viaDirect, &dd
		}
		for _, f := range []struct {
			call func() error
			into *[]time.Duration
		}{{first, firstInto}, {second, secondInto}} {
			start := time.Now()
			if err := f.call(); err != nil {
				fatalf("%v", err)
			}
			*f.into = append(*f.into, time.Since(start))
		}
	}
	rd := summarize("server-everything echo, direct", dd)
	rp := summarize("server-everything echo, through a line-copying proxy", dp)
	diff := result{Label: "added by the copying proxy (percentile differences)", N: o.n,
		P50us: rp.P50us - rd.P50us, P90us: rp.P90us - rd.P90us, P99us: rp.P99us - rd.P99us, MaxUs: rp.MaxUs - rd.MaxUs}
	return []result{rd, rp, diff}
}

// copyProxy runs argv and copies lines between its own stdio and the
// child's, renaming everything__echo to echo on the way in: the least a
// proxy can do.
func copyProxy(argv []string) {
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
