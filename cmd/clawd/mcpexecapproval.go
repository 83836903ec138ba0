package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/daemon"
	"github.com/clawde/clawd/internal/store"
	"github.com/clawde/clawd/internal/support/secrets"
	"github.com/clawde/clawd/internal/upstream"
)

// approval is how `clawd mcp add` and `clawd mcp allow NAME` decide: yes
// without asking (--allow, --yes), else ask on the terminal if there is
// one, else do not approve and print the line that would.
type approval struct {
	yes bool
	in  io.Reader // the terminal, nil when there is none
	out io.Writer
	// resolved is the server's launch when the caller resolved it already
	// (mcp add --allow checks it can be approved before storing the
	// server): approving that one saves hashing every file again.
	resolved *upstream.Launch
}

// newApproval asks on stdin only when both stdin and stderr are terminals:
// a prompt nobody sees, or an answer piped in by a script, is not consent.
// What is to be approved and the question then go to stderr, the terminal
// that was checked, and not to out: stdout may be redirected to a file,
// and the user would answer a question they never saw.
func newApproval(yes bool, out io.Writer) approval {
	a := approval{yes: yes, out: out}
	if isTerminal(os.Stdin) && isTerminal(os.Stderr) {
		a.in, a.out = os.Stdin, os.Stderr
	}
	return a
}

// confirm asks question on the terminal; only y or yes is a yes. With no
// terminal (a.in nil) the answer is no.
func (a approval) confirm(question string) bool {
	if a.in == nil {
		return false
	}
	fmt.Fprint(a.out, question)
	answer, _ := bufio.NewReader(a.in).ReadString('\n')
	answer = strings.ToLower(strings.TrimSpace(answer))
	return answer == "y" || answer == "yes"
}

// approveServer shows what server s runs, resolved now (the exact command,
// quoted so spaces and control characters are visible, and every file and
// package it pins) and approves it if a says so. It returns the launch, and
// approved=false with no error when the user said no or could not be asked
// (the allow line is printed). A command that cannot be pinned is an error.
func approveServer(db *store.DB, s store.MCPServer, a approval) (upstream.Launch, bool, error) {
	if s.Transport != store.TransportStdio {
		return upstream.Launch{}, false, usageError("%s is a %s server: only stdio servers run a local program that needs approval", s.Name, s.Transport)
	}
	var l upstream.Launch
	var err error
	if a.resolved != nil {
		l = *a.resolved
	} else {
		l, err = upstream.Inspect(daemon.UpstreamConfigs([]store.MCPServer{s})[0])
	}
	w := a.out
	fmt.Fprintf(w, "Server %s runs:\n  %s\n", s.Name, upstream.QuoteCommand(append([]string{s.Command}, s.Args...)))
	if s.Cwd != "" {
		fmt.Fprintf(w, "  in %s\n", upstream.QuoteCommand([]string{s.Cwd}))
	}
	if err != nil {
		return l, false, runtimeError("%s cannot be approved: %v", s.Name, err)
	}
	if l.Unpinned != "" {
		return l, false, usageError("%s cannot be approved: %s", s.Name, l.Unpinned)
	}
	fmt.Fprintln(w, "Approving pins:")
	// A pin's text is partly the project's to choose (an npm lockfile's
	// integrity): escaped, it cannot rewrite what the user approves.
	for _, p := range l.Pins() {
		fmt.Fprintf(w, "  %s\n", oneLine(p, 0))
	}
	if !a.yes && db != nil && daemon.VerifyUpstream(db)(s.Name, l) == nil {
		// Approved before (a server removed and added again keeps its
		// approval): say so rather than ask or print the allow line.
		fmt.Fprintf(w, "Already approved: what %s runs now matches its approval.\n", s.Name)
		return l, true, nil
	}
	if !a.yes {
		if a.in == nil {
			fmt.Fprintf(w, "Not approved (no terminal to ask on). To approve exactly this: %s\n", oneLine(l.AllowLine(s.Name), 0))
			return l, false, nil
		}
		if !a.confirm(fmt.Sprintf("An approved server runs with your rights. Approve %s? [y/N] ", s.Name)) {
			fmt.Fprintf(w, "Not approved. To approve later: %s\n", oneLine(l.AllowLine(s.Name), 0))
			return l, false, nil
		}
	}
	row := auditCLI(db, "mcp:"+s.Name, chain.ResultAllow, secrets.MaskText("approve: "+strings.Join(l.Pins(), "; ")))
	_, err = db.Approve(context.Background(), s.Name, l.ExecSHA256, daemon.LaunchPins(l), row.confirm)
	row.done(err)
	if err != nil {
		return l, false, runtimeError("writing the approval: %v", err)
	}
	fmt.Fprintf(w, "Approved %s. A running daemon starts it within about a second.\n", s.Name)
	return l, true, nil
}

// approvalView is what `clawd mcp show` says about a stdio server's
// approval: what is pinned, and whether what the command runs now matches.
type approvalView struct {
	Executables []store.AllowRow `json:"executables"`
	Pins        []store.PinRow   `json:"pins"`
	// Current is whether what the command resolves to now is approved;
	// Problem says why not (the refusal a spawn would give), "" if it is.
	Current bool   `json:"current"`
	Problem string `json:"problem"`
}

func serverApproval(db *store.DB, s store.MCPServer) (*approvalView, error) {
	if s.Transport != store.TransportStdio {
		return nil, nil
	}
	ctx := context.Background()
	all, err := db.Allowlist(ctx)
	if err != nil {
		return nil, runtimeError("reading the allowlist: %v", err)
	}
	v := &approvalView{Executables: []store.AllowRow{}, Pins: []store.PinRow{}}
	for _, a := range all {
		if a.Server == s.Name {
			v.Executables = append(v.Executables, a)
		}
	}
	pins, err := db.Pins(ctx, s.Name)
	if err != nil {
		return nil, runtimeError("reading the pins: %v", err)
	}
	v.Pins = append(v.Pins, pins...)
	l, err := upstream.Inspect(daemon.UpstreamConfigs([]store.MCPServer{s})[0])
	if err == nil {
		err = daemon.VerifyUpstream(db)(s.Name, l)
	}
	v.Current = err == nil
	if err != nil {
		v.Problem = err.Error()
	}
	return v, nil
}

// withApproval adds an "approval" member to the server's JSON (null for
// servers that run no local program).
func withApproval(s store.MCPServer, ap *approvalView) any {
	b, err := json.Marshal(s)
	if err != nil {
		return s
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return s
	}
	m["approval"] = ap
	return m
}

func printApproval(w io.Writer, ap *approvalView) {
	if ap == nil {
		return
	}
	fmt.Fprintln(w, "  approval:")
	if len(ap.Executables) == 0 && len(ap.Pins) == 0 {
		fmt.Fprintln(w, "    nothing approved")
	}
	for _, a := range ap.Executables {
		fmt.Fprintf(w, "    executable sha256 %s (%s)\n", a.SHA256, a.AddedAt)
	}
	for _, p := range ap.Pins {
		what := p.Kind + " " + strings.TrimSpace(p.Subject+" "+p.Digest)
		if p.Detail != "" {
			what += " " + upstream.QuoteCommand([]string{p.Detail})
		}
		fmt.Fprintf(w, "    %s (%s)\n", what, p.AddedAt)
	}
	if ap.Current {
		fmt.Fprintln(w, "    what the command runs now: approved")
	} else {
		fmt.Fprintf(w, "    what the command runs now: NOT approved: %s\n", oneLine(ap.Problem, 0))
	}
}
