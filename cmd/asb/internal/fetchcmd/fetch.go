// Package fetchcmd is `asb fetch`: the VM's commits into the folder's host
// repository, which a checkout of the user's own fetches from.
package fetchcmd

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/termtext"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
)

// Options are the parsed command line of `asb fetch`.
type Options struct {
	Factory *cmdutil.Factory
	Dir     string
	Format  string
}

// NewCmd returns `asb fetch`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "fetch [--format json]",
		Short: "Bring what the agents committed into the host repository (.asb/git), for your own checkout to fetch",
		Long: `Bring the commits of every repository the VM can write (workspace/ and each
session's checkout) into the folder's host repository, .asb/git, and say what
arrived. Those repositories are the VMs': asb reads them as data (a staged copy,
every object checked) and no git on your host should run in them, because the
VM writes their config, hooks and attributes. The host repository's config is
asb's. In a checkout of your own, add it as a remote once and fetch from it:

  git remote add asb <folder>/.asb/git
  git fetch asb && git merge asb/fix-login

Its branches: workspace/BRANCH for workspace/'s, NAME for session NAME's.
Files that tools on your host run or obey (.envrc, .vscode/, package.json,
Makefile, hooks, agents' settings…) changed on what arrived are listed: look
at them before you merge or run them.`,
		Example: `  asb fetch
  asb fetch --format json | jq -r '.refs[].branch'`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return run(cmd.Context(), o) },
	}
	cmdutil.AddDirFlag(cmd, &o.Dir)
	cmd.Flags().StringVar(&o.Format, "format", "text", "output format: text or json")
	return cmd
}

func run(ctx context.Context, o *Options) error {
	if o.Format != "text" && o.Format != "json" {
		return &cmdutil.UsageError{Err: fmt.Errorf("--format %q: use text or json", o.Format)}
	}
	f := o.Factory
	dir, err := cmdutil.FolderDir(f.Getwd, o.Dir)
	if err != nil {
		return err
	}
	table, err := generator.HostRunTable(f.Templates)
	if err != nil {
		return err
	}
	rep, err := outer.Fetch(ctx, dir, runner.Git{}, table)
	if err != nil {
		return err
	}
	if o.Format == "json" {
		enc := json.NewEncoder(termtext.JSON(f.IO.Out))
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		rep.Print(f.IO.Out)
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(f.IO.ErrOut, "asb: %s\n", p)
	}
	if len(rep.Problems) > 0 {
		return &cmdutil.SilentError{Code: 1}
	}
	return nil
}
