package clawdtest

import (
	"context"
	"io"
	"net/http"
	"strings"
)

// REST sends one request to the daemon's REST API (or any path) with the
// bearer token, a JSON body when body is not "", and exactly the extra
// headers given: "Authorization" set to "" sends none, "Host" replaces
// the request's Host. It fails the test if the exchange fails or takes
// over HTTPTimeout.
func (s *HTTP) REST(method, path, body string, header map[string]string) Reply {
	s.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, s.Base+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		switch {
		case k == "Host":
			req.Host = v
		case v == "":
			req.Header.Del(k)
		default:
			req.Header.Set(k, v)
		}
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatalf("reading the response: %v", err)
	}
	return Reply{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
}
