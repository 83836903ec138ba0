package hostadapter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/clawde/clawd/internal/support/safetext"
)

// HookScriptName is the Claude Code SessionStart hook clawd installs.
const HookScriptName = "clawde-session-start.sh"

// hookPaths returns the hook script and the Claude Code settings file that
// registers it, in the project's .claude/ or the user's ~/.claude/
// ($CLAUDE_CONFIG_DIR when set).
func hookPaths(o Options) (script, settings string) {
	dir := filepath.Join(o.Workspace, ".claude")
	switch {
	case o.Scope == User && o.ClaudeConfigDir != "":
		dir = o.ClaudeConfigDir
	case o.Scope == User:
		dir = filepath.Join(o.Home, ".claude")
	}
	return filepath.Join(dir, "hooks", HookScriptName), filepath.Join(dir, "settings.json")
}

// hookCommand is how settings.json runs the script: through
// $CLAUDE_PROJECT_DIR in a project, so the entry holds no absolute path and
// works in every checkout; by absolute path for the user.
func hookCommand(o Options, script string) string {
	if o.Scope == User {
		return shellJoin(script)
	}
	return `"$CLAUDE_PROJECT_DIR"/.claude/hooks/` + HookScriptName
}

// HookScript is the SessionStart hook: it asks the workspace daemon for its
// health over the unix socket and, when none answers, starts one in the
// background and waits up to 5 s for it; then it exports the socket's path
// as CLAWDE_MCP_SOCKET_PATH through $CLAUDE_ENV_FILE, which Claude Code
// reads into the session's environment. It never fails the session: a
// daemon that does not come up is reported on stderr.
func HookScript(command string) []byte {
	return []byte(`#!/bin/sh
# Claude Code SessionStart hook written by 'clawd install claude-code --hook'.
# Starts the workspace's clawd daemon on its unix socket unless one answers,
# then exports CLAWDE_MCP_SOCKET_PATH to the session. 'clawd uninstall
# claude-code' removes it.
CLAWD=` + shellJoin(command) + `
ws=${CLAUDE_PROJECT_DIR:-$PWD}
socket() {
  "$CLAWD" health --workspace "$ws" 2>/dev/null | sed -n 's/^reached via: *unix socket //p'
}
sock=$(socket)
if [ -z "$sock" ]; then
  nohup "$CLAWD" serve --transport unix_socket --workspace "$ws" </dev/null >/dev/null 2>&1 &
  i=0
  while [ -z "$sock" ] && [ "$i" -lt 50 ]; do
    sleep 0.1
    sock=$(socket)
    i=$((i + 1))
  done
fi
if [ -z "$sock" ]; then
  echo "clawd: the daemon for $ws did not start; run: $CLAWD serve --transport unix_socket --workspace $ws" >&2
  exit 0
fi
if [ -n "${CLAUDE_ENV_FILE:-}" ]; then
  printf 'export CLAWDE_MCP_SOCKET_PATH=%s\n' "'$(printf '%s' "$sock" | sed "s/'/'\\\\''/g")'" >>"$CLAUDE_ENV_FILE"
fi
echo "clawd daemon on $sock"
`)
}

// hookEntry is the SessionStart element that runs the script.
func hookEntry(command string) []byte {
	b, _ := marshal(map[string]any{"hooks": []map[string]string{{"type": "command", "command": command}}})
	return b
}

var sessionStartPath = []string{"hooks"}

// PlanHookInstall returns the changes that write the hook script and
// register it in Claude Code's settings.json, next to the user's hooks.
func PlanHookInstall(o Options) ([]Change, error) {
	script, settings := hookPaths(o)
	root := ""
	if o.Scope == Project {
		root = o.Workspace
		for _, f := range []string{script, settings} {
			if err := confined(f, root); err != nil {
				return nil, err
			}
		}
	}
	before, err := readFile(script)
	if err != nil {
		return nil, err
	}
	changes := []Change{{File: script, Before: before, After: HookScript(o.Command), Mode: 0o755, NoBackup: true, Root: root}}
	sb, err := readFile(settings)
	if err != nil {
		return nil, err
	}
	after, err := addHook(sb, hookCommand(o, script))
	if err != nil {
		return nil, fmt.Errorf("%s: %v; fix the file, then run install again", safetext.ShellWord(settings), err)
	}
	return append(changes, Change{File: settings, Before: sb, After: after, Root: root}), nil
}

// addHook appends the script's SessionStart element unless it is there.
func addHook(src []byte, command string) ([]byte, error) {
	idx, arr, err := findHook(src, command)
	if err != nil {
		return nil, err
	}
	if idx >= 0 {
		return src, nil
	}
	if arr == nil {
		return SetMember(src, sessionStartPath, "SessionStart", []byte("["+string(hookEntry(command))+"]"))
	}
	return appendElement(src, arr, hookEntry(command)), nil
}

// findHook returns the SessionStart array and the index of the element
// whose command runs script (-1 when none).
func findHook(src []byte, command string) (int, *hujson.Value, error) {
	return findElement(src, sessionStartPath, "SessionStart", func(std []byte) bool {
		var h struct {
			Hooks []struct{ Command string } `json:"hooks"`
		}
		if json.Unmarshal(std, &h) == nil {
			for _, c := range h.Hooks {
				if c.Command == command {
					return true
				}
			}
		}
		return false
	})
}

