package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/clawde/clawd/internal/store"
)

// storeList is what every `list` command over one of the store's tables
// shares: open the store, read the rows, print them as JSON (--json, an
// array, never null) or as a table, or say how to add the first row.
type storeList[T any] struct {
	use, short, usage string
	jsonHelp          string                                        // the --json flag's help
	what              string                                        // for the error: "reading WHAT: ..."
	read              func(*store.DB, context.Context) ([]T, error) // the rows (a method expression)
	asJSON            func([]T) any                                 // nil: the rows as they are
	empty             string                                        // printed instead of an empty table
	header            string                                        // the table's first line, tab-separated
	row               func(T) string                                // one line of the table, tab-separated
}

func (l storeList[T]) command() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   l.use,
		Short: l.short,
		Args:  noArgs(l.usage),
		RunE: func(cmd *cobra.Command, args []string) error {
			db, err := openStore()
			if err != nil {
				return err
			}
			defer db.Close()
			rows, err := l.read(db, context.Background())
			if err != nil {
				return runtimeError("reading %s: %v", l.what, err)
			}
			if rows == nil {
				rows = []T{}
			}
			return l.print(cmd.OutOrStdout(), rows, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, l.jsonHelp)
	return cmd
}

func (l storeList[T]) print(w io.Writer, rows []T, asJSON bool) error {
	if asJSON {
		if l.asJSON != nil {
			return writeJSON(w, l.asJSON(rows))
		}
		return writeJSON(w, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(w, l.empty)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, l.header)
	for _, r := range rows {
		fmt.Fprintln(tw, l.row(r))
	}
	return tw.Flush()
}
