package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/builtin"
	"github.com/clawde/clawd/internal/cli/client"
	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/daemon"
	"github.com/clawde/clawd/internal/runstate"
	"github.com/clawde/clawd/internal/support/token"
)

// Check statuses. Only statusFail makes `clawd doctor` exit 1.
const (
	statusOK   = "ok"
	statusWarn = "warn" // worth knowing; nothing a client needs is broken
	statusFail = "fail"
)

// check is one finding of `clawd doctor`.
type check struct {
	Area   string         `json:"area"` // path, config, workspace, trust, daemon, token, client
	Status string         `json:"status"`
	What   string         `json:"what"`
	Fix    string         `json:"fix,omitempty"`
	Info   map[string]any `json:"info,omitempty"`
}

type doctorReport struct {
	OK     bool    `json:"ok"`
	Checks []check `json:"checks"`
}

func (r *doctorReport) add(c check) {
	r.Checks = append(r.Checks, c)
	if c.Status == statusFail {
		r.OK = false
	}
}

func newDoctorCmd() *cobra.Command {
	var workspace, configFile string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the setup and say how to fix what is wrong",
		Long: "Check what a client needs to reach clawd, each with a fix when it fails: clawd on PATH (a client\n" +
			"that cannot find it says only \"Failed to connect\"), the config file, this workspace's id, entity\n" +
			"and trust level, whether the audit log's decision journal can be written, the daemons running for any workspace and whether they answer, the token files\n" +
			"and their age, and the clients whose configuration runs clawd and whether those entries are current.\n" +
			"Exit status 1 when a check fails, 0 otherwise (warnings included).",
		Args: noArgs("clawd doctor [--workspace DIR] [--config FILE] [--json]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			r := runDoctor(workspace, configFile)
			if asJSON {
				if err := writeJSON(cmd.OutOrStdout(), r); err != nil {
					return err
				}
			} else {
				printDoctor(cmd.OutOrStdout(), r)
			}
			if !r.OK {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&workspace, "workspace", "", "workspace directory (default: the current directory)")
	fl.StringVar(&configFile, "config", "", "config file (default: $XDG_CONFIG_HOME/clawde/mcp-server.toml)")
	fl.BoolVar(&asJSON, "json", false, "print JSON: {ok, checks: [{area, status, what, fix, info}]}")
	return cmd
}

func runDoctor(workspace, configFile string) *doctorReport {
	r := &doctorReport{OK: true}
	checkPath(r)
	paths, err := config.DefaultPaths()
	if err != nil {
		r.add(check{Area: "config", Status: statusFail, What: err.Error(), Fix: "set HOME"})
		return r
	}
	cfg := checkConfig(r, paths, configFile)
	ws := checkWorkspace(r, paths, cfg, workspace)
	daemons := checkDaemons(r, paths)
	var kinds map[string]bool
	if ws != nil {
		checkTokens(r, ws)
		kinds = checkClients(r, ws, daemons)
		checkTrust(r, ws, kinds)
	}
	// Trust is checked last (it needs the kinds the clients use) but
	// reads best next to the workspace it is about.
	order := map[string]int{"path": 0, "config": 1, "workspace": 2, "trust": 3, "daemon": 4, "token": 5, "client": 6}
	sort.SliceStable(r.Checks, func(i, j int) bool { return order[r.Checks[i].Area] < order[r.Checks[j].Area] })
	return r
}

// checkPath: clients start "clawd" by name.
func checkPath(r *doctorReport) {
	self, _ := os.Executable()
	found, err := exec.LookPath("clawd")
	if err != nil {
		fix := "put clawd on PATH: go install github.com/clawde/clawd/cmd/clawd@latest (and add $(go env GOPATH)/bin to PATH)"
		if self != "" {
			fix = fmt.Sprintf("add %s to PATH, or link it: ln -s %s ~/.local/bin/clawd", shellWord(filepath.Dir(self)), shellWord(self))
		}
		r.add(check{Area: "path", Status: statusFail,
			What: "clawd is not on PATH: a client that starts \"clawd\" only says \"Failed to connect\"", Fix: fix})
		return
	}
	abs, _ := filepath.Abs(found)
	c := check{Area: "path", Status: statusOK, What: "clawd on PATH is " + abs, Info: map[string]any{"path": abs}}
	if self != "" && !sameFile(abs, self) {
		c.Status = statusWarn
		c.What += ", not this binary (" + self + "): clients run that one"
		c.Fix = "check that " + abs + " is the version you expect (clawd version)"
	}
	r.add(c)
}

func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// checkConfig returns the config in force, or the defaults when the file
// is invalid (so the other checks still run).
func checkConfig(r *doctorReport, paths config.Paths, file string) *config.Config {
	required := file != ""
	if file == "" {
		file = paths.ConfigFile
	}
	info := map[string]any{"file": file}
	cfg, err := config.Load(file, required)
	if err == nil {
		// The daemon checks [tools] against its registry and the
		// configured upstream servers; here the built-in tools are the
		// ones known, and an upstream tool's name (SERVER__...) is left
		// to the daemon, which reads the servers from the database.
		known := builtin.Names()
		for name := range cfg.Tools {
			if strings.Contains(name, "__") {
				known = append(known, name)
			}
		}
		if err = cfg.CheckTools(known); err != nil {
			err = &config.FileError{Path: file, Err: err}
		}
	}
	var fe *config.FileError
	if errors.As(err, &fe) {
		err = errors.New(fe.Problem()) // the fix below says what to do
	}
	switch {
	case err != nil:
		r.add(check{Area: "config", Status: statusFail, What: err.Error(), Info: info,
			Fix: "fix the key it names in " + shellWord(file) + ", or start over with: clawd init --force --config " + shellWord(file)})
		return config.Default()
	}
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		r.add(check{Area: "config", Status: statusOK, What: "no config file at " + file + ": the defaults apply", Info: info,
			Fix: "optional: clawd init writes one with every key explained"})
	} else {
		info["transport"] = cfg.Transport
		r.add(check{Area: "config", Status: statusOK, What: "config " + file + " is valid (transport " + cfg.Transport + ")", Info: info})
	}
	return cfg
}

