// Package e2e drives the built clawd binary with real MCP clients: the
// official go-sdk client (a client we did not write) and raw NDJSON where a
// test must see exact bytes or error codes the go-sdk client rewrites.
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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

// transport connects a go-sdk client session to a clawd serving e.
type transport struct {
	name    string
	connect func(t *testing.T, e *env) *mcp.ClientSession
}

// transports are the ways a client reaches clawd; table tests run over all.
var transports = []transport{
	{name: "stdio", connect: connectStdio},
}

// connectStdio spawns `clawd serve` with the go-sdk's CommandTransport and
// connects with the client's default options (it first probes
// server/discover of protocol 2026-07-28, then falls back to initialize).
func connectStdio(t *testing.T, e *env) *mcp.ClientSession {
	t.Helper()
	return sdkConnect(t, &mcp.CommandTransport{Command: e.Command("serve", "--client", "cc")})
}

func sdkConnect(t *testing.T, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "e2e"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("go-sdk client connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
