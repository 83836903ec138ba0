package runstate

import (
	"fmt"
	"strings"
)

// FindHTTP locates the workspace's daemon on loopback HTTP only, for
// commands that use its REST API (`clawd mcp refresh`, `mcp logs`): the
// same state-file, pid and loopback checks as Find, so the token goes
// only to the daemon the state file names. When only a unix-socket daemon
// runs, the error says so.
func FindHTTP(w *Workspace, o Options) (*Target, error) {
	t, err := findTCP(w, o)
	if err == nil {
		return t, nil
	}
	if st := w.StateFile(Unix); st != nil {
		return nil, fmt.Errorf("%w on loopback HTTP for workspace %s (%s); its daemon (pid %d) serves only the unix socket %s, which has no REST API: run the daemon with `clawd serve --transport tcp_loopback --workspace %s`",
			ErrNoDaemon, w.Dir, shortMsg(err), st.PID, st.Socket, w.Dir)
	}
	return nil, fmt.Errorf("%w for workspace %s: %s; start one with `clawd serve --transport tcp_loopback --workspace %s`",
		ErrNoDaemon, w.Dir, shortMsg(err), w.Dir)
}

func shortMsg(err error) string { return strings.TrimSpace(err.Error()) }