func checkWorkspace(r *doctorReport, paths config.Paths, cfg *config.Config, dir string) *runstate.Workspace {
	dir = paths.ExpandHome(dir)
	if dir == "" {
		dir, _ = os.Getwd()
	}
	canon, err := filepath.EvalSymlinks(dir)
	if err == nil {
		canon, err = filepath.Abs(canon)
	}
	if err != nil {
		r.add(check{Area: "workspace", Status: statusFail, What: fmt.Sprintf("workspace %s: %v", dir, err),
			Fix: "run clawd doctor in the workspace, or pass --workspace DIR"})
		return nil
	}
	id := config.WorkspaceID(canon)
	ws := &runstate.Workspace{Dir: canon, ID: id, Config: cfg, Paths: paths,
		SocketPath: runstate.SocketPath(cfg, paths, id, ""), TokenPath: runstate.TokenPath(cfg, paths, id)}
	entity := cfg.DefaultClientKind + ":" + id
	r.add(check{Area: "workspace", Status: statusOK,
		What: fmt.Sprintf("workspace %s: id %s, a client without its own credential is entity %s", canon, id, entity),
		Info: map[string]any{"dir": canon, "id": id, "entity": entity}})
	if err := paths.CheckRuntimeDir(); err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.add(check{Area: "workspace", Status: statusFail, What: err.Error(),
			Fix: "remove " + paths.RuntimeDir + " (clawd serve recreates it 0700), or set XDG_RUNTIME_DIR"})
	}
	return ws
}

// checkTrust reports the trust level of the default entity and of every
// kind an installed client uses: an entity without a row sees no tool.
func checkTrust(r *doctorReport, ws *runstate.Workspace, kinds map[string]bool) {
	db, err := openStore()
	if err != nil {
		r.add(check{Area: "trust", Status: statusFail, What: "cannot open the trust registry: " + strings.TrimPrefix(err.Error(), "clawd: "),
			Fix: "check " + ws.Paths.DataDir + " (permissions, free space)"})
		return
	}
	defer db.Close()
	if dir, err := db.CheckJournalDir(); err != nil {
		r.add(check{Area: "trust", Status: statusFail, What: "the audit log's decision journal cannot be written in " + dir + ": every call would be refused (" + err.Error() + ")",
			Fix: "check " + dir + " and " + ws.Paths.DataDir + " (owner, permissions, free space)"})
	}
	want := map[string]bool{ws.Config.DefaultClientKind: true}
	for k := range kinds {
		want[k] = true
	}
	for _, kind := range sortedKeys(want) {
		st := explainTrust(db, kind+":"+ws.ID, ws.Config)
		c := check{Area: "trust", Status: statusOK, Info: map[string]any{"entity": st.Entity, "row": st.Row, "level": st.Level}}
		if st.Problem != "" {
			c.Status, c.What, c.Fix = statusFail, st.Problem, st.Fix
		} else {
			c.What = fmt.Sprintf("entity %s: trust level %d (%s), from row %s", st.Entity, st.Level, levelMeaning[st.Level], st.Row)
		}
		r.add(c)
	}
}

// daemonInfo is a running daemon as its state file and a probe show it.
type daemonInfo struct {
	state   *runstate.State
	answers bool
}

