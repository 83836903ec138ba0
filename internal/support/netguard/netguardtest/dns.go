// Package netguardtest helps tests of code that dials through netguard.
package netguardtest

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
)

// Resolver returns a resolver that answers every A query with a (and
// AAAA queries with nothing), so a test can make any name resolve to any
// IPv4 address without touching the system's resolver or the network: it
// speaks DNS over the in-memory stream Go's resolver opens.
func Resolver(a netip.Addr) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
		client, server := net.Pipe()
		go serve(server, a)
		return client, nil
	}}
}

func serve(conn net.Conn, a netip.Addr) {
	defer conn.Close()
	for {
		var n uint16
		if err := binary.Read(conn, binary.BigEndian, &n); err != nil {
			return
		}
		q := make([]byte, n)
		if _, err := io.ReadFull(conn, q); err != nil || len(q) < 12 {
			return
		}
		// The question: labels up to the zero label, then type and class.
		end := 12
		for end < len(q) && q[end] != 0 {
			end += int(q[end]) + 1
		}
		end += 5
		if end > len(q) {
			return
		}
		qtype := binary.BigEndian.Uint16(q[end-4:])
		// Same id; a response with recursion available; one question.
		resp := append([]byte{}, q[:2]...)
		resp = append(resp, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0)
		resp = append(resp, q[12:end]...)
		if qtype == 1 && a.Is4() {
			resp[7] = 1 // one answer: the name (a pointer to the question's), A, IN, TTL 60
			b := a.As4()
			resp = append(resp, 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, b[0], b[1], b[2], b[3])
		}
		binary.Write(conn, binary.BigEndian, uint16(len(resp)))
		conn.Write(resp)
	}
}
