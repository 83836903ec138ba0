package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/daemon"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print clawd's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), "clawd "+versionString())
			return nil
		},
	}
}

// versionString is what both `clawd version` and `clawd --version` print
// after "clawd ": the release, the commit when built from git, Go and the
// platform.
func versionString() string {
	rev := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = " (" + s.Value[:12] + ")"
			}
		}
	}
	return fmt.Sprintf("%s%s %s %s/%s", daemon.Version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
