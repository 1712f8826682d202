package boundarycmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
)

// ShowCommand is the read-only subcommand of an edit command (`asb mount
// ls`, `asb network show`, …): it opens the outer folder (*dir, the parent's
// -d flag) and prints one part of the boundary with print.
func ShowCommand(f *cmdutil.Factory, dir *string, use string, aliases []string, short string, print func(*Boundary, io.Writer)) *cobra.Command {
	return &cobra.Command{
		Use:     use,
		Aliases: aliases,
		Short:   short,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := Open(f, *dir)
			if err != nil {
				return err
			}
			print(s.Summarize(), f.IO.Out)
			return nil
		},
	}
}

// NeedSubcommand is the RunE of a command that only groups subcommands
// (`asb mount`, `asb network`, …): a usage error naming them, taken from
// the command itself so the list cannot go stale.
func NeedSubcommand(cmd *cobra.Command, _ []string) error {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return &cmdutil.UsageError{Err: fmt.Errorf("say what to do: %s %s (%s --help)",
		cmd.CommandPath(), strings.Join(names, "|"), cmd.CommandPath())}
}
