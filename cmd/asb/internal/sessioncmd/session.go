// Package sessioncmd is `asb session`: agents in parallel, each on its own
// branch of the workspace, in a checkout and a VM of its own.
package sessioncmd

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
)

// Options are the parsed command line of `asb session`.
type Options struct {
	Factory *cmdutil.Factory
	Dir     string
	Name    string
	Agent   string
	Base    string
	Format  string
	Stat    bool
	Force   bool
}

// NewCmd returns `asb session` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "session <command>",
		Short: "Agents in parallel: each on its own branch, checkout and VM",
		Long: `A session is an agent on a branch of its own (asb/NAME) in a checkout of
its own (.asb/sessions/NAME/workspace, a repository with its own .git, so
git works inside the VM) and a VM of its own whose /workspace is that
checkout. Its sandbox.yaml is derived from the folder's: the same boundary,
only /workspace's source and the host ports differ.

The checkout is the VM's: asb reads it as data, and no git on your host
should run in it (the VM writes its config, hooks and attributes). Review
with asb session diff; take the branch into a checkout of your own from the
folder's host repository (.asb/git), where it is NAME; end it with asb
session rm.`,
		Example: `  asb session new fix-login
  asb task agent --session fix-login
  asb session ls
  asb session diff fix-login
  git remote add asb "$PWD/.asb/git"     # in your own checkout, once
  git fetch asb && git merge asb/fix-login
  asb session rm fix-login`,
		Args: cmdutil.NoArgs,
		RunE: cmdutil.NeedSubcommand,
	}
	cmdutil.AddDirFlag(cmd, &o.Dir)
	cmd.AddCommand(newCmd(o), lsCmd(o), diffCmd(o), rmCmd(o))
	return cmd
}

func newCmd(o *Options) *cobra.Command {
	c := &cobra.Command{
		Use:   "new NAME [--agent AGENT] [--base REF]",
		Short: "Branch asb/NAME from REF into a checkout of its own, for a VM of its own",
		Long: `Check REF (workspace/'s current branch by default, read as data through the
folder's host repository .asb/git) out into .asb/sessions/NAME/workspace, on a
branch of its own, asb/NAME: the session's /workspace. Its VM is made by the
first asb task agent --session NAME.

The checkout is written on this machine: a base whose files would take more than
half the free space, or half the free inodes, of the folder's file system is
refused before anything is made (the VM's repository can hold a small blob that
checks out huge). docs/sessions.md has the rest.`,
		Example: `  asb session new fix-login
  asb session new docs --base main --agent codex`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return runNew(cmd.Context(), o)
		},
	}
	c.Flags().StringVar(&o.Agent, "agent", "", "the agent to run (default: the folder's)")
	c.Flags().StringVar(&o.Base, "base", "", "branch, tag or commit of workspace/ to start from (default: its current branch; asb reads workspace/.git as data)")
	return c
}

func runNew(ctx context.Context, o *Options) error {
	f := o.Factory
	fo, release, err := cmdutil.EditFolder(ctx, f, o.Dir, "asb session new")
	if err != nil {
		return err
	}
	defer release()
	msb := runner.MSB{Getenv: f.Getenv}
	s, note, err := outer.NewSession(ctx, fo, outer.NewSessionOptions{Name: o.Name, Agent: o.Agent, Base: o.Base, Now: f.Now(),
		Capacity: func(vm string, cpus int, mem int64) (string, error) {
			held, err := msb.Running(ctx)
			if err != nil {
				held = nil // no msb, or none running: nothing held
			}
			return host.CanHold(host.ReadMachine(f.Host), held, vm, cpus, mem)
		}, Room: outer.Room{Bytes: f.Host.FreeDisk, Files: host.FreeFiles}})
	if err != nil {
		return cmdutil.InputError(err)
	}
	w := f.IO.Out
	fmt.Fprintf(w, "session %s: branch %s from %s (%s) in %s\n", s.Name, s.Branch, s.Base, short(s.BaseCommit), s.Paths.Workspace)
	fmt.Fprintf(w, "its VM %s is made by the first: asb task %s --session %s\n", s.VM, agentTask(fo.Dir, s.Agent), s.Name)
	for _, from := range slices.Sorted(maps.Keys(s.Ports)) {
		fmt.Fprintf(w, "port %s of the folder is %s in this session\n", from, s.Ports[from])
	}
	if note != "" {
		fmt.Fprintf(f.IO.ErrOut, "asb: note: %s\n", note)
	}
	return nil
}

// agentTask is the task that starts agent in the folder dir.
func agentTask(dir, agent string) string {
	if tf, err := runner.ReadTaskfile(dir); err == nil && tf.StaticVar("AGENT") != agent {
		return "agent:" + agent
	}
	return "agent"
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

func tools(f *cmdutil.Factory) outer.SessionTools {
	return outer.SessionTools{MSB: runner.MSB{Getenv: f.Getenv}}
}

func rmCmd(o *Options) *cobra.Command {
	c := &cobra.Command{
		Use:     "rm NAME [--force]",
		Aliases: []string{"remove"},
		Short:   "End a session: its VM, home volume, checkout and branch",
		Long: `End a session: remove its VM, its home volume, its checkout and its record,
and its branch NAME in the host repository (.asb/git). Refused while the
branch holds commits that no other branch of the host repository has, or
the checkout has changes not committed (judged from the host repository,
reading the checkout as data, with its VM stopped first: nothing may write
it meanwhile), or holds what asb does not give git to read (a FIFO, a link
where git looks for a repository): take them first, or --force to lose them.`,
		Example: `  asb session rm fix-login
  asb session rm --force experiment   # after git fetch asb && git merge asb/experiment in your checkout`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return runRm(cmd.Context(), o)
		},
	}
	c.Flags().BoolVarP(&o.Force, "force", "f", false, "remove it even if its commits or changes are on no other branch")
	return c
}

func runRm(ctx context.Context, o *Options) error {
	f := o.Factory
	fo, release, err := cmdutil.EditFolder(ctx, f, o.Dir, "asb session rm")
	if err != nil {
		return err
	}
	defer release()
	s, err := outer.FindSession(fo.Dir, o.Name)
	if err != nil {
		return cmdutil.InputError(err)
	}
	if err := outer.RemoveSession(ctx, fo.Dir, s, tools(f), o.Force); err != nil {
		var ue *outer.UnmergedError
		if errors.As(err, &ue) {
			return cmdutil.InputError(err)
		}
		return err
	}
	home := "home volume " + s.HomeVolume
	if s.HomeVolume == "" {
		home = "no home volume" // moved, and not run since (outer.Session.LeftHome)
	}
	fmt.Fprintf(f.IO.Out, "session %s removed: VM %s, %s, %s, branch %s\n", s.Name, s.VM, home, s.Paths.Dir, s.Branch)
	if s.LeftHome != "" {
		fmt.Fprintf(f.IO.Out, "the home volume %s and the VM of the folder's old path are asb prune's once that path is gone\n", s.LeftHome)
	}
	return nil
}
