// Package lines reads newline-delimited input with a bound on each line:
// the framing of MCP's stdio transport, which clawd reads as a server
// (internal/jsonrpc's Stream) and as a client of stdio upstream servers
// (internal/upstream). One reader, so both refuse an endless line the same
// way, without holding it.
package lines

import "bufio"

// Read reads one line from br without its newline (and a trailing CR),
// appending it to buf (pass buf[:0] to reuse a buffer, nil for a fresh
// one). A line whose content is longer than max is
// consumed and reported as tooLong, holding no data; at most max+2 bytes
// of it are ever buffered, whatever its length. err is br's (io.EOF after
// a last line without a newline, which is returned with it).
func Read(br *bufio.Reader, max int, buf []byte) (line []byte, tooLong bool, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(frag) > max+2 { // +2: room for "\r\n"
				tooLong = true
				buf = buf[:0]
			} else {
				buf = append(buf, frag...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if tooLong {
			return buf[:0], true, err
		}
		n := len(buf)
		if n > 0 && buf[n-1] == '\n' {
			n--
			if n > 0 && buf[n-1] == '\r' {
				n--
			}
		}
		if n > max { // the +2 above let a line end in LF alone through
			return buf[:0], true, err
		}
		return buf[:n], false, err
	}
}
