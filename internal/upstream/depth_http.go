package upstream

import (
	"fmt"
	"io"
)

// maxJSONDepth bounds the nesting of the JSON in an HTTP server's answers
// and event streams, and in a stdio server's messages that the SDK
// decodes (handleLine). The go-sdk client decodes results and notifications
// into Go values (structuredContent, a log message's data) with a decoder
// whose time grows with the nesting times the size: 16 MiB nested 900 deep
// kept a core busy for a minute, past the call's deadline, which the
// decoding does not look at. At this depth one answer of the largest size
// costs a few seconds at most; MCP's own messages nest a handful of levels.
const maxJSONDepth = 64

var errTooDeep = fmt.Errorf("the server's answer nests JSON deeper than %d levels; clawd stops reading there", maxJSONDepth)

// maxJSONValues bounds the arrays, objects and members of one message
// (counted as its opening brackets and commas). The SDK decodes parts of
// a message into Go values of their own (interfaces, slices, maps): 16 MiB
// of empty arrays took 1.4 GiB of heap and 3 s to decode; a message at this
// bound, about 110 MiB and a third of a second. A result clawd passes on
// is at most 4 MiB (MaxOutputBytes) anyway.
const maxJSONValues = 1 << 20

var errTooManyValues = fmt.Errorf("the server's answer holds more than %d JSON values; clawd stops reading there", maxJSONValues)

// jsonBounds follows JSON text byte by byte and fails (feed) once its
// arrays and objects nest past maxJSONDepth or its values pass
// maxJSONValues: the bound on what the SDK decodes, for an HTTP answer
// (depthBody) and a stdio line alike (checkJSONBounds).
type jsonBounds struct {
	depth  int
	values int
	str    bool // inside a string
	esc    bool // after a backslash inside a string
}

func (j *jsonBounds) feed(c byte) error {
	switch {
	case j.str:
		switch {
		case j.esc:
			j.esc = false
		case c == '\\':
			j.esc = true
		case c == '"':
			j.str = false
		}
	case c == '"':
		j.str = true
	case c == '[' || c == '{':
		if j.depth++; j.depth > maxJSONDepth {
			return errTooDeep
		}
		if j.values++; j.values > maxJSONValues {
			return errTooManyValues
		}
	case c == ',':
		if j.values++; j.values > maxJSONValues {
			return errTooManyValues
		}
	case c == ']' || c == '}':
		if j.depth > 0 {
			j.depth--
		}
	}
	return nil
}

// checkJSONBounds is jsonBounds over one whole message.
func checkJSONBounds(msg []byte) error {
	var j jsonBounds
	for _, c := range msg {
		if err := j.feed(c); err != nil {
			return err
		}
	}
	return nil
}

// depthBody fails the read that takes the JSON it passes on past
// maxJSONDepth levels of arrays and objects, or past maxJSONValues values.
// For an event stream it follows the data lines only, and starts each
// event anew.
type depthBody struct {
	io.ReadCloser
	sse bool

	json jsonBounds
	// SSE: where the current line stands.
	col    int     // bytes of the line so far, counted to 5
	prefix [5]byte // its first bytes
	data   bool    // a data line, past "data:"
	cr     bool    // the last byte was a CR
	failed error   // the error once the bound is passed
}

func (b *depthBody) Read(p []byte) (int, error) {
	if b.failed != nil {
		return 0, b.failed
	}
	n, err := b.ReadCloser.Read(p)
	for _, c := range p[:n] {
		if b.sse {
			if c == '\n' || c == '\r' {
				if !(c == '\n' && b.cr) && b.col == 0 {
					b.json.depth, b.json.values = 0, 0 // an empty line ends the event
				}
				b.cr = c == '\r'
				b.col, b.data, b.json.str, b.json.esc = 0, false, false, false
				continue
			}
			b.cr = false
			if !b.data {
				if b.col < len(b.prefix) {
					b.prefix[b.col] = c
				}
				b.col++
				b.data = b.col == len(b.prefix) && string(b.prefix[:]) == "data:"
				continue
			}
		}
		if b.failed = b.json.feed(c); b.failed != nil {
			return n, b.failed
		}
	}
	return n, err
}
