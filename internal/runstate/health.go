package runstate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// maxHealthBody bounds what is read of a /health answer.
const maxHealthBody = 1 << 20

// LoopbackClient is an http.Client that can only reach loopback IPs, only
// while this user's process listens there (CheckListener, on Linux), and
// never follows redirects: a redirect must not carry the token elsewhere.
func LoopbackClient(timeout time.Duration) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	tr := &http.Transport{
		Proxy: nil, // never through a proxy from the environment
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if err := CheckLoopback(addr); err != nil {
				return nil, err
			}
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			if err := CheckListener(addr); err != nil {
				c.Close()
				return nil, err
			}
			return c, nil
		},
		MaxIdleConns:      4,
		IdleConnTimeout:   30 * time.Second,
		DisableKeepAlives: false,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return errors.New("the daemon answered with a redirect; not following it")
		},
	}
}

// Health is GET /health's object.
type Health struct {
	Status           string `json:"status"`
	PID              int    `json:"pid"`
	UptimeS          int64  `json:"uptime_s"`
	MCPVersion       string `json:"mcp_version"`
	ActiveTools      int    `json:"active_tools"`
	LastPolicyEvalMS *int64 `json:"last_policy_eval_ms,omitzero"`
}

// FetchHealth is GET /health at addr, a loopback IP:port (CheckLoopback):
// no token is sent, no proxy or redirect is followed, the answer must be
// HTTP 200 with a JSON body of at most 1 MiB, within 3 s or ctx.
func FetchHealth(ctx context.Context, addr string) (jsontext.Value, error) {
	if err := CheckLoopback(addr); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/health", nil)
	if err != nil {
		return nil, err
	}
	resp, err := LoopbackClient(3 * time.Second).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxHealthBody))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /health: HTTP %d", resp.StatusCode)
	}
	if !jsontext.Value(data).IsValid() {
		return nil, errors.New("GET /health: the body is not JSON")
	}
	return data, nil
}

// ProbeHealth returns the pid /health reports at addr (a loopback IP:port,
// CheckLoopback), waiting at most a second. The daemon uses it to tell a
// live daemon from a stale state file; the CLI, to check who answers
// before it sends a token.
func ProbeHealth(addr string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	raw, err := FetchHealth(ctx, addr)
	if err != nil {
		return 0, err
	}
	var h Health
	if err := json.Unmarshal(raw, &h, json.RejectUnknownMembers(false)); err != nil || h.PID <= 0 {
		return 0, errors.New("not a clawd health answer")
	}
	return h.PID, nil
}
