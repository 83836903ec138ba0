// Package runstate says where a daemon runs and whether it answers. It
// records where a running daemon can be reached: one small JSON file per
// workspace and transport under the data directory, written by `clawd
// serve` and read by the CLI (`clawd tools`, `call`, `health`, `token
// rotate`). The state file holds no secret: the token stays in the token
// file. It also resolves a workspace as `clawd serve` does
// (ResolveWorkspace), finds its daemon (Find), and probes GET /health
// (ProbeHealth), which both the daemon (is an old state file's daemon still
// alive?) and the CLI use.
package runstate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/support/fileutil"
)

// Transport names used in state file names.
const (
	TCP  = "tcp"
	Unix = "unix"
)

// State describes one running daemon.
type State struct {
	PID         int       `json:"pid"`
	Transport   string    `json:"transport"`       // "tcp" or "unix"
	Addr        string    `json:"addr,omitzero"`   // host:port (tcp)
	Socket      string    `json:"socket,omitzero"` // socket path (unix)
	TokenFile   string    `json:"token_file,omitzero"`
	Workspace   string    `json:"workspace"`
	WorkspaceID string    `json:"workspace_id"`
	Started     time.Time `json:"started"`
	Version     string    `json:"version"`
}

// Path is the state file of a workspace's daemon on a transport:
// <data dir>/run/<workspace id>.<tcp|unix>.json.
func Path(dataDir, wsID, transport string) string {
	return filepath.Join(dataDir, "run", wsID+"."+transport+".json")
}

// LockPath is the lock file a daemon of a workspace holds on a transport
// while it serves: <data dir>/run/<workspace id>.<tcp|unix>.lock.
func LockPath(dataDir, wsID, transport string) string {
	return filepath.Join(dataDir, "run", wsID+"."+transport+".lock")
}

// ErrLocked is Lock's error when another open file (another daemon's) holds
// the lock.
var ErrLocked = errors.New("another clawd holds the lock")

// Lock takes path's exclusive lock without waiting, creating the file (0600)
// and its directory (0700). The lock lasts until the returned file is closed
// or the process dies (a kill -9 releases it too, so no stale lock is left to
// judge). The file itself stays: removing it on release could let a daemon
// starting meanwhile lock a file that is no longer there.
func Lock(path string) (*os.File, error) {
	if err := fileutil.MkdirPrivate(filepath.Dir(path)); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the lock file %s: %w", path, err)
	}
	ok, err := fileutil.TryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if !ok {
		f.Close()
		return nil, fmt.Errorf("%w %s", ErrLocked, path)
	}
	return f, nil
}

// Write stores s at path (0600, atomically), creating the directory (0700).
func Write(path string, s *State) error {
	if err := fileutil.MkdirPrivate(filepath.Dir(path)); err != nil {
		return err
	}
	b, err := json.Marshal(s, json.Deterministic(true))
	if err != nil {
		return err
	}
	return fileutil.WriteAtomic(path, append(b, '\n'), 0o600)
}

// Read loads the state file at path; a missing file is os.ErrNotExist.
func Read(path string) (*State, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(b, &s, json.RejectUnknownMembers(false)); err != nil {
		return nil, fmt.Errorf("state file %s: %v", path, err)
	}
	if s.PID <= 0 {
		return nil, fmt.Errorf("state file %s: no pid", path)
	}
	return &s, nil
}

// RemoveIfOwn deletes the state file if it still names pid, so a daemon
// shutting down does not delete the file of one that replaced it.
func RemoveIfOwn(path string, pid int) error {
	s, err := Read(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	if s.PID != pid {
		return nil
	}
	return os.Remove(path)
}

// SocketPath is the unix socket of a workspace's daemon: override (--socket),
// else the config's socket_path (~ expanded), else the default
// $XDG_RUNTIME_DIR/clawd.<workspace>.sock, else in the per-user fallback
// directory (config.Paths.RuntimeDir).
func SocketPath(cfg *config.Config, p config.Paths, wsID, override string) string {
	if override != "" {
		return override
	}
	if cfg.SocketPath != "" {
		return p.ExpandHome(cfg.SocketPath)
	}
	return p.SocketPath(wsID)
}

// TokenPath is the workspace token file: the config's token_path (~
// expanded), else ~/.claude/hooks/.clawde-token-<workspace> (docs/transports.md).
func TokenPath(cfg *config.Config, p config.Paths, wsID string) string {
	if cfg.TokenPath != "" {
		return p.ExpandHome(cfg.TokenPath)
	}
	return p.TokenPath(wsID)
}
