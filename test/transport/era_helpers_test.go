//go:build linux || darwin

package transport_e2e

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/clawde/clawd/test/clawdtest"
)

// The raw-wire tests of the stateless revision are written from the
// revision's own text (its basic/index, versioning, server/discover,
// transports/stdio and streamable-http, patterns/subscriptions and
// cancellation pages and its schema.ts), not from clawd's code.

const v26 = "2026-07-28"

// meta26 is the _meta every 2026-07-28 request carries: the version claim,
// the client's capabilities (both required) and its identity (optional).
func meta26() map[string]any {
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    v26,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw-wire", "version": "1"},
	}
}

// params26 is params plus meta26 (params may be nil).
func params26(params map[string]any) map[string]any {
	out := map[string]any{"_meta": meta26()}
	for k, v := range params {
		out[k] = v
	}
	return out
}

// body26 is a 2026-07-28 request as one JSON text.
func body26(id any, method string, params map[string]any) string {
	return mustJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params26(params)})
}

func mustJSON(v any) string {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		panic(err)
	}
	return string(b)
}

// object decodes a JSON object (a result, error data, a whole message),
// failing the test if it is not one.
func object(t *testing.T, raw string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatalf("not a JSON object: %.400s: %v", raw, err)
	}
	return m
}

// result is the result object of a response line, failing the test on an
// error response.
func result(t *testing.T, r clawdtest.Response) map[string]any {
	t.Helper()
	m := object(t, r.Raw)
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("want a result, got %s", r.Raw)
	}
	return res
}

// checkDiscover checks a DiscoverResult against the schema: resultType,
// supportedVersions with 2026-07-28, capabilities with tools, ttlMs and
// cacheScope (DiscoverResult extends CacheableResult), and serverInfo in
// _meta (a SHOULD clawd follows).
func checkDiscover(t *testing.T, res map[string]any) {
	t.Helper()
	if res["resultType"] != "complete" {
		t.Errorf("discover resultType %v, want complete", res["resultType"])
	}
	vs, _ := res["supportedVersions"].([]any)
	if !slices.Contains(vs, any(v26)) {
		t.Errorf("supportedVersions %v lacks %s", res["supportedVersions"], v26)
	}
	caps, _ := res["capabilities"].(map[string]any)
	if _, ok := caps["tools"]; !ok {
		t.Errorf("capabilities %v lack tools", res["capabilities"])
	}
	checkCacheable(t, "server/discover", res)
	meta, _ := res["_meta"].(map[string]any)
	si, _ := meta["io.modelcontextprotocol/serverInfo"].(map[string]any)
	if name, _ := si["name"].(string); name == "" {
		t.Errorf("no serverInfo with a name in the result _meta: %v", res["_meta"])
	}
}

// checkCacheable: ttlMs a non-negative integer and cacheScope public or
// private (CacheableResult).
func checkCacheable(t *testing.T, what string, res map[string]any) {
	t.Helper()
	ttl, ok := res["ttlMs"].(float64)
	if !ok || ttl < 0 || ttl != float64(int64(ttl)) {
		t.Errorf("%s ttlMs %v, want a non-negative integer", what, res["ttlMs"])
	}
	if s := res["cacheScope"]; s != "public" && s != "private" {
		t.Errorf("%s cacheScope %v, want public or private", what, s)
	}
}

// errOf is the error of a response line: code, data (nil if none) and
// the id; it fails the test on a result.
func errOf(t *testing.T, raw string) (code int, data map[string]any, id any) {
	t.Helper()
	m := object(t, raw)
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("want an error, got %.400s", raw)
	}
	c, _ := e["code"].(float64)
	data, _ = e["data"].(map[string]any)
	return int(c), data, m["id"]
}

// checkUnsupported: -32022 whose data lists the supported versions
// (2026-07-28 among them) and echoes the requested one.
func checkUnsupported(t *testing.T, raw, requested string) {
	t.Helper()
	code, data, _ := errOf(t, raw)
	vs, _ := data["supported"].([]any)
	if code != -32022 || !slices.Contains(vs, any(v26)) || data["requested"] != requested {
		t.Errorf("unsupported version %q: %s, want -32022 with data.supported (with %s) and data.requested", requested, raw, v26)
	}
}

// metaOf is params._meta[key] of a message, as JSON text ("" if absent).
func metaOf(t *testing.T, raw, key string) string {
	t.Helper()
	params, _ := object(t, raw)["params"].(map[string]any)
	meta, _ := params["_meta"].(map[string]any)
	v, ok := meta[key]
	if !ok {
		return ""
	}
	return mustJSON(v)
}

// bashPIDs is a bash command that records its shell's pid and a
// background child's in the workspace, then waits a long time.
const bashPIDs = `echo $$ > sh.pid; sleep 300 & echo $! > child.pid; wait`

// readPIDs waits for the pid files bashPIDs writes.
func readPIDs(t *testing.T, ws string) (sh, child int) {
	t.Helper()
	read := func(name string) int {
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			if b, err := os.ReadFile(ws + "/" + name); err == nil && strings.HasSuffix(string(b), "\n") {
				if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
					return n
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("bash did not write %s", name)
		return 0
	}
	return read("sh.pid"), read("child.pid")
}

// waitDead fails the test unless every pid is gone within 10 s.
func waitDead(t *testing.T, what string, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		alive := false
		for _, p := range pids {
			alive = alive || pidAlive(p)
		}
		if !alive {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("%s: processes %v still alive 10 s later; the call was not cancelled", what, pids)
}

// toolNames26 is the tool names of a 2026-07-28 tools/list result.
func toolNames26(t *testing.T, res map[string]any) []string {
	t.Helper()
	tools, _ := res["tools"].([]any)
	var names []string
	for _, tl := range tools {
		m, _ := tl.(map[string]any)
		names = append(names, fmt.Sprint(m["name"]))
	}
	return names
}
