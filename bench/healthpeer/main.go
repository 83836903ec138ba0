// Command healthpeer is the baseline for bench/health.sh: a bare net/http
// server answering GET /health with a health-shaped JSON object and no
// checks at all, so the benchmark can report clawd's /health as a ratio
// against a peer measured in the same run on the same machine.
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	body := []byte(`{"status":"ok","pid":1,"uptime_s":1,"mcp_version":"2025-11-25","active_tools":5}`)
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
}