// findElement returns the array that is member name of the object at path
// and the index of its first element match accepts (-1 when none).
func findElement(src []byte, path []string, name string, match func(std []byte) bool) (int, *hujson.Value, error) {
	if blank(src) {
		return -1, nil, nil
	}
	_, obj, missing, err := parseObjectAt(src, path)
	if err != nil || missing >= 0 {
		return -1, nil, err
	}
	o := obj.Value.(*hujson.Object)
	m := findMember(o, name)
	if m < 0 {
		return -1, nil, nil
	}
	arr := &o.Members[m].Value
	a, ok := arr.Value.(*hujson.Array)
	if !ok {
		return -1, nil, fmt.Errorf("%q is %s, not an array", strings.Join(append(append([]string(nil), path...), name), "."), kindName(arr.Value.Kind()))
	}
	for i, el := range a.Elements {
		std, err := hujson.Standardize(append([]byte(nil), src[el.StartOffset:el.EndOffset]...))
		if err == nil && match(std) {
			return i, arr, nil
		}
	}
	return -1, arr, nil
}

func appendElement(src []byte, arr *hujson.Value, value []byte) []byte {
	a := arr.Value.(*hujson.Array)
	unit := indentUnit(src)
	if n := len(a.Elements); n > 0 {
		last := a.Elements[n-1]
		indent := lineIndent(src, last.StartOffset)
		if !startsLine(src, last.StartOffset) {
			indent = lineIndent(src, arr.StartOffset) + unit
		}
		text := ",\n" + indent + string(render(value, indent, unit))
		out := append([]byte(nil), src[:last.EndOffset]...)
		out = append(out, eol(src, text)...)
		return append(out, src[last.EndOffset:]...)
	}
	outer := lineIndent(src, arr.StartOffset)
	text := "\n" + outer + unit + string(render(value, outer+unit, unit)) + "\n" + outer
	out := append([]byte(nil), src[:arr.StartOffset+1]...)
	out = append(out, eol(src, text)...)
	return append(out, src[arr.EndOffset-1:]...)
}

// removeHook cuts the script's element out of SessionStart.
func removeHook(src []byte, command string) ([]byte, bool, error) {
	i, arr, err := findHook(src, command)
	if err != nil || i < 0 {
		return src, false, err
	}
	return removeElementAt(src, arr, i), true, nil
}

// removeElementAt cuts element i out of arr with the comma that went with it.
func removeElementAt(src []byte, arr *hujson.Value, i int) []byte {
	a := arr.Value.(*hujson.Array)
	el := a.Elements[i]
	var from, to int
	switch {
	case i > 0:
		from, to = commaAfter(src, a.Elements[i-1].EndOffset), el.EndOffset
	case len(a.Elements) > 1:
		from, to = el.StartOffset, a.Elements[1].StartOffset
	default:
		from, to = arr.StartOffset+1, el.EndOffset
		if c := commaAfter(src, to); c < arr.EndOffset-1 && src[c] == ',' {
			to = c + 1
		}
	}
	out := append([]byte(nil), src[:from]...)
	return append(out, src[to:]...)
}

// PlanHookUninstall undoes PlanHookInstall: the settings get their original
// bytes back when nothing else changed, else lose only the hook element;
// the script goes when it is still the one clawd wrote.
func PlanHookUninstall(o Options) (changes []Change, err error) {
	script, settings := hookPaths(o)
	if o.Scope == Project {
		for _, f := range []string{script, settings} {
			if err := confined(f, o.Workspace); err != nil {
				return nil, err
			}
		}
		defer func() {
			for i := range changes {
				changes[i].Root = o.Workspace
			}
		}()
	}
	sb, err := readFile(settings)
	if err != nil {
		return nil, err
	}
	command := hookCommand(o, script)
	if idx, _, err := findHook(sb, command); err != nil {
		return nil, fmt.Errorf("%s: %v; remove the clawd hook by hand", safetext.ShellWord(settings), err)
	} else if idx >= 0 {
		// A backup path that cannot be read (a directory) holds no
		// original: only the hook goes.
		backup, berr := readFile(settings + BackupSuffix)
		redo, rerr := addHook(backup, command)
		if berr != nil {
			rerr = berr
		}
		switch {
		case backup != nil && rerr == nil && bytes.Equal(redo, sb):
			changes = append(changes, Change{File: settings, Before: sb, After: backup, Restore: true, Note: "restored the original bytes"})
		case backup == nil && rerr == nil && bytes.Equal(redo, sb):
			changes = append(changes, Change{File: settings, Before: sb, After: nil, Note: "removed the file clawd created"})
		default:
			after, _, err := removeHook(sb, command)
			if err != nil {
				return nil, err
			}
			changes = append(changes, Change{File: settings, Before: sb, After: after, NoBackup: true, Note: "removed the clawd hook; the rest stays"})
		}
	}
	cur, err := readFile(script)
	if err != nil {
		return nil, err
	}
	switch {
	case cur != nil && isClawdHookScript(cur):
		changes = append(changes, Change{File: script, Before: cur, After: nil, Note: "the hook script"})
	case cur != nil && len(changes) > 0 && strings.Contains(string(cur), "'clawd install claude-code --hook'"):
		changes[0].Note += "; " + safetext.ShellWord(script) + " was edited since install, so it stays"
	}
	return changes, nil
}

// isClawdHookScript reports whether script is HookScript for some command,
// i.e. clawd's own, unchanged but for the clawd it runs.
func isClawdHookScript(script []byte) bool {
	norm := func(b []byte) string {
		lines := strings.SplitAfter(string(b), "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "CLAWD=") {
				lines[i] = "CLAWD=\n"
				break
			}
		}
		return strings.Join(lines, "")
	}
	return norm(script) == norm(HookScript("clawd"))
}
