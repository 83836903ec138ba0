package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/clawde/clawd/internal/support/netguard"
)

// originClient is the HTTP client of one http/sse upstream. It sends the
// configured headers, and only to the configured origin (scheme, host and
// port, compared in netguard's canonical form): every request to another
// origin is refused before it leaves, redirects included. That keeps a
// legacy SSE server's `endpoint` event from sending clawd (and the
// Authorization header) elsewhere, and a redirect from carrying the
// headers to a third party.
//
// Every connection is dialled through guard (a nil guard gets the default
// policy for the URL's origin: public addresses, and loopback only when
// the host is a loopback address or localhost), which checks the address
// actually dialled after name resolution, so a name that resolves to a
// private or link-local address is refused whatever it resolved to when
// it was allowed (docs/upstreams.md, "Egress"). Proxies from the
// environment (HTTP_PROXY, HTTPS_PROXY) are not used: through a proxy the
// address dialled is the proxy's, and the check would see nothing. The
// dial is bounded by connectTimeout; requests are bounded by the caller's
// context. resolver may be nil (the system's).
func originClient(rawURL string, headers map[string]string, connectTimeout time.Duration, guard *netguard.Guard, resolver *net.Resolver) (*http.Client, error) {
	o, err := netguard.OriginOfURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("url: %v", err) // never the URL: its path or query may hold a key
	}
	if guard == nil {
		guard = netguard.NewGuard(netguard.Policy{Origin: o})
	}
	if guard.Policy().Origin != o {
		return nil, fmt.Errorf("url: the egress policy is for %s, not %s", guard.Policy().Origin, o)
	}
	origin := o.String()
	base := &http.Transport{
		Proxy:                 nil,
		DialContext:           guard.Dialer(connectTimeout, resolver).DialContext,
		TLSHandshakeTimeout:   connectTimeout,
		ResponseHeaderTimeout: 0, // SSE streams; the request context bounds calls
		// Go's default is 10 MiB, which its client keeps as some 50 MiB of
		// strings when the lines are short, for as long as the answer
		// lives (the standalone GET stream's: the session's life).
		MaxResponseHeaderBytes: maxHeaderBytes,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        90 * time.Second,
	}
	rt := &originTransport{origin: origin, headers: headers, base: base,
		answers: make(chan struct{}, maxAnswersInFlight), answerTimeout: connectTimeout}
	return &http.Client{
		Transport: rt,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if got := requestOrigin(req); got != origin {
				return fmt.Errorf("%w: redirect to %s", errOtherOrigin, got)
			}
			if len(via) >= 5 {
				return errors.New("stopped after 5 redirects")
			}
			return nil
		},
	}, nil
}

// maxHeaderBytes bounds the headers of one answer: far more than any
// server needs (a few KiB), little to hold.
const maxHeaderBytes = 256 << 10

var errOtherOrigin = errors.New("refused: the upstream pointed clawd at another origin than the configured one")

// requestOrigin is the canonical origin of req's URL, or a description of
// why it has none (which never equals an origin).
func requestOrigin(req *http.Request) string {
	o, err := netguard.OriginOf(req.URL)
	if err != nil {
		return "an invalid URL (" + err.Error() + ")"
	}
	return o.String()
}

type originTransport struct {
	origin  string
	headers map[string]string
	base    http.RoundTripper
	// answers holds a token per POST in flight that carries clawd's
	// answer to a request of the server's (answerPost).
	answers       chan struct{}
	answerTimeout time.Duration
}

// maxAnswersInFlight bounds the POSTs carrying clawd's answers to the
// server's own requests (ping, roots/list...) that may be in flight at
// once. The go-sdk client answers each request the server sends in a
// goroutine of its own, and posts the answer with no deadline: a server
// that sent requests without end and never acknowledged the answers would
// hold a connection and goroutines of clawd's per request, for ever, and
// hold up the session's close. Past the bound an answer is dropped (the
// server's request goes unanswered, the session goes on); each one in
// flight is bounded by the connect timeout. A server acknowledges an
// answer at once (202 Accepted), so eight is plenty.
const maxAnswersInFlight = 8

var errTooManyAnswers = errors.New("the server has not acknowledged clawd's answers to its earlier requests; this answer is dropped")

