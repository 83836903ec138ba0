package upstream

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/clawde/clawd/internal/support/cputime"
	"github.com/clawde/clawd/internal/support/race"
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

// A batch line of many tiny messages is refused past maxUpstreamBatch
// without decoding its members: the SDK's decoding of each costs about
// 10 us and 30 KB, so a 16 MiB line of a million "{}" took over a minute
// of CPU. The refusal reads at most the first members; a batch within the
// bound is delivered as before, each member checked alone.
func TestStdioBatchBounded(t *testing.T) {
	var stderr bytes.Buffer
	c := &stdioConn{logger: slog.New(slog.NewTextHandler(io.Discard, nil)), stderr: &stderr,
		incoming: make(chan jsonrpc.Message, maxUpstreamBatch+1), closed: make(chan struct{})}
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`
	huge := "[" + strings.Repeat("{},", 1<<20) + "{}]" // about 3 MiB
	cpu := cputime.Process()
	c.handleLine([]byte(huge), nil)
	if used := cputime.Process() - cpu; used > 2*time.Second*time.Duration(race.Slowdown) {
		t.Errorf("a batch of a million members cost %v of CPU", used)
	}
	if n := len(c.incoming); n != 0 {
		t.Errorf("%d members of an over-long batch reached the SDK", n)
	}
	if !strings.Contains(stderr.String(), "a batch of more than") {
		t.Errorf("no noise line says why the batch was skipped:\n%s", stderr.String())
	}
	over := "[" + strings.Repeat(note+",", maxUpstreamBatch) + note + "]"
	c.handleLine([]byte(over), nil)
	if n := len(c.incoming); n != 0 {
		t.Errorf("%d members of a batch of %d reached the SDK", n, maxUpstreamBatch+1)
	}
	within := "[" + strings.Repeat(note+",", maxUpstreamBatch-1) + note + "]"
	c.handleLine([]byte(within), nil)
	if n := len(c.incoming); n != maxUpstreamBatch {
		t.Errorf("a batch of %d delivered %d messages", maxUpstreamBatch, n)
	}
	for _, bad := range []string{`[{}`, `[{}] {}`, `[1,]`} {
		stderr.Reset()
		c.handleLine([]byte(bad), nil)
		if !strings.Contains(stderr.String(), "not a JSON-RPC batch") {
			t.Errorf("%s: no noise line says it is not a batch:\n%s", bad, stderr.String())
		}
	}
}
