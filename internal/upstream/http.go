package upstream

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
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
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
	}
	rt := &originTransport{origin: origin, headers: headers, base: base}
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
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp.Body != nil {
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
			resp.Body = &limitedBody{ReadCloser: resp.Body, left: maxBody + 1}
		}
	}
	return resp, err
}

// maxBody bounds a response body that is not an event stream (a JSON
// answer, an error page): the go-sdk client reads such a body whole before
// it decodes it, so without a bound a server could make clawd hold any
// amount. The same budget as one line of a stdio server (maxLine). Event
// streams are bounded per event by the SDK (16 MiB, its default).
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
