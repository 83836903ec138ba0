package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/clawde/clawd/internal/runstate"
)

// The CLI's HTTP clients (MCP and the REST API) present the workspace
// token, read the token file again once when the daemon refuses it (the
// daemon rotated it), and do not loop when the file has nothing newer.
func TestBearerRereadsARotatedToken(t *testing.T) {
	var current atomic.Value
	current.Store("new-token")
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Header.Get("Authorization") != "Bearer "+current.Load().(string) {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("old-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	target := &runstate.Target{Addr: strings.TrimPrefix(srv.URL, "http://"), TokenFile: file}
	api, err := DialREST(target)
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()

	// The daemon rotated the token; the file has the new one.
	if err := os.WriteFile(file, []byte("new-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := api.Do(context.Background(), http.MethodGet, "/api/v1/mcp/servers", nil); err != nil {
		t.Fatalf("after rotation: %v", err)
	}
	if n := requests.Load(); n != 2 {
		t.Errorf("%d requests, want 2 (refused, then retried with the file's token)", n)
	}

	// A token the file cannot fix: one request, the refusal returned.
	current.Store("someone-elses")
	requests.Store(0)
	_, err = api.Do(context.Background(), http.MethodGet, "/api/v1/mcp/servers", nil)
	if err == nil || requests.Load() != 1 {
		t.Errorf("unfixable refusal: err %v after %d requests, want an error after 1", err, requests.Load())
	}
}
