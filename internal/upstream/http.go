package upstream

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// originClient is the HTTP client of one http/sse upstream. It sends the
// configured headers, and only to the configured origin (scheme, host and
// port): every request to another origin is refused before it leaves,
// redirects included. That keeps a legacy SSE server's `endpoint` event
// from sending clawd (and the Authorization header) elsewhere, and a
// redirect from carrying the headers to a third party. The dial is bounded
// by connectTimeout; requests are bounded by the caller's context.
func originClient(rawURL string, headers map[string]string, connectTimeout time.Duration) (*http.Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("url %q is not an absolute URL", rawURL)
	}
	origin := originOf(u)
	base := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   connectTimeout,
		ResponseHeaderTimeout: 0, // SSE streams; the request context bounds calls
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
	}
	rt := &originTransport{origin: origin, headers: headers, base: base}
	return &http.Client{
		Transport: rt,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if originOf(req.URL) != origin {
				return fmt.Errorf("%w: redirect to %s", errOtherOrigin, originOf(req.URL))
			}
			if len(via) >= 5 {
				return errors.New("stopped after 5 redirects")
			}
			return nil
		},
	}, nil
}

var errOtherOrigin = errors.New("refused: the upstream pointed clawd at another origin than the configured one")

func originOf(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(host, port)
}

type originTransport struct {
	origin  string
	headers map[string]string
	base    http.RoundTripper
}

func (t *originTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if originOf(req.URL) != t.origin {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("%w: %s", errOtherOrigin, originOf(req.URL))
	}
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			if req.Header.Get(k) == "" { // never override what the SDK sets (session id, protocol version)
				req.Header.Set(k, v)
			}
		}
	}
	return t.base.RoundTrip(req)
}
