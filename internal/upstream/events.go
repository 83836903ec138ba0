package upstream

import (
	"errors"
	"fmt"
)

// Event kinds (Event.Kind), named as the audit log's upstream rows name
// them (docs/upstreams.md, "Audit").
const (
	// EventSpawn: a stdio server's process was started (Path, Args, PID).
	EventSpawn = "spawn"
	// EventConnect: a server initialized and listed its tools.
	EventConnect = "connect"
	// EventDisconnect: a connected server's session ended (Detail: why).
	EventDisconnect = "disconnect"
	// EventRefuse: a stdio server was not started because
	// Options.VerifyLaunch refused what it runs.
	EventRefuse = "refuse"
	// EventEgressRefused: an http/sse server was not connected: its origin
	// is not allowed (Options.VerifyOrigin), its URL cannot be used, or
	// the dialer refused the address its name resolved to.
	EventEgressRefused = "egress_refused"
)

// Event is something that happened to an upstream server that belongs on
// record (the daemon writes each as an audit row). Detail is one line with
// the server's secrets masked; Args are as configured (unmasked: whoever
// records them masks them).
type Event struct {
	Server    string
	Transport Transport
	Kind      string
	Detail    string
	PID       int
	Path      string
	Args      []string
	// SHA256 is, for a spawn, the hash of the executable as it was
	// executed (the descriptor hashed before the spawn; stdio.go).
	SHA256 string
}

// event hands ev to Options.OnEvent, if set.
func (m *Manager) event(ev Event) {
	if m.opts.OnEvent != nil {
		m.opts.OnEvent(ev)
	}
}

// errRefusal is a configuration error that is a consent refusal (an
// executable or origin the user has not allowed); kind is its Event kind.
// It unwraps to an *errConfig, so the server is unavailable until the
// configuration or an allowlist changes.
type errRefusal struct {
	kind string
	cfg  *errConfig
}

func (e *errRefusal) Error() string { return e.cfg.Error() }
func (e *errRefusal) Unwrap() error { return e.cfg }

func refusal(kind string, err error) error {
	return &errRefusal{kind: kind, cfg: &errConfig{err}}
}

// refusalOf returns the event kind of err if it is a refusal.
func refusalOf(err error) string {
	var r *errRefusal
	if errors.As(err, &r) {
		return r.kind
	}
	return ""
}

// connectDetail says what a connect event connected to.
func (s *server) connectDetail(sess *session, tools int) string {
	switch s.cfg.Transport {
	case TransportStdio:
		return fmt.Sprintf("stdio pid %d, %d tools", sess.pid(), tools)
	}
	return fmt.Sprintf("%s %s, %d tools", s.cfg.Transport, s.mask(s.cfg.URL), tools)
}

// pid is the session's process id (0 for http/sse).
func (sess *session) pid() int {
	if sess.proc == nil {
		return 0
	}
	return sess.proc.Pid()
}
