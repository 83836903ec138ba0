package upstream

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A stdio server's message the SDK would decode (a notification, an answer
// to the SDK's own request) is held to the nesting and value bounds of an
// HTTP answer: nested too deep, it is skipped as noise, not handed to the
// SDK's decoder, whose time grows with the nesting times the size.
func TestStdioLineNestedTooDeepIsSkipped(t *testing.T) {
	var stderr bytes.Buffer
	c := &stdioConn{logger: slog.New(slog.NewTextHandler(io.Discard, nil)), stderr: &stderr,
		incoming: make(chan jsonrpc.Message, 4), closed: make(chan struct{})}
	deep := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":` +
		strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1) + `}}`
	c.handleLine([]byte(deep), nil)
	c.handleLine([]byte("["+deep+"]"), nil)
	many := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":[` +
		strings.Repeat("0,", maxJSONValues) + `0]}}`
	c.handleLine([]byte(many), nil)
	if n := len(c.incoming); n != 0 {
		t.Errorf("%d message(s) over the bounds reached the SDK", n)
	}
	if got := strings.Count(stderr.String(), "[clawd]"); got != 3 {
		t.Errorf("want 3 noise lines saying why, got:\n%s", stderr.String())
	}
	shallow := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":[[1]]}}`
	c.handleLine([]byte(shallow), nil)
	if n := len(c.incoming); n != 1 {
		t.Errorf("a message within the bounds: %d delivered, want 1", n)
	}
}
