package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/daemon"
)

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print clawd's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), map[string]string{"version": daemon.Version, "commit": revision(),
					"go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH})
			}
			fmt.Fprintln(cmd.OutOrStdout(), "clawd "+versionString())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"version", "commit", "go", "os", "arch"} (commit "" when not built from git)`)
	return cmd
}

// revision is the git commit clawd was built from, or "".
func revision() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return ""
}

// versionString is what both `clawd version` and `clawd --version` print
// after "clawd ": the release, the commit when built from git, Go and the
// platform.
func versionString() string {
	rev := ""
	if r := revision(); len(r) >= 12 {
		rev = " (" + r[:12] + ")"
	}
	return fmt.Sprintf("%s%s %s %s/%s", daemon.Version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
