package clawdtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawde/clawd/internal/config"
)

// Env is an isolated user for one test: a home directory, a workspace and
// a runtime directory under one short temporary base, and the binary
// under test. Every path clawd derives (config, data, runtime; see
// Environ) lies under Home, so nothing touches the real user's files.
//
// Layout: Base/home (Home), Base/home/run (Runtime, XDG_RUNTIME_DIR),
// Base/ws (WS). Base is short (unix socket paths are limited to about 104
// bytes) and has its symlinks resolved, so WS is the canonical workspace
// path clawd itself computes.
type Env struct {
	T       *testing.T
	Bin     string // the clawd binary
	Base    string
	Home    string
	Runtime string
	WS      string
	// Extra are added to the child environment; an entry whose name is
	// already there (PATH, XDG_RUNTIME_DIR, ...) replaces it.
	Extra []string
}

// NewEnv creates the directories (0700) and removes them when the test
// ends.
func NewEnv(t *testing.T, bin string) *Env {
	t.Helper()
	tmp, err := os.MkdirTemp("", "ce")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	base, err := filepath.EvalSymlinks(tmp)
	if err != nil {
		t.Fatal(err)
	}
	e := &Env{T: t, Bin: bin, Base: base, Home: filepath.Join(base, "home"), WS: filepath.Join(base, "ws")}
	e.Runtime = filepath.Join(e.Home, "run")
	for _, d := range []string{e.Home, e.Runtime, e.WS} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// Environ is the child environment: Environ(Home, Runtime) with Extra
// applied on top.
func (e *Env) Environ() []string {
	vars := Environ(e.Home, e.Runtime)
	for _, kv := range e.Extra {
		k, _, _ := strings.Cut(kv, "=")
		replaced := false
		for i, old := range vars {
			if ok, _, _ := strings.Cut(old, "="); ok == k {
				vars[i], replaced = kv, true
			}
		}
		if !replaced {
			vars = append(vars, kv)
		}
	}
	return vars
}

// Setenv applies the environment's home and XDG variables to this test
// process (t.Setenv restores them), for daemons assembled in process.
func (e *Env) Setenv() {
	for _, kv := range e.Environ() {
		if k, v, _ := strings.Cut(kv, "="); k != "PATH" {
			e.T.Setenv(k, v)
		}
	}
}

// DataDir, ConfigFile and DBFile are where clawd keeps its state in this
// environment.
func (e *Env) DataDir() string { return filepath.Join(e.Home, ".local", "share", "clawde") }
func (e *Env) ConfigFile() string {
	return filepath.Join(e.Home, ".config", "clawde", "mcp-server.toml")
}
func (e *Env) DBFile() string { return filepath.Join(e.DataDir(), "clawd.db") }

// WorkspaceID is the id clawd gives WS (state, socket and token file
// names, entity subjects).
func (e *Env) WorkspaceID() string { return config.WorkspaceID(e.WS) }

// Write creates a workspace file (and its parents) with content.
func (e *Env) Write(rel, content string) {
	e.T.Helper()
	p := filepath.Join(e.WS, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.T.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.T.Fatal(err)
	}
}

// WriteConfig replaces the config file (0600) by a rename, so a running
// daemon's poller sees a new file even within one mtime tick. It returns
// the file's path.
func (e *Env) WriteConfig(text string) string {
	e.T.Helper()
	p := e.ConfigFile()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		e.T.Fatal(err)
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		e.T.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		e.T.Fatal(err)
	}
	return p
}

// ReadToken is the token in a token file, without surrounding space.
func ReadToken(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("token file: %v", err)
	}
	return strings.TrimSpace(string(b))
}
