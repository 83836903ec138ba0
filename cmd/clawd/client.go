package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/clawde/clawd/internal/chain"
	"github.com/clawde/clawd/internal/cli/client"
	"github.com/clawde/clawd/internal/daemon"
	"github.com/clawde/clawd/internal/runstate"
)

// clientFlags locate the daemon for the client commands.
type clientFlags struct {
	workspace  string
	configFile string
	socket     string
	port       int
	json       bool
}

func (f *clientFlags) register(cmd *cobra.Command) {
	f.registerWorkspace(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.socket, "socket", "", "unix socket of the daemon (default: from the config and the workspace)")
	portVar(fl, &f.port, "loopback TCP port of the daemon (default: from its state file)")
	fl.BoolVar(&f.json, "json", false, "print JSON for machines")
}

// registerWorkspace defines --workspace and --config: the workspace a
// command is about and the config it is read with.
func (f *clientFlags) registerWorkspace(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.workspace, "workspace", "", "workspace directory (default: the current directory)")
	cmd.Flags().StringVar(&f.configFile, "config", "", "config file (default: $XDG_CONFIG_HOME/clawde/mcp-server.toml)")
}

func (f *clientFlags) options() runstate.Options {
	return runstate.Options{Workspace: f.workspace, ConfigFile: f.configFile, Socket: f.socket, Port: f.port}
}

// find resolves the workspace and locates its daemon.
func (f *clientFlags) find() (*runstate.Target, error) {
	if f.port > 65535 || f.port < -1 {
		return nil, usageError("--port %d: use 0..65535", f.port)
	}
	ws, err := runstate.ResolveWorkspace(f.options())
	if err != nil {
		return nil, runtimeError("%v", err)
	}
	t, err := runstate.Find(ws, f.options(), false)
	if err != nil {
		return nil, runtimeError("%v", err)
	}
	return t, nil
}

func newToolsCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List the tools the running daemon offers this workspace",
		Long: "List the tools of the workspace's running daemon (found on its unix socket, else on loopback\n" +
			"HTTP with the workspace token), as the CLI's entity local:<workspace> may see them.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := f.find()
			if err != nil {
				return err
			}
			ctx := context.Background()
			c, err := client.Dial(ctx, t, daemon.Version)
			if err != nil {
				return runtimeError("%s: %v", t, err)
			}
			defer c.Close()
			res, err := c.Call(ctx, "tools/list", nil)
			if err != nil {
				return runtimeError("tools/list: %v", err)
			}
			if f.json {
				return printJSON(cmd.OutOrStdout(), res)
			}
			var list struct {
				Tools []struct {
					Name        string `json:"name"`
					Description string `json:"description"`
					Annotations struct {
						ReadOnly bool `json:"readOnlyHint"`
					} `json:"annotations"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(res, &list, json.RejectUnknownMembers(false)); err != nil {
				return runtimeError("tools/list: unexpected answer: %v", err)
			}
			if len(list.Tools) == 0 {
				return noToolsError(&f)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			for _, tl := range list.Tools {
				kind := "writes"
				if tl.Annotations.ReadOnly {
					kind = "read-only"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", tl.Name, kind, firstSentence(tl.Description))
			}
			return tw.Flush()
		},
	}
	f.register(cmd)
	return cmd
}

func newCallCmd() *cobra.Command {
	var f clientFlags
	var params string
	var timeoutMS int
	cmd := &cobra.Command{
		Use:   "call TOOL",
		Short: "Call a tool on the running daemon",
		Long: "Call TOOL on the workspace's running daemon with --params (a JSON object, @FILE to read it from a\n" +
			"file, @- from stdin). Prints the tool's result object; a tool error or a refusal goes to stderr\n" +
			"with exit status 1. --timeout cancels the call on the daemon when it has not answered in time.",
		Example: "  clawd call read_file --params '{\"path\":\"README.md\"}'\n  clawd call list_dir --params @args.json --json",
		Args:    exactArgs(1, "the name of a tool (see 'clawd tools')", "clawd call TOOL [--params JSON|@FILE|@-]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if timeoutMS < 0 || timeoutMS > maxCallTimeoutMS {
				return usageError("--timeout %d: use a positive number of milliseconds, at most %d (24 h); 0 = none", timeoutMS, maxCallTimeoutMS)
			}
			// No tool has a name outside MCP's tool name characters: an
			// empty or control-laden name would only come back from the
			// daemon as "unknown tool", printed raw on several lines.
			if err := chain.ValidateToolName(args[0]); err != nil {
				return usageError("%v; 'clawd tools' lists them", err)
			}
			arguments, err := readParams(params, cmd.InOrStdin())
			if err != nil {
				return err
			}
			t, err := f.find()
			if err != nil {
				return err
			}
			return callTool(cmd, &f, t, args[0], arguments, time.Duration(timeoutMS)*time.Millisecond)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&params, "params", "{}", "tool arguments: a JSON object, @FILE, or @- for stdin")
	cmd.Flags().IntVar(&timeoutMS, "timeout", 0, "cancel the call after this many milliseconds (0 = wait)")
	return cmd
}

// maxCallTimeoutMS bounds --timeout: a larger count of milliseconds
// overflows a time.Duration and wraps, possibly to under a millisecond.
const maxCallTimeoutMS = 24 * 60 * 60 * 1000

// maxParamsBytes bounds what --params @FILE and @- read; the daemon
// refuses far less (max_message_bytes).
const maxParamsBytes = 64 << 20

// readParams parses --params into a JSON object (a usage error otherwise).
func readParams(p string, stdin io.Reader) (jsontext.Value, error) {
	src := "--params"
	data := []byte(p)
	if name, ok := strings.CutPrefix(p, "@"); ok {
		var err error
		if name == "-" {
			src = "stdin"
			data, err = io.ReadAll(io.LimitReader(stdin, maxParamsBytes+1))
		} else {
			src = name
			var f *os.File
			if f, err = os.Open(name); err == nil {
				data, err = io.ReadAll(io.LimitReader(f, maxParamsBytes+1))
				f.Close()
			}
		}
		if err != nil {
			return nil, usageError("--params %s: %v", p, err)
		}
		if len(data) > maxParamsBytes {
			return nil, usageError("--params %s: %s is larger than %d MiB; a tool's arguments are far smaller", p, src, maxParamsBytes>>20)
		}
	}
	v := jsontext.Value(bytes.TrimSpace(data))
	if !v.IsValid() {
		return nil, usageError("%s is not valid JSON; pass the tool's arguments as a JSON object, e.g. --params '{\"path\":\"a.txt\"}'", src)
	}
	if v.Kind() != '{' {
		return nil, usageError("%s must be a JSON object (the tool's arguments), not %s", src, kindName(v.Kind()))
	}
	return v, nil
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "something else"
}

func callTool(cmd *cobra.Command, f *clientFlags, t *runstate.Target, tool string, arguments jsontext.Value, timeout time.Duration) error {
	ctx := context.Background()
	c, err := client.Dial(ctx, t, daemon.Version)
	if err != nil {
		return runtimeError("%s: %v", t, err)
	}
	defer c.Close()
	cctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	res, err := c.Call(cctx, "tools/call", map[string]any{"name": tool, "arguments": arguments})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return runtimeError("%s: no answer within %d ms; the call was cancelled on the daemon", tool, timeout.Milliseconds())
		}
		var re *client.RPCError
		if errors.As(err, &re) && f.json {
			b, _ := json.Marshal(re)
			return &exitError{code: 1, msg: string(b)}
		}
		return runtimeError("%s: %v", tool, err)
	}
	return printCallResult(cmd.OutOrStdout(), tool, res, f.json)
}

// printCallResult prints a tools/call result: the whole result with
// --json, else its structuredContent or its content's text items; a tool
// error is returned as the command's error (stderr, exit 1, escaped as
// every error is). An upstream server's result comes as the server wrote
// it, so on a terminal what could drive the terminal is shown escaped
// (terminalSafe; in JSON as JSON escapes, so it stays the same JSON);
// written to a pipe or a file, the result is left as it came.
func printCallResult(out io.Writer, tool string, res jsontext.Value, asJSON bool) error {
	term := outputIsTerminal(out)
	jsonOut := out
	if term {
		jsonOut = jsonEscaper{out}
	}
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Structured jsontext.Value `json:"structuredContent"`
		IsError    bool           `json:"isError"`
	}
	if err := json.Unmarshal(res, &r, json.RejectUnknownMembers(false)); err != nil {
		return runtimeError("%s: unexpected result: %v", tool, err)
	}
	if asJSON {
		if err := printJSON(jsonOut, res); err != nil {
			return err
		}
		if r.IsError {
			return &exitError{code: 1}
		}
		return nil
	}
	if r.IsError {
		var msgs []string
		for _, c := range r.Content {
			if c.Type == "text" {
				msgs = append(msgs, c.Text)
			}
		}
		return runtimeError("%s: %s", tool, strings.Join(msgs, "\n"))
	}
	if len(r.Structured) > 0 {
		return printJSON(jsonOut, r.Structured)
	}
	for _, c := range r.Content {
		switch {
		case c.Type != "text":
			fmt.Fprintf(out, "[%s content]\n", oneLine(c.Type, 40))
		case term:
			fmt.Fprintln(out, terminalSafe(c.Text))
		default:
			fmt.Fprintln(out, c.Text)
		}
	}
	return nil
}

// jsonEscaper writes JSON text (one whole write, as printJSON makes it)
// with every character terminalSafe would escape written as a JSON escape
// instead: in valid JSON such characters occur only inside strings, where
// \uXXXX (a surrogate pair past U+FFFF) is the same character, so the
// JSON's values do not change.
type jsonEscaper struct{ w io.Writer }

func (e jsonEscaper) Write(p []byte) (int, error) {
	var b strings.Builder
	for _, r := range string(p) {
		if r == '\n' || r == ' ' || terminalSafe(string(r)) == string(r) {
			b.WriteRune(r)
			continue
		}
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			fmt.Fprintf(&b, "\\u%04x\\u%04x", r1, r2)
		} else {
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	if _, err := io.WriteString(e.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

func newHealthCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Show the running daemon's health",
		Long: "Show the health of the workspace's running daemon: clawd/health on its unix socket, else\n" +
			"GET /health on loopback HTTP (which needs no token). Exit status 1 when no daemon answers.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := f.find()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			raw, h, err := client.GetHealth(ctx, t, daemon.Version)
			if err != nil {
				return runtimeError("%s: %v", t, err)
			}
			if f.json {
				return printJSON(cmd.OutOrStdout(), raw)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "status:        %s\n", h.Status)
			fmt.Fprintf(out, "pid:           %d\n", h.PID)
			fmt.Fprintf(out, "uptime:        %s\n", (time.Duration(h.UptimeS) * time.Second).String())
			fmt.Fprintf(out, "mcp version:   %s\n", h.MCPVersion)
			fmt.Fprintf(out, "active tools:  %d\n", h.ActiveTools)
			if h.LastPolicyEvalMS != nil {
				fmt.Fprintf(out, "policy eval:   %d ms (last)\n", *h.LastPolicyEvalMS)
			}
			fmt.Fprintf(out, "reached via:   %s\n", t)
			if h.Status != "ok" {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	f.register(cmd)
	return cmd
}

func printJSON(w io.Writer, v jsontext.Value) error {
	b := bytes.Clone(v)
	if err := (*jsontext.Value)(&b).Indent(jsontext.WithIndent("  ")); err != nil {
		b = v
	}
	_, err := fmt.Fprintf(w, "%s\n", b)
	return err
}

func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// noToolsError says why the daemon listed no tool for the CLI's entity
// (default_client_kind:<workspace>), instead of printing nothing.
func noToolsError(f *clientFlags) error {
	ws, err := runstate.ResolveWorkspace(f.options())
	if err != nil {
		return runtimeError("the daemon lists no tool you may call (%v)", err)
	}
	entity := ws.Config.DefaultClientKind + ":" + ws.ID
	db, err := openStore()
	if err != nil {
		return runtimeError("the daemon lists no tool that entity %s may call", entity)
	}
	defer db.Close()
	st := explainTrust(db, entity, ws.Config)
	if st.Problem == "" {
		return runtimeError("the daemon lists no tool that entity %s may call; see 'clawd trust list' and 'clawd doctor'", entity)
	}
	return runtimeError("no tool is callable: %s\nfix: %s", st.Problem, st.Fix)
}

// outputIsTerminal reports whether w is a terminal (tests replace it).
var outputIsTerminal = func(w any) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}

// portFlag is a --port whose -1 means "not given": the value typed must be
// 0..65535, so an explicit -1 is refused like 70000 rather than taken
// silently as "not given".
type portFlag struct{ p *int }

func (v portFlag) String() string {
	if v.p == nil || *v.p < 0 {
		return ""
	}
	return strconv.Itoa(*v.p)
}

func (v portFlag) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return err // flagProblem says "expected a whole number"
	}
	if n < 0 || n > 65535 {
		return errors.New("out of range")
	}
	*v.p = int(n)
	return nil
}

func (v portFlag) Type() string { return "int" }

// portVar defines --port on fl, -1 until given.
func portVar(fl *pflag.FlagSet, p *int, usage string) {
	*p = -1
	fl.Var(portFlag{p}, "port", usage)
}
