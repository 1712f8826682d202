// Package synccmd is `asb sync`: set up a fresh clone of an outer folder
// from its record, for a teammate's first run.
package synccmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
)

// Options are the parsed command line of `asb sync`.
type Options struct {
	Factory *cmdutil.Factory
	Dir     string
	Git     runner.Git
}

// NewCmd returns `asb sync`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "sync",
		Short: "Set up this clone of a shared outer folder: workspace/, secrets.env",
		Long: `Set up a clone of an outer folder that a teammate made and committed, from
its record (asb.yaml): clone workspace/ from the recorded origin when it is
empty (or say what to put there), and create secrets.env (mode 0600, git-ignored)
with a commented line for each secret of secrets.yaml. No committed file
changes, and running it again changes nothing. Each clone gets its own VM
and home volume names, so two clones on one machine never collide.

Only an https, ssh (ssh:// or user@host:path) or git:// origin is cloned:
asb.yaml is committed, so anyone who can push to the folder can change it.
A local path, file://, a remote helper (ext::) or a URL that git would read
as an option is refused, and nothing is cloned; clone a repository of your
own into workspace/ yourself (or type its path: asb init --workspace PATH).

asb init in such a folder, without --agent, does the same.`,
		Example: `  git clone git@example.com:team/app-sandbox.git && cd app-sandbox
  asb sync
  $EDITOR secrets.env && asb task agent`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return Run(cmd.Context(), opts) },
	}
	cmdutil.AddDirFlag(cmd, &opts.Dir)
	return cmd
}

// Run sets up the clone and says what is left to do.
func Run(ctx context.Context, o *Options) error {
	dir, err := cmdutil.FolderDir(o.Factory.Getwd, o.Dir)
	if err != nil {
		return err
	}
	lock, err := runner.LockFolder(ctx, dir, "asb sync", o.Factory.IO.ErrOut)
	if err != nil {
		return err
	}
	defer lock.Release()
	cmdutil.CleanStaging(dir, o.Factory.IO.ErrOut)
	if err := outer.Sync(ctx, dir, o.Git, outer.Options{Getenv: o.Factory.Getenv, Agents: cmdutil.Agents(o.Factory)}, o.Factory.IO.Out); err != nil {
		return err
	}
	return showTrust(ctx, o, dir)
}

// showTrust says whether asb task will run this clone as it is, and if not,
// how it differs from what asb renders from its record.
func showTrust(ctx context.Context, o *Options, dir string) error {
	v, err := outer.CheckTrust(dir, o.Factory.Templates, o.Factory.Getenv)
	if err != nil {
		return err
	}
	w := o.Factory.IO.Out
	if v.Trusted {
		fmt.Fprintf(w, "\nTrusted: %s.\n", v.Why)
		return nil
	}
	fmt.Fprintf(w, "\nNot approved: %s. asb task runs nothing of it until you have read this and run asb trust:\n\n", v.Why)
	return v.PrintDiff(ctx, w, o.Git)
}
