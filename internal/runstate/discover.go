// Discovery: which workspace a CLI command is about and where its daemon
// answers.
//
// Find tries the unix socket first (the kernel vouches for both ends: a
// socket whose listener runs as another user is skipped), then loopback
// HTTP. The HTTP address comes only from the
// daemon's own state file (0600, in the data directory) or an explicit
// --port, and a token may be sent only to a loopback IP literal
// (CheckLoopback), after GET /health (which needs no token) showed the pid
// the state file names, and, on Linux, only while the port's listener is
// this user's (CheckListener, in LoopbackClient's dialer): a process of
// another user squatting the port after the daemon died never sees the
// token, whatever pid it claims.

package runstate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/support/peercred"
	"github.com/clawde/clawd/internal/support/safetext"
)

// Options say which daemon to look for.
type Options struct {
	Workspace  string // "" = current directory
	ConfigFile string // "" = the XDG default
	Socket     string // explicit socket path (--socket)
	Port       int    // explicit TCP port (--port); < 0 = from the state file
}

// Workspace is a resolved workspace and the places its daemon may be at.
type Workspace struct {
	Dir        string // canonical directory
	ID         string
	Config     *config.Config
	Paths      config.Paths
	SocketPath string // configured or default socket path
	TokenPath  string // configured or default token file
}

// ResolveWorkspace loads the config and derives the workspace id exactly as
// `clawd serve` does, so both sides find the same socket and files.
func ResolveWorkspace(o Options) (*Workspace, error) {
	paths, err := config.DefaultPaths()
	if err != nil {
		return nil, err
	}
	cfgFile, required := o.ConfigFile, true
	if cfgFile == "" {
		cfgFile, required = paths.ConfigFile, false
	}
	cfg, err := config.Load(cfgFile, required)
	if err != nil {
		return nil, err
	}
	dir := paths.ExpandHome(o.Workspace) // as `clawd serve` does
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	canon, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, safetext.PathError("workspace", dir, err)
	}
	if fi, err := os.Stat(canon); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("workspace %s: not a directory", safetext.ShellWord(dir))
	}
	id := config.WorkspaceID(canon)
	return &Workspace{
		Dir:        canon,
		ID:         id,
		Config:     cfg,
		Paths:      paths,
		SocketPath: SocketPath(cfg, paths, id, o.Socket),
		TokenPath:  TokenPath(cfg, paths, id),
	}, nil
}

// Target is a reachable daemon.
type Target struct {
	Unix      string // socket path, or "" for HTTP
	Addr      string // loopback host:port for HTTP
	TokenFile string // HTTP only
	PID       int    // from the state file, 0 if unknown
}

// String describes the target for messages.
func (t *Target) String() string {
	if t.Unix != "" {
		return "unix socket " + t.Unix
	}
	return "http://" + t.Addr
}

// ErrNoDaemon reports that no daemon could be reached.
var ErrNoDaemon = errors.New("no running clawd daemon")

// StateFile returns the state of the workspace's live daemon on a transport
// (nil when there is none or its process is gone).
func (w *Workspace) StateFile(transport string) *State {
	st, err := Read(Path(w.Paths.DataDir, w.ID, transport))
	if err != nil || !Alive(st.PID) {
		return nil
	}
	return st
}

// Find locates the workspace's daemon: the unix socket first, then HTTP.
// unixOnly restricts the search to the socket (clawd connect).
func Find(w *Workspace, o Options, unixOnly bool) (*Target, error) {
	var tried []string
	sockets := []string{w.SocketPath}
	if o.Socket == "" {
		if st := w.StateFile(Unix); st != nil && st.Socket != "" && st.Socket != w.SocketPath {
			sockets = append([]string{st.Socket}, sockets...)
		}
	}
	for _, s := range sockets {
		if filepath.Dir(s) == w.Paths.RuntimeDir {
			// Never talk to a socket in a fallback directory another
			// user could have made.
			if err := w.Paths.CheckRuntimeDir(); err != nil {
				tried = append(tried, err.Error())
				continue
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := peercred.Dial(ctx, s)
		cancel()
		if err == nil {
			c.Close()
			return &Target{Unix: s}, nil
		}
		var other *peercred.OtherUserError
		if errors.As(err, &other) {
			tried = append(tried, fmt.Sprintf("unix socket %s (served by uid %d, pid %d, not by this user (uid %d): nothing sent there; remove that socket or choose a path in a directory only you can write to)", s, other.UID, other.PID, other.Want))
			continue
		}
		tried = append(tried, fmt.Sprintf("unix socket %s (%s)", s, shortErr(err)))
	}
	if !unixOnly && o.Socket == "" {
		t, err := findTCP(w, o)
		if err == nil {
			return t, nil
		}
		tried = append(tried, err.Error())
	}
	dir := safetext.ShellWord(w.Dir)
	hint := fmt.Sprintf("start one with `clawd serve --transport unix_socket --workspace %s`", dir)
	return nil, fmt.Errorf("%w for workspace %s: tried %s; %s", ErrNoDaemon, dir, strings.Join(tried, ", "), hint)
}

func findTCP(w *Workspace, o Options) (*Target, error) {
	st := w.StateFile(TCP)
	t := &Target{TokenFile: w.TokenPath}
	switch {
	case o.Port >= 0:
		host := w.Config.BindAddr
		if host == "" || host == "localhost" {
			host = "127.0.0.1"
		}
		t.Addr = net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(o.Port))
		if st != nil && st.Addr == t.Addr {
			t.PID, t.TokenFile = st.PID, orDefault(st.TokenFile, t.TokenFile)
		}
	case st != nil:
		t.Addr, t.PID = st.Addr, st.PID
		t.TokenFile = orDefault(st.TokenFile, t.TokenFile)
	default:
		return nil, errors.New("no tcp_loopback daemon (no live state file in " + filepath.Join(w.Paths.DataDir, "run") + ")")
	}
	if err := CheckLoopback(t.Addr); err != nil {
		return nil, err
	}
	pid, err := ProbeHealth(t.Addr)
	if err != nil {
		return nil, fmt.Errorf("http://%s (%s)", t.Addr, shortErr(err))
	}
	if t.PID != 0 && pid != t.PID {
		return nil, fmt.Errorf("http://%s answers as pid %d, not the daemon's pid %d; not sending the token there", t.Addr, pid, t.PID)
	}
	t.PID = pid
	return t, nil
}

// CheckLoopback refuses any address but a loopback IP literal with a port:
// tokens are sent nowhere else.
func CheckLoopback(addr string) error {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return fmt.Errorf("address %q is not an IP:port; clawd sends tokens only to loopback addresses", addr)
	}
	if !ap.Addr().Unmap().IsLoopback() {
		return fmt.Errorf("address %s is not a loopback address; clawd sends tokens only to 127.0.0.1 or ::1", addr)
	}
	return nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// shortErr trims the "dial unix /path:" prefix Go puts on dial errors.
func shortErr(err error) string {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err.Error()
	}
	return err.Error()
}
