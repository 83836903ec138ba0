package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Paths are the files and directories clawd uses, all derived from HOME and
// the XDG base-directory variables.
type Paths struct {
	ConfigFile string // $XDG_CONFIG_HOME/clawde/mcp-server.toml
	DataDir    string // $XDG_DATA_HOME/clawde
	DBFile     string // <DataDir>/clawd.db
	SecretFile string // <DataDir>/session.secret
	RuntimeDir string // $XDG_RUNTIME_DIR, else <temp dir>/clawd-<uid>
	Home       string
	// RuntimeShared is true when RuntimeDir is the fallback under the
	// shared temp directory: clawd creates it (0700) and checks that it is
	// this user's own before it puts or looks for a socket there.
	RuntimeShared bool
}

// DefaultPaths derives the paths from the environment.
func DefaultPaths() (Paths, error) {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return Paths{}, errors.New("cannot find the home directory: set HOME")
	}
	if !filepath.IsAbs(home) {
		// Relative, clawd's database, secret and token files would be
		// made under whichever directory a command runs in (a workspace),
		// a different one for each command.
		return Paths{}, fmt.Errorf("the home directory %q is not an absolute path: set HOME to yours", home)
	}
	cfgHome := xdg("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	dataHome := xdg("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	data := filepath.Join(dataHome, "clawde")
	rt, shared := xdg("XDG_RUNTIME_DIR", ""), false
	if rt == "" {
		rt, shared = fallbackRuntimeDir(), true
	}
	return Paths{
		ConfigFile: filepath.Join(cfgHome, "clawde", "mcp-server.toml"),
		DataDir:    data,
		DBFile:     filepath.Join(data, "clawd.db"),
		SecretFile: filepath.Join(data, "session.secret"),
		RuntimeDir: rt,
		Home:       home,

		RuntimeShared: shared,
	}, nil
}

// xdg returns the variable's value if it is an absolute path (the XDG spec
// says relative values are invalid and must be ignored), else def.
func xdg(name, def string) string {
	if v := os.Getenv(name); v != "" && filepath.IsAbs(v) {
		return v
	}
	return def
}

// WorkspaceID is "<basename>-<first 8 hex of sha256(canonical root)>",
// lowercased, with every character outside [a-z0-9-] replaced by '-'.
func WorkspaceID(canonicalRoot string) string {
	sum := sha256.Sum256([]byte(canonicalRoot))
	base := strings.ToLower(filepath.Base(canonicalRoot))
	var b strings.Builder
	for _, r := range base {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if name == "" {
		name = "root"
	}
	return name + "-" + hex.EncodeToString(sum[:4])
}

// SocketPath is the default unix socket of a workspace.
func (p Paths) SocketPath(wsID string) string {
	return filepath.Join(p.RuntimeDir, "clawd."+wsID+".sock")
}

// TokenPath is the default workspace token file.
func (p Paths) TokenPath(wsID string) string {
	return filepath.Join(p.Home, ".claude", "hooks", ".clawde-token-"+wsID)
}

// ExpandHome replaces a leading "~/" with the home directory.
func (p Paths) ExpandHome(s string) string {
	if s == "~" {
		return p.Home
	}
	if strings.HasPrefix(s, "~/") {
		return filepath.Join(p.Home, s[2:])
	}
	return s
}

// fallbackRuntimeDir is the per-user directory for sockets and locks when
// XDG_RUNTIME_DIR is unset: one directory per uid, so that two users of a
// machine cannot take each other's socket names (a shared /tmp let one
// user's stale lock block another's daemon).
//
// The parent is $TMPDIR (tests point it elsewhere), but /tmp when $TMPDIR
// is long: macOS's per-user TMPDIR (/var/folders/xx/<26 chars>/T/, 49
// bytes) would leave too little of the 104-byte socket path for
// "clawd-<uid>/clawd.<workspace>.sock".
func fallbackRuntimeDir() string {
	base := os.TempDir()
	uid := os.Getuid()
	if uid < 0 {
		return filepath.Join(base, "clawd") // Windows: the temp dir is per user
	}
	if len(base) > maxRuntimeParent {
		base = "/tmp"
	}
	return filepath.Join(base, "clawd-"+strconv.Itoa(uid))
}

// maxRuntimeParent is the longest $TMPDIR used for the fallback runtime
// directory.
const maxRuntimeParent = 40

// EnsureRuntimeDir creates the fallback runtime directory (0700) when
// RuntimeDir is it, and checks it is this user's own: a directory another
// user created first would let them replace our socket with theirs and
// read what clients send. XDG_RUNTIME_DIR is the system's, used as is.
func (p Paths) EnsureRuntimeDir() error {
	if !p.RuntimeShared {
		return nil
	}
	if err := os.Mkdir(p.RuntimeDir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("creating the runtime directory %s: %w", p.RuntimeDir, err)
	}
	return checkOwnDir(p.RuntimeDir, true)
}

// CheckRuntimeDir is EnsureRuntimeDir for readers: it creates nothing and
// refuses a fallback directory that is not this user's own.
func (p Paths) CheckRuntimeDir() error {
	if !p.RuntimeShared {
		return nil
	}
	return checkOwnDir(p.RuntimeDir, false)
}
