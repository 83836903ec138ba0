package hostadapter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/clawde/clawd/internal/support/safetext"
)

// Claude Code connects to a project's .mcp.json servers only once the user
// approved them; running `clawd install claude-code` in the project is that
// approval, recorded where Claude Code keeps it for one user and one
// checkout: "enabledMcpjsonServers" in .claude/settings.local.json (a file
// Claude Code keeps out of git). Claude Code honours it only in a folder
// whose trust dialog the user accepted, which clawd does not touch.

func approvalFile(o Options) string {
	return filepath.Join(o.Workspace, ".claude", "settings.local.json")
}

func isClawdString(std []byte) bool {
	var s string
	return json.Unmarshal(std, &s) == nil && s == ServerName
}

func addApproval(src []byte) ([]byte, error) {
	i, arr, err := findElement(src, nil, "enabledMcpjsonServers", isClawdString)
	switch {
	case err != nil:
		return nil, err
	case i >= 0:
		return src, nil
	case arr == nil:
		return SetMember(src, nil, "enabledMcpjsonServers", []byte(`["`+ServerName+`"]`))
	}
	return appendElement(src, arr, []byte(`"`+ServerName+`"`)), nil
}

// PlanApprove records the approval of clawd's project entry.
func PlanApprove(o Options) (Change, error) {
	f := approvalFile(o)
	if err := confined(f, o.Workspace); err != nil {
		return Change{}, err
	}
	before, err := readFile(f)
	if err != nil {
		return Change{}, err
	}
	after, err := addApproval(before)
	if err != nil {
		return Change{}, fmt.Errorf("%s: %v; fix the file, then run install again", safetext.ShellWord(f), err)
	}
	return Change{File: f, Before: before, After: after, Root: o.Workspace}, nil
}

// PlanUnapprove takes the approval out again, restoring the original bytes
// when nothing else changed.
func PlanUnapprove(o Options) (c Change, err error) {
	f := approvalFile(o)
	if err := confined(f, o.Workspace); err != nil {
		return Change{}, err
	}
	defer func() { c.Root = o.Workspace }()
	cur, err := readFile(f)
	if err != nil {
		return Change{}, err
	}
	i, arr, err := findElement(cur, nil, "enabledMcpjsonServers", isClawdString)
	if err != nil {
		return Change{}, fmt.Errorf("%s: %v; remove %q from enabledMcpjsonServers by hand", safetext.ShellWord(f), err, ServerName)
	}
	if i < 0 {
		return Change{File: f, Before: cur, After: cur}, nil
	}
	// A backup path that cannot be read (a directory) holds no original:
	// only the approval goes.
	backup, berr := readFile(f + BackupSuffix)
	if redo, err := addApproval(backup); berr == nil && err == nil && bytes.Equal(redo, cur) {
		if backup == nil {
			return Change{File: f, Before: cur, After: nil, Note: "removed the file clawd created"}, nil
		}
		return Change{File: f, Before: cur, After: backup, Restore: true, Note: "restored the original bytes"}, nil
	}
	return Change{File: f, Before: cur, After: removeElementAt(cur, arr, i), NoBackup: true, Note: "removed the approval; the rest stays"}, nil
}
