// Command healthpeer is the baseline for bench/health.sh: a server answering
// GET /health with a health-shaped JSON object and no checks at all, so the
// benchmark can report clawd's /health as a ratio against peers measured in
// the same run on the same machine.
//
//	healthpeer          a bare net/http server
//	healthpeer -raw     the least a Go server can do: a goroutine per
//	                    connection that reads up to each blank line and writes
//	                    a canned answer (no parsing, no checks, no Date); the
//	                    floor of Go's netpoller on this machine
//
// It prints its address on stdout.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
)

const body = `{"status":"ok","pid":1,"uptime_s":1,"mcp_version":"2025-11-25","active_tools":5}`

func main() {
	raw := flag.Bool("raw", false, "serve with a bare read/write loop instead of net/http")
	flag.Parse()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	if *raw {
		serveRaw(ln)
		return
	}
	b := []byte(body)
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
}

func serveRaw(ln net.Listener) {
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body)
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			br := bufio.NewReaderSize(c, 4096)
			for {
				for { // to the blank line that ends a request head
					line, err := br.ReadSlice('\n')
					if err != nil {
						return
					}
					if len(line) <= 2 {
						break
					}
				}
				if _, err := c.Write(resp); err != nil {
					return
				}
			}
		}()
	}
}