// checkDaemons lists every daemon of this user's data directory, for any
// workspace, and asks each whether it answers.
func checkDaemons(r *doctorReport, paths config.Paths) []daemonInfo {
	files, _ := filepath.Glob(filepath.Join(paths.DataDir, "run", "*.json"))
	var out []daemonInfo
	for _, f := range files {
		st, err := runstate.Read(f)
		if err != nil {
			r.add(check{Area: "daemon", Status: statusWarn, What: fmt.Sprintf("unreadable state file %s: %v", f, err), Fix: "remove " + f})
			continue
		}
		where := st.Socket
		if st.Transport == runstate.TCP {
			where = "http://" + st.Addr + "/mcp"
		}
		info := map[string]any{"workspace": st.Workspace, "workspace_id": st.WorkspaceID, "transport": st.Transport,
			"pid": st.PID, "socket": st.Socket, "addr": st.Addr, "started": st.Started}
		if !runstate.Alive(st.PID) {
			r.add(check{Area: "daemon", Status: statusWarn, Info: info,
				What: fmt.Sprintf("%s: the daemon (pid %d) on %s is gone; its state file was left behind (a crash?)", st.Workspace, st.PID, where),
				Fix:  "start it again, or remove " + f})
			continue
		}
		up := time.Since(st.Started).Round(time.Second)
		info["uptime_s"] = int64(up.Seconds())
		d := daemonInfo{state: st}
		err = probeDaemon(st)
		d.answers = err == nil
		info["answers"] = d.answers
		c := check{Area: "daemon", Status: statusOK, Info: info,
			What: fmt.Sprintf("%s: %s daemon on %s, pid %d, up %s, answers", st.Workspace, st.Transport, where, st.PID, up)}
		if err != nil {
			c.Status = statusFail
			c.What = fmt.Sprintf("%s: %s daemon on %s, pid %d, up %s, does not answer: %v", st.Workspace, st.Transport, where, st.PID, up, err)
			c.Fix = fmt.Sprintf("see its log; stop it (kill %d) and start it again", st.PID)
		}
		r.add(c)
		out = append(out, d)
	}
	if len(out) == 0 {
		r.add(check{Area: "daemon", Status: statusOK, What: "no daemon is running (stdio clients start their own clawd)"})
	}
	return out
}

func probeDaemon(st *runstate.State) error {
	if st.Transport == runstate.TCP {
		pid, err := runstate.ProbeHealth(st.Addr)
		if err == nil && pid != st.PID {
			err = fmt.Errorf("http://%s answers as pid %d", st.Addr, pid)
		}
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, &runstate.Target{Unix: st.Socket}, daemon.Version)
	if err != nil {
		return err
	}
	return c.Close()
}

// checkTokens reports the workspace token file and the per-client
// credential files next to it, with their age.
func checkTokens(r *doctorReport, ws *runstate.Workspace) {
	st := ws.StateFile(runstate.TCP)
	path := ws.TokenPath
	if st != nil && st.TokenFile != "" {
		path = st.TokenFile
	}
	now := time.Now()
	if fi, err := os.Stat(path); err == nil {
		c := check{Area: "token", Status: statusOK, Info: map[string]any{"file": path, "age_s": int64(now.Sub(fi.ModTime()).Seconds())},
			What: fmt.Sprintf("workspace token %s, written %s ago", path, now.Sub(fi.ModTime()).Round(time.Second))}
		if p := tokenFileProblem(ws, st, path, now); p != "" {
			c.Status, c.What = statusWarn, p
			c.Fix = "clients holding it are refused until a tcp_loopback daemon runs and they read the new one (clawd token show)"
		}
		r.add(c)
	} else if st != nil {
		r.add(check{Area: "token", Status: statusFail, What: "the tcp_loopback daemon runs but its token file " + path + " is missing",
			Fix: "clawd token rotate writes a new one"})
	}
	for _, kind := range config.ClientKinds {
		f := token.CredentialPath(ws.TokenPath, kind)
		if fi, err := os.Stat(f); err == nil {
			r.add(check{Area: "token", Status: statusOK, Info: map[string]any{"file": f, "kind": kind, "age_s": int64(now.Sub(fi.ModTime()).Seconds())},
				What: fmt.Sprintf("per-client credential for %s: %s, written %s ago (clawd token list shows whether it is revoked)", kind, f, now.Sub(fi.ModTime()).Round(time.Second))})
		}
	}
}

func printDoctor(w io.Writer, r *doctorReport) {
	marks := map[string]string{statusOK: "ok  ", statusWarn: "warn", statusFail: "FAIL"}
	fails := 0
	for _, c := range r.Checks {
		fmt.Fprintf(w, "%s  %-9s %s\n", marks[c.Status], c.Area, printable(c.What))
		if c.Fix != "" && c.Status != statusOK {
			fmt.Fprintf(w, "                 fix: %s\n", printable(c.Fix))
		}
		if c.Status == statusFail {
			fails++
		}
	}
	if fails == 0 {
		fmt.Fprintln(w, "No problems found.")
	} else {
		fmt.Fprintf(w, "%d problem(s) found.\n", fails)
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
