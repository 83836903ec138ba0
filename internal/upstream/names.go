package upstream

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Exposed names. An upstream tool is offered as {server}__{tool}. Clients
// accept only ^[A-Za-z0-9_-]{1,64}$ (Claude Code, Cursor, VS Code,
// OpenAI-style APIs), and two servers, or a server and a built-in tool,
// can produce the same name, also when names differ only in case (some
// clients fold case) or by look-alike characters. The rules, applied to
// all servers' tools at once so the result does not depend on the order
// they connected in:
//
//   - The plain name is used when it is valid, within the limit and not
//     taken (compared without case) by a built-in tool or by a tool earlier
//     in (server, tool) byte order.
//   - Otherwise the tool gets a hashed name: the server and tool names with
//     every character outside [A-Za-z0-9_-] replaced by '_', cut to fit,
//     plus '_' and 8 hex digits of SHA-256(server NUL tool). The hash is of
//     the original names, so it is stable across restarts and differs for
//     look-alikes; ToolInfo.Note says why the tool was renamed.
//   - In the (practically impossible) case that a hashed name is taken
//     too, "_2", "_3"... is appended.
//
// A call is routed by the provider's table from exposed name to the
// upstream's original name, never by splitting the exposed name.

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

type toolKey struct{ server, tool string }

type exposedName struct {
	name, note string
}

// assignNames computes the exposed name of every (server, tool). builtin
// are the names already served by other providers (they always keep them).
func assignNames(builtin []string, tools []toolKey, limit int) map[toolKey]exposedName {
	taken := map[string]string{} // lower-case name -> who has it
	for _, b := range builtin {
		taken[strings.ToLower(b)] = "built-in tool " + b
	}
	sorted := append([]toolKey(nil), tools...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].server != sorted[j].server {
			return sorted[i].server < sorted[j].server
		}
		return sorted[i].tool < sorted[j].tool
	})
	out := make(map[toolKey]exposedName, len(sorted))
	for _, k := range sorted {
		if _, dup := out[k]; dup {
			continue
		}
		plain := k.server + "__" + k.tool
		var note string
		switch {
		case len(plain) > limit:
			note = fmt.Sprintf("renamed: %s is longer than %d characters", plain, limit)
		case !validName.MatchString(plain):
			note = fmt.Sprintf("renamed: %q has characters outside [A-Za-z0-9_-]", plain)
		default:
			if who, ok := taken[strings.ToLower(plain)]; ok {
				note = fmt.Sprintf("renamed: %s collides (ignoring case) with %s", plain, who)
			}
		}
		name := plain
		if note != "" {
			name = hashedName(k, limit)
			for i := 2; ; i++ {
				if _, ok := taken[strings.ToLower(name)]; !ok {
					break
				}
				sfx := fmt.Sprintf("_%d", i)
				base := hashedName(k, limit-len(sfx))
				name = base + sfx
			}
		}
		taken[strings.ToLower(name)] = fmt.Sprintf("%s of server %s", k.tool, k.server)
		out[k] = exposedName{name: name, note: note}
	}
	return out
}

// hashedName: sanitized server__tool cut to fit limit with an 8-hex-digit
// hash of the original names.
func hashedName(k toolKey, limit int) string {
	sum := sha256.Sum256([]byte(k.server + "\x00" + k.tool))
	sfx := "_" + hex.EncodeToString(sum[:4])
	base := sanitize(k.server) + "__" + sanitize(k.tool)
	room := limit - len(sfx)
	if room < 1 {
		// A limit too small for any prefix: the hash alone (cut if need be).
		return strings.TrimPrefix(sfx, "_")[:min(8, max(limit, 1))]
	}
	if len(base) > room {
		base = base[:room]
	}
	return base + sfx
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}
