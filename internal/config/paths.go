package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// Paths are the files and directories clawd uses, all derived from HOME and
// the XDG base-directory variables.
type Paths struct {
	ConfigFile string // $XDG_CONFIG_HOME/clawde/mcp-server.toml
	DataDir    string // $XDG_DATA_HOME/clawde
	DBFile     string // <DataDir>/clawd.db
	SecretFile string // <DataDir>/session.secret
	RuntimeDir string // $XDG_RUNTIME_DIR, else /tmp
	Home       string
}

// DefaultPaths derives the paths from the environment.
func DefaultPaths() (Paths, error) {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return Paths{}, errors.New("cannot find the home directory: set HOME")
	}
	cfgHome := xdg("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	dataHome := xdg("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	data := filepath.Join(dataHome, "clawde")
	rt := xdg("XDG_RUNTIME_DIR", "/tmp")
	return Paths{
		ConfigFile: filepath.Join(cfgHome, "clawde", "mcp-server.toml"),
		DataDir:    data,
		DBFile:     filepath.Join(data, "clawd.db"),
		SecretFile: filepath.Join(data, "session.secret"),
		RuntimeDir: rt,
		Home:       home,
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
