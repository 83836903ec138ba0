package hostadapter

import (
	"os"
	"path/filepath"
	"strings"
)

// XDGConfigHome is $XDG_CONFIG_HOME when it is an absolute path (the XDG
// rule), else home's .config, on every OS: where XDG-following clients
// such as OpenCode keep their config.
func XDGConfigHome(home string) string {
	if v := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(v) {
		return v
	}
	return filepath.Join(home, ".config")
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// ClaudeConfigDir is $CLAUDE_CONFIG_DIR when it is an absolute path: the
// directory Claude Code then reads .claude.json and its user settings from.
func ClaudeConfigDir() string {
	if v := os.Getenv("CLAUDE_CONFIG_DIR"); filepath.IsAbs(v) {
		return filepath.Clean(v)
	}
	return ""
}

// shellJoin quotes words for a POSIX shell command line (headersHelper
// and hook commands are run by a shell).
func shellJoin(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
			q[i] = w
			continue
		}
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
