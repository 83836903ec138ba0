package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/restapi"
)

// newMCPLogsCmd is `clawd mcp logs NAME`: the recent stderr of the
// server's process in the running daemon (a ring of 64 KiB, secrets
// masked by the daemon).
func newMCPLogsCmd() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "logs NAME",
		Short: "Print the recent stderr of an upstream server's process in the running daemon",
		Long: "Print what upstream server NAME's process (the current one, or the last) wrote to stderr, as the\n" +
			"workspace's running daemon kept it: the last 64 KiB, with its configured env and header values and\n" +
			"what looks like a secret masked. Control characters are shown escaped. Only stdio servers have a\n" +
			"log. It reaches the daemon through its REST API: on its unix socket, else on loopback HTTP with\n" +
			"the workspace token.",
		Args: exactArgs(1, "the server's NAME", "clawd mcp logs NAME [--json]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkName(args[0]); err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c, err := daemonAPI(ctx, &f)
			if err != nil {
				return err
			}
			defer c.Close()
			id, err := findServer(ctx, c, args[0])
			if err != nil {
				return err
			}
			raw, err := c.Do(ctx, "GET", restapi.Prefix+"/"+strconv.FormatInt(id, 10)+"/logs", nil)
			if err != nil {
				return apiError("logs", err)
			}
			if f.json {
				return printJSON(cmd.OutOrStdout(), raw)
			}
			var l struct {
				Name string `json:"name"`
				Logs string `json:"logs"`
				Note string `json:"note"`
			}
			if err := json.Unmarshal(raw, &l, json.RejectUnknownMembers(false)); err != nil {
				return runtimeError("logs: unexpected answer: %v", err)
			}
			if l.Note != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "clawd: %s: %s\n", l.Name, l.Note)
			}
			out := terminalSafe(l.Logs)
			if out != "" && !strings.HasSuffix(out, "\n") {
				out += "\n"
			}
			fmt.Fprint(cmd.OutOrStdout(), out)
			return nil
		},
	}
	f.register(cmd)
	return cmd
}
