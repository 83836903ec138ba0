package upstream

import "github.com/clawde/clawd/internal/support/safetext"

// Approval is the state of a tool's current definition.
type Approval string

const (
	// ApprovalApproved: the user approved exactly this definition (or an
	// identical one before the tool was removed and came back).
	ApprovalApproved Approval = "approved"
	// ApprovalNew: no definition of this tool was ever approved.
	ApprovalNew Approval = "new"
	// ApprovalChanged: an earlier definition was approved; this one
	// differs from it (`clawd mcp diff` shows how).
	ApprovalChanged Approval = "changed"
	// ApprovalInvalid: the definition cannot be pinned (ToolInfo.Note
	// says why); the tool is never offered.
	ApprovalInvalid Approval = "invalid"
)

// approvals asks Options.CheckTools about the tools of server and returns
// each one's state. Without CheckTools every pinnable tool is approved;
// when CheckTools fails, none is (fail closed) and the error is logged.
func (m *Manager) approvals(server string, ts []upstreamTool, names map[toolKey]exposedName) map[string]Approval {
	out := make(map[string]Approval, len(ts))
	defs := make([]ToolDefinition, 0, len(ts))
	for _, t := range ts {
		if t.DefErr != "" {
			out[t.Name] = ApprovalInvalid
			continue
		}
		d := t.Def
		d.Exposed = names[toolKey{server, t.Name}].name
		defs = append(defs, d)
		out[t.Name] = ApprovalApproved
	}
	if m.opts.CheckTools == nil {
		return out
	}
	got, err := m.opts.CheckTools(server, defs)
	if err != nil {
		m.opts.Logger.Warn("upstream: the approved tool definitions could not be read; the server's tools are withheld", "server", server, "err", err)
	}
	for _, d := range defs {
		a := got[d.Tool]
		if err != nil || a == "" {
			a = ApprovalNew
		}
		out[d.Tool] = a
	}
	return out
}

// setApprovals records the states toolsChanged found, for status().
func (s *server) setApprovals(a map[string]Approval) {
	s.mu.Lock()
	s.approval = a
	s.mu.Unlock()
}

// approvalOfLocked is the tool's state as last evaluated (ApprovalNew
// before that). s.mu is held.
func (s *server) approvalOfLocked(name string) Approval {
	if a, ok := s.approval[name]; ok {
		return a
	}
	return ApprovalNew
}

// DefinitionUnapproved implements chain.Unapproved: a tool whose current
// definition is not approved is refused before anything reaches the
// upstream, and hidden from tools/list.
func (t *upTool) DefinitionUnapproved() (server string, changed, unapproved bool) {
	return t.p.name, t.approval == ApprovalChanged, t.approval != ApprovalApproved
}

// displayName is an upstream's tool name as it may be shown on one line.
func displayName(name string) string { return safetext.Line(name) }

// offeredTools is offered() and whether the tools are hidden (then the
// list is empty and says nothing about which tools exist).
func (s *server) offeredTools() ([]upstreamTool, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hidden {
		return nil, true
	}
	return s.tools, false
}

// sessionFor is current() for a call of tool name approved under
// definition def (its SHA-256; "" checks nothing): listed reports whether
// the server's list has name with exactly that definition, read under the
// same lock as the session, since a reconnect installs a new list and its
// session together. A call made between a new listing and the
// re-evaluation of approvals (or a replacement of the server) is refused
// rather than sent under the approval of an older definition.
func (s *server) sessionFor(name, def string) (sess *session, swapped chan struct{}, why string, listed bool) {
	s.mu.Lock()
	if def == "" {
		listed = true
	} else if sum, ok := s.toolDefs[name]; ok && sum == def {
		listed = true
	}
	sess, swapped, why = s.currentLocked()
	s.mu.Unlock()
	return sess, swapped, why, listed
}
