package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/config"
	"github.com/clawde/clawd/internal/support/fileutil"
	"github.com/clawde/clawd/internal/support/safetext"
)

func newInitCmd() *cobra.Command {
	var force bool
	var file string
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write the commented default config file",
		Long:  "Write the default configuration (every key commented with its default) to\n$XDG_CONFIG_HOME/clawde/mcp-server.toml, or to --config FILE. An existing file is kept unless --force.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// The command a refusal suggests names the same file.
			again := "clawd init --force"
			if file != "" {
				again += " --config " + shellWord(file)
			}
			if file == "" {
				p, err := config.DefaultPaths()
				if err != nil {
					return runtimeError("%v", err)
				}
				file = p.ConfigFile
			}
			if _, err := os.Lstat(file); err == nil && !force {
				return runtimeError("%s already exists; keep it, or run `%s` to replace it with the defaults", shellWord(file), again)
			} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return runtimeError("%v", safetext.PathError("config", file, err))
			}
			// A symlinked config (dotfiles repositories) is written through:
			// replacing the link with a file would cut it from its target.
			target, err := fileutil.FollowLinks(file)
			if err != nil {
				return runtimeError("%v", safetext.PathError("config", file, err))
			}
			file = target
			// --force replaces a config file, nothing else: renaming over
			// /dev/null or a FIFO would replace it with a regular file.
			if fi, err := os.Lstat(file); err == nil && !fi.Mode().IsRegular() {
				return runtimeError("%s is not a regular file (%s); clawd init writes only a config file: give another --config path", shellWord(file), fileutil.Kind(fi.Mode()))
			}
			if err := fileutil.MkdirPrivate(filepath.Dir(file)); err != nil {
				return runtimeError("%v", safetext.PathError("config", file, err))
			}
			if err := fileutil.WriteAtomic(file, []byte(config.Template), 0o600); err != nil {
				return runtimeError("writing %s: %v", shellWord(file), err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", shellWord(file))
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing file")
	cmd.Flags().StringVar(&file, "config", "", "file to write (default: $XDG_CONFIG_HOME/clawde/mcp-server.toml)")
	return cmd
}
