// Package e2e drives the built clawd binary with real MCP clients: the
// official go-sdk client (a client we did not write) and raw NDJSON where a
// test must see exact bytes or error codes the go-sdk client rewrites.
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawde/clawd/test/clawdtest"
)

// clawdBin is the binary under test, built once by TestMain.
var clawdBin string

func TestMain(m *testing.M) { os.Exit(clawdtest.Main(m, &clawdBin)) }

// env is clawdtest's isolated world plus an outside directory and a
// same-prefix sibling of the workspace that must never be touched.
type env struct {
	*clawdtest.Env
	outside string
	evil    string // <ws>_evil: shares the workspace's prefix
	// server is the clawd process the last dial started (the stdio child
	// or the daemon), for tests that signal it.
	server *os.Process
}

// reload makes the clawd serving e re-read its config now (SIGHUP), so a
// test does not depend on the one-second file poll noticing a change.
func (e *env) reload() {
	e.T.Helper()
	if e.server == nil {
		e.T.Fatal("reload: no clawd process started by a dial")
	}
	if err := e.server.Signal(syscall.SIGHUP); err != nil {
		e.T.Fatalf("SIGHUP to clawd: %v", err)
	}
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{Env: clawdtest.NewEnv(t, clawdBin)}
	e.outside = filepath.Join(e.Base, "outside")
	e.evil = filepath.Join(e.Base, "ws_evil")
	for _, d := range []string{e.outside, e.evil} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for p, content := range map[string]string{filepath.Join(e.outside, "secret.txt"): "TOP SECRET\n", filepath.Join(e.evil, "evil.txt"): "evil\n"} {
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// snapshot records every file under the outside and sibling directories
// (name, size, mode, mtime, content) so a test can prove nothing changed.
func (e *env) snapshot() map[string]string {
	e.T.Helper()
	snap := map[string]string{}
	for _, root := range []string{e.outside, e.evil} {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := os.Lstat(p)
			if err != nil {
				return err
			}
			content := ""
			if fi.Mode().IsRegular() {
				b, _ := os.ReadFile(p)
				content = string(b)
			}
			snap[p] = fmt.Sprintf("%v %d %d %q", fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), content)
			return nil
		})
	}
	return snap
}

func (e *env) assertUnchanged(before map[string]string) {
	e.T.Helper()
	after := e.snapshot()
	for p, v := range before {
		if after[p] != v {
			e.T.Errorf("outside the workspace %s changed: %s -> %s", p, v, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			e.T.Errorf("outside the workspace %s was created", p)
		}
	}
}

// era is a protocol revision the go-sdk client is made to speak. The
// default client (no pin) probes server/discover first and must end up on
// 2026-07-28; pinned to 2025-11-25 it must do the legacy initialize
// handshake. Every connection asserts what was negotiated, so a clawd that
// silently falls back to the legacy protocol fails every table test.
type era struct {
	pin  string // ClientSessionOptions.ProtocolVersion ("" is the client's default)
	want string // the protocol version the session must end up with
}

var eras = []era{{pin: "", want: "2026-07-28"}, {pin: "2025-11-25", want: "2025-11-25"}}

// dial is how one test connects: the era, the client's options (nil for
// the defaults) and, if set, a recorder of the wire.
type dial struct {
	era  era
	opts *mcp.ClientOptions
	wire *clawdtest.Wire
}

// kind is a way a client reaches clawd; its dial starts what it needs.
type kind struct {
	name string
	dial func(t *testing.T, e *env, d dial) *mcp.ClientSession
}

// kinds are stdio here; daemon_test.go adds the unix socket and HTTP.
var kinds = []kind{{name: "stdio", dial: dialStdio}}

// transport is one (kind x era) cell of the table tests.
type transport struct {
	name string // "stdio/2026-07-28"
	kind string
	era  era
	dial func(t *testing.T, e *env, d dial) *mcp.ClientSession
}

// connect dials with the client's default options.
func (tr transport) connect(t *testing.T, e *env) *mcp.ClientSession {
	t.Helper()
	return tr.dial(t, e, dial{era: tr.era})
}

// transports are every kind under every era; table tests run over all.
func transports() []transport {
	var out []transport
	for _, k := range kinds {
		for _, er := range eras {
			out = append(out, transport{name: k.name + "/" + er.want, kind: k.name, era: er,
				dial: func(t *testing.T, e *env, d dial) *mcp.ClientSession {
					d.era = er
					return k.dial(t, e, d)
				}})
		}
	}
	return out
}

// dialStdio spawns `clawd serve` with the go-sdk's CommandTransport.
func dialStdio(t *testing.T, e *env, d dial) *mcp.ClientSession {
	t.Helper()
	cmd := e.Command("serve", "--client", "cc")
	cs := sdkConnect(t, &mcp.CommandTransport{Command: cmd}, d)
	e.server = cmd.Process
	return cs
}

// sdkConnect connects the go-sdk client over tr (through d.wire when set)
// and fails the test unless the session negotiated d.era.want.
func sdkConnect(t *testing.T, tr mcp.Transport, d dial) *mcp.ClientSession {
	t.Helper()
	if d.wire != nil {
		if _, isHTTP := tr.(*mcp.StreamableClientTransport); !isHTTP {
			tr = d.wire.Stream(tr)
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "e2e"}, d.opts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: d.era.pin})
	if err != nil {
		t.Fatalf("go-sdk client connect (protocol %q): %v", d.era.want, err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != d.era.want {
		t.Fatalf("the go-sdk client negotiated protocol %q, want %q", got, d.era.want)
	}
	return cs
}
