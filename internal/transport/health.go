package transport

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// Health is the health object (docs/transports.md), served at GET /health on
// loopback HTTP and as the JSON-RPC method clawd/health on every transport.
type Health struct {
	Status      string // "ok", "degraded" or "error"
	PID         int
	UptimeS     int64
	MCPVersion  string
	ActiveTools int
	// LastPolicyEvalMS is the latency of the most recent policy evaluation;
	// negative when the chain does not report it (the field is then left out,
	// as docs/transports.md documents it optional).
	LastPolicyEvalMS int64
}

// AppendJSON appends h as a JSON object. Encoding by hand keeps /health
// free of reflection and allocations beyond the buffer (its SLO is p99 < 5 ms).
func (h *Health) AppendJSON(b []byte) []byte {
	b = append(b, `{"status":`...)
	b, _ = jsontext.AppendQuote(b, h.Status)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(h.PID), 10)
	b = append(b, `,"uptime_s":`...)
	b = strconv.AppendInt(b, h.UptimeS, 10)
	b = append(b, `,"mcp_version":`...)
	b, _ = jsontext.AppendQuote(b, h.MCPVersion)
	b = append(b, `,"active_tools":`...)
	b = strconv.AppendInt(b, int64(h.ActiveTools), 10)
	if h.LastPolicyEvalMS >= 0 {
		b = append(b, `,"last_policy_eval_ms":`...)
		b = strconv.AppendInt(b, h.LastPolicyEvalMS, 10)
	}
	return append(b, '}')
}

// MarshalJSON lets Health be returned from an MCP method handler.
func (h Health) MarshalJSON() ([]byte, error) { return h.AppendJSON(nil), nil }
