// Package trustcmd is `asb trust`: approve what an outer folder would run.
package trustcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
)

// Options are the parsed command line of `asb trust`.
type Options struct {
	Factory *cmdutil.Factory
	Dir     string
	Show    bool
	Git     runner.Git
}

// NewCmd returns `asb trust`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "trust [--show]",
		Short: "Approve what this outer folder runs: its Taskfile, configs, image and workspace origin",
		Long: `A cloned outer folder is input from whoever can push to its repository. asb
task runs nothing of it (no task, no msb create, no image build) until you have
approved its content: Taskfile.yml, sandbox.yaml, secrets.yaml and the other
files at its top (not secrets.env, README.md or .gitignore), everything under
toolchain/, and the workspace origin in asb.yaml.

A folder that is exactly what asb renders from its recorded answers (asb.yaml)
is trusted as it is. Any other content is shown as a diff against that render
and approved by asb trust, for this folder and this content only: the next
change (a git pull, your own edit in an editor) needs asb trust again. asb's
own edits (asb secret add, network allow, mount add, update, …) keep an
approved folder approved.

Approvals are kept in your state folder ($XDG_STATE_HOME/asb/trust, by default
~/.local/state/asb/trust), never in the repository, so no commit can approve
itself. --show prints the verdict and the diff, and approves nothing.`,
		Example: `  git pull && asb trust --show    # what changed, against asb's render
  asb trust                       # approve it
  asb task agent`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return Run(cmd.Context(), opts) },
	}
	cmdutil.AddDirFlag(cmd, &opts.Dir)
	cmd.Flags().BoolVar(&opts.Show, "show", false, "print what differs from asb's render and whether it is approved; approve nothing")
	return cmd
}

// Run shows the folder's verdict and diff, then approves its content.
func Run(ctx context.Context, o *Options) error {
	dir, err := cmdutil.FolderDir(o.Factory.Getwd, o.Dir)
	if err != nil {
		return err
	}
	v, err := outer.CheckTrust(dir, o.Factory.Templates, o.Factory.Getenv)
	if err != nil {
		return err
	}
	w := o.Factory.IO.Out
	if v.Render != nil && !v.Set.Same(v.Render) {
		fmt.Fprintf(w, "What this folder runs, against what asb renders from asb.yaml:\n\n")
		if err := v.PrintDiff(ctx, w, o.Git); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	switch {
	case v.Trusted:
		fmt.Fprintf(w, "trusted: %s\n", v.Why)
		return nil
	case o.Show:
		fmt.Fprintf(w, "not approved: %s\nasb trust approves this content (asb task runs nothing until then).\n", v.Why)
		return nil
	}
	if err := v.Store.Approve(dir, v.Set.Hash()); err != nil {
		return err
	}
	fmt.Fprintf(w, "approved: %s as it is now (%d files, content %s); a change to any of them needs asb trust again\n", dir, len(v.Set.Files), v.Set.Hash()[:12])
	return nil
}
