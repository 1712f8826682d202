// Package synccmd is `asb sync`: set up a fresh clone of an outer folder
// from its record, for a teammate's first run.
package synccmd

import (
	"context"

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

A clone is input from whoever can push to its repository: asb sync first
shows what it would grant (as asb trust does) and, until you have approved
it, asks at a terminal and otherwise stops with the asb trust command to run.

asb init in such a folder, without --agent, does the same.`,
		Example: `  git clone git@example.com:team/app-sandbox.git && cd app-sandbox
  asb trust && asb sync
  $EDITOR secrets.env && asb task agent`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return Run(cmd.Context(), opts) },
	}
	cmdutil.AddDirFlag(cmd, &opts.Dir)
	return cmd
}

// Run sets up the clone, once its user approved it (a first clone is
// shown and asked once at a terminal), and says what is left to do.
func Run(ctx context.Context, o *Options) error {
	dir, err := cmdutil.FolderDir(o.Factory.Getwd, o.Dir)
	if err != nil {
		return err
	}
	// Before anything of it is used: asb.yaml's origin is what sync
	// clones, and it is the clone's, until approved.
	if err := cmdutil.Gate(ctx, o.Factory.IO, cmdutil.Judge(o.Factory), dir, cmdutil.IsTerminal(o.Factory.IO.In), false); err != nil {
		return err
	}
	lock, err := runner.LockFolder(ctx, dir, "asb sync", o.Factory.IO.ErrOut)
	if err != nil {
		return err
	}
	defer lock.Release()
	cmdutil.CleanStaging(dir, o.Factory.IO.ErrOut)
	return outer.Sync(ctx, dir, o.Git, outer.Options{Getenv: o.Factory.Getenv, Agents: cmdutil.Agents(o.Factory)}, o.Factory.IO.Out)
}
