// Package secrets is the one place that decides which of clawd's
// environment variables never reach a child process, and how a secret is
// masked before it is shown (audit summaries, doctor output, later the
// configuration of upstream servers).
//
// Two maskers exist because they answer two different questions:
//
//   - MaskText looks for secrets inside free text (a command line, a URL)
//     by pattern and replaces each one it finds with "***", entirely: a
//     pattern's match boundaries are a guess, so keeping "the first and
//     last characters" of a guessed match could keep part of the secret.
//     It is best effort; see its doc for what it recognises.
//   - MaskValue masks a value that is known to be a secret (a token, an
//     API key from a config entry) so a person can still tell two of them
//     apart: "sk-****wxyz". Short values are masked entirely.
//
// The package is a leaf: it imports nothing of clawd's.
package secrets

import (
	"strings"
	"unicode/utf8"
)

// IsClawdVar reports whether an environment variable is clawd's own:
// its name starts with CLAWDE_ or CLAWD_, in any case. These carry the
// session secret, tokens, socket paths and clawd's internal plumbing
// (CLAWD_INTERNAL_ENV_FD); none of them is for a child process, and clawd
// serve moves them out of the kernel's copy of its environment
// (daemon.HideEnvSecrets). Names that merely contain CLAWD (MY_CLAWD_NOTE,
// CLAWDEX_X) are not clawd's.
func IsClawdVar(name string) bool {
	return hasPrefixFold(name, "CLAWDE_") || hasPrefixFold(name, "CLAWD_")
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// ScrubEnv returns env (KEY=value entries, as os.Environ gives them)
// without clawd's own variables (IsClawdVar) and without the variables
// named in drop (exact names, as the OS compares them on unix), in their
// original order. An entry without "=" is judged by its whole text.
//
// Limit: it scrubs by name only. A secret the user exported under another
// name (AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN) is the user's environment and
// reaches the child, as it would reach any program the user starts.
func ScrubEnv(env []string, drop ...string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if IsClawdVar(name) || contains(drop, name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Masked is what a masked secret (or the hidden middle of one) is
// replaced by in MaskValue.
const Masked = "****"

// maskValueMin is the shortest value (in characters) of which MaskValue
// shows anything: it shows 7 characters (3 + 4), so at least 13 stay
// hidden. A shorter value could be guessed from what would be shown.
const maskValueMin = 20

// MaskValue masks a value known to be a secret: the first 3 and the last
// 4 characters around "****" ("sk-proj-abcdefghijklmnopwxyz" gives
// "sk-****wxyz") when the value has at least 20 characters, else "****"
// alone, so a short password is never partly shown. The empty string
// stays empty (nothing is set). Characters are runes; invalid UTF-8 counts
// byte by byte and is shown as U+FFFD.
func MaskValue(v string) string {
	if v == "" {
		return ""
	}
	if utf8.RuneCountInString(v) < maskValueMin {
		return Masked
	}
	r := []rune(v)
	return string(r[:3]) + Masked + string(r[len(r)-4:])
}
