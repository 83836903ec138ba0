// Package lines reads newline-delimited input with a bound on each line:
// the framing of MCP's stdio transport, which clawd reads as a server
// (internal/jsonrpc's Stream) and as a client of stdio upstream servers
// (internal/upstream). One reader, so both refuse an endless line the same
// way, without holding it.
package lines

import (
	"bufio"
	"io"
)

// Read reads one line from br without its newline (and a trailing CR),
// appending it to buf (pass buf[:0] to reuse a buffer, nil for a fresh
// one). A line whose content is longer than max is
// consumed and reported as tooLong, holding no data; at most max+2 bytes
// of it are ever buffered, whatever its length. err is br's (io.EOF after
// a last line without a newline, which is returned with it).
func Read(br *bufio.Reader, max int, buf []byte) (line []byte, tooLong bool, err error) {
	line, tooLong, _, err = ReadEnds(br, max, buf, 0)
	return line, tooLong, err
}

// Ends are the first and the last bytes of a line too long to keep:
// enough to find, say, the id of a JSON-RPC message whose body was
// discarded (serializers put it first or last).
type Ends struct{ Head, Tail []byte }

// ReadEnds is Read that also keeps, for a line reported tooLong, its first
// and last n bytes (without the newline) in ends; they may overlap, and
// hold nothing of the line otherwise. At most 2n more bytes are held.
func ReadEnds(br *bufio.Reader, max int, buf []byte, n int) (line []byte, tooLong bool, ends Ends, err error) {
	p := Pending{buf: buf}
	line, tooLong, ends, err = p.Next(br, max, n)
	if err != nil && err != io.EOF {
		line, tooLong, ends = p.Flush(max, n)
	}
	return line, tooLong, ends, err
}

// Pending is a line read in part: what ReadEnds holds between two
// fragments, kept in a value so that a read cut short by an error (a
// deadline: the goroutine reading gave up its turn) can be continued by a
// later call, on any goroutine, with nothing of the line lost or split.
// The zero value starts a new line. Its max and n must stay the same from
// one call to the next.
type Pending struct {
	buf     []byte
	tooLong bool
	ends    Ends
}

// Next reads on from br to the end of the line and returns the line as
// ReadEnds does (with io.EOF after a last line without a newline); the
// next call starts a new line in a fresh buffer, so the line returned is
// the caller's to keep. When br fails before the line's end with any other
// error, Next returns that error alone and keeps what it has read: the
// next call continues the line, or Flush ends it there.
func (p *Pending) Next(br *bufio.Reader, max, n int) (line []byte, tooLong bool, ends Ends, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		if !p.tooLong {
			if len(p.buf)+len(frag) > max+2 { // +2: room for "\r\n"
				p.tooLong = true
				if n > 0 {
					// Two bytes more than n: the newline is trimmed at the end.
					p.ends.Head = append(p.ends.Head, p.buf[:min(n+2, len(p.buf))]...)
					if len(p.ends.Head) < n+2 {
						p.ends.Head = append(p.ends.Head, frag[:min(n+2-len(p.ends.Head), len(frag))]...)
					}
					p.ends.Tail = keepLast(p.ends.Tail, p.buf, n+2)
				}
				p.buf = p.buf[:0]
			} else {
				p.buf = append(p.buf, frag...)
			}
		}
		if p.tooLong && n > 0 {
			p.ends.Tail = keepLast(p.ends.Tail, frag, n+2)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			return nil, false, Ends{}, err
		}
		line, tooLong, ends = p.Flush(max, n)
		return line, tooLong, ends, err
	}
}

// Flush ends the line where its input stopped (the input failed for good,
// or Next reached the line's end) and returns what was read of it as
// ReadEnds does; the next call starts a new line.
func (p *Pending) Flush(max, n int) (line []byte, tooLong bool, ends Ends) {
	buf, ends := p.buf, p.ends
	tooLong = p.tooLong
	*p = Pending{}
	if tooLong {
		ends.Head, ends.Tail = trimNewline(ends.Head), trimNewline(ends.Tail)
		ends.Head = ends.Head[:min(n, len(ends.Head))]
		if d := len(ends.Tail) - n; d > 0 {
			ends.Tail = ends.Tail[d:]
		}
		return buf[:0], true, ends
	}
	k := len(trimNewline(buf))
	if k > max { // the +2 above let a line end in LF alone through
		if n > 0 {
			ends.Head = append(ends.Head, buf[:min(n, k)]...)
			ends.Tail = keepLast(ends.Tail, buf[:k], n)
		}
		return buf[:0], true, ends
	}
	return buf[:k], false, ends
}

// keepLast appends the last n bytes of b to tail and keeps tail's last n.
func keepLast(tail, b []byte, n int) []byte {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	tail = append(tail, b...)
	if len(tail) > n {
		tail = append(tail[:0], tail[len(tail)-n:]...)
	}
	return tail
}

func trimNewline(b []byte) []byte {
	if k := len(b); k > 0 && b[k-1] == '\n' {
		b = b[:k-1]
		if k := len(b); k > 0 && b[k-1] == '\r' {
			b = b[:k-1]
		}
	}
	return b
}
