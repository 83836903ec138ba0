package mcp

import (
	"strconv"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/clawde/clawd/internal/jsonrpc"
	"github.com/clawde/clawd/internal/support/jsonenc"
)

// levelRank orders the log levels; a message goes out when its rank is at
// least the requested level's.
var levelRank = map[string]int{
	"debug": 1, "info": 2, "notice": 3, "warning": 4,
	"error": 5, "critical": 6, "alert": 7, "emergency": 8,
}

// reporter is the tools.Reporter of one call: it turns a tool's progress
// and log reports into notifications on the channel of the call's answer,
// only those the request asked for, and none after the answer (finish).
type reporter struct {
	token    jsontext.Value // progressToken; nil: no progress
	minLevel int            // 0: no log messages
	send     func([]byte)

	mu   sync.Mutex
	done bool
	last float64
	sent bool
}

// newReporter returns a reporter, or nil when the request asked for
// neither progress nor log messages (the call then carries none).
func newReporter(token jsontext.Value, level string, send func([]byte)) *reporter {
	if k := token.Kind(); k != '"' && k != '0' {
		token = nil
	}
	min := levelRank[level]
	if send == nil || (token == nil && min == 0) {
		return nil
	}
	return &reporter{token: token, minLevel: min, send: send}
}

// WantsProgress: the request carried a progressToken (tools.WantsProgress).
func (r *reporter) WantsProgress() bool { return r.token != nil }

func (r *reporter) Progress(progress, total float64, message string) {
	if r.token == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done || (r.sent && progress <= r.last) {
		return // progress must increase, and stops with the answer
	}
	r.last, r.sent = progress, true
	b := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`)
	b = append(b, r.token...)
	b = append(b, `,"progress":`...)
	b = strconv.AppendFloat(b, progress, 'g', -1, 64)
	if total > 0 {
		b = append(b, `,"total":`...)
		b = strconv.AppendFloat(b, total, 'g', -1, 64)
	}
	if message != "" {
		b = append(b, `,"message":`...)
		b = jsonenc.AppendStringChecked(b, message)
	}
	r.send(append(b, "}}"...))
}

func (r *reporter) Log(level, logger string, data any) {
	rank := levelRank[level]
	if r.minLevel == 0 || rank < r.minLevel {
		return
	}
	params := map[string]any{"level": level, "data": data}
	if logger != "" {
		params["logger"] = logger
	}
	if _, err := json.Marshal(data); err != nil {
		return
	}
	msg, err := jsonrpc.AppendNotification(nil, "notifications/message", params)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done {
		r.send(msg)
	}
}

// finish stops the reports: it runs before the answer is written, so no
// notification of the call follows its answer.
func (r *reporter) finish() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.done = true
	r.mu.Unlock()
}