// answerPost reports whether req posts a JSON-RPC response: a message with
// an id and a result or an error, and no method.
func answerPost(req *http.Request) bool {
	if req.Method != http.MethodPost || req.GetBody == nil {
		return false
	}
	body, err := req.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, maxBody))
	if err != nil {
		return false
	}
	env, ok := scanEnvelope(b)
	return ok && env.method == nil && (env.result != nil || env.err != nil)
}

func (t *originTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if got := requestOrigin(req); got != t.origin {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("%w: %s", errOtherOrigin, got)
	}
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			if req.Header.Get(k) == "" { // never override what the SDK sets (session id, protocol version)
				req.Header.Set(k, v)
			}
		}
	}
	var done func()
	if answerPost(req) {
		select {
		case t.answers <- struct{}{}:
		default:
			req.Body.Close()
			return nil, errTooManyAnswers
		}
		ctx, cancel := context.WithTimeout(req.Context(), t.answerTimeout)
		req = req.WithContext(ctx)
		var once sync.Once
		done = func() { once.Do(func() { cancel(); <-t.answers }) }
	}
	resp, err := t.base.RoundTrip(req)
	if done != nil {
		if err != nil || resp.Body == nil {
			done()
		} else {
			resp.Body = &closeHook{ReadCloser: resp.Body, hook: done}
		}
	}
	if err != nil {
		return resp, err
	}
	if sid := resp.Header.Values("Mcp-Session-Id"); len(sid) > 0 {
		if err := checkSessionID(sid); err != nil {
			if resp.Body != nil {
				resp.Body.Close()
			}
			return nil, err
		}
	}
	if resp.Body != nil {
		// Only a successful event stream is read event by event (and
		// bounded per event by the SDK). Any other answer, an error
		// status whatever its Content-Type says included, is read whole
		// by the SDK (to find a JSON-RPC error in it): bounded here.
		mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		stream := mt == "text/event-stream" && resp.StatusCode >= 200 && resp.StatusCode <= 299
		if !stream {
			resp.Body = &limitedBody{ReadCloser: resp.Body, left: maxBody + 1}
		}
		if stream || mt == "application/json" {
			// What the SDK decodes as JSON: another type's body (an HTML
			// error page) is not JSON, and counting its brackets would
			// replace the real status error with a misleading one.
			resp.Body = &depthBody{ReadCloser: resp.Body, sse: stream} // depth_http.go
		}
	}
	return resp, nil
}

// maxSessionID bounds the Mcp-Session-Id a server may assign: a UUID, a
// hash or a signed token fit many times over. The go-sdk client keeps the
// id, sends it with every request and puts it (quoted, twice when it
// changes) in its error messages, which clawd keeps as the server's last
// error and records in events.
const maxSessionID = 1024

// checkSessionID refuses a session id the specification does not allow
// (only visible ASCII, 0x21 to 0x7E), one over maxSessionID bytes, or more
// than one. The error never holds the id.
func checkSessionID(values []string) error {
	if len(values) > 1 {
		return fmt.Errorf("refused: the server sent %d Mcp-Session-Id headers in one answer", len(values))
	}
	v := values[0]
	if len(v) > maxSessionID {
		return fmt.Errorf("refused: the server's Mcp-Session-Id is %d bytes long, over clawd's limit of %d", len(v), maxSessionID)
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x21 || v[i] > 0x7e {
			return errors.New("refused: the server's Mcp-Session-Id holds a character other than visible ASCII")
		}
	}
	return nil
}

// closeHook runs hook once the body is closed.
type closeHook struct {
	io.ReadCloser
	hook func()
}

func (b *closeHook) Close() error {
	err := b.ReadCloser.Close()
	b.hook()
	return err
}

// maxBody bounds a response body that is not a successful event stream (a
// JSON answer, an error answer whatever its Content-Type): the go-sdk
// client reads such a body whole before it decodes it, so without a bound
// a server could make clawd hold any amount. The same budget as one line
// of a stdio server (maxLine). Event streams are bounded per event by the
// SDK, at this size too (session.go sets its MaxEventSize).
const maxBody = maxLine

// errBodyTooLarge: a response body went past maxBody; the rest is not read.
var errBodyTooLarge = fmt.Errorf("the server's answer is larger than %d MiB; clawd stops reading there", maxBody>>20)

// limitedBody fails a read that would take the body past left-1 bytes.
type limitedBody struct {
	io.ReadCloser
	left int64 // bytes that may still be read, plus one
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errBodyTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	if b.left -= int64(n); b.left <= 0 {
		return n, errBodyTooLarge
	}
	return n, err
}
