package clawdtest

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// HTTPTimeout bounds every HTTP exchange of an HTTP client.
const HTTPTimeout = 60 * time.Second

// HTTP is a Streamable HTTP client for raw assertions: it POSTs a body,
// exactly as given, to /mcp with the bearer token and, once the server
// has issued one, the Mcp-Session-Id, and returns the status and body.
// Tests change Token, SessionID and ProtocolVersion between posts to play
// other clients.
type HTTP struct {
	t    *testing.T
	Base string // http://host:port
	// Token is sent as "Authorization: Bearer <Token>".
	Token string
	// SessionID is sent as Mcp-Session-Id when set; a response's
	// Mcp-Session-Id header replaces it.
	SessionID string
	// ProtocolVersion is sent as MCP-Protocol-Version when set.
	ProtocolVersion string
	client          *http.Client
}

// NewHTTP is a client of the daemon at addr (host:port) with token.
// Connections are pooled (http.DefaultTransport), as a real host's are.
func NewHTTP(t *testing.T, addr, token string) *HTTP {
	return &HTTP{t: t, Base: "http://" + addr, Token: token, client: &http.Client{Timeout: HTTPTimeout}}
}

// Post sends body and returns the HTTP status and the response body. It
// fails the test if the exchange fails or takes over HTTPTimeout.
func (s *HTTP) Post(body string) (int, string) {
	s.t.Helper()
	return s.PostCtx(context.Background(), body)
}

// PostCtx is Post under ctx; once ctx is done a failed exchange returns
// (0, "") instead of failing the test.
func (s *HTTP) PostCtx(ctx context.Context, body string) (int, string) {
	s.t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Base+"/mcp", strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.Token)
	if s.SessionID != "" {
		req.Header.Set("Mcp-Session-Id", s.SessionID)
	}
	if s.ProtocolVersion != "" {
		req.Header.Set("MCP-Protocol-Version", s.ProtocolVersion)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ""
		}
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil && ctx.Err() == nil {
		s.t.Fatalf("reading the response: %v", err)
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		s.SessionID = id
	}
	return resp.StatusCode, string(b)
}

// Reply is one HTTP answer: status, headers and body.
type Reply struct {
	Status int
	Header http.Header
	Body   string
}

// Do POSTs body with the bearer token and exactly the extra headers given
// (no session id or protocol version of its own), and returns the whole
// answer: for tests of header rules. It fails the test if the exchange
// fails or takes over HTTPTimeout.
func (s *HTTP) Do(body string, header map[string]string) Reply {
	s.t.Helper()
	resp := s.Open(context.Background(), body, header)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatalf("reading the response: %v", err)
	}
	return Reply{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
}

// Open is Do under ctx that returns the response unread, for streams (SSE)
// the test reads as they come and closes to cancel. The caller closes the
// body.
func (s *HTTP) Open(ctx context.Context, body string, header map[string]string) *http.Response {
	s.t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Base+"/mcp", strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+s.Token)
	for k, v := range header {
		req.Header[http.CanonicalHeaderKey(k)] = []string{v}
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

// Initialize posts msg (an initialize request) and fails the test unless
// it is answered 200 with a session id.
func (s *HTTP) Initialize(msg string) {
	s.t.Helper()
	if code, body := s.Post(msg); code != 200 || s.SessionID == "" {
		s.t.Fatalf("initialize: HTTP %d %s", code, body)
	}
}

// BearerClient is an http.Client that adds "Authorization: Bearer token"
// to every request, as a host configured with "headers" does; for the
// go-sdk's StreamableClientTransport.
func BearerClient(token string) *http.Client {
	return &http.Client{Transport: bearer(token)}
}

type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}
